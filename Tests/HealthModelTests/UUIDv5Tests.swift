import HealthModel
import Testing

@Suite struct UUIDv5Tests {
  /// RFC 4122's own example pair is for DNS; these two are the examples documented in
  /// Pipelines/docs/samples.md, "Sample id"; Pipelines/docs/workouts.md, "Workout identity".
  @Test func sampleIDOfTheDocumentedExample() {
    #expect(
      UUIDv5.url("healthetl:sample:StepCount|김민수의 iPhone|1704175200|1704175500|152|count")
        == "075431b6-6e16-5cea-9869-e3389b10d2a3")
  }

  @Test func workoutIDOfTheDocumentedExample() {
    #expect(
      UUIDv5.url(
        "healthetl:workout:Jürgen’s Apple Watch|HKWorkoutActivityTypeRunning|1704175200|1704177030", uppercase: true)
        == "289DA714-C2DA-5473-8C28-E278807A0917")
  }

  /// Python's uuid.uuid5(uuid.NAMESPACE_URL, "http://python.org/") — a widely published value.
  @Test func matchesTheWellKnownURLExample() {
    #expect(UUIDv5.url("http://python.org/") == "4c565f0d-3f5a-5890-b41b-20cf47701c5e")
  }
}
