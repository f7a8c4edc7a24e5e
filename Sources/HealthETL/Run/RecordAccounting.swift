import Foundation
import HealthModel

/// Every record of the export accounted for (Pipelines/docs/nightly.md, "Every record accounted for"):
/// per type, each record read is a duplicate of another, rejected with a reason, used by an output
/// of the run, set aside by a mart that shows the type with a reason, or held by the export but
/// not shown by the run's pipelines — with the pipelines that would show it. What is none of
/// these is `unaccounted`: a defect of HealthETL, which the tests catch on every fixture.
///
/// The staging layer counts what it read; each mart declares what it used (`Mart.sampleUse`), so
/// no list of marts is kept here.
struct RecordAccounting {
  struct Line: Equatable {
    var type: String
    var read = 0
    var duplicates = 0
    var rejected: [String: Int] = [:]
    var used = 0
    var setAside: [String: Int] = [:]
    var notShown = 0
    var unaccounted = 0
    /// The pipelines that would show what this run did not (`samples` …), for `notShown`.
    var shownBy: [String] = []

    var rejectedCount: Int { rejected.values.reduce(0, +) }
    var setAsideCount: Int { setAside.values.reduce(0, +) }
  }

  /// One line per short type name, in name order.
  private(set) var lines: [Line] = []
  /// Records rejected before their type was read (no `type` attribute).
  private(set) var withoutType = 0

  /// A pipeline a user could run, by the name `--pipeline` takes.
  struct Pipeline {
    var name: String
    var shows: (String) -> Bool
  }

  /// - Parameters:
  ///   - uses: every mart's `sampleUse`.
  ///   - others: the pipelines a user could run instead (the shipped ones this run did not run),
  ///     in the order they are suggested.
  init(normalizer: RecordNormalizer, uses: [SampleUse], others: [Pipeline]) {
    let catalog = normalizer.catalog
    var byName: [String: Line] = [:]
    for id in 0..<catalog.typeCount {
      let type = Int32(id)
      let name = catalog.typeInfo(type).shortName
      var line = Line(type: name)
      line.read = normalizer.recordsRead[id]
      line.duplicates = normalizer.duplicateSamples[id]
      line.rejected = normalizer.rejectedByType[type] ?? [:]
      let distinct = normalizer.distinctSamples[id]
      let whole = uses.filter { $0.isShownWhole(type) }
      if let best = whole.max(by: { $0.usedCount(type) < $1.usedCount(type) }) {
        line.used = best.usedCount(type)
        line.setAside = best.reasons(type)
        line.unaccounted = distinct - line.used - line.setAsideCount
      } else {
        line.used = min(distinct, uses.map { $0.usedCount(type) }.max() ?? 0)
        line.notShown = distinct - line.used
      }
      byName[name] = byName[name].map { Self.merge($0, line) } ?? line
    }
    for name in byName.keys where byName[name]!.notShown > 0 {
      byName[name]!.shownBy = others.filter { $0.shows(name) }.map(\.name)
    }
    lines = byName.values.sorted { $0.type.utf8.lexicographicallyPrecedes($1.type.utf8) }
    let typedRejections = lines.reduce(0) { $0 + $1.rejectedCount }
    withoutType = normalizer.rejections.total - typedRejections
  }

  private static func merge(_ a: Line, _ b: Line) -> Line {
    var line = a
    line.read += b.read
    line.duplicates += b.duplicates
    line.rejected.merge(b.rejected, uniquingKeysWith: +)
    line.used += b.used
    line.setAside.merge(b.setAside, uniquingKeysWith: +)
    line.notShown += b.notShown
    line.unaccounted += b.unaccounted
    return line
  }

  var notShown: Int { lines.reduce(0) { $0 + $1.notShown } }
  var setAside: Int { lines.reduce(0) { $0 + $1.setAsideCount } }
  var unaccounted: Int { lines.reduce(0) { $0 + $1.unaccounted } }

  /// `run.json`'s `accounting`.
  func jsonObject() -> [String: Any] {
    var types: [String: Any] = [:]
    for line in lines {
      var entry: [String: Any] = [
        "read": line.read, "duplicates": line.duplicates, "rejected": line.rejectedCount, "used": line.used,
        "setAside": line.setAsideCount, "notShown": line.notShown, "unaccounted": line.unaccounted,
      ]
      if !line.rejected.isEmpty { entry["rejectedFor"] = line.rejected }
      if !line.setAside.isEmpty { entry["setAsideFor"] = line.setAside }
      if line.notShown > 0 { entry["shownBy"] = line.shownBy }
      types[line.type] = entry
    }
    func total(_ value: (Line) -> Int) -> Int { lines.reduce(0) { $0 + value($1) } }
    return [
      "records": total(\.read) + withoutType, "withoutType": withoutType, "duplicates": total(\.duplicates),
      "rejected": total(\.rejectedCount) + withoutType, "used": total(\.used), "setAside": setAside,
      "notShown": notShown, "unaccounted": unaccounted, "types": types,
    ]
  }

  /// Types listed by name in a line; the rest are counted.
  static let typesListed = 4

  /// The lines for the end of `healthetl run` (without `healthetl: `): what was not shown, set
  /// aside or not accounted for, each pointing at where more is said.
  var summaryLines: [String] {
    var result: [String] = []
    func number(_ value: Int) -> String {
      var digits = String(value.magnitude)
      var index = digits.endIndex
      while digits.distance(from: digits.startIndex, to: index) > 3 {
        index = digits.index(index, offsetBy: -3)
        digits.insert(",", at: index)
      }
      return (value < 0 ? "-" : "") + digits
    }
    /// `2,663 WalkingSpeed, 12 BodyMassIndex records and 4 more types (10,816 records in all)`.
    func list(_ items: [(String, Int)]) -> String {
      let sorted = items.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
      let shown = sorted.prefix(Self.typesListed)
      var text = shown.map { "\(number($0.1)) \($0.0)" }.joined(separator: ", ")
      text += shown.count == 1 && shown[0].1 == 1 ? " record" : " records"
      if sorted.count > Self.typesListed {
        text += " and \(sorted.count - Self.typesListed) more (\(number(sorted.reduce(0) { $0 + $1.1 })) in all)"
      }
      return text
    }
    let hidden = lines.filter { $0.notShown > 0 }
    if !hidden.isEmpty {
      // Pipelines named for every hidden type, the most specific first; `samples` writes them all.
      let common = hidden.dropFirst().reduce(Set(hidden[0].shownBy)) { $0.intersection($1.shownBy) }
      let pipeline =
        hidden[0].shownBy.first { common.contains($0) && $0 != "samples" }
        ?? (common.contains("samples") ? "samples" : nil)
      let remedy =
        pipeline == "samples"
        ? "`--pipeline samples` writes each type to samples/<Type>.csv"
        : pipeline.map { "`--pipeline \($0)` shows them" }
          ?? "a `samples` job writes every type (Pipelines/samples.json)"
      result.append(
        "not shown by this run: \(list(hidden.map { ($0.type, $0.notShown) })); \(remedy) (run.json: accounting)")
    }
    var reasons: [(String, Int)] = []
    for line in lines {
      for (reason, count) in line.setAside { reasons.append(("\(line.type) (\(reason))", count)) }
    }
    if !reasons.isEmpty {
      result.append("set aside: \(list(reasons)); see run.json (accounting)")
    }
    let lost = lines.filter { $0.unaccounted != 0 }
    if !lost.isEmpty {
      result.append(
        "not accounted for: \(list(lost.map { ($0.type, $0.unaccounted) })), a defect of HealthETL: "
          + "please report it with run.json")
    }
    return result
  }
}
