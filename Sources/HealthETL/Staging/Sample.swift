public import HealthModel

/// One normalized `Record` (Pipelines/docs/samples.md, "Samples"), handed to stages by the staging layer.
///
/// Strings are interned ids resolved through the `SampleCatalog`; `rawValue` and `metadata` are
/// borrowed from the normalizer and valid only during the call that receives the sample.
public struct Sample {
  public var type: Int32 = -1
  public var kind: SampleKind = .other
  /// Quantities: the value in the canonical unit; NaN for categories and non-numeric others.
  public var value: Double = .nan
  /// Categories: the interned raw value (`HKCategoryValueSleepAnalysisAsleepCore`), -1 when absent.
  public var categoryValue: Int32 = -1
  public var rawValue: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
  public var hasRawValue = false
  public var rawUnit: Int32 = -1
  public var start = Instant(seconds: 0)
  public var end = Instant(seconds: 0)
  public var created: Instant?
  public var source: Int32 = -1
  public var sourceVersion: Int32 = -1
  public var device: Int32 = -1
  public var metadata: MetadataList = MetadataList()
  /// The line of the start tag.
  public var line = 0
  /// Whether the record was entered by hand (`HKWasUserEntered` = 1), which ranks it first among
  /// sources (Pipelines/docs/samples.md, "Source priority").
  public var userEntered = false
  /// Whether the record sat inside a `Correlation`.
  public var inCorrelation = false
  /// `InstantaneousBeatsPerMinute` entries of an HRV record.
  public var beatCount = 0
  /// Those entries' `time` and `bpm` as written (borrowed like `metadata`).
  public var beats: BeatList = BeatList()
  /// Hash of the identity key (type, source, start, end, raw value, raw unit).
  public var fingerprint: UInt64 = 0

  public init() {}

  public var rawValueString: String? {
    hasRawValue ? String(decoding: rawValue, as: UTF8.self) : nil
  }
}

/// The `InstantaneousBeatsPerMinute` entries of the current record, as written, borrowed from the
/// normalizer's scratch space (Pipelines/docs/beats.md, "Beat-to-beat heart rate").
public struct BeatList {
  /// The bytes of an entry's `time` and `bpm` (an empty range for a missing attribute).
  struct Entry {
    var time: Range<Int>
    var bpm: Range<Int>
  }

  var entries: UnsafeBufferPointer<Entry> = UnsafeBufferPointer(start: nil, count: 0)
  var bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)

  public init() {}

  init(entries: UnsafeBufferPointer<Entry>, bytes: UnsafeRawBufferPointer) {
    self.entries = entries
    self.bytes = bytes
  }

  public var count: Int { entries.count }
  public var isEmpty: Bool { entries.isEmpty }

  /// The `time` text of entry `index` (`7:47:41.86 PM`).
  public func time(at index: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: bytes[entries[index].time])
  }

  /// The `bpm` text of entry `index`.
  public func bpm(at index: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: bytes[entries[index].bpm])
  }
}

/// Metadata entries of the current element, borrowed from the normalizer's scratch space.
public struct MetadataList {
  var keys: UnsafeBufferPointer<Int32> = UnsafeBufferPointer(start: nil, count: 0)
  var valueRanges: UnsafeBufferPointer<Range<Int>> = UnsafeBufferPointer(start: nil, count: 0)
  var valueBytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)

  public init() {}

  init(
    keys: UnsafeBufferPointer<Int32>, valueRanges: UnsafeBufferPointer<Range<Int>>, valueBytes: UnsafeRawBufferPointer
  ) {
    self.keys = keys
    self.valueRanges = valueRanges
    self.valueBytes = valueBytes
  }

  public var count: Int { keys.count }
  public var isEmpty: Bool { keys.isEmpty }

  public func key(at index: Int) -> Int32 { keys[index] }

  public func value(at index: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: valueBytes[valueRanges[index]])
  }

  /// The first value stored under `key`, if any.
  public func value(forKey key: Int32) -> UnsafeRawBufferPointer? {
    guard key >= 0 else { return nil }
    for index in 0..<keys.count where keys[index] == key { return value(at: index) }
    return nil
  }
}
