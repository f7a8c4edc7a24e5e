import HealthETL
import HealthModel
import Testing

/// The workout id (Pipelines/docs/workouts.md, "Workout identity") and the activity type table (Apple's
/// `HKWorkoutActivityType.h`).
@Suite struct WorkoutIdentityTests {
  /// RFC 4122 section 4.3 written out here, apart from `UUIDv5`: SHA-1 over the namespace's 16 bytes
  /// followed by the name's UTF-8, first 16 bytes, version nibble 5, variant bits 10.
  static func rfc4122Version5(_ name: String) -> String {
    // 6ba7b811-9dad-11d1-80b4-00c04fd430c8, the URL namespace of RFC 4122 appendix C.
    let namespace: [UInt8] = [
      0x6B, 0xA7, 0xB8, 0x11, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]
    var hash = (namespace + Array(name.utf8)).withUnsafeBytes { Digest.sha1($0) }
    hash[6] = 0x50 | (hash[6] & 0x0F)
    hash[8] = 0x80 | (hash[8] & 0x3F)
    let hex = Array(hash[0..<16]).map { byte -> String in
      let digits = Array("0123456789ABCDEF")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
    return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
  }

  @Test func documentedExampleId() throws {
    let name = "healthetl:workout:Jürgen’s Apple Watch|HKWorkoutActivityTypeRunning|1704175200|1704177030"
    // Python: uuid.uuid5(uuid.NAMESPACE_URL, name) → 289da714-c2da-5473-8c28-e278807a0917 (computed
    // while writing this test), which is also the example in Pipelines/docs/workouts.md, "Workout identity".
    #expect(Self.rfc4122Version5(name) == "289DA714-C2DA-5473-8C28-E278807A0917")

    // The same workout through the stage: 1704175200 = 2024-01-02T06:00:00Z, 1704177030 = +1830 s.
    let body = WorkoutFixture.workout(
      "Running", source: "Jürgen’s Apple Watch", duration: "30.5", start: "2024-01-02 06:00:00 +0000",
      end: "2024-01-02 06:30:30 +0000")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.id == "289DA714-C2DA-5473-8C28-E278807A0917")
    #expect(run.records.first?.recordUuid == "289DA714-C2DA-5473-8C28-E278807A0917")
    // The id column and swim_laps' workout_id use the same upper-case text as recordUuid.
    #expect(try run.text("workouts.csv").contains(",289DA714-C2DA-5473-8C28-E278807A0917,Running,37,"))
  }

  @Test func idUsesTheAttributeTextAsWritten() throws {
    // `&amp;` unescapes to `&` before hashing; the offset written does not matter, the instant does:
    // 2024-01-02 07:00:00 +0100 is 1704175200 again.
    let body = WorkoutFixture.workout(
      "Walking", source: "A &amp; B", start: "2024-01-02 07:00:00 +0100", end: "2024-01-02 07:10:00 +0100")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    let expected = Self.rfc4122Version5("healthetl:workout:A & B|HKWorkoutActivityTypeWalking|1704175200|1704175800")
    #expect(run.rows.first?.id == expected)
  }

  /// Rows are in start order, and workouts that start together in the order of their ids (worked
  /// out here with `rfc4122Version5`), whatever their order in the export.
  @Test func workoutsStartingTogetherAreOrderedByTheirId() throws {
    let together = ["Walking", "Running", "Yoga", "Cycling"]
    let body =
      together.map {
        WorkoutFixture.workout($0, start: "2024-01-02 07:00:00 +0000", end: "2024-01-02 07:30:00 +0000")
      }.joined()
      + WorkoutFixture.workout("Rowing", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    let expected = together.map { type in
      Self.rfc4122Version5("healthetl:workout:Apple Watch|HKWorkoutActivityType\(type)|1704178800|1704180600")
    }.sorted()
    #expect(run.rows.map(\.id) == [run.rows[0].id] + expected)
    #expect(run.rows.first?.activityType == "Rowing")
  }

  @Test func activityTypeTable() {
    // Apple's HKWorkoutActivityType.h: 1…80, then 82…84 (81 has no case),
    // Rest 2998, Group 2999, Other 3000.
    #expect(WorkoutActivityTypeTable.names.count == 80 + 3 + 3)
    #expect(WorkoutActivityTypeTable.rawValue(for: "AmericanFootball") == 1)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Dance") == 14)
    #expect(WorkoutActivityTypeTable.rawValue(for: "DanceInspiredTraining") == 15)
    #expect(WorkoutActivityTypeTable.rawValue(for: "MixedMetabolicCardioTraining") == 30)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Running") == 37)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Swimming") == 46)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Walking") == 52)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Cooldown") == 80)
    #expect(WorkoutActivityTypeTable.rawValue(for: "SwimBikeRun") == 82)
    #expect(WorkoutActivityTypeTable.rawValue(for: "UnderwaterDiving") == 84)
    #expect(WorkoutActivityTypeTable.rawValue(for: "Other") == 3000)
    #expect(WorkoutActivityTypeTable.rawValue(for: "running") == nil)
    #expect(Set(WorkoutActivityTypeTable.entries.map(\.rawValue)).count == WorkoutActivityTypeTable.entries.count)
    #expect(WorkoutActivityTypeTable.name(fromExportString: "HKWorkoutActivityTypeTaiChi") == "TaiChi")
  }

  @Test func unknownActivityTypeKeepsItsNameAndGetsTheDefaultCode() throws {
    let body = WorkoutFixture.workout(
      "Hoverboarding", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.activityType == "Hoverboarding")
    #expect(row.activityTypeRaw == nil)
    #expect(row.serverRecord.execTypeCode == "SERVER999")
  }

  @Test func deviceTypeCodes() {
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: "Watch", sourceName: "Connect") == "WATCH")
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: "iPhone", sourceName: "Ann’s Apple Watch") == "PHONE")
    // A model decides even when the name says otherwise; only without one does the name.
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: "Edge 530", sourceName: "iPhone") == "ETC")
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: nil, sourceName: "Ann’s Apple Watch") == "WATCH")
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: nil, sourceName: "Ann’s iPhone") == "PHONE")
    #expect(WorkoutServerRecord.deviceTypeCode(deviceModel: nil, sourceName: "Connect") == "ETC")
  }
}
