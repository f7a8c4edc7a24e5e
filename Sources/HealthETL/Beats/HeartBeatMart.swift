import HealthModel

/// Beat-to-beat heart rate (Pipelines/docs/beats.md, "Beat-to-beat heart rate"): the
/// `InstantaneousBeatsPerMinute` entries of HRV records as a long table (`heart_beats.csv`), and
/// per record its RR intervals' SDNN and RMSSD beside Apple's own SDNN (`hrv_readings.csv`).
///
/// The clock times can only be placed on the timeline once the run's zone is known, so while the
/// export streams each beat goes, parsed, to a scratch file (16 bytes a beat) and each reading is
/// kept in memory (a few a day); `finish` reads the beats back one reading at a time.
public final class HeartBeatMart: Mart {
  /// The stage's tables (pipeline `outputs[].table`).
  public enum Table: String, MartTable {
    case beats, readings

    public var schema: TableSchema {
      switch self {
      case .beats: return HeartBeatTables.beats.schema
      case .readings: return HeartBeatTables.readings.schema
      }
    }
  }

  /// One file a table is written to.
  public typealias Destination = TableDestination<Table>

  /// One listed beat as read: milliseconds since local midnight (-1: unreadable) and bpm (NaN:
  /// unreadable).
  struct StagedBeat: BitwiseCopyable {
    var clock: Int32
    var bpm: Double
  }

  /// One record with a beat list.
  struct Reading {
    var id: String
    var start: Instant
    var end: Instant
    var source: Int32
    var appleSDNN: Double?
    /// Index into `zoneNames` of the record's `HKTimeZone`; -1 without one.
    var zone: Int32
    var firstBeat: Int
    /// Entries listed, and of those kept (the first `RecordReader.mostBeatsPerRecord`).
    var beats: Int
    var kept: Int
    /// Entries kept whose time or bpm cannot be read, and those not kept.
    var unread: Int
  }

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  private var readings: [Reading] = []
  private var zoneNames = ZoneNames()
  private let staged: RecordScratch<StagedBeat>
  private var idName: [UInt8] = []
  /// The largest `bpm` read as a beat (Pipelines/docs/input.md, "Bad input": the heart-rate range).
  private static let highestRate = Plausibility.range(ofCanonicalUnit: "count/min")?.upperBound ?? 400
  /// The smallest: an interval of 3 s. The Watch measures from 30 bpm; below 20 a "beat" is no
  /// reading, and its 60 000 / bpm would pass for any gap in the times (`bpm="1e-9"` made every
  /// gap its interval).
  static let lowestRate = 20.0

  /// Writes each table to the files `destinations` name.
  public init(transaction: OutputTransaction, destinations: [Destination]) {
    self.transaction = transaction
    self.destinations = destinations
    staged = RecordScratch(transaction: transaction, name: "heart-beats")
  }

  /// Every table to its default file.
  public static let defaultDestinations = Table.allCases.map {
    Destination(table: $0, file: $0.schema.defaultFile, format: .csv)
  }

  /// The readings that hold beats: part of their type's samples (an HRV reading may have none).
  public var sampleUse: SampleUse? { use }
  private var use = SampleUse()

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard !sample.beats.isEmpty else { return }
    use.use(sample.type)
    let isSDNN = catalog.typeInfo(sample.type).shortName == "HeartRateVariabilitySDNN"
    let value = sample.value
    var zone: Int32 = -1
    for index in 0..<sample.metadata.count where catalog.metadataKey(sample.metadata.key(at: index)) == "HKTimeZone" {
      zone = zoneNames.number(of: String(decoding: sample.metadata.value(at: index), as: UTF8.self))
      break
    }
    var reading = Reading(
      id: SampleMart.sampleID(sample, catalog: catalog, buffer: &idName), start: sample.start, end: sample.end,
      source: sample.source,
      appleSDNN: isSDNN && value.isFinite ? value : nil,
      zone: zone, firstBeat: staged.count, beats: sample.beatCount, kept: sample.beats.count,
      unread: sample.beatCount - sample.beats.count)
    for index in 0..<sample.beats.count {
      let clock = BeatClockTime.millisecondsOfDay(sample.beats.time(at: index))
      var bpm = DecimalParser.parse(sample.beats.bpm(at: index))
      if let rate = bpm, !(rate >= Self.lowestRate && rate <= Self.highestRate) { bpm = nil }
      if clock == nil || bpm == nil { reading.unread += 1 }
      staged.append(StagedBeat(clock: clock ?? -1, bpm: bpm ?? .nan))
    }
    readings.append(reading)
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let runZone = context.zone.rules
    let zones = zoneNames.names.map { try? ZoneRules.load($0) }
    var beatWriters: [RowWriter<HeartBeatRow>] = []
    var readingWriters: [RowWriter<HRVReadingRow>] = []
    for destination in destinations {
      func writer<Row>(_ table: RowTable<Row>) throws(OutputError) -> RowWriter<Row> {
        try context.writer(table, file: destination.file, format: destination.format)
      }
      switch destination.table {
      case .beats: beatWriters.append(try writer(HeartBeatTables.beats))
      case .readings: readingWriters.append(try writer(HeartBeatTables.readings))
      }
    }
    var beats: [StagedBeat] = []
    for reading in readings {
      let zone = reading.zone >= 0 ? zones[Int(reading.zone)] ?? runZone : runZone
      var intervals = BeatIntervals()
      var outside = 0
      for index in 0..<reading.kept {
        // A chunk at a time, so a long list is never held whole.
        if index % Self.beatsPerRead == 0 {
          try staged.read(
            first: reading.firstBeat + index, count: min(Self.beatsPerRead, reading.kept - index), into: &beats)
        }
        let beat = beats[index % Self.beatsPerRead]
        let time = beat.clock >= 0 ? Self.place(clock: beat.clock, near: reading.start, zone: zone) : nil
        let bpm = beat.bpm.isNaN ? nil : beat.bpm
        if let time, time < (reading.start.seconds - 60) * 1000 || time > (reading.end.seconds + 60) * 1000 {
          outside += 1
        }
        let interval = intervals.add(BeatIntervals.Beat(milliseconds: time, bpm: bpm))
        guard !beatWriters.isEmpty else { continue }
        let row = HeartBeatRow(
          recordID: reading.id, beat: index + 1, time: time, bpm: bpm, interval: interval, runZone: runZone)
        for index in beatWriters.indices { try beatWriters[index].append(row) }
      }
      let row = HRVReadingRow(
        reading: reading, source: context.catalog.sourceName(reading.source), intervals: intervals, outside: outside,
        zone: zone)
      for index in readingWriters.indices { try readingWriters[index].append(row) }
    }
    var written: [OutputSummary] = []
    for writer in beatWriters { written.append(try writer.close()) }
    for writer in readingWriters { written.append(try writer.close()) }
    return written
  }

  /// Beats read back from the scratch file at once.
  static let beatsPerRead = 4096

  /// The instant, in epoch milliseconds, at which `zone`'s clock shows `clock` (milliseconds since
  /// midnight) nearest `start`: on the local date of `start`, the day before or the day after —
  /// so a reading that runs past midnight, or lists times from before it, lands on the right day.
  static func place(clock: Int32, near start: Instant, zone: ZoneRules) -> Int64 {
    let startDay = floorDiv(zone.localSeconds(at: start), 86_400)
    let startMilliseconds = start.seconds * 1000
    var best = Int64.min
    var bestDistance = Int64.max
    for day in (startDay - 1)...(startDay + 1) {
      let local = day * 86_400_000 + Int64(clock)
      // The offset in force then: the start's for a first guess, then the one at the guess.
      let guess = local - Int64(zone.offset(at: start)) * 1000
      let instant = local - Int64(zone.offset(at: Instant(seconds: floorDiv(guess, 1000)))) * 1000
      let distance = abs(instant - startMilliseconds)
      if distance < bestDistance {
        best = instant
        bestDistance = distance
      }
    }
    return best
  }

  /// ISO 8601 to the millisecond, with the run zone's offset at that instant.
  static func format(_ milliseconds: Int64, zone: ZoneRules) -> String {
    let instant = Instant(seconds: floorDiv(milliseconds, 1000))
    var text = Array(LocalTimeFormatter.iso8601(instant, offsetSeconds: zone.offset(at: instant)).utf8)
    let fraction = milliseconds - instant.seconds * 1000
    let digits: [UInt8] = [
      UInt8(ascii: "."), UInt8(48 + fraction / 100), UInt8(48 + fraction / 10 % 10), UInt8(48 + fraction % 10),
    ]
    text.insert(contentsOf: digits, at: 19)
    return String(decoding: text, as: UTF8.self)
  }
}

/// The distinct `HKTimeZone` names of the readings, numbered in the order first met. A lookup
/// costs one hash, whatever the number of names: an export with a new name on every reading made a
/// search through the list cost their square (80,000 readings: 21 s).
struct ZoneNames {
  private(set) var names: [String] = []
  private var numbers: [String: Int32] = [:]
  /// Stored names compared with a looked-up one (tests count it): at most one a lookup.
  private(set) var comparisons = 0

  mutating func number(of name: String) -> Int32 {
    if let known = numbers[name] {
      comparisons += 1
      return known
    }
    let number = Int32(names.count)
    names.append(name)
    numbers[name] = number
    return number
  }
}
