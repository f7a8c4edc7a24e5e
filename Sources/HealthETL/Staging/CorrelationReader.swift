import HealthExtract
import HealthModel

/// The `Correlation` family: a correlation's records arrive through the record reader (and count
/// once, whether or not they also appear at top level); the correlation itself only votes for the
/// run's zone, once per distinct correlation.
final class CorrelationReader {
  private(set) var isOpen = false
  private let ledger: StagingLedger
  private var seen = FingerprintSet(capacity: 1024)
  private var key: UInt64 = 0
  private var zone: String?
  private var valid = false

  /// The attributes this family takes in: enough to know a correlation and its zone; its records
  /// are read as records.
  static let attributesRead: [ExportElement: [ExportAttribute]] = [
    .correlation: [.type, .sourceName, .source, .startDate, .endDate]
  ]

  init(ledger: StagingLedger) { self.ledger = ledger }

  func start(_ attributes: ElementAttributes, line: Int) {
    isOpen = true
    zone = nil
    let start = attributes.date(.startDate)
    let end = attributes.date(.endDate)
    guard let type = attributes.value(.type), let source = attributes.value(.sourceName) ?? attributes.value(.source),
      let start, let end
    else {
      valid = false
      ledger.rejections.reject(
        reason: "missing attribute", line: line, element: "Correlation",
        detail: "needs type, sourceName, startDate and endDate")
      return
    }
    valid = true
    var hash = FastHash.hash(type)
    hash = FastHash.combine(hash, FastHash.hash(source))
    hash = FastHash.combine(hash, UInt64(bitPattern: start.seconds))
    key = FastHash.combine(hash, UInt64(bitPattern: end.seconds))
  }

  /// A `MetadataEntry` of the correlation itself (not of one of its records).
  func addMetadata(key name: String, value: String) {
    if name == "HKTimeZone", zone == nil { zone = value }
  }

  func end() {
    isOpen = false
    guard valid, seen.insert(key) else { return }
    if let zone { ledger.vote(forZone: zone) }
  }
}
