import Foundation
public import HealthExtract
import HealthModel

/// What an export holds: the counts and facts `inspect` prints and `run.json` embeds.
public struct ExportInventory {
  public var path: String
  public var form: String
  public var member: String
  public var inputBytes: Int64?
  public var xmlBytes: Int64
  public var seconds: Double
  public var facts: ExportFacts
  public var zone: RunZone
  public var read: ReadSummary
  public var elements: [String: Int]
  /// Per type short name: distinct samples, records read, duplicates.
  public var types: [String: (distinct: Int, read: Int, duplicates: Int)]
  public var rejections: RejectionLog
  /// The first `namesListed` source names in UTF-8 byte order, and how many more there are.
  public var sources: [String]
  public var sourcesOmitted: Int
  /// The first `namesListed` device models, and how many more there are.
  public var deviceModels: [String]
  public var deviceModelsOmitted: Int
  public var unknownUnits: [String]
  public var unknownTypes: [String]
  public var workoutCopies: Int
  /// What no reader took in (Pipelines/docs/input.md, "What was not read").
  public var notRead: NotRead

  /// How many source names and device models are listed at most: an export naming a new source
  /// in every record must not make `run.json` and the report as long as the export.
  public static let namesListed = 1000

  public var megabytesPerSecond: Double { Double(xmlBytes) / 1e6 / max(seconds, 1e-9) }

  init(input: InputInfo, normalizer: RecordNormalizer, read: ReadSummary, zone: RunZone, seconds: Double) {
    path = input.path
    form = input.form.rawValue
    member = input.memberName
    inputBytes = input.inputBytes
    xmlBytes = read.xmlBytes
    self.seconds = seconds
    facts = normalizer.facts
    self.zone = zone
    self.read = read
    var elements: [String: Int] = [:]
    for element in ExportElement.allCases where element != .other && normalizer.elementCounts[element.rawValue] > 0 {
      elements[element.xmlName!] = normalizer.elementCounts[element.rawValue]
    }
    for (name, count) in normalizer.unknownElementCounts { elements[name] = count }
    self.elements = elements
    let catalog = normalizer.catalog
    var types: [String: (Int, Int, Int)] = [:]
    var unknownTypes: [String] = []
    for id in 0..<catalog.typeCount {
      let info = catalog.typeInfo(Int32(id))
      types[info.shortName] = (
        normalizer.distinctSamples[id], normalizer.recordsRead[id], normalizer.duplicateSamples[id]
      )
      if !info.isKnown { unknownTypes.append(info.identifier) }
    }
    self.types = types
    self.unknownTypes = unknownTypes.sorted()
    rejections = normalizer.rejections
    sources = catalog.allSourceNames.sortedPrefix(Self.namesListed) { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    sourcesOmitted = catalog.sourceCount - sources.count
    let models = Set(catalog.allDevices.compactMap(\.model))
    deviceModels = models.sortedPrefix(Self.namesListed, by: <)
    deviceModelsOmitted = models.count - deviceModels.count
    unknownUnits = catalog.allUnits.filter { !$0.1.isKnown }.map(\.0).sorted()
    workoutCopies = normalizer.workoutCopies
    notRead = normalizer.notRead
  }

  /// The `inspect --json` object, also the `input`/`counts` part of `run.json` (Pipelines/README.md,
  /// "`run.json` and `inspect --json`").
  public func jsonObject() -> [String: Any] {
    func instant(_ value: Instant?) -> Any {
      value.map { LocalTimeFormatter.iso8601($0, offsetSeconds: zone.rules.offset(at: $0)) } ?? NSNull()
    }
    var rejected: [String: Any] = [:]
    for (reason, count) in rejections.counts {
      rejected[reason] = count
    }
    var rejectedExamples: [String: Any] = [:]
    for (reason, examples) in rejections.examples {
      rejectedExamples[reason] = examples.map { ["line": $0.line, "element": $0.element, "detail": $0.detail] }
    }
    var object: [String: Any] = [
      "input": [
        "path": path, "form": form, "member": member, "bytes": inputBytes.map { $0 as Any } ?? NSNull(),
        "xmlBytes": xmlBytes,
      ],
      "exportVersion": facts.exportVersion.map { $0 as Any } ?? NSNull(),
      "locale": facts.locale.map { $0 as Any } ?? NSNull(),
      "exportDate": instant(facts.exportDate),
      "timeZone": zone.rules.identifier,
      "timeZoneReason": zone.reason,
      "timeZoneVotes": Dictionary(facts.timeZoneVotes.map { ($0.name, $0.votes) }, uniquingKeysWith: +),
      "elements": elements,
      "types": types.mapValues { $0.distinct },
      "typesRead": types.mapValues { $0.read },
      "duplicates": types.filter { $0.value.duplicates > 0 }.mapValues { $0.duplicates },
      "workoutCopies": workoutCopies,
      "rejected": rejected,
      "rejectedExamples": rejectedExamples,
      "controlCharactersReplaced": read.replacedControlCharacters,
      "truncated": read.truncated,
      "truncatedAtLine": read.truncatedAtLine.map { $0 as Any } ?? NSNull(),
      "recovered": read.recovery?.recovered ?? false,
      "recovery": read.recovery.map(Self.recoveryObject) ?? NSNull(),
      "sources": sources,
      "deviceModels": deviceModels,
      "unknownUnits": unknownUnits,
      "unknownTypes": unknownTypes,
      "first": instant(facts.first),
      "last": instant(facts.last),
      "seconds": (seconds * 1000).rounded() / 1000,
      "mbPerSecond": (megabytesPerSecond * 10).rounded() / 10,
    ]
    func tally(_ tally: NotReadTally) -> [String: Any] {
      let listed = tally.listed
      return [
        "total": tally.total, "names": Dictionary(listed.names.map { ($0.name, $0.count) }, uniquingKeysWith: +),
        "omitted": listed.omitted,
      ]
    }
    object["notRead"] = [
      "elements": tally(notRead.elements), "attributes": tally(notRead.attributes),
      "files": notRead.files.map(tally) ?? NSNull(), "filesListedWhole": notRead.filesListedWhole,
    ]
    if read.repairedAttributeNames > 0 { object["attributeNamesRepaired"] = read.repairedAttributeNames }
    // Only when a list was cut, so that the description of an ordinary export stays as it was.
    if sourcesOmitted > 0 { object["sourcesOmitted"] = sourcesOmitted }
    if deviceModelsOmitted > 0 { object["deviceModelsOmitted"] = deviceModelsOmitted }
    return object
  }

  /// `run.json` `recovery` (Pipelines/docs/nightly.md, "`run.json` and `inspect --json`").
  static func recoveryObject(_ recovery: Recovery) -> [String: Any] {
    [
      "errors": recovery.errors,
      "problems": recovery.problems.map {
        ["line": $0.line, "column": $0.column, "problem": $0.words, "libxml2": $0.message] as [String: Any]
      },
      "skipped": recovery.skipped.map {
        [
          "action": $0.action.rawValue, "element": $0.element, "firstLine": $0.firstLine, "lastLine": $0.lastLine,
          "elements": $0.elements, "bytes": $0.bytes, "reason": $0.reason,
        ] as [String: Any]
      },
      "skippedOmitted": recovery.skippedOmitted,
      "dropped": recovery.dropped,
    ]
  }

  /// The human-readable summary `inspect` prints.
  public func text() -> String {
    func instant(_ value: Instant?) -> String {
      value.map { LocalTimeFormatter.iso8601($0, offsetSeconds: zone.rules.offset(at: $0)) } ?? "-"
    }
    var lines: [String] = []
    lines.append("Export      \(path)\(form == "zip" ? " (zip member \(member))" : "")")
    lines.append(
      "Version     \(facts.exportVersion.map(String.init) ?? "unknown"), locale \(facts.locale ?? "unknown")")
    lines.append("Exported    \(instant(facts.exportDate))")
    lines.append("Time zone   \(zone.rules.identifier) (\(zone.reason))")
    lines.append("Data        \(instant(facts.first)) … \(instant(facts.last))")
    lines.append(
      String(
        format: "Read        %.1f MB of XML in %.2f s (%.1f MB/s)", Double(xmlBytes) / 1e6, seconds, megabytesPerSecond)
    )
    if read.truncated { lines.append("TRUNCATED   input ended at line \(read.truncatedAtLine ?? 0)") }
    if let recovery = read.recovery, let summary = recovery.summary() {
      lines.append("RECOVERED   \(summary)")
      for skip in recovery.skipped {
        let what =
          skip.action == .notRead ? "not read" : "\(skip.action == .dropped ? "left out" : "kept") <\(skip.element)>"
        let count = skip.elements > 1 ? " and \(skip.elements - 1) element\(skip.elements == 2 ? "" : "s") in it" : ""
        lines.append("  lines \(skip.firstLine)–\(skip.lastLine): \(what)\(count): \(skip.reason)")
      }
      if recovery.skippedOmitted > 0 { lines.append("  … and \(recovery.skippedOmitted) more (run.json)") }
    }
    lines.append("")
    lines.append("Elements")
    for (name, count) in elements.sorted(by: { $0.key < $1.key }) { lines.append("  \(name): \(count)") }
    lines.append("")
    lines.append("Types (distinct samples; records read when different)")
    for (name, counts) in types.sorted(by: { $0.key < $1.key }) {
      let extra = counts.read != counts.distinct ? " (\(counts.read) read, \(counts.duplicates) duplicates)" : ""
      lines.append("  \(name): \(counts.distinct)\(extra)")
    }
    if workoutCopies > 0 { lines.append("  Workout copies collapsed: \(workoutCopies)") }
    lines.append("")
    func list(_ names: [String], omitted: Int) -> String {
      names.joined(separator: ", ") + (omitted > 0 ? " … and \(omitted) more" : "")
    }
    lines.append("Sources     \(list(sources, omitted: sourcesOmitted))")
    lines.append("Devices     \(list(deviceModels.map(DeviceModelName.shown), omitted: deviceModelsOmitted))")
    if !unknownUnits.isEmpty { lines.append("Units kept as written: \(unknownUnits.joined(separator: ", "))") }
    lines.append("Not read    \(notRead.summary() ?? "nothing")")
    if read.repairedAttributeNames > 0 {
      lines.append("Repaired \(read.repairedAttributeNames) attribute names with spaces (iOS 8): spaces became _")
    }
    if read.replacedControlCharacters > 0 {
      lines.append("Replaced \(read.replacedControlCharacters) control characters XML 1.0 forbids")
    }
    lines.append("")
    if rejections.total == 0 {
      lines.append("Rejected    none")
    } else {
      lines.append("Rejected    \(rejections.total)")
      for (reason, count) in rejections.counts.sorted(by: { $0.key < $1.key }) {
        lines.append("  \(reason): \(count)")
        for example in rejections.examples[reason] ?? [] {
          lines.append("    line \(example.line): \(example.element): \(example.detail)")
        }
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
