import Foundation
import HealthETL
import HealthModel
import Testing

/// `workout_records.json` (Pipelines/docs/workouts.md, "Server records"): local times, `execRuntime`, the
/// exact seven fields.
@Suite struct WorkoutServerRecordTests {
  static func runtime(_ text: String?, _ unit: String? = "min", elapsed: Int64 = 999) -> Int64 {
    WorkoutServerRecord.runtimeSeconds(
      durationText: text, unit: unit, start: Instant(seconds: 1_000), end: Instant(seconds: 1_000 + elapsed))
  }

  @Test func runtimeRoundsHalfUpToTheMillisecondThenFloors() {
    // 34.18067507346471 min × 60 = 2050.8405044078826 s → 2050.841 s → 2050.
    #expect(Self.runtime("34.18067507346471") == 2050)
    // 0.083325 min × 60 = 4.9995 s exactly → half-up to 5.000 s → 5. (In binary floating point
    // 0.083325 × 60 is 4.99949999… and would round to 4.999 s → 4.)
    #expect(Self.runtime("0.083325") == 5)
    // 59.9995 s → 60.000 s → 60, crossing a second; 59.99949 s → 59.999 s → 59.
    #expect(Self.runtime("59.9995", "s") == 60)
    #expect(Self.runtime("59.99949", "s") == 59)
    // 1.99999175 min = 119.999505 s → 120.000 s → 120.
    #expect(Self.runtime("1.99999175") == 120)
    // 0.75 hr = 2700 s; 2500 ms = 2.5 s → 2.500 → 2; 1e1 min = 600 s.
    #expect(Self.runtime("0.75", "hr") == 2700)
    #expect(Self.runtime("2500", "ms") == 2)
    #expect(Self.runtime("1e1") == 600)
  }

  @Test func runtimeFallsBackToElapsedTime() {
    #expect(Self.runtime(nil, elapsed: 1830) == 1830)
    #expect(Self.runtime("abc", elapsed: 1830) == 1830)
    #expect(Self.runtime("-3", elapsed: 1830) == 1830)
    #expect(Self.runtime("30", "km", elapsed: 1830) == 1830)
    #expect(Self.runtime("30", nil, elapsed: 1830) == 1830)
  }

  /// A workout from 23:30 to 00:20:45 in Tokyo (its own HKTimeZone), while the run's zone is
  /// New York: the record takes Tokyo's wall clock and date, workouts.csv New York's.
  @Test func crossesMidnightInItsOwnZone() throws {
    // 2024-03-09 14:30:00 UTC = 23:30:00 JST (+09:00) = 09:30:00 EST (−05:00, DST starts Mar 10).
    // 2024-03-09 15:20:45 UTC = 2024-03-10 00:20:45 JST = 10:20:45 EST.
    let body = WorkoutFixture.workout(
      "Walking", source: "Ann’s iPhone", device: WorkoutFixture.phone, duration: "47.5",
      start: "2024-03-09 14:30:00 +0000", end: "2024-03-09 15:20:45 +0000",
      children: [WorkoutFixture.meta("HKTimeZone", "Asia/Tokyo")])
    let run = try WorkoutFixture.run(body, zone: .named("America/New_York"))
    defer { run.result.remove() }
    let record = try #require(run.records.first)
    #expect(record.recordDate == "20240310")
    #expect(record.execStartTime == "20240309233000")
    #expect(record.execEndTime == "20240310002045")
    #expect(record.execRuntime == "2850")  // 47.5 min × 60
    #expect(record.execTypeCode == "SERVER01")
    #expect(record.deviceTypeCode == "PHONE")
    let row = try #require(run.rows.first)
    #expect(row.timeZone == "Asia/Tokyo")
    #expect(row.elapsedSeconds == 3045)  // 50 min 45 s
    let csv = try run.text("workouts.csv")
    #expect(csv.contains(",2024-03-09T09:30:00-05:00,2024-03-09T10:20:45-05:00,2850,3045,"))

    // Exactly these seven string fields, in the contract's order.
    let json = try run.text("workout_records.json")
    let expected = """
      [
        {"recordDate": "20240310", "execTypeCode": "SERVER01", "execStartTime": "20240309233000", \
      "execEndTime": "20240310002045", "execRuntime": "2850", "deviceTypeCode": "PHONE", \
      "recordUuid": "\(row.id)"}
      ]

      """
    #expect(json == expected)
    let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
    #expect(decoded?.first?.count == 7)
    #expect(decoded?.first?.values.allSatisfy { $0 is String } == true)
  }

  @Test func unknownOwnZoneFallsBackToTheRunZone() throws {
    // 2024-07-01 22:00:00 UTC = 2024-07-02 00:00:00 in Berlin (CEST, +02:00), the run's zone.
    let body = WorkoutFixture.workout(
      "Yoga", source: "Studio", device: nil, start: "2024-07-01 22:00:00 +0000", end: "2024-07-01 22:45:00 +0000",
      children: [WorkoutFixture.meta("HKTimeZone", "Mars/Olympus_Mons")])
    let run = try WorkoutFixture.run(body, zone: .named("Europe/Berlin"))
    defer { run.result.remove() }
    let record = try #require(run.records.first)
    #expect(record.recordDate == "20240702")
    #expect(record.execStartTime == "20240702000000")
    #expect(record.execEndTime == "20240702004500")
    // No duration attribute: end − start = 45 min.
    #expect(record.execRuntime == "2700")
    #expect(record.deviceTypeCode == "ETC")
    #expect(record.execTypeCode == "SERVER999")
    // The row still says what the workout said.
    #expect(run.rows.first?.timeZone == "Mars/Olympus_Mons")
  }

  @Test func noWorkoutsWritesEmptyFiles() throws {
    let run = try WorkoutFixture.run(Staging.record("HKQuantityTypeIdentifierStepCount"))
    defer { run.result.remove() }
    #expect(try run.text("workout_records.json") == "[]\n")
    #expect(try run.text("workouts.json") == "[]\n")
    #expect(try run.text("workouts.csv") == WorkoutTables.workouts.columnNames.joined(separator: ",") + "\n")
    #expect(try run.text("swim_laps.csv") == WorkoutTables.laps.columnNames.joined(separator: ",") + "\n")
  }
}
