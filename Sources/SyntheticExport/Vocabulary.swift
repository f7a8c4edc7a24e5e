/// The fixed strings of the export: sources, record types, units and category values, each written
/// straight from a literal.

/// Who wrote a sample. Alex has an iPhone, an Apple Watch, the AutoSleep app and a Withings scale
/// and blood-pressure cuff.
enum SampleSource: UInt8 {
  case watch, iPhone, autoSleep, withings
  // The other profiles' sources (`SampleProfile`).
  case garminConnect, sleepCycle, pillow, oldIPhone, miFit, runtastic, healthMate, jawboneUP
  // `third-party-workouts`: a running app, and the iPhone's headphone audio from AirPods that name
  // themselves by product or by model code.
  case runkeeper, airPodsPro, airPodsByCode
  // `food-glucose-bp`: food, glucose, blood-pressure, scale and cycling apps.
  case myFitnessPal, loseIt, yazio, lifesum, cronometer, nutrino, fatSecret, noom
  case mySugr, oneTouchReveal, omronConnect, qardio, renpho, eufyLife, strava, wahoo, zwift

  var name: StaticString {
    switch self {
    case .watch: return "Alex’s Apple Watch"
    case .iPhone: return "Alex’s iPhone"
    case .autoSleep: return "AutoSleep"
    case .withings: return "Withings"
    case .garminConnect: return "Connect"
    case .sleepCycle: return "Sleep Cycle"
    case .pillow: return "Pillow"
    case .oldIPhone: return "Alex’s iPhone"
    case .miFit: return "Mi Fit"
    case .runtastic: return "Runtastic"
    case .healthMate: return "Health Mate"
    case .jawboneUP: return "Jawbone UP"
    case .runkeeper: return "Runkeeper"
    case .airPodsPro: return "Alex’s iPhone"
    case .airPodsByCode: return "Alex’s iPhone"
    case .myFitnessPal: return "MyFitnessPal"
    case .loseIt: return "Lose It!"
    case .yazio: return "YAZIO"
    case .lifesum: return "Lifesum"
    case .cronometer: return "Cronometer"
    case .nutrino: return "Nutrino"
    case .fatSecret: return "FatSecret"
    case .noom: return "Noom"
    case .mySugr: return "mySugr"
    case .oneTouchReveal: return "OneTouch Reveal"
    case .omronConnect: return "OMRON connect"
    case .qardio: return "Qardio"
    case .renpho: return "Renpho"
    case .eufyLife: return "EufyLife"
    case .strava: return "Strava"
    case .wahoo: return "Wahoo"
    case .zwift: return "Zwift"
    }
  }

  var version: StaticString {
    switch self {
    case .watch: return "10.1"
    case .iPhone: return "17.2"
    case .autoSleep: return "6.4.0"
    case .withings: return "6.3.1"
    case .garminConnect: return "4.38.1"
    case .sleepCycle: return "5.8.4"
    case .pillow: return "3.6.2"
    case .oldIPhone: return "10.2"
    case .miFit: return "2.2.3"
    case .runtastic: return "7.2"
    case .healthMate: return "2.6.2"
    case .jawboneUP: return "4.6"
    case .runkeeper: return "14.2.1"
    case .airPodsPro: return "17.2"
    case .airPodsByCode: return "17.2"
    case .myFitnessPal: return "24.3.0"
    case .loseIt: return "15.1.2"
    case .yazio: return "10.9.0"
    case .lifesum: return "13.4.1"
    case .cronometer: return "4.12.3"
    case .nutrino: return "3.2"
    case .fatSecret: return "9.1.0"
    case .noom: return "11.8.0"
    case .mySugr: return "3.96.1"
    case .oneTouchReveal: return "5.6.1"
    case .omronConnect: return "7.12.0"
    case .qardio: return "2.9.4"
    case .renpho: return "5.4.0"
    case .eufyLife: return "3.7.2"
    case .strava: return "351.0.1"
    case .wahoo: return "3.2.1"
    case .zwift: return "1.0.121"
    }
  }

  /// The `device` text around the per-record object pointer; the third-party sources write none.
  var devicePrefix: StaticString { "&lt;&lt;HKDevice: 0x" }

  var deviceSuffix: StaticString? {
    switch self {
    case .watch:
      return "&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1&gt;"
    case .iPhone:
      return "&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,3, software:17.2&gt;"
    case .oldIPhone:
      return "&gt;, name:iPhone, manufacturer:Apple, model:iPhone, hardware:iPhone8,4, software:10.2&gt;"
    case .airPodsPro:
      // The AirPods the phone measured headphone audio with; by product name and model number…
      return "&gt;, name:AirPods Pro, manufacturer:Apple Inc., model:A2084, localIdentifier:0x200e&gt;"
    case .airPodsByCode:
      // …or, as some real exports hold, named by the model code alone.
      return "&gt;, name:0x200f, manufacturer:Apple Inc., model:0x200f&gt;"
    case .autoSleep, .withings, .garminConnect, .sleepCycle, .pillow, .miFit, .runtastic, .healthMate, .jawboneUP:
      return nil
    case .runkeeper, .myFitnessPal, .loseIt, .yazio, .lifesum, .cronometer, .nutrino, .fatSecret, .noom, .mySugr,
      .oneTouchReveal, .omronConnect, .qardio, .renpho, .eufyLife, .strava, .wahoo, .zwift:
      return nil
    }
  }
}

/// The record types written, in the order their blocks appear (as in a real export, every record of
/// one type comes before the next type).
enum RecordType: Int, CaseIterable {
  case bodyMass, heartRate, stepCount, distanceWalkingRunning, basalEnergyBurned, activeEnergyBurned
  case flightsClimbed, bloodPressureSystolic, bloodPressureDiastolic, sleepAnalysis, appleStandHour
  case distanceSwimming, swimmingStrokeCount, mindfulSession, restingHeartRate, walkingHeartRateAverage
  case heartRateVariabilitySDNN
  // Written by the `third-party-workouts` and `food-glucose-bp` profiles only.
  case headphoneAudioExposure, environmentalAudioExposure, dietaryEnergyConsumed, dietaryCarbohydrates
  case dietaryProtein, dietaryFatTotal, bloodGlucose, bodyFatPercentage, bodyMassIndex, leanBodyMass
  case walkingSpeed, walkingStepLength, walkingAsymmetryPercentage, walkingDoubleSupportPercentage
  case distanceCycling

  var identifier: StaticString {
    switch self {
    case .bodyMass: return "HKQuantityTypeIdentifierBodyMass"
    case .heartRate: return "HKQuantityTypeIdentifierHeartRate"
    case .stepCount: return "HKQuantityTypeIdentifierStepCount"
    case .distanceWalkingRunning: return "HKQuantityTypeIdentifierDistanceWalkingRunning"
    case .basalEnergyBurned: return "HKQuantityTypeIdentifierBasalEnergyBurned"
    case .activeEnergyBurned: return "HKQuantityTypeIdentifierActiveEnergyBurned"
    case .flightsClimbed: return "HKQuantityTypeIdentifierFlightsClimbed"
    case .bloodPressureSystolic: return "HKQuantityTypeIdentifierBloodPressureSystolic"
    case .bloodPressureDiastolic: return "HKQuantityTypeIdentifierBloodPressureDiastolic"
    case .sleepAnalysis: return "HKCategoryTypeIdentifierSleepAnalysis"
    case .appleStandHour: return "HKCategoryTypeIdentifierAppleStandHour"
    case .distanceSwimming: return "HKQuantityTypeIdentifierDistanceSwimming"
    case .swimmingStrokeCount: return "HKQuantityTypeIdentifierSwimmingStrokeCount"
    case .mindfulSession: return "HKCategoryTypeIdentifierMindfulSession"
    case .restingHeartRate: return "HKQuantityTypeIdentifierRestingHeartRate"
    case .walkingHeartRateAverage: return "HKQuantityTypeIdentifierWalkingHeartRateAverage"
    case .heartRateVariabilitySDNN: return "HKQuantityTypeIdentifierHeartRateVariabilitySDNN"
    case .headphoneAudioExposure: return "HKQuantityTypeIdentifierHeadphoneAudioExposure"
    case .environmentalAudioExposure: return "HKQuantityTypeIdentifierEnvironmentalAudioExposure"
    case .dietaryEnergyConsumed: return "HKQuantityTypeIdentifierDietaryEnergyConsumed"
    case .dietaryCarbohydrates: return "HKQuantityTypeIdentifierDietaryCarbohydrates"
    case .dietaryProtein: return "HKQuantityTypeIdentifierDietaryProtein"
    case .dietaryFatTotal: return "HKQuantityTypeIdentifierDietaryFatTotal"
    case .bloodGlucose: return "HKQuantityTypeIdentifierBloodGlucose"
    case .bodyFatPercentage: return "HKQuantityTypeIdentifierBodyFatPercentage"
    case .bodyMassIndex: return "HKQuantityTypeIdentifierBodyMassIndex"
    case .leanBodyMass: return "HKQuantityTypeIdentifierLeanBodyMass"
    case .walkingSpeed: return "HKQuantityTypeIdentifierWalkingSpeed"
    case .walkingStepLength: return "HKQuantityTypeIdentifierWalkingStepLength"
    case .walkingAsymmetryPercentage: return "HKQuantityTypeIdentifierWalkingAsymmetryPercentage"
    case .walkingDoubleSupportPercentage: return "HKQuantityTypeIdentifierWalkingDoubleSupportPercentage"
    case .distanceCycling: return "HKQuantityTypeIdentifierDistanceCycling"
    }
  }

  /// The identifier without its `HK…TypeIdentifier` prefix, as the stats report it.
  var shortName: String {
    let full = "\(identifier)"
    for prefix in ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier"] where full.hasPrefix(prefix) {
      return String(full.dropFirst(prefix.count))
    }
    return full
  }
}

/// A quantity's unit, or a category sample's value name (category records carry no `unit`).
enum SampleUnit: UInt8 {
  case count, countPerMinute, meter, kilometer, kilocalorie, largeCalorie, pound, millimeterOfMercury
  case millisecond
  /// Beats per second, as iOS 8–9 exports wrote heart rate.
  case countPerSecond
  case standStood, standIdle
  case sleepInBed, sleepCore, sleepDeep, sleepREM, sleepAwake, sleepUnspecified
  /// A category sample without a `value` attribute (old-style MindfulSession).
  case noValue
  /// Asleep as iOS 10–15 wrote it, before `AsleepUnspecified`.
  case sleepAsleep
  /// Withings' stages in iOS 8–9 exports: a `Sleep Stage` attribute and no value.
  case withingsLight, withingsDeep
  // Quantities of the `third-party-workouts` and `food-glucose-bp` profiles.
  case gram, milligramPerDeciliter, millimolePerLiter, percent, kilogram, kilometerPerHour, centimeter
  case decibelASPL

  var isCategory: Bool { (SampleUnit.standStood.rawValue...SampleUnit.withingsDeep.rawValue).contains(rawValue) }

  var text: StaticString {
    switch self {
    case .count: return "count"
    case .countPerMinute: return "count/min"
    case .meter: return "m"
    case .kilometer: return "km"
    case .kilocalorie: return "kcal"
    case .largeCalorie: return "Cal"
    case .pound: return "lb"
    case .millimeterOfMercury: return "mmHg"
    case .millisecond: return "ms"
    case .countPerSecond: return "count/s"
    case .standStood: return "HKCategoryValueAppleStandHourStood"
    case .standIdle: return "HKCategoryValueAppleStandHourIdle"
    case .sleepInBed: return "HKCategoryValueSleepAnalysisInBed"
    case .sleepCore: return "HKCategoryValueSleepAnalysisAsleepCore"
    case .sleepDeep: return "HKCategoryValueSleepAnalysisAsleepDeep"
    case .sleepREM: return "HKCategoryValueSleepAnalysisAsleepREM"
    case .sleepAwake: return "HKCategoryValueSleepAnalysisAwake"
    case .sleepUnspecified: return "HKCategoryValueSleepAnalysisAsleepUnspecified"
    case .noValue: return ""
    case .sleepAsleep: return "HKCategoryValueSleepAnalysisAsleep"
    case .withingsLight: return "Light"
    case .withingsDeep: return "Deep"
    case .gram: return "g"
    case .milligramPerDeciliter: return "mg/dL"
    // As HealthKit writes mmol/L of glucose: with the molar mass in the unit, its brackets escaped.
    case .millimolePerLiter: return "mmol&lt;180.1558800000541&gt;/L"
    case .percent: return "%"
    case .kilogram: return "kg"
    case .kilometerPerHour: return "km/hr"
    case .centimeter: return "cm"
    case .decibelASPL: return "dBASPL"
    }
  }

  /// The value as iOS 8–9 wrote it: HealthKit's raw value for sleep (`0` in bed, `1` asleep),
  /// nil for a record with no `value` (Jawbone's in-bed, Withings' stages).
  var legacyText: StaticString? {
    switch self {
    case .sleepInBed: return "0"
    case .sleepAsleep, .sleepUnspecified: return "1"
    case .noValue, .withingsLight, .withingsDeep: return nil
    default: return text
    }
  }

  /// Withings' stage, written as a `Sleep Stage` attribute.
  var isWithingsStage: Bool { self == .withingsLight || self == .withingsDeep }
}

/// The one metadata entry (or beat list) a record carries, if any.
enum SampleMetadata: UInt8 {
  case none
  /// `HKMetadataKeyHeartRateMotionContext` = `metadataValue`.
  case motionContext
  /// `HKWasUserEntered` = 1.
  case userEntered
  /// `HKTimeZone` = Europe/Berlin.
  case timeZone
  /// `HKSwimmingStrokeStyle` = `metadataValue`.
  case strokeStyle
  /// A `HeartRateVariabilityMetadataList` regenerated from the sample's `detail` seed.
  case beats
  // Written as attributes, in the iOS 8–9 format only:
  /// A discrete quantity as a day aggregate: `min`, `max` (`Sample.aggregate`), `average` (the
  /// value), `recordCount` (`metadataValue`), and no `value`.
  case dayAggregate
  /// `recordCount` = `metadataValue` beside the value.
  case recordCount
  /// `sessionId` = `pointer`.
  case sessionId
}

/// The workouts Alex does.
enum WorkoutKind: UInt8 {
  case running, walking, cycling, strength, poolSwim, openWaterSwim
  /// A run saved the old way: only `totalDistance`/`totalEnergyBurned` attributes, no statistics.
  case legacyRunning
  /// Swim, ride and run in one workout (the `multisport` profile); its samples are a ride's.
  case triathlon

  var activityType: StaticString {
    switch self {
    case .running, .legacyRunning: return "HKWorkoutActivityTypeRunning"
    case .walking: return "HKWorkoutActivityTypeWalking"
    case .cycling: return "HKWorkoutActivityTypeCycling"
    case .strength: return "HKWorkoutActivityTypeTraditionalStrengthTraining"
    case .poolSwim, .openWaterSwim: return "HKWorkoutActivityTypeSwimming"
    case .triathlon: return "HKWorkoutActivityTypeSwimBikeRun"
    }
  }

  var hasRoute: Bool {
    switch self {
    case .running, .walking, .cycling, .openWaterSwim, .triathlon: return true
    case .strength, .poolSwim, .legacyRunning: return false
    }
  }

  /// Whether the Watch counts steps and walking/running distance during it.
  var isOnFoot: Bool { self == .running || self == .walking || self == .legacyRunning }

  /// Seconds between heart-rate samples. The Watch measures every 5 s in a workout; swimming is
  /// sparser because the optical sensor struggles underwater.
  var heartRateInterval: ClosedRange<Int64> {
    switch self {
    case .running, .legacyRunning, .walking, .cycling, .strength, .triathlon: return 5...5
    case .poolSwim, .openWaterSwim: return 20...60
    }
  }

  /// Active energy per minute while moving, kcal.
  var kcalPerMinute: ClosedRange<Double> {
    switch self {
    case .running, .legacyRunning: return 11.0...13.5
    case .walking: return 4.2...5.4
    case .cycling, .triathlon: return 8.0...10.5
    case .strength: return 5.0...7.0
    case .poolSwim: return 8.5...10.5
    case .openWaterSwim: return 9.0...11.0
    }
  }

  /// Heart rate the effort settles at, beats per minute.
  var heartRateLevel: ClosedRange<Double> {
    switch self {
    case .running, .legacyRunning: return 148...162
    case .walking: return 98...112
    case .cycling, .triathlon: return 128...145
    case .strength: return 105...125
    case .poolSwim, .openWaterSwim: return 125...142
    }
  }

  /// METs as written in `HKAverageMETs`.
  var averageMETs: ClosedRange<Double> {
    switch self {
    case .running, .legacyRunning: return 9.2...10.6
    case .walking: return 3.6...4.4
    case .cycling, .triathlon: return 7.0...8.5
    case .strength: return 4.5...5.5
    case .poolSwim, .openWaterSwim: return 7.5...8.8
    }
  }
}
