import HealthExtract
import HealthModel

/// The `Record` family: every record becomes one typed sample, checked, de-duplicated and handed
/// to the stages (Pipelines/README.md, "Samples" and "Duplicates").
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
  /// The attributes this family takes in (Pipelines/README.md, "What was not read").
  static let attributesRead: [ExportElement: [ExportAttribute]] = [
    .record: [
      .type, .sourceName, .source, .sourceVersion, .device, .unit, .creationDate, .startDate, .endDate, .value,
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
  private let timeZoneKey: Int32
  private let userEnteredKey: Int32

  private var rejected = false
  private var sample = Sample()
  private var scratch: [UInt8] = []
  private var metadataKeys: [Int32] = []
  private var metadataRanges: [Range<Int>] = []
  private var beats: [BeatList.Entry] = []
  private var rawValueRange: Range<Int> = 0..<0

  init(catalog: SampleCatalog, ledger: StagingLedger, stages: [any SampleStage], deduplicationBudget: Int) {
    self.catalog = catalog
    self.ledger = ledger
    self.stages = stages
    seenSamples = SampleDeduplicator(budget: deduplicationBudget)
    timeZoneKey = catalog.metadataKeys.intern("HKTimeZone")
    userEnteredKey = catalog.metadataKeys.intern("HKWasUserEntered")
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
      typeKinds.append(catalog.typeInfo(sample.type).kind)
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
    if let value = attributes.value(.value) {
      scratch.append(contentsOf: value)
      rawValueRange = 0..<value.count
      sample.hasRawValue = true
    } else {
      rawValueRange = 0..<0
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
      if sample.hasRawValue { sample.categoryValue = catalog.categoryValues.intern(rawValue) }
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
