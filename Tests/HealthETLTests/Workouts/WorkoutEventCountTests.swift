import HealthModel
import Testing

@testable import HealthETL

/// The `events` column and the quantities of workout attributes, worked out by hand.
@Suite struct WorkoutEventCountTests {
  private func event(_ type: String) -> WorkoutElement.Event {
    WorkoutElement.Event(type: type, date: nil, duration: nil, metadata: [])
  }

  /// HealthKit's types in their fixed order, others after them by name; a type written with and
  /// without its `HKWorkoutEventType` prefix is one type.
  @Test func eventsAreCountedByName() {
    let events = [
      "HKWorkoutEventTypeLap", "HKWorkoutEventTypeSegment", "HKWorkoutEventTypeLap", "Zeta",
      "HKWorkoutEventTypePause", "Lap", "HKWorkoutEventTypeResume", "HKWorkoutEventTypeLap", "alpha",
    ].map(event)
    #expect(WorkoutRowBuilder.eventCounts(events) == "pause=1;resume=1;lap=4;segment=1;alpha=1;zeta=1")
    #expect(WorkoutRowBuilder.eventCounts([]) == "")
  }

  @Test(
    arguments: [
      ("12.5 km", "12.5", "km"),
      ("  12.5   km  ", "12.5", "km"),
      ("3", "3", nil),
      ("1 ", "1", nil),
      ("45 min", "45", "min"),
    ] as [(String, String, String?)])
  func quantitiesSplitIntoValueAndUnit(text: String, value: String, unit: String?) throws {
    let parsed = try #require(WorkoutUnits.parseQuantity(text))
    #expect(parsed.value == ExactDecimal(value)!)
    #expect(parsed.unit == unit)
  }

  @Test func aQuantityWithoutANumberIsNone() {
    #expect(WorkoutUnits.parseQuantity("km 12") == nil)
    #expect(WorkoutUnits.parseQuantity("") == nil)
  }
}
