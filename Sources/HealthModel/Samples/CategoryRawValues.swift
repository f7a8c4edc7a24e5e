/// HealthKit's raw values of category values, for exports that write the number where later ones
/// write the name (iOS 8–9: `SleepAnalysis` `value="1"`), or write no value at all
/// (Pipelines/docs/samples.md, "Samples"; Pipelines/docs/sleep.md, "The iOS 8–9 shapes").
///
/// From Apple's `HKCategoryValues.h` (iOS 18 SDK): each category type's `NS_ENUM` with its
/// raw values. A name is the one current exports write, so a number and a name read alike.
public enum CategoryRawValues {
  /// The value name (`HKCategoryValueSleepAnalysisInBed`) of `raw` for the type whose short name
  /// is `typeShortName`; nil when HealthETL does not know the type's values or the type has no
  /// value `raw`.
  public static func name(raw: Int, typeShortName: String) -> String? {
    guard let values = table[typeShortName] else { return nil }
    let index = raw - values.first
    guard index >= 0, index < values.names.count else { return nil }
    let suffix = values.names[index]
    return values.isNotApplicable ? "HKCategoryValueNotApplicable" : "HKCategoryValue" + typeShortName + suffix
  }

  /// The raw values a type has (`0...5` for `SleepAnalysis`); nil when HealthETL does not know them.
  public static func rawValues(ofTypeShortName typeShortName: String) -> ClosedRange<Int>? {
    table[typeShortName].map { $0.first...($0.first + $0.names.count - 1) }
  }

  /// The value a record of the type stands for when it has no `value` attribute: raw value 0,
  /// as exports left out the value 0 (`HKCategoryValueNotApplicable`, and Jawbone's in-bed sleep
  /// in iOS 8–9). Nil when the type has no value 0 (its values start at 1) or is unknown.
  public static func nameWhenAbsent(typeShortName: String) -> String? { name(raw: 0, typeShortName: typeShortName) }

  /// A type's values: the raw value of the first, then each name after the type's own name.
  struct Values {
    var first: Int
    var names: [String]
    /// The type takes only `HKCategoryValueNotApplicable` (0).
    var isNotApplicable = false
  }

  static let table: [String: Values] = {
    var table: [String: Values] = [
      // Raw 1 is `AsleepUnspecified` since iOS 16, `Asleep` before (the same value).
      "SleepAnalysis": Values(
        first: 0, names: ["InBed", "AsleepUnspecified", "Awake", "AsleepCore", "AsleepDeep", "AsleepREM"]),
      "AppleStandHour": Values(first: 0, names: ["Stood", "Idle"]),
      "AppleWalkingSteadinessEvent": Values(
        first: 1, names: ["InitialLow", "InitialVeryLow", "RepeatLow", "RepeatVeryLow"]),
      "CervicalMucusQuality": Values(first: 1, names: ["Dry", "Sticky", "Creamy", "Watery", "EggWhite"]),
      "Contraceptive": Values(
        first: 1,
        names: ["Unspecified", "Implant", "Injection", "IntrauterineDevice", "IntravaginalRing", "Oral", "Patch"]),
      "AudioExposureEvent": Values(first: 1, names: ["LoudEnvironment"]),
      "EnvironmentalAudioExposureEvent": Values(first: 1, names: ["MomentaryLimit"]),
      "HeadphoneAudioExposureEvent": Values(first: 1, names: ["SevenDayLimit"]),
      "LowCardioFitnessEvent": Values(first: 1, names: ["LowFitness"]),
      "MenstrualFlow": Values(first: 1, names: ["Unspecified", "Light", "Medium", "Heavy", "None"]),
      // Raw 2 was `Positive` before iOS 13 (the same value).
      "OvulationTestResult": Values(
        first: 1, names: ["Negative", "LuteinizingHormoneSurge", "Indeterminate", "EstrogenSurge"]),
      "PregnancyTestResult": Values(first: 1, names: ["Negative", "Positive", "Indeterminate"]),
      "ProgesteroneTestResult": Values(first: 1, names: ["Negative", "Positive", "Indeterminate"]),
    ]
    // The types whose samples carry no value of their own (`HKCategoryValueNotApplicable`).
    for type in [
      "MindfulSession", "HighHeartRateEvent", "LowHeartRateEvent", "IrregularHeartRhythmEvent", "ToothbrushingEvent",
      "HandwashingEvent", "IntermenstrualBleeding", "SexualActivity", "SleepApneaEvent", "Pregnancy", "Lactation",
      "InfrequentMenstrualCycles", "IrregularMenstrualCycles", "PersistentIntermenstrualBleeding",
      "ProlongedMenstrualPeriods", "BleedingDuringPregnancy", "BleedingAfterPregnancy",
    ] {
      table[type] = Values(first: 0, names: ["NotApplicable"], isNotApplicable: true)
    }
    return table
  }()

  /// The `SleepAnalysis` value name of a Withings `Sleep Stage` attribute (iOS 8–9 exports of
  /// Health Mate, which write it instead of a value; Pipelines/docs/sleep.md, "Sleep jobs", "The
  /// iOS 8–9 shapes"): Deep → asleepDeep, Light → asleepCore (Apple's core is light sleep, AASM
  /// stages 1 and 2), REM → asleepREM, Awake → awake, any other text → asleepUnspecified (a sleep
  /// tracker's record of a stage it names is sleep). Letter case and surrounding spaces do not
  /// matter.
  public static func sleepValueName(ofWithingsStage text: String) -> String {
    let stage = text.trimmingSpaces.lowercased()
    let suffix: String
    switch stage {
    case "deep": suffix = "AsleepDeep"
    case "light": suffix = "AsleepCore"
    case "rem": suffix = "AsleepREM"
    case "awake": suffix = "Awake"
    default: suffix = "AsleepUnspecified"
    }
    return "HKCategoryValueSleepAnalysis" + suffix
  }
}

extension String {
  fileprivate var trimmingSpaces: Substring {
    var text = Substring(self)
    while text.first == " " { text = text.dropFirst() }
    while text.last == " " { text = text.dropLast() }
    return text
  }
}
