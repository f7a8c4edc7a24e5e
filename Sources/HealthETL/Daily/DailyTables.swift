import HealthModel

/// `daily.csv`: one row per local date, the figures of the other outputs side by side, rounded
/// to what the Health app shows. Declared here once: daily's own columns (`DailyMeasure` says where
/// each comes from), then the columns other subjects add (`DayColumnsProduct`), in the registry's
/// order.
public enum DailyTables {
  /// The table with the columns `contributions` add after daily's own.
  public static func daily(adding contributions: [any DayColumnsProduct.Type] = []) -> RowTable<DailyValues> {
    var columns: [RowColumn<DailyValues>] = [.date("date", "the local date") { $0.date }]
    columns += DailyMeasure.allCases.map(\.column)
    var index = 0
    for contribution in contributions {
      for column in contribution.columns {
        let position = index
        columns.append(
          RowColumn(column) { day in
            guard let value = day.contributed(position) else { return .missing }
            return column.kind == .integer ? .integer(Int64(value)) : .number(value)
          })
        index += 1
      }
    }
    return RowTable<DailyValues>(
      "daily",
      rows: "one row per local date of the run's zone, every date from the first to the last with data; a date "
        + "without data is a row of empty cells",
      defaultFile: "daily.csv", columns: columns, inWorkbook: true, keys: TableKeys(primary: ["date"]))
  }

  /// The workbook's Charts sheet, from the Daily sheet: steps per day; sleep per night by stage, or asleep
  /// and in bed unless at least half the nights with sleep have stages (sleep apps and older
  /// watches; an app's one awake value on a night does not make stages); resting heart rate, or
  /// the day's average heart rate when no resting heart rate was recorded (Garmin, iPhone only).
  /// Each entry's first chart with values is drawn, with only its series that have values; an
  /// entry without any draws no chart.
  /// The sleep charts' hours axis stops here, as the report's: "Worth a look"'s limit of a night
  /// asleep (Pipelines/docs/daily.md, "`health.xlsx`").
  static let sleepAxisHours = 16.0

  public static let charts: [[WorkbookChart]] = [
    [
      WorkbookChart(
        .column, title: "Steps per day", categoryColumn: "date", series: [.init("steps", name: "Steps")],
        categoryAxisTitle: "Date", valueAxisTitle: "Steps")
    ],
    [
      WorkbookChart(
        .stackedColumn, title: "Sleep per night by stage", categoryColumn: "date",
        series: [
          .init("deep_h", name: "Deep"), .init("core_h", name: "Core"), .init("rem_h", name: "REM"),
          .init("awake_h", name: "Awake"),
        ], categoryAxisTitle: "Night (date of the morning)", valueAxisTitle: "Hours",
        majority: .init("core_h", of: ["asleep_h", "in_bed_h"]), valueAxisCap: sleepAxisHours),
      WorkbookChart(
        .column, title: "Sleep per night", categoryColumn: "date",
        series: [.init("asleep_h", name: "Asleep"), .init("in_bed_h", name: "In bed")],
        categoryAxisTitle: "Night (date of the morning)", valueAxisTitle: "Hours", valueAxisCap: sleepAxisHours),
    ],
    [
      WorkbookChart(
        .line, title: "Resting heart rate", categoryColumn: "date",
        series: [.init("resting_hr_bpm", name: "Resting heart rate")], categoryAxisTitle: "Date",
        valueAxisTitle: "bpm"),
      WorkbookChart(
        .line, title: "Average heart rate per day", categoryColumn: "date",
        series: [.init("hr_avg_bpm", name: "Average heart rate")], categoryAxisTitle: "Date", valueAxisTitle: "bpm"),
    ],
  ]
}

/// A column of `daily.csv` after `date`, and the output it repeats. Every value is that
/// output's value for the date as its own file writes it, scaled to the column's unit and
/// rounded once more to the column's precision (halves away from zero); empty when the output
/// has nothing for the date, never 0.
public enum DailyMeasure: Int, Sendable, CaseIterable {
  case steps, distanceKm, activeEnergyKcal, basalEnergyKcal, flights, exerciseMin
  case moveKcal, moveGoalKcal, exerciseRingMin, exerciseGoalMin, standHours, standGoalHours
  case restingHeartRate, walkingHeartRate, hrvSDNN, heartRateMin, heartRateAvg, heartRateMax
  case respiratoryRate, vo2Max, bodyMass
  case asleepHours, inBedHours, coreHours, deepHours, remHours, awakeHours, bedtime, wakeUp
  case workouts, workoutMinutes, workoutKilocalories, swimDistance, swimStrokes
  case cyclingDistanceKm
  case systolic, diastolic, bloodPressureReadings, bloodGlucose
  case dietaryEnergy, carbohydrates, protein, fat
  case bodyFat, bodyMassIndex, leanBodyMass
  case walkingSpeed, stepLength, walkingAsymmetry, doubleSupport
  case headphoneAudio, environmentalAudio

  /// The statistic behind the column, for those computed from samples: a statistics job over
  /// one-day buckets of that type and option; the column equals that job's `stats/*.csv` value
  /// (`steps-per-day` for `steps`).
  public var statistic: DayStatistics.Key? {
    func of(_ type: String, _ option: StatisticsOption = .sum) -> DayStatistics.Key { DayStatistics.Key(type, option) }
    switch self {
    case .steps: return of("StepCount")
    case .distanceKm: return of("DistanceWalkingRunning")
    case .activeEnergyKcal: return of("ActiveEnergyBurned")
    case .basalEnergyKcal: return of("BasalEnergyBurned")
    case .flights: return of("FlightsClimbed")
    case .exerciseMin: return of("AppleExerciseTime")
    case .restingHeartRate: return of("RestingHeartRate", .avg)
    case .walkingHeartRate: return of("WalkingHeartRateAverage", .avg)
    case .hrvSDNN: return of("HeartRateVariabilitySDNN", .avg)
    case .heartRateMin: return of("HeartRate", .min)
    case .heartRateAvg: return of("HeartRate", .avg)
    case .heartRateMax: return of("HeartRate", .max)
    case .respiratoryRate: return of("RespiratoryRate", .avg)
    case .vo2Max: return of("VO2Max", .mostRecent)
    case .bodyMass: return of("BodyMass", .mostRecent)
    case .swimDistance: return of("DistanceSwimming")
    case .swimStrokes: return of("SwimmingStrokeCount")
    case .cyclingDistanceKm: return of("DistanceCycling")
    case .systolic: return of("BloodPressureSystolic", .avg)
    case .diastolic: return of("BloodPressureDiastolic", .avg)
    case .bloodGlucose: return of("BloodGlucose", .avg)
    case .dietaryEnergy: return of("DietaryEnergyConsumed")
    case .carbohydrates: return of("DietaryCarbohydrates")
    case .protein: return of("DietaryProtein")
    case .fat: return of("DietaryFatTotal")
    case .bodyFat: return of("BodyFatPercentage", .mostRecent)
    case .bodyMassIndex: return of("BodyMassIndex", .mostRecent)
    case .leanBodyMass: return of("LeanBodyMass", .mostRecent)
    case .walkingSpeed: return of("WalkingSpeed", .avg)
    case .stepLength: return of("WalkingStepLength", .avg)
    case .walkingAsymmetry: return of("WalkingAsymmetryPercentage", .avg)
    case .doubleSupport: return of("WalkingDoubleSupportPercentage", .avg)
    default: return nil
    }
  }

  /// The unit table's conversion from the source's unit to the column's (`m` to `km`); nil when
  /// the column keeps the source's unit.
  var conversion: UnitConversion? {
    switch self {
    case .distanceKm, .cyclingDistanceKm: return Self.kilometres
    case .carbohydrates, .protein, .fat: return Self.grams
    case .walkingSpeed: return Self.kilometresPerHour
    case .stepLength: return Self.centimetres
    case .exerciseMin, .workoutMinutes: return Self.minutes
    case .asleepHours, .inBedHours, .coreHours, .deepHours, .remHours, .awakeHours: return Self.hours
    default: return nil
    }
  }
  private static let kilometres = UnitConversion.forUnit("km")
  private static let minutes = UnitConversion.forUnit("min")
  private static let hours = UnitConversion.forUnit("h")
  private static let grams = UnitConversion.forUnit("g")
  private static let kilometresPerHour = UnitConversion.forUnit("km/hr")
  private static let centimetres = UnitConversion.forUnit("cm")

  /// The cell of `written` (the value as its own output writes it): in the column's unit, rounded
  /// to the column's places exactly on the decimal text of the converted value, so that 0.005 h
  /// (18 s) shows as 0.01 as it would in a decimal calculator, not as 0.0 by a Double just below
  /// 0.005. `NumberText.rounded` goes through the decimal only near a half: always doing so was
  /// two thirds of the daily table's finish.
  public func shown(_ written: Double) -> Double {
    let converted = conversion?.fromBase(written) ?? written
    let rounded = NumberText.rounded(converted, decimals: places)
    // A small negative value rounds to 0, not -0 (the decimal has no sign at zero).
    return rounded == 0 ? 0 : rounded
  }

  /// Decimal places of the column (what the Health app shows).
  var places: Int {
    switch self {
    case .distanceKm, .cyclingDistanceKm: return 2
    case .restingHeartRate, .walkingHeartRate, .hrvSDNN, .heartRateMin, .heartRateAvg, .heartRateMax,
      .respiratoryRate, .vo2Max, .bodyMass:
      return 1
    case .carbohydrates, .protein, .fat, .bodyMassIndex, .leanBodyMass, .walkingSpeed, .headphoneAudio,
      .environmentalAudio:
      return 1
    // Fractions 0–1 to 0.001: a tenth of a percentage point, as the Health app shows 16.1 %.
    case .bodyFat, .walkingAsymmetry, .doubleSupport: return 3
    case .asleepHours, .inBedHours, .coreHours, .deepHours, .remHours, .awakeHours: return 2
    default: return 0
    }
  }

  var column: RowColumn<DailyValues> {
    switch self {
    case .bedtime:
      return .localMinute("bedtime", "`sleep_start` of the night in `sleep_daily.csv`, `YYYY-MM-DD HH:MM`") {
        $0.bedtime
      }
    case .wakeUp:
      return .localMinute("wake_up", "`sleep_end` of the night in `sleep_daily.csv`, `YYYY-MM-DD HH:MM`") {
        $0.wakeUp
      }
    case .workouts:
      return .integer("workouts", "rows of `workouts.csv` that start on the date") { $0[.workouts].map { Int64($0) } }
    case .bloodPressureReadings:
      return .integer(
        "bp_readings",
        "blood-pressure readings starting on the date: one per source and start–end of its systolic and "
          + "diastolic samples (a correlation's pair, or a lone systolic or diastolic)"
      ) { $0[.bloodPressureReadings].map { Int64($0) } }
    default:
      let (name, unit, meaning) = description
      let places = places
      // Fractions 0–1 show as percentages in the workbook (0.161 as 16.1%), like every `%` column.
      let display: SheetDisplay = unit == "%" ? .percent : .decimals(places)
      return .number(name, unit: unit, precision: .decimals(places), display: display, meaning) {
        $0[self]
      }
    }
  }

  /// Name, unit and meaning of a number column.
  private var description: (String, String, String) {
    switch self {
    case .steps: return ("steps", "count", "`sum` of `stats/steps-per-day.csv` (StepCount, sources merged)")
    case .distanceKm:
      return ("distance_km", "km", "walking + running: `sum` of `stats/walking-running-distance-per-day.csv` in km")
    case .activeEnergyKcal: return ("active_energy_kcal", "kcal", "`sum` of `stats/active-energy-per-day.csv`")
    case .basalEnergyKcal: return ("basal_energy_kcal", "kcal", "`sum` of `stats/basal-energy-per-day.csv`")
    case .flights: return ("flights", "count", "`sum` of `stats/flights-per-day.csv`")
    case .exerciseMin: return ("exercise_min", "min", "`sum` of `stats/exercise-time-per-day.csv`, in minutes")
    case .moveKcal: return ("move_kcal", "kcal", "Move ring: `activeEnergyBurned` of the date's ActivitySummary")
    case .moveGoalKcal: return ("move_goal_kcal", "kcal", "its `activeEnergyBurnedGoal`")
    case .exerciseRingMin: return ("exercise_ring_min", "min", "Exercise ring: `appleExerciseTime`")
    case .exerciseGoalMin: return ("exercise_goal_min", "min", "its `appleExerciseTimeGoal`")
    case .standHours: return ("stand_h", "h", "Stand ring: `appleStandHours`, hours with a stand")
    case .standGoalHours: return ("stand_goal_h", "h", "its `appleStandHoursGoal`")
    case .restingHeartRate:
      return ("resting_hr_bpm", "count/min", "`avg` of `stats/resting-heart-rate-per-day.csv`")
    case .walkingHeartRate:
      return ("walking_hr_avg_bpm", "count/min", "`avg` of `stats/walking-heart-rate-per-day.csv`")
    case .hrvSDNN: return ("hrv_sdnn_ms", "ms", "`avg` of `stats/hrv-per-day.csv`")
    case .heartRateMin: return ("hr_min_bpm", "count/min", "`min` of `stats/heart-rate-per-day.csv`")
    case .heartRateAvg: return ("hr_avg_bpm", "count/min", "`avg` of `stats/heart-rate-per-day.csv`")
    case .heartRateMax: return ("hr_max_bpm", "count/min", "`max` of `stats/heart-rate-per-day.csv`")
    case .respiratoryRate:
      return ("respiratory_rate_per_min", "count/min", "`avg` of `stats/respiratory-rate-per-day.csv`")
    case .vo2Max: return ("vo2max_ml_kg_min", "mL/min·kg", "`mostRecent` of `stats/vo2max-per-day.csv`")
    case .bodyMass: return ("body_mass_kg", "kg", "`mostRecent` of `stats/body-mass-per-day.csv`")
    case .asleepHours: return ("asleep_h", "h", "`asleep_s` of the night in `sleep_daily.csv`, in hours")
    case .inBedHours: return ("in_bed_h", "h", "`in_bed_s` of the night, in hours")
    case .coreHours: return ("core_h", "h", "`core_s` of the night, in hours")
    case .deepHours: return ("deep_h", "h", "`deep_s` of the night, in hours")
    case .remHours: return ("rem_h", "h", "`rem_s` of the night, in hours")
    case .awakeHours: return ("awake_h", "h", "`awake_s` of the night, in hours")
    case .workoutMinutes: return ("workout_min", "min", "`duration_s` of those workouts summed, in minutes")
    case .workoutKilocalories: return ("workout_kcal", "kcal", "`energy_kcal` of those workouts summed")
    case .swimDistance: return ("swim_distance_m", "m", "`sum` of `stats/swimming-distance-per-day.csv`")
    case .swimStrokes: return ("swim_strokes", "count", "`sum` of `stats/swimming-strokes-per-day.csv`")
    case .cyclingDistanceKm:
      return ("cycling_distance_km", "km", "`sum` of DistanceCycling per day (sources merged), in km")
    case .systolic:
      return ("bp_systolic_mmhg", "mmHg", "`avg` of BloodPressureSystolic per day: the mean of the readings")
    case .diastolic:
      return ("bp_diastolic_mmhg", "mmHg", "`avg` of BloodPressureDiastolic per day: the mean of the readings")
    case .bloodGlucose:
      return ("glucose_mg_dl", "mg/dL", "`avg` of BloodGlucose per day (mmol/L × 18.015588 = mg/dL)")
    case .dietaryEnergy:
      return ("dietary_energy_kcal", "kcal", "`sum` of DietaryEnergyConsumed per day (sources merged)")
    case .carbohydrates: return ("carbohydrates_g", "g", "`sum` of DietaryCarbohydrates per day (sources merged), in g")
    case .protein: return ("protein_g", "g", "`sum` of DietaryProtein per day (sources merged), in g")
    case .fat: return ("fat_g", "g", "`sum` of DietaryFatTotal per day (sources merged), in g")
    case .bodyFat:
      return ("body_fat_fraction", "%", "`mostRecent` of BodyFatPercentage per day, a fraction 0–1 (0.161 = 16.1 %)")
    case .bodyMassIndex: return ("bmi", "count", "`mostRecent` of BodyMassIndex per day")
    case .leanBodyMass: return ("lean_body_mass_kg", "kg", "`mostRecent` of LeanBodyMass per day")
    case .walkingSpeed: return ("walking_speed_kmh", "km/hr", "`avg` of WalkingSpeed per day, in km/h")
    case .stepLength: return ("step_length_cm", "cm", "`avg` of WalkingStepLength per day, in cm")
    case .walkingAsymmetry:
      return ("walking_asymmetry_fraction", "%", "`avg` of WalkingAsymmetryPercentage per day, a fraction 0–1")
    case .doubleSupport:
      return ("double_support_fraction", "%", "`avg` of WalkingDoubleSupportPercentage per day, a fraction 0–1")
    case .headphoneAudio:
      return (
        "headphone_audio_dba", "dBASPL",
        "HeadphoneAudioExposure of the date as HealthKit averages sound: the equivalent continuous level "
          + "10·log10(Σ t·10^(L/10) ÷ Σ t), t the seconds of each sample on the date (all sources)"
      )
    case .environmentalAudio:
      return ("environmental_audio_dba", "dBASPL", "EnvironmentalAudioExposure of the date, the same equivalent level")
    case .bedtime, .wakeUp, .workouts, .bloodPressureReadings: return ("", "", "")
    }
  }
}
