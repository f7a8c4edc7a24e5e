internal import HealthModel

/// The days of `third-party-workouts` that hold one shape each (SampleData/README.md).
enum ThirdPartyShapes {
  /// Five overlapping 4 km entries of the running app in 90 minutes, and no steps.
  static let noStepsDay = 9
  /// A 5.5 km "run" in 341 s.
  static let impossibleRunDay = 16
  /// A two-hour run whose distance comes in lumps.
  static let longRunDay = 20
}

/// A meal as a food app logs it: a `Food` correlation whose `Dietary*` members also appear at
/// top level.
struct Meal {
  var time: Int64
  var created: Int64
  var source: SampleSource
  var carbohydrates: Double
  var protein: Double
  var fat: Double
  /// 4 kcal per gram of carbohydrates and protein, 9 per gram of fat.
  var kilocalories: Double { (4 * (carbohydrates + protein) + 9 * fat).rounded() }

  /// The members, in the order they are written.
  var members: [(RecordType, Sample)] {
    func sample(_ value: Double, _ unit: SampleUnit, _ decimals: UInt8) -> Sample {
      Sample(
        start: time, end: time, created: created, value: value, source: source, unit: unit, decimals: decimals,
        pointer: 0)
    }
    return [
      (.dietaryEnergyConsumed, sample(kilocalories, .kilocalorie, 0)),
      (.dietaryCarbohydrates, sample(carbohydrates, .gram, 1)),
      (.dietaryProtein, sample(protein, .gram, 1)),
      (.dietaryFatTotal, sample(fat, .gram, 1)),
    ]
  }
}

extension SampleModel {
  /// The food apps of `food-glucose-bp`, one after another through the meals.
  static let foodApps: [SampleSource] = [
    .myFitnessPal, .loseIt, .yazio, .lifesum, .cronometer, .nutrino, .fatSecret, .noom,
  ]
  /// The apps that log the weekday cycling commute of `food-glucose-bp`, one a day in turn.
  static let cyclingApps: [SampleSource] = [.strava, .wahoo, .zwift, .garminConnect]

  /// The runs a third-party app logged on the day: the routine's run, and in
  /// `third-party-workouts` the long run of day 20 and the impossible run of day 16.
  func thirdPartyRuns(_ plan: DayPlan) -> [ThirdPartyRun] {
    var runs = oddRuns(plan)
    if let run = thirdPartyRun(plan) { runs.append(run) }
    return runs.sorted { $0.workout.start < $1.workout.start }
  }

  /// The runs of `third-party-workouts` outside the routine: the long run of day 20 and the
  /// impossible run of day 16.
  func oddRuns(_ plan: DayPlan) -> [ThirdPartyRun] {
    var runs: [ThirdPartyRun] = []
    guard profile == .thirdPartyWorkouts else { return runs }
    func run(at second: Int64, seconds: Int64, meters: Double, kilocalories: Double) -> ThirdPartyRun {
      let start = instant(plan.date, second)
      let workout = PlannedWorkout(
        kind: .running, start: start, end: start + seconds, pause: Interval(start: start, end: start),
        pace: Double(seconds) / meters * 1000, cadence: 0, stride: 0, fraction: 0, lengths: [])
      return ThirdPartyRun(workout: workout, source: .runkeeper, meters: meters, kilocalories: kilocalories)
    }
    if plan.index == ThirdPartyShapes.longRunDay {
      runs.append(run(at: 16 * 3600, seconds: 7200, meters: 18000, kilocalories: 1450))
    }
    if plan.index == ThirdPartyShapes.impossibleRunDay {
      runs.append(run(at: 19 * 3600, seconds: 341, meters: 5500, kilocalories: 40))
    }
    return runs
  }

  /// The running app's distance beyond its routine runs' three copies: on day 9 five 4 km
  /// entries, each 30 minutes long, starting 15 minutes apart (18:00–19:30); the long run's
  /// 18 km as five 3.6 km lumps of 20 s, 25 minutes apart; the impossible run's 5.5 km as one
  /// sample over its 341 s.
  func appDistanceOddities(_ plan: DayPlan, _ out: inout [Sample]) {
    func add(_ start: Int64, _ end: Int64, _ meters: Double) {
      out.append(
        Sample(
          start: start, end: end, created: end + 95, value: meters, source: .runkeeper, unit: .meter, decimals: 0,
          pointer: 0))
    }
    if plan.index == ThirdPartyShapes.noStepsDay {
      let first = instant(plan.date, 18 * 3600)
      for entry in 0..<5 {
        let start = first + Int64(entry) * 900
        add(start, start + 1800, 4000)
      }
    }
    for run in oddRuns(plan) {
      if plan.index == ThirdPartyShapes.longRunDay {
        for lump in 0..<5 {
          let start = run.workout.start + 60 + Int64(lump) * 1500
          add(start, start + 20, run.meters / 5)
        }
      } else {
        add(run.workout.start, run.workout.end, run.meters)
      }
    }
  }

  /// Headphone audio while running: one sample per 10 minutes of each run, from the phone with
  /// AirPods Pro on even days and with AirPods named by their code on odd days.
  func headphonesOnRuns(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.headphones, plan.index)
    let source: SampleSource = plan.index % 2 == 0 ? .airPodsPro : .airPodsByCode
    for run in thirdPartyRuns(plan) {
      var t = run.workout.start
      while t < run.workout.end {
        let end = min(run.workout.end, t + 600)
        out.append(
          Sample(
            start: t, end: end, created: end + r.seconds(5...120), value: r.double(68, 82), source: source,
            unit: .decibelASPL, decimals: 2, pointer: UInt32(truncatingIfNeeded: r.next())))
        t = end
      }
    }
  }

  /// Breakfast, lunch and dinner, each logged by the next of the eight food apps.
  func meals(_ plan: DayPlan) -> [Meal] {
    var r = rng(.meals, plan.index)
    var meals: [Meal] = []
    let mealtimes: [Int64] = [7 * 3600 + 1800, 12 * 3600 + 1800, 19 * 3600]
    for (meal, second) in mealtimes.enumerated() {
      let time = instant(plan.date, second + r.seconds(0...1800))
      meals.append(
        Meal(
          time: time, created: time + r.seconds(60...900),
          source: Self.foodApps[(plan.index * 3 + meal) % Self.foodApps.count],
          carbohydrates: (r.double(35, 95) * 10).rounded() / 10, protein: (r.double(12, 45) * 10).rounded() / 10,
          fat: (r.double(8, 35) * 10).rounded() / 10))
    }
    return meals
  }

  /// `food-glucose-bp`'s cuff readings: OMRON connect every other morning (also written as
  /// correlations).
  func cuffReadings(_ plan: DayPlan) -> [BloodPressureReading] {
    guard profile == .foodGlucoseBP, plan.index % 2 == 0 else { return [] }
    var r = rng(.bloodPressure, plan.index)
    let time = plan.wake + r.seconds(900...2400)
    return [
      BloodPressureReading(
        time: time, created: time + r.seconds(30...200), systolic: r.int(115...135), diastolic: r.int(72...86),
        source: .omronConnect)
    ]
  }

  /// The samples of `type` in `food-glucose-bp`.
  func families(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    switch type {
    case .dietaryEnergyConsumed, .dietaryCarbohydrates, .dietaryProtein, .dietaryFatTotal:
      for meal in meals(plan) {
        for (member, sample) in meal.members where member == type { out.append(sample) }
      }
    case .bloodPressureSystolic, .bloodPressureDiastolic:
      let systolic = type == .bloodPressureSystolic
      for reading in cuffReadings(plan) {
        out.append(
          Sample(
            start: reading.time, end: reading.time, created: reading.created,
            value: Double(systolic ? reading.systolic : reading.diastolic), source: reading.source,
            unit: .millimeterOfMercury, pointer: 0))
      }
      if systolic && plan.index == 5 {
        // Qardio's one reading that lost its diastolic: no correlation, no pair.
        let time = instant(plan.date, 20 * 3600)
        out.append(
          Sample(
            start: time, end: time, created: time + 40, value: 128, source: .qardio, unit: .millimeterOfMercury,
            pointer: 0))
      }
    case .bloodGlucose: glucose(plan, &out)
    case .bodyFatPercentage, .bodyMassIndex, .leanBodyMass: bodyComposition(type, plan, &out)
    case .walkingSpeed, .walkingStepLength, .walkingAsymmetryPercentage, .walkingDoubleSupportPercentage:
      mobility(type, plan, &out)
    case .headphoneAudioExposure, .environmentalAudioExposure: audio(type, plan, &out)
    case .distanceCycling: cyclingCommute(plan, &out)
    default: return
    }
  }

  /// mySugr's meter before each meal in mg/dL; OneTouch Reveal every other evening in mmol/L.
  private func glucose(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.glucose, plan.index)
    for meal in meals(plan) {
      let time = meal.time - 600
      out.append(
        Sample(
          start: time, end: time, created: time + r.seconds(10...60), value: Double(r.int(85...140)), source: .mySugr,
          unit: .milligramPerDeciliter, pointer: 0))
    }
    if plan.index % 2 == 0 {
      let time = instant(plan.date, 21 * 3600 + 1800)
      out.append(
        Sample(
          start: time, end: time, created: time + r.seconds(10...60), value: (r.double(5.0, 7.8) * 10).rounded() / 10,
          source: .oneTouchReveal, unit: .millimolePerLiter, decimals: 1, pointer: 0))
    }
  }

  /// Renpho's scale every third morning (body fat as a fraction, BMI for 1.75 m, lean mass);
  /// EufyLife's BMI once a week.
  private func bodyComposition(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.bodyComposition, plan.index)
    let time = plan.wake + r.seconds(600...1200)
    let kilograms = 76 + r.gaussian() * 0.4
    let fat = r.double(0.19, 0.23)
    let bmi = kilograms / (1.75 * 1.75)
    if plan.index % 3 == 1 {
      let (value, unit, decimals): (Double, SampleUnit, UInt8) =
        switch type {
        case .bodyFatPercentage: (fat, .percent, 3)
        case .bodyMassIndex: (bmi, .count, 1)
        default: (kilograms * (1 - fat), .kilogram, 1)
        }
      out.append(
        Sample(
          start: time, end: time, created: time + 30, value: value, source: .renpho, unit: unit, decimals: decimals,
          pointer: 0))
    }
    if type == .bodyMassIndex && plan.index % 7 == 3 {
      out.append(
        Sample(
          start: time + 600, end: time + 600, created: time + 660, value: bmi, source: .eufyLife, unit: .count,
          decimals: 1, pointer: 0))
    }
  }

  /// The iPhone's walking metrics over up to three walks of five minutes or more a day.
  private func mobility(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.mobility, plan.index)
    for bout in plan.bouts.filter({ $0.end - $0.start >= 300 }).prefix(3) {
      let values: [(RecordType, Double, SampleUnit, UInt8)] = [
        (.walkingSpeed, r.double(4.2, 5.4), .kilometerPerHour, 2),
        (.walkingStepLength, r.double(66, 78).rounded(), .centimeter, 0),
        (.walkingAsymmetryPercentage, r.chance(0.5) ? 0 : r.double(0.01, 0.06), .percent, 3),
        (.walkingDoubleSupportPercentage, r.double(0.24, 0.32), .percent, 3),
      ]
      let created = bout.end + r.seconds(60...600)
      for (member, value, unit, decimals) in values where member == type {
        out.append(
          Sample(
            start: bout.start, end: bout.end, created: created, value: value, source: .iPhone, unit: unit,
            decimals: decimals, pointer: UInt32(truncatingIfNeeded: r.next())))
      }
    }
  }

  /// Headphones at lunch and in the evening (AirPods Pro through the phone); the Watch's
  /// environmental sound level every half hour from 9:00 to 21:00.
  private func audio(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(type == .headphoneAudioExposure ? .headphones : .environment, plan.index)
    if type == .headphoneAudioExposure {
      let sessions: [(second: Int64, length: Int64)] = [(12 * 3600 + 2400, 1800), (20 * 3600 + 1800, 3600)]
      for (second, length) in sessions {
        let start = instant(plan.date, second + r.seconds(0...600))
        out.append(
          Sample(
            start: start, end: start + length, created: start + length + r.seconds(5...120), value: r.double(62, 80),
            source: .airPodsPro, unit: .decibelASPL, decimals: 2, pointer: UInt32(truncatingIfNeeded: r.next())))
      }
    } else {
      for slot in 0..<24 {
        let start = instant(plan.date, 9 * 3600 + Int64(slot) * 1800)
        out.append(
          Sample(
            start: start, end: start + 1800, created: start + 1800 + r.seconds(5...300), value: r.double(48, 72),
            source: .watch, unit: .decibelASPL, decimals: 2, pointer: UInt32(truncatingIfNeeded: r.next())))
      }
    }
  }

  /// The weekday commute by bike, 20–25 minutes at 22–26 km/h, logged by one of four apps a day.
  private func cyclingCommute(_ plan: DayPlan, _ out: inout [Sample]) {
    guard plan.date.isoWeekdayIndex < 5 else { return }
    var r = rng(.cycling, plan.index)
    let start = instant(plan.date, 8 * 3600 + r.seconds(0...600))
    let seconds = r.seconds(1200...1500)
    let kilometres = Double(seconds) / 3600 * r.double(22, 26)
    out.append(
      Sample(
        start: start, end: start + seconds, created: start + seconds + r.seconds(30...600), value: kilometres,
        source: Self.cyclingApps[plan.index % Self.cyclingApps.count], unit: .kilometer, decimals: 3, pointer: 0))
  }
}
