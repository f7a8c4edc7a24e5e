public import HealthExtract
import HealthModel

/// The staging layer's entry: turns the reader's element events into typed, de-duplicated samples
/// and workouts (Pipelines/docs/samples.md, "Samples"), counts everything it reads, rejects what it
/// cannot use, and hands the rest to the stages. It only dispatches: each element family has its
/// own reader.
public final class RecordNormalizer: ExportEventHandler {
  public let catalog = SampleCatalog()
  /// Occurrences per element (every occurrence, nested ones included).
  public private(set) var elementCounts = [Int](repeating: 0, count: ExportElement.allCases.count)
  /// Occurrences of element names HealthETL does not know.
  public private(set) var unknownElementCounts: [String: Int] = [:]

  /// What no reader takes in (Pipelines/docs/input.md, "What was not read"); the files are added
  /// after the parse (`countNotReadFiles`).
  public var notRead: NotRead {
    var result = tallied
    var attributes = NotReadTally()
    let width = Self.attributeKinds
    for (slot, count) in unreadKnownAttributes.enumerated() where count > 0 {
      let element = ExportElement.allCases[slot / width]
      let attribute = ExportAttribute.allCases[slot % width]
      attributes.add(NotRead.attributeName(element: element.xmlName ?? "", attribute: attribute.xmlName), count: count)
    }
    attributes.merge(tallied.attributes)
    result.attributes = attributes
    return result
  }
  private var tallied = NotRead()
  /// `ExportAttribute.allCases.count`, taken once: `allCases` builds an array.
  private static let attributeKinds = ExportAttribute.allCases.count
  /// Per element and known attribute (`element * attributes + attribute`): occurrences not read.
  /// Counted without a string, since some (the beats of HRV records) occur millions of times.
  private var unreadKnownAttributes = [Int](
    repeating: 0, count: ExportElement.allCases.count * attributeKinds)
  /// Per element: a bit per `ExportAttribute` its reader takes in.
  private let attributesRead: [UInt64]
  /// What the normalizer reads itself.
  private static let ownAttributesRead: [ExportElement: [ExportAttribute]] = [
    .healthData: [.locale], .exportDate: [.value], .metadataEntry: [.key, .value],
  ]

  private let ledger = StagingLedger()
  private let records: RecordReader
  private let correlations: CorrelationReader
  private let workouts: WorkoutReader
  private let others: OtherElementReader
  private var depth = 0

  /// - Parameter deduplicationBudget: fingerprints of distinct samples kept in memory before the
  ///   least recently used are written to a scratch file (tests make it tiny).
  public init(stages: [any SampleStage], deduplicationBudget: Int = RecordNormalizer.defaultDeduplicationBudget) {
    records = RecordReader(
      catalog: catalog, ledger: ledger, stages: stages, deduplicationBudget: deduplicationBudget)
    correlations = CorrelationReader(ledger: ledger)
    workouts = WorkoutReader(ledger: ledger, stages: stages)
    others = OtherElementReader(stages: stages)
    var read = [UInt64](repeating: 0, count: ExportElement.allCases.count)
    for family in [
      Self.ownAttributesRead, RecordReader.attributesRead, CorrelationReader.attributesRead,
      WorkoutReader.attributesRead,
    ] {
      for (element, attributes) in family {
        for attribute in attributes { read[element.rawValue] |= 1 << UInt64(attribute.rawValue) }
      }
    }
    attributesRead = read
  }

  /// Fingerprints kept in memory by default (see `SampleDeduplicator`).
  public static let defaultDeduplicationBudget = SampleDeduplicator.defaultBudget

  public var facts: ExportFacts { ledger.facts }
  public var rejections: RejectionLog { ledger.rejections }
  /// Per type id: records read (valid or not), distinct valid samples, duplicates.
  public var recordsRead: [Int] { records.recordsRead }
  public var distinctSamples: [Int] { records.distinctSamples }
  public var duplicateSamples: [Int] { records.duplicateSamples }
  /// Per type id with any: records rejected, by reason.
  public var rejectedByType: [Int32: [String: Int]] { records.rejectedByType }
  public var beatsRead: Int { records.beatsRead }
  /// Workouts that repeated an earlier one's identity (sync apps save them again).
  public var workoutCopies: Int { workouts.copies }
  /// What a job can use: distinct samples and workouts, and the other elements of data (rings,
  /// clinical records, audiograms, prescriptions). `Me` and `ExportDate` are not data.
  public var usableElements: Int {
    let others: [ExportElement] = [.activitySummary, .clinicalRecord, .audiogram, .visionPrescription]
    return records.distinctSamples.reduce(0, +) + workouts.distinct
      + others.reduce(0) { $0 + elementCounts[$1.rawValue] }
  }
  /// Why de-duplication stopped being exact (its scratch file failed), if it did.
  public var deduplicationFailure: DeduplicationFailure? { records.deduplicationFailure }
  /// De-duplication groups written to and read back from its scratch file.
  public var deduplicationSpills: (evictions: Int, revivals: Int) { records.deduplicationSpills }

  /// Records the export version read from the DTD comment (the reader blanks the DTD).
  public func noteExportVersion(_ version: Int?) { ledger.facts.exportVersion = version }

  // MARK: - ExportEventHandler

  public func didStart(_ element: ExportElement, attributes: ElementAttributes, line: Int) {
    depth += 1
    elementCounts[element.rawValue] += 1
    switch element {
    case .record: records.start(attributes, line: line, inCorrelation: correlations.isOpen)
    case .metadataEntry: addMetadata(attributes)
    case .instantaneousBeatsPerMinute: records.addBeat(attributes)
    case .heartRateVariabilityMetadataList: break
    case .correlation: correlations.start(attributes, line: line)
    case .workout: workouts.start(attributes, line: line)
    case .workoutActivity, .workoutEvent, .workoutStatistics, .workoutRoute, .fileReference, .location:
      workouts.startChild(element, attributes)
    case .healthData: ledger.facts.locale = attributes.string(.locale)
    case .exportDate:
      if let bytes = attributes.value(.value), let parsed = HealthDateParser.parse(bytes) {
        ledger.facts.exportDate = parsed.instant
        ledger.facts.exportDateOffset = parsed.offsetSeconds
      }
    default:
      let taken = others.start(attributes, depth: depth, line: line)
      if element == .other {
        unknownElementCounts[ElementAttributes.text(attributes.elementName), default: 0] += 1
      }
      switch taken {
      case .whole: return
      case .counted: break
      case .dropped: return tallied.elements.add(ElementAttributes.excerpt(attributes.elementName))
      }
    }
    // Every attribute of an element no reader keeps whole that its reader does not take in.
    let row = element.rawValue * Self.attributeKinds
    attributes.forEachAttribute(notIn: attributesRead[element.rawValue]) { attribute in
      if element == .other {
        tallied.attributes.add(
          NotRead.attributeName(
            element: ElementAttributes.text(attributes.elementName),
            attribute: ExportAttribute.allCases[attribute].xmlName))
      } else {
        unreadKnownAttributes[row + attribute] += 1
      }
    } unknown: { name in
      tallied.attributes.add(
        NotRead.attributeName(
          element: element.xmlName ?? ElementAttributes.text(attributes.elementName),
          attribute: ElementAttributes.text(name)))
    }
  }

  /// Counts the files of the export no reader claims (see `NotRead.countFiles`).
  func countNotReadFiles(of input: InputInfo, claims: [ExportFileClaim], outputFolder: String?) {
    tallied.countFiles(of: input, claims: claims, outputFolder: outputFolder)
  }

  public func didEnd(_ element: ExportElement) {
    depth -= 1
    switch element {
    case .record: records.end()
    case .correlation: correlations.end()
    case .workout: workouts.end()
    case .workoutActivity, .workoutEvent, .workoutRoute: workouts.endChild(element)
    default: others.end(depth: depth)
    }
  }

  /// A `MetadataEntry` belongs to the innermost open element that keeps metadata.
  private func addMetadata(_ attributes: ElementAttributes) {
    if records.isOpen { return records.addMetadata(attributes) }
    guard let key = attributes.string(.key) else { return }
    let value = attributes.string(.value) ?? ""
    if workouts.isOpen {
      workouts.addMetadata(key: key, value: value)
    } else if correlations.isOpen {
      correlations.addMetadata(key: key, value: value)
    } else {
      others.addChild()
    }
  }
}
