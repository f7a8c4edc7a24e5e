import Foundation
public import HealthExtract
import HealthModel

/// The staging layer: turns the reader's element events into typed, de-duplicated samples and
/// workouts (SPEC §2–§3), counts everything it reads, rejects what it cannot use, and hands the
/// rest to the stages.
///
/// The per-record path allocates nothing: strings are interned, dates and numbers are parsed from
/// bytes, and the record's value and metadata live in reused scratch buffers.
public final class RecordNormalizer: ExportEventHandler {
  public let catalog = SampleCatalog()
  public private(set) var facts = ExportFacts()
  public private(set) var rejections = RejectionLog()
  /// Occurrences per element (every occurrence, nested ones included).
  public private(set) var elementCounts = [Int](repeating: 0, count: ExportElement.allCases.count)
  /// Occurrences of element names HealthETL does not know.
  public private(set) var unknownElementCounts: [String: Int] = [:]
  /// Per type id: records read (valid or not) and distinct valid samples.
  public private(set) var recordsRead: [Int] = []
  public private(set) var distinctSamples: [Int] = []
  public private(set) var duplicateSamples: [Int] = []
  public private(set) var workoutCopies = 0
  public private(set) var beatsRead = 0

  private let stages: [any SampleStage]
  private var seenSamples: SampleDeduplicator
  /// `SampleKind` per type id, so the per-record path never copies a `SampleTypeInfo`.
  private var typeKinds: [SampleKind] = []
  private var seenWorkouts = Set<String>()
  private var seenCorrelations = FingerprintSet(capacity: 1024)
  private var depth = 0
  private var timeZoneVoteIndex: [String: Int] = [:]
  private let timeZoneKey: Int32
  private let userEnteredKey: Int32

  // The record being read.
  private var recordOpen = false
  private var recordRejected = false
  private var sample = Sample()
  private var scratch: [UInt8] = []
  private var metadataKeys: [Int32] = []
  private var metadataRanges: [Range<Int>] = []
  private var rawValueRange: Range<Int> = 0..<0

  // The correlation being read.
  private var correlationOpen = false
  private var correlationKey: UInt64 = 0
  private var correlationZone: String?
  private var correlationValid = false

  // The workout being read, and where its children go.
  private var workout: WorkoutElement?
  private var activity: WorkoutElement.Activity?
  private var event: WorkoutElement.Event?
  private var eventInActivity = false
  private var route: WorkoutElement.Route?
  private var workoutRejected = false

  // A generic top-level element being read.
  private var generic: GenericElement?

  /// - Parameter deduplicationBudget: fingerprints of distinct samples kept in memory before the
  ///   least recently used are written to a scratch file (tests make it tiny).
  public init(stages: [any SampleStage], deduplicationBudget: Int = RecordNormalizer.defaultDeduplicationBudget) {
    self.stages = stages
    seenSamples = SampleDeduplicator(budget: deduplicationBudget)
    timeZoneKey = catalog.metadataKeys.intern("HKTimeZone")
    userEnteredKey = catalog.metadataKeys.intern("HKWasUserEntered")
    scratch.reserveCapacity(4096)
  }

  /// Fingerprints kept in memory by default (see `SampleDeduplicator`).
  public static let defaultDeduplicationBudget = SampleDeduplicator.defaultBudget

  /// Why de-duplication stopped being exact (its scratch file failed), if it did.
  public var deduplicationFailure: String? { seenSamples.failure }

  /// De-duplication groups written to and read back from its scratch file.
  public var deduplicationSpills: (evictions: Int, revivals: Int) { (seenSamples.evictions, seenSamples.revivals) }

  /// Records the export version read from the DTD comment (the reader blanks the DTD).
  public func noteExportVersion(_ version: Int?) { facts.exportVersion = version }

  // MARK: - ExportEventHandler

  public func didStart(_ element: ExportElement, attributes: ElementAttributes, line: Int) {
    depth += 1
    elementCounts[element.rawValue] += 1
    switch element {
    case .record:
      startRecord(attributes, line: line)
    case .metadataEntry:
      addMetadata(attributes)
    case .instantaneousBeatsPerMinute:
      beatsRead += 1
      if recordOpen { sample.beatCount += 1 }
    case .heartRateVariabilityMetadataList:
      break
    case .correlation:
      startCorrelation(attributes, line: line)
    case .workout:
      startWorkout(attributes, line: line)
    case .workoutActivity:
      activity = WorkoutElement.Activity(
        uuid: string(attributes, .uuid), start: date(attributes, .startDate), end: date(attributes, .endDate),
        duration: quantity(attributes, .duration, unit: .durationUnit))
    case .workoutEvent:
      eventInActivity = activity != nil
      event = WorkoutElement.Event(
        type: string(attributes, .type) ?? "", date: date(attributes, .date),
        duration: quantity(attributes, .duration, unit: .durationUnit), metadata: [])
    case .workoutStatistics:
      let statistics = WorkoutElement.Statistics(
        type: string(attributes, .type) ?? "", start: date(attributes, .startDate), end: date(attributes, .endDate),
        average: number(attributes, .average), minimum: number(attributes, .minimum),
        maximum: number(attributes, .maximum), sum: number(attributes, .sum), unit: string(attributes, .unit))
      if activity != nil { activity!.statistics.append(statistics) } else { workout?.statistics.append(statistics) }
    case .workoutRoute:
      route = WorkoutElement.Route(
        sourceName: string(attributes, .sourceName), start: date(attributes, .startDate),
        end: date(attributes, .endDate))
    case .fileReference:
      if route != nil { route!.filePath = string(attributes, .path) }
    case .location:
      if route != nil { route!.locationCount += 1 }
    case .healthData:
      facts.locale = string(attributes, .locale)
    case .exportDate:
      if let bytes = attributes.value(.value), let parsed = HealthDateParser.parse(bytes) {
        facts.exportDate = parsed.instant
        facts.exportDateOffset = parsed.offsetSeconds
      }
    default:
      if depth == 2 {
        generic = GenericElement(
          name: String(decoding: attributes.elementName, as: UTF8.self),
          attributes: allAttributes(attributes), line: line)
      } else {
        generic?.childCount += 1
      }
      if element == .other {
        unknownElementCounts[String(decoding: attributes.elementName, as: UTF8.self), default: 0] += 1
      }
    }
  }

  public func didEnd(_ element: ExportElement) {
    depth -= 1
    switch element {
    case .record: endRecord()
    case .correlation: endCorrelation()
    case .workout: endWorkout()
    case .workoutActivity:
      if let finished = activity { workout?.activities.append(finished) }
      activity = nil
    case .workoutEvent:
      if let finished = event {
        if eventInActivity, activity != nil {
          activity!.events.append(finished)
        } else {
          workout?.events.append(finished)
        }
      }
      event = nil
    case .workoutRoute:
      if let finished = route { workout?.routes.append(finished) }
      route = nil
    default:
      if depth == 1, let finished = generic {
        generic = nil
        for stage in stages { stage.consume(finished) }
      }
    }
  }

  // MARK: - Records

  private func startRecord(_ attributes: ElementAttributes, line: Int) {
    recordOpen = true
    recordRejected = false
    sample = Sample()
    sample.line = line
    sample.inCorrelation = correlationOpen
    scratch.removeAll(keepingCapacity: true)
    metadataKeys.removeAll(keepingCapacity: true)
    metadataRanges.removeAll(keepingCapacity: true)

    guard let type = attributes.value(.type), type.count > 0 else {
      return reject("missing attribute", line: line, element: "Record", detail: "no type attribute")
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
    guard let source = attributes.value(.sourceName) else {
      return reject("missing attribute", line: line, element: "Record", detail: "no sourceName attribute")
    }
    sample.source = catalog.sources.intern(source)
    guard let startBytes = attributes.value(.startDate), let endBytes = attributes.value(.endDate) else {
      return reject("missing attribute", line: line, element: "Record", detail: "no startDate or endDate attribute")
    }
    guard let start = HealthDateParser.parse(startBytes) else {
      return reject("unparseable date", line: line, element: "Record", detail: "startDate=\"\(text(startBytes))\"")
    }
    guard let end = HealthDateParser.parse(endBytes) else {
      return reject("unparseable date", line: line, element: "Record", detail: "endDate=\"\(text(endBytes))\"")
    }
    sample.start = start.instant
    sample.end = end.instant
    if facts.firstRecordOffset == nil { facts.firstRecordOffset = start.offsetSeconds }
    if let createdBytes = attributes.value(.creationDate) {
      guard let created = HealthDateParser.parse(createdBytes) else {
        return reject(
          "unparseable date", line: line, element: "Record", detail: "creationDate=\"\(text(createdBytes))\"")
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

  private var typeName: String { catalog.typeInfo(sample.type).shortName }

  private func reject(_ reason: String, line: Int, element: String, detail: @autoclosure () -> String) {
    if element == "Record" { recordRejected = true }
    rejections.reject(reason: reason, line: line, element: element, detail: detail())
  }

  private func addMetadata(_ attributes: ElementAttributes) {
    if recordOpen {
      guard !recordRejected, let key = attributes.value(.key) else { return }
      let keyID = catalog.metadataKeys.intern(key)
      let value = attributes.value(.value) ?? UnsafeRawBufferPointer(start: nil, count: 0)
      let from = scratch.count
      scratch.append(contentsOf: value)
      metadataKeys.append(keyID)
      metadataRanges.append(from..<scratch.count)
      return
    }
    guard let key = string(attributes, .key) else { return }
    let value = string(attributes, .value) ?? ""
    if event != nil {
      event!.metadata.append((key, value))
    } else if route != nil {
      route!.metadata.append((key, value))
    } else if activity != nil {
      activity!.metadata.append((key, value))
    } else if workout != nil {
      workout!.metadata.append((key, value))
    } else if correlationOpen {
      if key == "HKTimeZone", correlationZone == nil { correlationZone = value }
    } else if generic != nil {
      generic!.childCount += 1
    }
  }

  private func endRecord() {
    recordOpen = false
    guard !recordRejected, sample.type >= 0 else { return }
    sample.kind = typeKinds[Int(sample.type)]
    let rawValue = scratch.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[rawValueRange]) }
    switch sample.kind {
    case .quantity:
      guard sample.hasRawValue else {
        return reject(
          "missing attribute", line: sample.line, element: "Record", detail: "\(self.typeName) has no value")
      }
      guard let raw = DecimalParser.parse(rawValue) else {
        return reject(
          "non-numeric value", line: sample.line, element: "Record",
          detail: "\(self.typeName) value=\"\(self.text(rawValue))\"")
      }
      sample.value = catalog.canonicalValue(raw, unit: sample.rawUnit)
    case .category:
      if sample.hasRawValue { sample.categoryValue = catalog.categoryValues.intern(rawValue) }
    case .other:
      if sample.hasRawValue, let raw = DecimalParser.parse(rawValue) {
        sample.value = catalog.canonicalValue(raw, unit: sample.rawUnit)
      }
    }
    if sample.end < sample.start {
      return reject(
        "end before start", line: sample.line, element: "Record",
        detail: "\(self.typeName) ends \(self.sample.start.seconds - self.sample.end.seconds) s before it starts")
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
    facts.include(start: sample.start, end: sample.end)
    scratch.withUnsafeBytes { bytes in
      metadataKeys.withUnsafeBufferPointer { keys in
        metadataRanges.withUnsafeBufferPointer { ranges in
          sample.rawValue = UnsafeRawBufferPointer(rebasing: bytes[rawValueRange])
          sample.metadata = MetadataList(keys: keys, valueRanges: ranges, valueBytes: bytes)
          if let entered = sample.metadata.value(forKey: userEnteredKey) {
            sample.userEntered = entered.count == 1 && entered[0] == UInt8(ascii: "1")
          }
          if let zone = sample.metadata.value(forKey: timeZoneKey) { vote(forZone: text(zone)) }
          for stage in stages { stage.consume(sample, catalog: catalog) }
          sample.metadata = MetadataList()
          sample.rawValue = UnsafeRawBufferPointer(start: nil, count: 0)
        }
      }
    }
  }

  private func vote(forZone name: String) {
    if let index = timeZoneVoteIndex[name] {
      facts.timeZoneVotes[index].votes += 1
    } else {
      timeZoneVoteIndex[name] = facts.timeZoneVotes.count
      facts.timeZoneVotes.append((name, 1))
    }
  }

  // MARK: - Correlations

  private func startCorrelation(_ attributes: ElementAttributes, line: Int) {
    correlationOpen = true
    correlationZone = nil
    let start = date(attributes, .startDate)
    let end = date(attributes, .endDate)
    guard let type = attributes.value(.type), let source = attributes.value(.sourceName), let start, let end else {
      correlationValid = false
      rejections.reject(
        reason: "missing attribute", line: line, element: "Correlation",
        detail: "needs type, sourceName, startDate and endDate")
      return
    }
    correlationValid = true
    var key = FastHash.hash(type)
    key = FastHash.combine(key, FastHash.hash(source))
    key = FastHash.combine(key, UInt64(bitPattern: start.seconds))
    correlationKey = FastHash.combine(key, UInt64(bitPattern: end.seconds))
  }

  private func endCorrelation() {
    correlationOpen = false
    guard correlationValid, seenCorrelations.insert(correlationKey) else { return }
    if let zone = correlationZone { vote(forZone: zone) }
  }

  // MARK: - Workouts

  private func startWorkout(_ attributes: ElementAttributes, line: Int) {
    var element = WorkoutElement()
    element.line = line
    workoutRejected = false
    guard let activityType = string(attributes, .workoutActivityType), let source = string(attributes, .sourceName),
      let startBytes = attributes.value(.startDate), let endBytes = attributes.value(.endDate)
    else {
      workoutRejected = true
      rejections.reject(
        reason: "missing attribute", line: line, element: "Workout",
        detail: "needs workoutActivityType, sourceName, startDate and endDate")
      workout = element
      return
    }
    guard let start = HealthDateParser.parse(startBytes), let end = HealthDateParser.parse(endBytes) else {
      workoutRejected = true
      rejections.reject(
        reason: "unparseable date", line: line, element: "Workout",
        detail: "startDate=\"\(text(startBytes))\" endDate=\"\(text(endBytes))\"")
      workout = element
      return
    }
    element.activityType = activityType
    element.sourceName = source
    element.start = start.instant
    element.end = end.instant
    element.sourceVersion = string(attributes, .sourceVersion)
    element.device = string(attributes, .device).map(DeviceDescription.init(parsing:))
    element.created = date(attributes, .creationDate)
    element.duration = quantity(attributes, .duration, unit: .durationUnit)
    element.totalDistance = quantity(attributes, .totalDistance, unit: .totalDistanceUnit)
    element.totalEnergyBurned = quantity(attributes, .totalEnergyBurned, unit: .totalEnergyBurnedUnit)
    workout = element
  }

  private func endWorkout() {
    defer {
      workout = nil
      activity = nil
      event = nil
      route = nil
    }
    guard !workoutRejected, let finished = workout else { return }
    let key = "\(finished.sourceName)|\(finished.activityType)|\(finished.start.seconds)|\(finished.end.seconds)"
    guard seenWorkouts.insert(key).inserted else {
      workoutCopies += 1
      return
    }
    facts.include(start: finished.start, end: finished.end)
    if let zone = finished.metadataValue("HKTimeZone") { vote(forZone: zone) }
    for stage in stages { stage.consume(finished) }
  }

  // MARK: - Attribute helpers (cold paths)

  private func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

  private func string(_ attributes: ElementAttributes, _ name: ExportAttribute) -> String? {
    attributes.value(name).map(text)
  }

  private func date(_ attributes: ElementAttributes, _ name: ExportAttribute) -> Instant? {
    attributes.value(name).flatMap { HealthDateParser.parse($0)?.instant }
  }

  private func number(_ attributes: ElementAttributes, _ name: ExportAttribute) -> Double? {
    attributes.value(name).flatMap { DecimalParser.parse($0) }
  }

  private func quantity(_ attributes: ElementAttributes, _ name: ExportAttribute, unit: ExportAttribute)
    -> WorkoutElement.Quantity?
  {
    guard let bytes = attributes.value(name) else { return nil }
    return WorkoutElement.Quantity(text: text(bytes), value: DecimalParser.parse(bytes), unit: string(attributes, unit))
  }

  private func allAttributes(_ attributes: ElementAttributes) -> [(name: String, value: String)] {
    var result: [(name: String, value: String)] = []
    attributes.forEach { name, value in result.append((text(name), text(value))) }
    return result
  }
}
