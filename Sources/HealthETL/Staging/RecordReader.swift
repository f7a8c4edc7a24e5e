import HealthExtract
import HealthModel

/// The `Record` family: every record becomes one typed sample, checked, de-duplicated and handed
/// to the stages (Pipelines/docs/samples.md, "Samples" and "Duplicates").
///
/// This is the per-record path, so it allocates nothing: strings are interned, dates and numbers
/// are parsed from bytes, and the record's value and metadata live in reused scratch buffers.
final class RecordReader {
  /// Per type id: records read (valid or not), distinct valid samples, duplicates.
  private(set) var recordsRead: [Int] = []
  private(set) var distinctSamples: [Int] = []
  private(set) var duplicateSamples: [Int] = []
  /// Per type id with any: records rejected, by reason (a record rejected before its type was
  /// read is in the ledger's rejections only).
  private(set) var rejectedByType: [Int32: [String: Int]] = [:]
  private(set) var beatsRead = 0

  /// The longest a quantity or sleep record, or a workout, may last: 366 days (Pipelines/README.md,
  /// "Bad input"). Statistics share such a record out over every bucket it overlaps and sleep
  /// joins every night it covers into one session, so a record of thousands of years would cost
  /// millions of rows and hide every real night, for data no measurement gives.
  static let longestSpanSeconds: Int64 = 366 * 86_400
  /// The most `InstantaneousBeatsPerMinute` entries kept for one record (Pipelines/README.md,
  /// "Beat-to-beat heart rate"): a real reading lists a minute's, 30–80; the rest of a longer list
  /// is counted, not held, so one odd record cannot fill the memory.
  static let mostBeatsPerRecord = 10_000
  /// The attributes this family takes in (Pipelines/docs/input.md, "What was not read").
  static let attributesRead: [ExportElement: [ExportAttribute]] = [
    .record: [
      .type, .sourceName, .source, .sourceVersion, .device, .unit, .creationDate, .startDate, .endDate, .value,
      .average, .min, .max, .recordCount, .sessionId, .sleepStage, .wasUserEntered,
    ],
    .instantaneousBeatsPerMinute: [.bpm, .time],
  ]
  /// Whether a record is being read (its metadata comes next).
  private(set) var isOpen = false

  private let catalog: SampleCatalog
  private let ledger: StagingLedger
  private let stages: [any SampleStage]
  private var seenSamples: SampleDeduplicator
  /// `SampleKind` per type id, so the per-record path never copies a `SampleTypeInfo`.
  private var typeKinds: [SampleKind] = []
  /// Per type id: how a record of the type without a `value` may still give one (Pipelines/README.md,
  /// "The iOS 8–9 format").
  private var valueFallbacks: [ValueFallback] = []
  private let timeZoneKey: Int32
  private let userEnteredKey: Int32
  /// The iOS 8–9 attributes kept as metadata entries, with their keys.
  private let attributeMetadata: [(attribute: ExportAttribute, key: Int32)]
  /// Category value ids of the numbers and absent values read so far, by type id and raw value
  /// (`CategoryRawValues`), or `noSuchValue`, `valuesUnknown`.
  private var categoryNumbers: [Int64: Int32] = [:]
  private static let noSuchValue: Int32 = -1
  private static let valuesUnknown: Int32 = -2
  /// The category value ids of the `Sleep Stage` texts met so far (a few: Deep, Light, …).
  private var stageValues: [(text: [UInt8], id: Int32)] = []

  private var rejected = false
  private var sample = Sample()
  private var scratch: [UInt8] = []
  private var metadataKeys: [Int32] = []
  private var metadataRanges: [Range<Int>] = []
  private var beats: [BeatList.Entry] = []
  private var rawValueRange: Range<Int> = 0..<0
  /// Where the open record's raw value came from.
  private var valueOrigin = ValueOrigin.absent

  /// What a record without a `value` may give one from.
  enum ValueFallback {
    case none
    /// A discrete quantity: its day aggregate's `average`.
    case average
    /// `SleepAnalysis`: Withings' `Sleep Stage`.
    case sleepStage
  }

  /// Which attribute the raw value is.
  enum ValueOrigin {
    case value, average, sleepStage, absent
  }

  init(catalog: SampleCatalog, ledger: StagingLedger, stages: [any SampleStage], deduplicationBudget: Int) {
    self.catalog = catalog
    self.ledger = ledger
    self.stages = stages
    seenSamples = SampleDeduplicator(budget: deduplicationBudget)
    timeZoneKey = catalog.metadataKeys.intern("HKTimeZone")
    userEnteredKey = catalog.metadataKeys.intern("HKWasUserEntered")
    // iOS 8's `HKWasUserEntered` attribute is the metadata key of the same name.
    attributeMetadata = [ExportAttribute.min, .max, .recordCount, .sessionId, .wasUserEntered].map {
      ($0, catalog.metadataKeys.intern($0.xmlName))
    }
    scratch.reserveCapacity(4096)
  }

  /// Why de-duplication stopped being exact (its scratch file failed), if it did.
  var deduplicationFailure: DeduplicationFailure? { seenSamples.failure }

  /// De-duplication groups written to and read back from its scratch file.
  var deduplicationSpills: (evictions: Int, revivals: Int) { (seenSamples.evictions, seenSamples.revivals) }

  func start(_ attributes: ElementAttributes, line: Int, inCorrelation: Bool) {
    isOpen = true
    rejected = false
    sample = Sample()
    sample.line = line
    sample.inCorrelation = inCorrelation
    scratch.removeAll(keepingCapacity: true)
    metadataKeys.removeAll(keepingCapacity: true)
    metadataRanges.removeAll(keepingCapacity: true)
    if !beats.isEmpty { beats.removeAll(keepingCapacity: true) }

    guard let type = attributes.value(.type), type.count > 0 else {
      return reject("missing attribute", line: line, detail: "no type attribute")
    }
    sample.type = catalog.internType(type)
    let typeIndex = Int(sample.type)
    if typeIndex == recordsRead.count {
      let info = catalog.typeInfo(sample.type)
      typeKinds.append(info.kind)
      valueFallbacks.append(Self.valueFallback(info))
      recordsRead.append(0)
      distinctSamples.append(0)
      duplicateSamples.append(0)
    }
    recordsRead[typeIndex] += 1
    guard let source = attributes.value(.sourceName) ?? attributes.value(.source) else {
      return reject("missing attribute", line: line, detail: "no sourceName attribute")
    }
    sample.source = catalog.sources.intern(source)
    guard let startBytes = attributes.value(.startDate), let endBytes = attributes.value(.endDate) else {
      return reject("missing attribute", line: line, detail: "no startDate or endDate attribute")
    }
    guard let start = HealthDateParser.parse(startBytes) else {
      return reject("unparseable date", line: line, detail: "startDate=\"\(ElementAttributes.excerpt(startBytes))\"")
    }
    guard let end = HealthDateParser.parse(endBytes) else {
      return reject("unparseable date", line: line, detail: "endDate=\"\(ElementAttributes.excerpt(endBytes))\"")
    }
    sample.start = start.instant
    sample.end = end.instant
    if let problem = ledger.implausibleStart(start.instant) {
      return reject(
        "implausible date", line: line, detail: "startDate=\"\(ElementAttributes.excerpt(startBytes))\" \(problem)")
    }
    if ledger.facts.firstRecordOffset == nil { ledger.facts.firstRecordOffset = start.offsetSeconds }
    ledger.facts.writtenOffsets.note(start.instant, offsetSeconds: start.offsetSeconds)
    ledger.facts.writtenOffsets.note(end.instant, offsetSeconds: end.offsetSeconds)
    if let createdBytes = attributes.value(.creationDate) {
      guard let created = HealthDateParser.parse(createdBytes) else {
        return reject(
          "unparseable date", line: line, detail: "creationDate=\"\(ElementAttributes.excerpt(createdBytes))\"")
      }
      sample.created = created.instant
    }
    if let version = attributes.value(.sourceVersion) { sample.sourceVersion = catalog.versions.intern(version) }
    if let device = attributes.value(.device) { sample.device = catalog.internDevice(device) }
    if let unit = attributes.value(.unit) { sample.rawUnit = catalog.internUnit(unit) }
    // The raw value comes first in the scratch buffer, then what follows it.
    valueOrigin = .absent
    if let value = attributes.value(.value) {
      valueOrigin = .value
      scratch.append(contentsOf: value)
    } else {
      switch valueFallbacks[typeIndex] {
      case .none: break
      case .average:
        if let average = attributes.value(.average) {
          valueOrigin = .average
          scratch.append(contentsOf: average)
        }
      case .sleepStage:
        if let stage = attributes.value(.sleepStage) {
          valueOrigin = .sleepStage
          scratch.append(contentsOf: stage)
        }
      }
    }
    rawValueRange = 0..<scratch.count
    sample.hasRawValue = valueOrigin != .absent
    // iOS 8–9 wrote these as attributes; they are kept as the record's first metadata entries.
    for (attribute, key) in attributeMetadata {
      guard let value = attributes.value(attribute) else { continue }
      let from = scratch.count
      scratch.append(contentsOf: value)
      metadataKeys.append(key)
      metadataRanges.append(from..<scratch.count)
    }
  }

  /// A record without a `value`: a discrete quantity may be a day aggregate, whose `average` is
  /// its value; a cumulative one has no value to take (an average is not a total); a sleep
  /// record may carry Withings' `Sleep Stage`.
  private static func valueFallback(_ info: SampleTypeInfo) -> ValueFallback {
    switch info.kind {
    case .quantity: return info.aggregation?.isCumulative == false ? .average : .none
    case .category: return info.shortName == "SleepAnalysis" ? .sleepStage : .none
    case .other: return .none
    }
  }

  /// A `MetadataEntry` of the open record.
  func addMetadata(_ attributes: ElementAttributes) {
    guard !rejected, let key = attributes.value(.key) else { return }
    let keyID = catalog.metadataKeys.intern(key)
    let value = attributes.value(.value) ?? UnsafeRawBufferPointer(start: nil, count: 0)
    let from = scratch.count
    scratch.append(contentsOf: value)
    metadataKeys.append(keyID)
    metadataRanges.append(from..<scratch.count)
  }

  /// An `InstantaneousBeatsPerMinute` entry (of an HRV record, when one is open): its `time` and
  /// `bpm` bytes go to the scratch buffer, read by the stages that want them.
  func addBeat(_ attributes: ElementAttributes) {
    beatsRead += 1
    guard isOpen else { return }
    sample.beatCount += 1
    guard !rejected, beats.count < Self.mostBeatsPerRecord else { return }
    let empty = UnsafeRawBufferPointer(start: nil, count: 0)
    let timeStart = scratch.count
    scratch.append(contentsOf: attributes.value(.time) ?? empty)
    let bpmStart = scratch.count
    scratch.append(contentsOf: attributes.value(.bpm) ?? empty)
    beats.append(BeatList.Entry(time: timeStart..<bpmStart, bpm: bpmStart..<scratch.count))
  }

  func end() {
    isOpen = false
    guard !rejected, sample.type >= 0 else { return }
    sample.kind = typeKinds[Int(sample.type)]
    let rawValue = scratch.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[rawValueRange]) }
    switch sample.kind {
    case .quantity:
      guard sample.hasRawValue else {
        return reject("missing attribute", line: sample.line, detail: "\(self.typeName) has no value")
      }
      guard let raw = DecimalParser.parse(rawValue) else {
        return reject(
          "non-numeric value", line: sample.line,
          detail: "\(self.typeName) value=\"\(ElementAttributes.excerpt(rawValue))\"")
      }
      sample.value = catalog.canonicalValue(raw, unit: sample.rawUnit)
      guard catalog.plausibleRange(unit: sample.rawUnit).contains(sample.value) else {
        return rejectImplausible(rawValue)
      }
    case .category:
      switch valueOrigin {
      case .value:
        // A whole number is a raw value, as iOS 8–9 wrote them; other text is kept as written.
        let id = Self.wholeNumber(rawValue).map { categoryValue(raw: $0) } ?? Self.valuesUnknown
        if id == Self.noSuchValue {
          let range = CategoryRawValues.rawValues(ofTypeShortName: catalog.typeInfo(sample.type).shortName)!
          return reject(
            "unknown category value", line: sample.line,
            detail:
              "\(self.typeName) value=\"\(ElementAttributes.excerpt(rawValue))\" is no raw value of the type (\(range.lowerBound)…\(range.upperBound))"
          )
        }
        sample.categoryValue = id >= 0 ? id : catalog.categoryValues.intern(rawValue)
      case .sleepStage:
        sample.categoryValue = stageValue(rawValue)
      case .absent:
        sample.categoryValue = max(categoryValue(raw: -1), -1)
      case .average:
        break
      }
    case .other:
      if sample.hasRawValue, let raw = DecimalParser.parse(rawValue) {
        sample.value = catalog.canonicalValue(raw, unit: sample.rawUnit)
        guard catalog.plausibleRange(unit: sample.rawUnit).contains(sample.value) else {
          return rejectImplausible(rawValue)
        }
      }
    }
    if sample.end < sample.start {
      return reject(
        "end before start", line: sample.line,
        detail: "\(self.typeName) ends \(self.sample.start.seconds - self.sample.end.seconds) s before it starts")
    }
    // Other categories pass: a pregnancy or a contraceptive lasts months or years, and one with
    // no end yet is written as lasting until 4001-01-01.
    if sample.end.seconds - sample.start.seconds > Self.longestSpanSeconds,
      sample.kind == .quantity || typeName == "SleepAnalysis"
    {
      return reject(
        "implausible span", line: sample.line,
        detail: "\(self.typeName) lasts \(self.sample.end.seconds - self.sample.start.seconds) s, more than 366 days")
    }
    var fingerprint = FastHash.hash(rawValue, seed: UInt64(UInt32(bitPattern: sample.type)))
    fingerprint = FastHash.combine(fingerprint, UInt64(UInt32(bitPattern: sample.source)))
    fingerprint = FastHash.combine(fingerprint, UInt64(bitPattern: sample.start.seconds))
    fingerprint = FastHash.combine(fingerprint, UInt64(bitPattern: sample.end.seconds))
    fingerprint = FastHash.combine(
      fingerprint, UInt64(UInt32(bitPattern: sample.rawUnit)) | (sample.hasRawValue ? 1 << 32 : 0))
    sample.fingerprint = fingerprint
    guard seenSamples.insert(type: sample.type, start: sample.start, fingerprint: fingerprint) else {
      duplicateSamples[Int(sample.type)] += 1
      return
    }
    distinctSamples[Int(sample.type)] += 1
    ledger.facts.include(start: sample.start, end: sample.end)
    scratch.withUnsafeBytes { bytes in
      metadataKeys.withUnsafeBufferPointer { keys in
        metadataRanges.withUnsafeBufferPointer { ranges in
          sample.rawValue = UnsafeRawBufferPointer(rebasing: bytes[rawValueRange])
          sample.metadata = MetadataList(keys: keys, valueRanges: ranges, valueBytes: bytes)
          if let entered = sample.metadata.value(forKey: userEnteredKey) {
            sample.userEntered = entered.count == 1 && entered[0] == UInt8(ascii: "1")
          }
          if let zone = sample.metadata.value(forKey: timeZoneKey) {
            ledger.vote(forZone: ElementAttributes.text(zone))
          }
          if beats.isEmpty {
            for stage in stages { stage.consume(sample, catalog: catalog) }
          } else {
            // An HRV record's beats, borrowed for the calls like its metadata.
            beats.withUnsafeBufferPointer { entries in
              sample.beats = BeatList(entries: entries, bytes: bytes)
              for stage in stages { stage.consume(sample, catalog: catalog) }
              sample.beats = BeatList()
            }
          }
          sample.metadata = MetadataList()
          sample.rawValue = UnsafeRawBufferPointer(start: nil, count: 0)
        }
      }
    }
  }

  /// `text` as a whole number (`1`, `007`), or nil when it is something else (`1.5`, `Asleep`).
  private static func wholeNumber(_ text: UnsafeRawBufferPointer) -> Int? {
    guard !text.isEmpty else { return nil }
    var number = 0
    for byte in text {
      guard byte >= 0x30, byte <= 0x39 else { return nil }
      // No type has a value above 7: a longer number only has to stay out of range.
      number = Swift.min(number * 10 + Int(byte - 0x30), 1_000_000)
    }
    return number
  }

  /// The category value id of raw value `raw` of the open record's type (-1: the value a record
  /// without one stands for); `noSuchValue` when the type has none, `valuesUnknown` when
  /// HealthETL does not know the type's values.
  private func categoryValue(raw: Int) -> Int32 {
    let key = Int64(sample.type) << 32 | Int64(UInt32(bitPattern: Int32(raw)))
    if let known = categoryNumbers[key] { return known }
    let shortName = catalog.typeInfo(sample.type).shortName
    let id: Int32
    if CategoryRawValues.rawValues(ofTypeShortName: shortName) == nil {
      id = Self.valuesUnknown
    } else {
      let name =
        raw < 0
        ? CategoryRawValues.nameWhenAbsent(typeShortName: shortName)
        : CategoryRawValues.name(raw: raw, typeShortName: shortName)
      id = name.map { catalog.categoryValues.intern($0) } ?? Self.noSuchValue
    }
    categoryNumbers[key] = id
    return id
  }

  /// The category value id of a Withings `Sleep Stage` text (`CategoryRawValues`).
  private func stageValue(_ text: UnsafeRawBufferPointer) -> Int32 {
    for entry in stageValues where entry.text.elementsEqual(text) { return entry.id }
    let id = catalog.categoryValues.intern(
      CategoryRawValues.sleepValueName(ofWithingsStage: ElementAttributes.text(text)))
    // A handful of stages exist; an export with a new text on every record is not kept whole.
    if stageValues.count < 64 { stageValues.append((Array(text), id)) }
    return id
  }

  /// The type as a rejection names it (an unknown identifier can be any length).
  private var typeName: String { ElementAttributes.excerpt(catalog.typeInfo(sample.type).shortName) }

  private func rejectImplausible(_ rawValue: UnsafeRawBufferPointer) {
    let range = catalog.plausibleRange(unit: sample.rawUnit)
    let unit = catalog.unitConversion(sample.rawUnit)?.canonicalUnit ?? catalog.unit(sample.rawUnit) ?? ""
    reject(
      "implausible value", line: sample.line,
      detail:
        "\(self.typeName) value=\"\(ElementAttributes.excerpt(rawValue))\" is outside \(Self.bound(range.lowerBound))…\(Self.bound(range.upperBound)) \(unit)"
    )
  }

  private static func bound(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
  }

  private func reject(_ reason: String, line: Int, detail: @autoclosure () -> String) {
    rejected = true
    if sample.type >= 0 { rejectedByType[sample.type, default: [:]][reason, default: 0] += 1 }
    ledger.rejections.reject(reason: reason, line: line, element: "Record", detail: detail())
  }
}
