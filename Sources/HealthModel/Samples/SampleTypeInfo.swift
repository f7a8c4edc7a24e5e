/// Everything HealthETL knows about one `type` identifier, worked out once per distinct identifier.
public struct SampleTypeInfo: Sendable, Hashable {
  /// As written: `HKQuantityTypeIdentifierStepCount`.
  public let identifier: String
  /// Without its prefix: `StepCount`.
  public let shortName: String
  public let kind: SampleKind
  /// Quantity types only; nil for categories and others. Unknown quantity identifiers are taken
  /// as discrete (arithmetic), the safe choice: they are never summed.
  public let aggregation: AggregationStyle?
  /// Whether HealthETL knows this identifier (unknown ones are kept and reported).
  public let isKnown: Bool

  static let prefixes: [(String, SampleKind)] = [
    ("HKQuantityTypeIdentifier", .quantity),
    ("HKCategoryTypeIdentifier", .category),
    ("HKCorrelationTypeIdentifier", .other),
    ("HKDataType", .other),
    ("HKWorkoutTypeIdentifier", .other),
  ]

  public init(identifier: String) {
    self.identifier = identifier
    var short = identifier
    var kind = SampleKind.other
    for (prefix, prefixKind) in Self.prefixes where identifier.hasPrefix(prefix) {
      short = String(identifier.dropFirst(prefix.count))
      kind = prefixKind
      break
    }
    self.shortName = short
    self.kind = kind
    switch kind {
    case .quantity:
      let style = Self.aggregationStyles[short]
      aggregation = style ?? .discreteArithmetic
      isKnown = style != nil
    case .category:
      aggregation = nil
      isKnown = Self.knownCategories.contains(short)
    case .other:
      aggregation = nil
      isKnown = short == "SleepDurationGoal"
    }
  }

  /// Whether `shortName` (`StepCount`, `SleepAnalysis`) is a type HealthETL knows.
  public static func isKnown(shortName: String) -> Bool {
    aggregationStyles[shortName] != nil || knownCategories.contains(shortName) || shortName == "SleepDurationGoal"
  }

  /// The aggregation style of a known quantity type's short name.
  public static func aggregation(ofShortName shortName: String) -> AggregationStyle? { aggregationStyles[shortName] }

  /// From Apple's `HKTypeIdentifiers.h` (iOS 18.1 SDK), which annotates every quantity identifier
  /// with its aggregation style (listed in Pipelines/docs/statistics.md, "Which options apply").
  static let aggregationStyles: [String: AggregationStyle] = {
    var table: [String: AggregationStyle] = [:]
    let cumulative = [
      "StepCount", "DistanceWalkingRunning", "DistanceCycling", "DistanceSwimming", "DistanceWheelchair",
      "DistanceDownhillSnowSports", "DistanceCrossCountrySkiing", "DistancePaddleSports", "DistanceRowing",
      "DistanceSkatingSports", "ActiveEnergyBurned", "BasalEnergyBurned", "DietaryEnergyConsumed",
      "AppleExerciseTime", "AppleStandTime", "AppleMoveTime", "TimeInDaylight", "FlightsClimbed", "PushCount",
      "SwimmingStrokeCount", "NikeFuel", "NumberOfTimesFallen", "InhalerUsage", "NumberOfAlcoholicBeverages",
      "InsulinDelivery", "DietaryWater", "DietaryFatTotal", "DietaryFatSaturated", "DietaryFatMonounsaturated",
      "DietaryFatPolyunsaturated", "DietaryCholesterol", "DietarySodium", "DietaryCarbohydrates", "DietaryFiber",
      "DietarySugar", "DietaryProtein", "DietaryVitaminA", "DietaryVitaminB6", "DietaryVitaminB12",
      "DietaryVitaminC", "DietaryVitaminD", "DietaryVitaminE", "DietaryVitaminK", "DietaryCalcium",
      "DietaryIron", "DietaryThiamin", "DietaryRiboflavin", "DietaryNiacin", "DietaryFolate", "DietaryBiotin",
      "DietaryPantothenicAcid", "DietaryPhosphorus", "DietaryIodine", "DietaryMagnesium", "DietaryZinc",
      "DietarySelenium", "DietaryCopper", "DietaryManganese", "DietaryChromium", "DietaryMolybdenum",
      "DietaryChloride", "DietaryPotassium", "DietaryCaffeine",
    ]
    for name in cumulative { table[name] = .cumulative }
    for name in ["HeartRate", "AtrialFibrillationBurden"] { table[name] = .discreteTemporallyWeighted }
    for name in ["EnvironmentalAudioExposure", "HeadphoneAudioExposure", "EnvironmentalSoundReduction"] {
      table[name] = .discreteEquivalentContinuousLevel
    }
    let arithmetic = [
      "RestingHeartRate", "WalkingHeartRateAverage", "HeartRateRecoveryOneMinute", "HeartRateVariabilitySDNN",
      "OxygenSaturation", "BodyFatPercentage", "PeripheralPerfusionIndex", "BloodAlcoholContent",
      "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage", "AppleWalkingSteadiness", "BodyMass",
      "LeanBodyMass", "Height", "WaistCircumference", "BodyMassIndex", "RespiratoryRate", "VO2Max",
      "BodyTemperature", "BasalBodyTemperature", "AppleSleepingWristTemperature", "WaterTemperature",
      "BloodPressureSystolic", "BloodPressureDiastolic", "BloodGlucose", "WalkingSpeed", "RunningSpeed",
      "CyclingSpeed", "StairAscentSpeed", "StairDescentSpeed", "RowingSpeed", "PaddleSportsSpeed",
      "CrossCountrySkiingSpeed", "WalkingStepLength", "RunningStrideLength", "SixMinuteWalkTestDistance",
      "UnderwaterDepth", "RunningVerticalOscillation", "RunningGroundContactTime", "RunningPower",
      "CyclingPower", "CyclingFunctionalThresholdPower", "CyclingCadence", "PhysicalEffort",
      "WorkoutEffortScore", "EstimatedWorkoutEffortScore", "AppleSleepingBreathingDisturbances", "UVExposure",
      "ElectrodermalActivity", "ForcedVitalCapacity", "ForcedExpiratoryVolume1", "PeakExpiratoryFlowRate",
    ]
    for name in arithmetic { table[name] = .discreteArithmetic }
    return table
  }()

  /// The unit a known quantity type's values are in once converted (Pipelines/docs/samples.md, "Units"):
  /// the canonical unit of the dimension Apple records it in. Types whose unit HealthETL does not
  /// convert (VO₂ max, power, effort) keep the unit exports write; nil for other types.
  public static func canonicalUnit(ofShortName shortName: String) -> String? { canonicalUnits[shortName] }

  static let canonicalUnits: [String: String] = {
    var table: [String: String] = [:]
    let groups: [(String, [String])] = [
      (
        "count",
        [
          "StepCount", "FlightsClimbed", "PushCount", "SwimmingStrokeCount", "NikeFuel", "NumberOfTimesFallen",
          "InhalerUsage", "NumberOfAlcoholicBeverages", "BodyMassIndex", "UVExposure",
          "AppleSleepingBreathingDisturbances",
        ]
      ),
      (
        "m",
        [
          "DistanceWalkingRunning", "DistanceCycling", "DistanceSwimming", "DistanceWheelchair",
          "DistanceDownhillSnowSports", "DistanceCrossCountrySkiing", "DistancePaddleSports", "DistanceRowing",
          "DistanceSkatingSports", "Height", "WaistCircumference", "WalkingStepLength", "RunningStrideLength",
          "SixMinuteWalkTestDistance", "UnderwaterDepth", "RunningVerticalOscillation",
        ]
      ),
      ("kcal", ["ActiveEnergyBurned", "BasalEnergyBurned", "DietaryEnergyConsumed"]),
      ("s", ["AppleExerciseTime", "AppleStandTime", "AppleMoveTime", "TimeInDaylight"]),
      ("ms", ["HeartRateVariabilitySDNN", "RunningGroundContactTime"]),
      (
        "count/min",
        [
          "HeartRate", "RestingHeartRate", "WalkingHeartRateAverage", "HeartRateRecoveryOneMinute",
          "RespiratoryRate", "CyclingCadence",
        ]
      ),
      (
        "%",
        [
          "OxygenSaturation", "BodyFatPercentage", "PeripheralPerfusionIndex", "BloodAlcoholContent",
          "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage", "AppleWalkingSteadiness",
          "AtrialFibrillationBurden",
        ]
      ),
      ("kg", ["BodyMass", "LeanBodyMass"]),
      ("mL", ["DietaryWater", "ForcedVitalCapacity", "ForcedExpiratoryVolume1"]),
      ("degC", ["BodyTemperature", "BasalBodyTemperature", "AppleSleepingWristTemperature", "WaterTemperature"]),
      ("mmHg", ["BloodPressureSystolic", "BloodPressureDiastolic"]),
      ("mg/dL", ["BloodGlucose"]),
      (
        "m/s",
        [
          "WalkingSpeed", "RunningSpeed", "CyclingSpeed", "StairAscentSpeed", "StairDescentSpeed", "RowingSpeed",
          "PaddleSportsSpeed", "CrossCountrySkiingSpeed",
        ]
      ),
      ("dBASPL", ["EnvironmentalAudioExposure", "HeadphoneAudioExposure", "EnvironmentalSoundReduction"]),
      ("W", ["RunningPower", "CyclingPower", "CyclingFunctionalThresholdPower"]),
      ("mL/min·kg", ["VO2Max"]),
      ("kcal/hr·kg", ["PhysicalEffort"]),
      ("appleEffortScore", ["WorkoutEffortScore", "EstimatedWorkoutEffortScore"]),
      ("IU", ["InsulinDelivery"]),
      ("L/min", ["PeakExpiratoryFlowRate"]),
      ("mcS", ["ElectrodermalActivity"]),
    ]
    for (unit, names) in groups { for name in names { table[name] = unit } }
    // Every Dietary… type but energy and water is a mass (`g`, `mg`, `mcg`).
    for name in aggregationStyles.keys where name.hasPrefix("Dietary") && table[name] == nil { table[name] = "kg" }
    return table
  }()

  static let knownCategories: Set<String> = [
    "SleepAnalysis", "AppleStandHour", "MindfulSession", "HighHeartRateEvent", "LowHeartRateEvent",
    "IrregularHeartRhythmEvent", "AudioExposureEvent", "EnvironmentalAudioExposureEvent",
    "HeadphoneAudioExposureEvent", "ToothbrushingEvent", "HandwashingEvent", "CervicalMucusQuality",
    "OvulationTestResult", "MenstrualFlow", "IntermenstrualBleeding", "SexualActivity",
    "LowCardioFitnessEvent", "AppleWalkingSteadinessEvent", "SleepApneaEvent", "Pregnancy", "Lactation",
    "Contraceptive", "PregnancyTestResult", "ProgesteroneTestResult", "InfrequentMenstrualCycles",
    "IrregularMenstrualCycles", "PersistentIntermenstrualBleeding", "ProlongedMenstrualPeriods",
    "TimeInDaylight", "BleedingDuringPregnancy", "BleedingAfterPregnancy",
  ]
}
