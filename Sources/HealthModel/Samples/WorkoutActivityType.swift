/// The `HKWorkoutActivityType` enumeration: every case name with its raw value, deprecated and
/// internal cases included, as in Apple's `HKWorkoutActivityType.h`. Old exports
/// still carry deprecated names (`Dance`, `MixedMetabolicCardioTraining`), so they must resolve.
public enum WorkoutActivityTypeTable {
  /// The prefix every export string carries: `HKWorkoutActivityTypeRunning`.
  public static let prefix = "HKWorkoutActivityType"

  /// `(name, raw value)` in raw-value order. Raw 81 has no case.
  public static let entries: [(name: String, rawValue: Int)] = [
    ("AmericanFootball", 1), ("Archery", 2), ("AustralianFootball", 3), ("Badminton", 4), ("Baseball", 5),
    ("Basketball", 6), ("Bowling", 7), ("Boxing", 8), ("Climbing", 9), ("Cricket", 10), ("CrossTraining", 11),
    ("Curling", 12), ("Cycling", 13),
    ("Dance", 14),  // deprecated iOS 14
    ("DanceInspiredTraining", 15),  // deprecated iOS 10
    ("Elliptical", 16), ("EquestrianSports", 17), ("Fencing", 18), ("Fishing", 19),
    ("FunctionalStrengthTraining", 20), ("Golf", 21), ("Gymnastics", 22), ("Handball", 23), ("Hiking", 24),
    ("Hockey", 25), ("Hunting", 26), ("Lacrosse", 27), ("MartialArts", 28), ("MindAndBody", 29),
    ("MixedMetabolicCardioTraining", 30),  // deprecated iOS 11
    ("PaddleSports", 31), ("Play", 32), ("PreparationAndRecovery", 33), ("Racquetball", 34), ("Rowing", 35),
    ("Rugby", 36), ("Running", 37), ("Sailing", 38), ("SkatingSports", 39), ("SnowSports", 40), ("Soccer", 41),
    ("Softball", 42), ("Squash", 43), ("StairClimbing", 44), ("SurfingSports", 45), ("Swimming", 46),
    ("TableTennis", 47), ("Tennis", 48), ("TrackAndField", 49), ("TraditionalStrengthTraining", 50),
    ("Volleyball", 51), ("Walking", 52), ("WaterFitness", 53), ("WaterPolo", 54), ("WaterSports", 55),
    ("Wrestling", 56), ("Yoga", 57), ("Barre", 58), ("CoreTraining", 59), ("CrossCountrySkiing", 60),
    ("DownhillSkiing", 61), ("Flexibility", 62), ("HighIntensityIntervalTraining", 63), ("JumpRope", 64),
    ("Kickboxing", 65), ("Pilates", 66), ("Snowboarding", 67), ("Stairs", 68), ("StepTraining", 69),
    ("WheelchairWalkPace", 70), ("WheelchairRunPace", 71), ("TaiChi", 72), ("MixedCardio", 73),
    ("HandCycling", 74), ("DiscSports", 75), ("FitnessGaming", 76), ("CardioDance", 77), ("SocialDance", 78),
    ("Pickleball", 79), ("Cooldown", 80), ("SwimBikeRun", 82), ("Transition", 83), ("UnderwaterDiving", 84),
    ("Rest", 2998), ("Group", 2999),  // API_UNAVAILABLE, internal to HealthKit
    ("Other", 3000),
  ]

  /// Every case name, in raw-value order.
  public static let names: [String] = entries.map(\.name)

  private static let rawValues: [String: Int] = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.rawValue) })

  /// The raw value of a case name (`Running` → 37), nil for a name HealthKit does not have.
  public static func rawValue(for name: String) -> Int? { rawValues[name] }

  /// The case name of an export string: `HKWorkoutActivityTypeRunning` → `Running`. A string
  /// without the prefix is returned unchanged, so an unknown future type still has a name.
  public static func name(fromExportString text: String) -> String {
    text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
  }
}
