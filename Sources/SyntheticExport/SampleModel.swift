internal import HealthModel

/// Tags of the independent random streams; each is further keyed by the day (or night) index.
enum Stream: UInt64 {
  case night = 1
  case workout, swim, offWrist, bouts, footChunks, activeEnergy, basalEnergy, flights
  case heartRate, restingHeartRate, walkingHeartRate, variability, sleep, standHour, mindful
  case bodyMass, bloodPressure, swimRecords, workoutDetails, route, summary
  /// Streams of the profiles other than `watch`.
  case sleepApps, thirdPartyRun
  /// ECG recordings (`--ecgs`).
  case electrocardiogram
  /// Streams of the `third-party-workouts` and `food-glucose-bp` profiles.
  case headphones, meals, glucose, bodyComposition, mobility, environment, cycling
}

/// One record before it is written: times in epoch seconds, the value and how to print it.
struct Sample {
  var start: Int64
  var end: Int64
  var created: Int64
  var value: Double
  /// The device object pointer printed in `device` (it differs per record in real exports), also
  /// the seed of an HRV beat list and the `sessionId` of an iOS 8–9 record.
  var pointer: UInt32
  var source: SampleSource
  var unit: SampleUnit
  var decimals: UInt8
  var metadata: SampleMetadata
  var metadataValue: UInt8
  var hasDevice: Bool
  /// The least and greatest value of a day aggregate (`SampleMetadata.dayAggregate`).
  var aggregate: (min: Double, max: Double) = (0, 0)

  init(
    start: Int64, end: Int64, created: Int64, value: Double, source: SampleSource, unit: SampleUnit,
    decimals: UInt8 = 0, pointer: UInt32, hasDevice: Bool = true, metadata: SampleMetadata = .none,
    metadataValue: UInt8 = 0
  ) {
    self.start = start
    self.end = end
    self.created = created
    self.value = value
    self.pointer = pointer
    self.source = source
    self.unit = unit
    self.decimals = decimals
    self.metadata = metadata
    self.metadataValue = metadataValue
    self.hasDevice = hasDevice && source.deviceSuffix != nil
  }
}

/// Alex's life as a pure function of the seed: day plans, nights, and the samples of every type.
struct SampleModel {
  let seed: UInt64
  let start: CivilDate
  let days: Int
  let zone: ZoneRules
  /// Route files hold a point a second, as the Watch records them (`--routes`), instead of a few
  /// dozen.
  var denseRoutes = false
  /// Whose export this is: the Watch user, or one of the other shapes real exports have.
  var profile = SampleProfile.watch

  func rng(_ stream: Stream, _ index: Int) -> SplitMix64 {
    SplitMix64(seed: seed, stream: stream.rawValue, index: index)
  }

  func date(_ index: Int) -> CivilDate { start.adding(days: Int64(index)) }

  /// The instant Alex's (DST-aware) wall clock reads `second` seconds after midnight of `date`.
  func instant(_ date: CivilDate, _ second: Int64) -> Int64 {
    zone.firstInstant(atOrAfterLocal: date.daysSinceEpoch * 86_400 + second).seconds
  }

  // MARK: - Plans

  /// The night that starts on the evening of day `index`.
  func night(_ index: Int) -> Night {
    var r = rng(.night, index)
    let evening = date(index)
    let lateEvening = evening.isoWeekdayIndex >= 4  // Friday and Saturday
    let bedSecond = 22 * 3600 + 20 * 60 + r.seconds(0...3600) + (lateEvening ? 1200 : 0)
    let inBed = instant(evening, bedSecond)
    let asleep = inBed + r.seconds(300...1500)
    let morning = evening.adding(days: 1)
    let sleepIn = morning.isoWeekdayIndex >= 5
    let wakeSecond = 6 * 3600 + 25 * 60 + r.seconds(0...3600) + (sleepIn ? 3000 : 0)
    let wake = instant(morning, wakeSecond)
    return Night(inBed: inBed, asleep: asleep, wake: wake, outOfBed: wake + r.seconds(120...900))
  }

  func plan(_ index: Int) -> DayPlan {
    let day = date(index)
    let midnight = instant(day, 0)
    let nextMidnight = instant(day.adding(days: 1), 0)
    let lastNight = night(index - 1)
    let tonight = night(index)
    let workout = plannedWorkout(index, day: day, wake: lastNight.outOfBed)

    var r = rng(.offWrist, index)
    var offWrist: Interval?
    if r.chance(0.6) {
      // Charging while getting ready in the morning.
      let start = lastNight.outOfBed + r.seconds(300...1500)
      let candidate = Interval(start: start, end: start + r.seconds(1800...4500))
      let clash = workout.map { Interval(start: $0.start - 1200, end: $0.end + 1200).overlaps(candidate) } ?? false
      if !clash { offWrist = candidate }
    }

    var b = rng(.bouts, index)
    var bouts: [Bout] = []
    var cursor = lastNight.outOfBed + b.seconds(600...2400)
    let last = tonight.inBed - 1200
    while true {
      let length = b.chance(0.3) ? b.seconds(600...1200) : b.seconds(120...600)
      var bout = Interval(start: cursor, end: cursor + length)
      if let workout, Interval(start: workout.start - 900, end: workout.end + 900).overlaps(bout) {
        cursor = workout.end + 900 + b.seconds(0...1800)
        bout = Interval(start: cursor, end: cursor + length)
      }
      if bout.end > last { break }
      bouts.append(Bout(start: bout.start, end: bout.end, cadence: b.double(96, 118), stride: b.double(0.70, 0.80)))
      cursor = bout.end + b.seconds(1200...7200)
    }
    return DayPlan(
      index: index, date: day, midnight: midnight, nextMidnight: nextMidnight, lastNight: lastNight,
      tonight: tonight, workout: workout, offWrist: offWrist, bouts: bouts)
  }

  /// The weekly routine, about a workout every other day: a run on Mondays, the pool on Wednesdays,
  /// a ride (now and then a lake swim instead) on Saturdays; every other week the gym on Thursday
  /// and a long walk on Sunday, and on the other weeks a Tuesday run saved the old way. A few are
  /// skipped at random; the pool swim never is (the tests rely on one in any week).
  func plannedWorkout(_ index: Int, day: CivilDate, wake: Int64) -> PlannedWorkout? {
    let week = floorDiv(day.daysSinceEpoch + 3, 7)
    let kind: WorkoutKind
    switch day.isoWeekdayIndex {
    case 0: kind = .running
    case 1 where week % 2 == 1: kind = .legacyRunning
    case 2: kind = .poolSwim
    case 3 where week % 2 == 0: kind = .strength
    case 5: kind = week % 3 == 2 ? .openWaterSwim : profile == .multisport ? .triathlon : .cycling
    case 6 where week % 2 == 0: kind = .walking
    default: return nil
    }
    var r = rng(.workout, index)
    if kind != .poolSwim && r.chance(0.15) { return nil }
    let weekend = day.isoWeekdayIndex >= 5
    let startSecond = weekend ? 10 * 3600 + 30 * 60 + r.seconds(0...5400) : 18 * 3600 + r.seconds(0...3600)
    let start = max(instant(day, startSecond), wake + 3600)
    var moving: Int64
    var pauseChance = 0.0
    var pace = 0.0
    var cadence = 0.0
    switch kind {
    case .running:
      moving = r.seconds(1500...2700)
      pauseChance = 0.5
      pace = r.double(300, 350)
      cadence = r.double(160, 172)
    case .legacyRunning:
      moving = r.seconds(1500...2100)
      pace = r.double(310, 360)
      cadence = r.double(158, 170)
    case .walking:
      moving = r.seconds(1800...3300)
      pauseChance = 0.4
      pace = r.double(660, 750)
      cadence = r.double(105, 118)
    case .cycling:
      moving = r.seconds(2400...4200)
      pauseChance = 0.6
      pace = r.double(6.1, 7.5)
    case .triathlon:
      // A sprint distance; the legs are shared out when the workout is written.
      moving = r.seconds(4200...5400)
      pace = r.double(6.1, 7.5)
    case .strength:
      moving = r.seconds(1800...2700)
    case .poolSwim:
      moving = 0
    case .openWaterSwim:
      moving = r.seconds(1500...2400)
      pace = r.double(0.65, 0.8)
    }
    let stride = cadence > 0 ? 1000 / pace * 60 / cadence : 0
    var lengths: [SwimLength] = []
    if kind == .poolSwim {
      lengths = poolLengths(index, start: start)
      moving = Int64((lengths.last?.end ?? Double(start + 1800)).rounded(.up)) - start + r.seconds(20...60)
    }
    var pause = Interval(start: start, end: start)
    if r.chance(pauseChance) {
      let at = start + Int64(Double(moving) * r.double(0.3, 0.7))
      pause = Interval(start: at, end: at + r.seconds(45...240))
    }
    return PlannedWorkout(
      kind: kind, start: start, end: start + moving + (pause.end - pause.start), pause: pause, pace: pace,
      cadence: cadence, stride: stride, fraction: r.double(0.05, 0.95), lengths: lengths)
  }

  /// A pool session of five to seven sets in 25 m lengths (about a kilometre), in at least three
  /// stroke styles.
  func poolLengths(_ index: Int, start: Int64) -> [SwimLength] {
    var r = rng(.swim, index)
    // Freestyle warm-up, then breaststroke, backstroke, freestyle, and sometimes butterfly.
    var styles: [UInt8] = [2, 4, 3, 2]
    styles.append(r.chance(0.5) ? 5 : 4)
    if r.chance(0.5) { styles.append(3) }
    if r.chance(0.5) { styles.append(2) }
    var lengths: [SwimLength] = []
    var t = Double(start) + r.double(8, 30)
    for (set, style) in styles.enumerated() {
      let count = [4, 6, 8, 10][r.int(0...3)]
      let (seconds, strokes): (ClosedRange<Double>, ClosedRange<Int>)
      switch style {
      case 3: (seconds, strokes) = (27...33, 16...21)
      case 4: (seconds, strokes) = (30...37, 9...13)
      case 5: (seconds, strokes) = (28...34, 12...16)
      default: (seconds, strokes) = (23...29, 14...19)
      }
      for _ in 0..<count {
        let duration = r.double(seconds.lowerBound, seconds.upperBound)
        lengths.append(SwimLength(start: t, duration: duration, strokes: r.int(strokes), style: style, set: set))
        t += duration + r.double(1, 4)  // the turn
      }
      t += r.double(30, 90)  // rest at the wall
    }
    return lengths
  }

  // MARK: - Walking chunks

  /// A step-counting sample: steps and metres over a stretch, from one source.
  struct FootChunk {
    var start: Int64
    var end: Int64
    var created: Int64
    var steps: Double
    var meters: Double
    var source: SampleSource
    var userEntered: Bool
    var pointer: UInt32
  }

  /// Every step-counting sample of the day, iPhone and Watch, in start order. StepCount and
  /// DistanceWalkingRunning are both written from these, so they agree.
  func footChunks(_ plan: DayPlan) -> [FootChunk] {
    var r = rng(.footChunks, plan.index)
    var chunks: [FootChunk] = []
    func split(
      _ interval: Interval, _ source: SampleSource, cadence: Double, stride: Double, lengths: ClosedRange<Int64>
    ) {
      var t = interval.start
      while t < interval.end - 20 {
        let end = min(interval.end, t + r.seconds(lengths))
        let steps = (cadence * Double(end - t) / 60 * r.double(0.9, 1.1)).rounded()
        chunks.append(
          FootChunk(
            start: t, end: end, created: end + r.seconds(5...400), steps: steps,
            meters: steps * stride * r.double(0.97, 1.03), source: source, userEntered: false,
            pointer: UInt32(truncatingIfNeeded: r.next())))
        t = end
      }
    }
    for bout in plan.bouts {
      let whole = Interval(start: bout.start, end: bout.end)
      // The phone notices a walk a little late and slices it its own way.
      split(
        Interval(start: bout.start + r.seconds(0...40), end: bout.end), .iPhone, cadence: bout.cadence,
        stride: bout.stride, lengths: 60...600)
      var pieces = [whole]
      if let offWrist = plan.offWrist, offWrist.overlaps(whole) {
        pieces = [
          Interval(start: bout.start, end: min(bout.end, offWrist.start)),
          Interval(start: max(bout.start, offWrist.end), end: bout.end),
        ]
      }
      for piece in pieces where piece.end > piece.start {
        split(piece, .watch, cadence: bout.cadence, stride: bout.stride, lengths: 60...600)
      }
    }
    if let workout = plan.workout, workout.kind.isOnFoot {
      for interval in workout.movingIntervals {
        if workout.kind == .walking {
          split(interval, .iPhone, cadence: workout.cadence, stride: workout.stride, lengths: 60...600)
        }
        split(interval, .watch, cadence: workout.cadence, stride: workout.stride, lengths: 60...180)
      }
    }
    if plan.index % 9 == 2 {
      // A walk without phone or Watch, typed in by hand that evening.
      let start = instant(plan.date, 15 * 3600)
      chunks.append(
        FootChunk(
          start: start, end: start + 3600, created: instant(plan.date, 21 * 3600) + r.seconds(0...3000),
          steps: Double(r.int(1800...3500)), meters: 0, source: .iPhone, userEntered: true,
          pointer: 0))
    }
    chunks.sort { ($0.start, $0.source.rawValue) < ($1.start, $1.source.rawValue) }
    return chunks
  }

  // MARK: - Samples per type

  /// The samples of `type` on the day of `plan`, in start order, appended to `out`.
  func samples(_ type: RecordType, _ plan: DayPlan, into out: inout [Sample]) {
    if profile.wearsWatch {
      watchSamples(type, plan, into: &out)
    } else {
      profileSamples(type, plan, into: &out)
    }
  }

  /// The samples of `type` in the export of the Watch user (`SampleProfile.watch`).
  func watchSamples(_ type: RecordType, _ plan: DayPlan, into out: inout [Sample]) {
    switch type {
    case .bodyMass: bodyMass(plan, &out)
    case .heartRate: heartRate(plan, &out)
    case .stepCount, .distanceWalkingRunning:
      for chunk in footChunks(plan) {
        if type == .stepCount {
          out.append(
            Sample(
              start: chunk.start, end: chunk.end, created: chunk.created, value: chunk.steps, source: chunk.source,
              unit: .count, pointer: chunk.pointer, hasDevice: !chunk.userEntered,
              metadata: chunk.userEntered ? .userEntered : .none))
        } else if !chunk.userEntered {
          let watch = chunk.source == .watch
          out.append(
            Sample(
              start: chunk.start, end: chunk.end, created: chunk.created + 1,
              value: watch ? chunk.meters : chunk.meters / 1000, source: chunk.source,
              unit: watch ? .meter : .kilometer, decimals: watch ? 3 : 5, pointer: chunk.pointer ^ 0x5A5_A5A5))
        }
      }
    case .basalEnergyBurned: basalEnergy(plan, &out)
    case .activeEnergyBurned: activeEnergy(plan, &out)
    case .flightsClimbed: flights(plan, &out)
    case .bloodPressureSystolic, .bloodPressureDiastolic:
      if let reading = bloodPressure(plan) {
        let systolic = type == .bloodPressureSystolic
        out.append(
          Sample(
            start: reading.time, end: reading.time, created: reading.created,
            value: Double(systolic ? reading.systolic : reading.diastolic), source: .withings,
            unit: .millimeterOfMercury, pointer: 0))
      }
    case .sleepAnalysis: sleep(plan, &out)
    case .appleStandHour: standHours(plan, &out)
    case .distanceSwimming, .swimmingStrokeCount: swimming(type, plan, &out)
    case .mindfulSession: mindful(plan, &out)
    case .restingHeartRate, .walkingHeartRateAverage: dailyHeartRate(type, plan, &out)
    case .heartRateVariabilitySDNN: variability(plan, &out)
    case .headphoneAudioExposure, .environmentalAudioExposure, .dietaryEnergyConsumed, .dietaryCarbohydrates,
      .dietaryProtein, .dietaryFatTotal, .bloodGlucose, .bodyFatPercentage, .bodyMassIndex, .leanBodyMass,
      .walkingSpeed, .walkingStepLength, .walkingAsymmetryPercentage, .walkingDoubleSupportPercentage,
      .distanceCycling:
      // The Watch user's export holds none of these (`SampleProfile.thirdPartyWorkouts`, `.foodGlucoseBP`).
      return
    }
  }

  private func bodyMass(_ plan: DayPlan, _ out: inout [Sample]) {
    guard plan.index % 3 == 0 else { return }
    var r = rng(.bodyMass, plan.index)
    let t = plan.wake + r.seconds(300...1200)
    // A slow monthly swing (a triangle wave, so no libm call can differ between machines) plus noise.
    let phase = Double(plan.index % 30) / 30
    let kilograms = 76.0 + 0.6 * (4 * abs(phase - 0.5) - 1) + r.gaussian() * 0.25
    out.append(
      Sample(
        start: t, end: t, created: t + r.seconds(20...300), value: kilograms * 2.204_622_6, source: .withings,
        unit: .pound, decimals: 1, pointer: 0))
  }

  struct BloodPressureReading {
    var time: Int64
    var created: Int64
    var systolic: Int
    var diastolic: Int
    var source = SampleSource.withings
  }

  /// A weekly reading with the Withings cuff.
  func bloodPressure(_ plan: DayPlan) -> BloodPressureReading? {
    guard plan.index % 7 == 6 else { return nil }
    var r = rng(.bloodPressure, plan.index)
    let time = plan.wake + r.seconds(900...2400)
    return BloodPressureReading(
      time: time, created: time + r.seconds(30...200), systolic: r.int(112...131), diastolic: r.int(70...84))
  }

  private func heartRate(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.heartRate, plan.index)
    var level = 56.0
    for segment in plan.segments {
      let interval: ClosedRange<Int64>
      let target: Double
      var context: UInt8 = 1
      switch segment.kind {
      case .offWrist: continue
      case .asleep:
        interval = 600...1080
        target = 54
        context = 0
      case .idle:
        interval = 240...480
        target = 72
      case .bout:
        interval = 180...360
        target = 98
        context = 2
      case .workout:
        guard let workout = plan.workout else { continue }
        workoutHeartRate(workout, &r, &level, &out)
        continue
      }
      var t = segment.start + r.seconds(0...interval.lowerBound)
      while t < segment.end {
        level += (target - level) * 0.35 + r.gaussian() * 2.5
        out.append(
          Sample(
            start: t, end: t, created: t + r.seconds(20...420), value: level.rounded(), source: .watch,
            unit: .countPerMinute, pointer: UInt32(truncatingIfNeeded: r.next()), metadata: .motionContext,
            metadataValue: context))
        t += r.seconds(interval)
      }
    }
  }

  /// The dense heart rate the Watch records through a workout: warm-up, effort, a dip while paused.
  private func workoutHeartRate(
    _ workout: PlannedWorkout, _ r: inout SplitMix64, _ level: inout Double, _ out: inout [Sample]
  ) {
    let effort = r.double(workout.kind.heartRateLevel.lowerBound, workout.kind.heartRateLevel.upperBound)
    var t = workout.start + r.seconds(1...5)
    while t < workout.end {
      let elapsed = Double(t - workout.start)
      var target = 95 + (effort - 95) * min(1, elapsed / 300)
      if workout.hasPause && t >= workout.pause.start && t < workout.pause.end { target -= 25 }
      level += (target - level) * 0.2 + r.gaussian() * 1.6
      out.append(
        Sample(
          start: t, end: t, created: t + r.seconds(1...60), value: level.rounded(), source: .watch,
          unit: .countPerMinute, pointer: UInt32(truncatingIfNeeded: r.next()), metadata: .motionContext,
          metadataValue: 2))
      t += r.seconds(workout.kind.heartRateInterval)
    }
  }

  private func activeEnergy(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.activeEnergy, plan.index)
    for segment in plan.segments {
      switch segment.kind {
      case .asleep, .offWrist:
        continue
      case .idle:
        // Pottering about: long, small samples.
        var t = segment.start
        while t < segment.end - 60 {
          let end = min(segment.end, t + r.seconds(600...1800))
          let kcal = Double(end - t) / 60 * r.double(0.12, 0.4)
          out.append(
            Sample(
              start: t, end: end, created: end + r.seconds(5...300), value: kcal, source: .watch,
              unit: .largeCalorie, decimals: 3, pointer: UInt32(truncatingIfNeeded: r.next())))
          t = end
        }
      case .bout:
        minuteSamples(Interval(start: segment.start, end: segment.end), 3.2...5.0, .largeCalorie, &r, &out)
      case .workout:
        guard let workout = plan.workout else { continue }
        for interval in workout.movingIntervals {
          minuteSamples(interval, workout.kind.kcalPerMinute, .kilocalorie, &r, &out)
        }
      }
    }
  }

  /// About one sample a minute, as the Watch writes active energy while you move.
  private func minuteSamples(
    _ interval: Interval, _ perMinute: ClosedRange<Double>, _ unit: SampleUnit, _ r: inout SplitMix64,
    _ out: inout [Sample]
  ) {
    var t = interval.start
    while t < interval.end - 5 {
      let end = min(interval.end, t + r.seconds(50...70))
      let kcal = Double(end - t) / 60 * r.double(perMinute.lowerBound, perMinute.upperBound)
      out.append(
        Sample(
          start: t, end: end, created: end + r.seconds(1...90), value: kcal, source: .watch, unit: unit,
          decimals: 3, pointer: UInt32(truncatingIfNeeded: r.next())))
      t = end
    }
  }

  private func basalEnergy(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.basalEnergy, plan.index)
    var t = plan.midnight + r.seconds(0...300)
    while t < plan.nextMidnight - 60 {
      var end = min(plan.nextMidnight, t + r.seconds(900...2400))
      if let off = plan.offWrist, Interval(start: t, end: end).overlaps(off) {
        if t >= off.start {
          t = off.end
          continue
        }
        end = off.start
      }
      out.append(
        Sample(
          start: t, end: end, created: end + r.seconds(10...600), value: Double(end - t) / 60 * r.double(1.08, 1.18),
          source: .watch, unit: .kilocalorie, decimals: 3, pointer: UInt32(truncatingIfNeeded: r.next())))
      t = end
    }
  }

  private func flights(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.flights, plan.index)
    for bout in plan.bouts where r.chance(0.35) && bout.end - bout.start > 150 {
      let start = bout.start + r.seconds(0...(bout.end - bout.start - 130))
      let end = start + r.seconds(30...120)
      out.append(
        Sample(
          start: start, end: end, created: end + r.seconds(5...300), value: Double(r.int(1...3)), source: .iPhone,
          unit: .count, pointer: UInt32(truncatingIfNeeded: r.next())))
    }
  }

  private func dailyHeartRate(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    let resting = type == .restingHeartRate
    var r = rng(resting ? .restingHeartRate : .walkingHeartRate, plan.index)
    let start: Int64
    let end: Int64
    if resting {
      start = plan.midnight + r.seconds(60...900)
      end = plan.bed - r.seconds(60...1800)
    } else {
      guard let first = plan.bouts.first, let last = plan.bouts.last else { return }
      start = first.start
      end = last.end
    }
    out.append(
      Sample(
        start: start, end: end, created: end + r.seconds(60...900),
        value: Double(resting ? r.int(52...60) : r.int(96...110)), source: .watch, unit: .countPerMinute,
        pointer: UInt32(truncatingIfNeeded: r.next())))
  }

  private func variability(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.variability, plan.index)
    var times: [Int64] = []
    // In the small hours, while asleep…
    let nightStart = plan.midnight + 3600
    let nightEnd = plan.lastNight.wake - 1800
    if nightEnd > nightStart {
      for _ in 0..<r.int(1...3) { times.append(r.seconds(nightStart...nightEnd)) }
    }
    // …and once or twice while sitting still during the day.
    let idle = plan.segments.filter { $0.kind == .idle && $0.end - $0.start > 600 }
    if !idle.isEmpty {
      for _ in 0..<r.int(1...2) {
        let segment = idle[r.int(0...(idle.count - 1))]
        times.append(r.seconds(segment.start...(segment.end - 300)))
      }
    }
    times.sort()
    var previousEnd = Int64.min
    for t in times where t > previousEnd {
      let end = t + r.seconds(55...65)
      previousEnd = end
      out.append(
        Sample(
          start: t, end: end, created: end + r.seconds(30...600), value: r.double(22, 72), source: .watch,
          unit: .millisecond, decimals: 4, pointer: UInt32(truncatingIfNeeded: r.next()), metadata: .beats))
    }
  }

  private func sleep(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.sleep, plan.index)
    let night = plan.tonight
    let first = out.count
    let weekend = plan.date.isoWeekdayIndex >= 5
    if weekend && r.chance(0.5) {
      // An afternoon nap only AutoSleep notices.
      let start = instant(plan.date, 14 * 3600 + r.seconds(0...3600))
      let end = start + r.seconds(1200...3000)
      out.append(
        Sample(
          start: start, end: end, created: end + r.seconds(600...3600), value: 0, source: .autoSleep,
          unit: .sleepUnspecified, pointer: 0))
    }

    // The Watch: contiguous stages from falling asleep to waking, deep sleep early, REM late.
    let created = night.wake + r.seconds(180...1200)
    var t = night.asleep
    var stages: [Sample] = []
    while t < night.wake - 300 {
      let progress = Double(t - night.asleep) / Double(max(1, night.wake - night.asleep))
      let pattern: [(SampleUnit, ClosedRange<Int64>)] = [
        (.sleepCore, 600...2400),
        (.sleepDeep, progress < 0.5 ? 900...2700 : 300...900),
        (.sleepCore, 300...1800),
        (.sleepREM, progress < 0.5 ? 300...1200 : 900...2700),
      ]
      for (unit, length) in pattern where t < night.wake - 300 {
        var end = t + r.seconds(length)
        if end > night.wake - 300 { end = night.wake }
        stages.append(
          Sample(
            start: t, end: end, created: created, value: 0, source: .watch, unit: unit,
            pointer: UInt32(truncatingIfNeeded: r.next())))
        t = end
      }
      if t < night.wake - 900 && r.chance(0.6) {
        let end = t + r.seconds(120...480)
        stages.append(
          Sample(
            start: t, end: end, created: created, value: 0, source: .watch, unit: .sleepAwake,
            pointer: UInt32(truncatingIfNeeded: r.next())))
        t = end
      }
    }
    if t < night.wake, var last = stages.popLast() {
      last.end = night.wake
      stages.append(last)
    }
    if plan.index % 4 == 1 || r.chance(0.15), !stages.isEmpty {
      // A real quirk: one stage sample written twice, byte for byte.
      let index = r.int(0...(stages.count - 1))
      stages.insert(stages[index], at: index + 1)
    }
    out.append(contentsOf: stages)

    // The iPhone's sleep schedule: one in-bed sample over the whole night.
    out.append(
      Sample(
        start: night.inBed, end: night.outOfBed, created: night.outOfBed + r.seconds(1...60), value: 0,
        source: .iPhone, unit: .sleepInBed, pointer: UInt32(truncatingIfNeeded: r.next()), metadata: .timeZone))

    if plan.index % 2 == 0 || r.chance(0.3) {
      // AutoSleep's own view of the same night, overlapping the Watch's.
      let autoCreated = night.outOfBed + r.seconds(1800...5400)
      let inBed = night.inBed + r.seconds(0...600)
      out.append(
        Sample(
          start: inBed, end: night.outOfBed - r.seconds(0...300), created: autoCreated, value: 0,
          source: .autoSleep, unit: .sleepInBed, pointer: 0, metadata: .timeZone))
      var s = night.asleep + r.seconds(-300...900)
      let pieces = r.int(2...3)
      let span = (night.wake - s) / Int64(pieces)
      for piece in 0..<pieces {
        let end = piece == pieces - 1 ? night.wake - r.seconds(0...600) : s + span - r.seconds(300...900)
        out.append(
          Sample(
            start: s, end: end, created: autoCreated, value: 0, source: .autoSleep, unit: .sleepUnspecified,
            pointer: 0))
        s = end + r.seconds(300...900)
      }
    }
    out[first...].sort { ($0.start, $0.source.rawValue) < ($1.start, $1.source.rawValue) }
  }

  private func standHours(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.standHour, plan.index)
    for hour in 0..<24 {
      let start = instant(plan.date, Int64(hour) * 3600)
      let end = hour == 23 ? plan.nextMidnight : instant(plan.date, Int64(hour + 1) * 3600)
      // The hour the clocks skip has no length.
      guard end > start, end > plan.wake, start < plan.bed else { continue }
      let hourInterval = Interval(start: start, end: end)
      if let off = plan.offWrist, off.overlap(hourInterval) > 2400 { continue }
      var moved = plan.bouts.contains { Interval(start: $0.start, end: $0.end).overlaps(hourInterval) }
      if let workout = plan.workout, workout.interval.overlaps(hourInterval) { moved = true }
      let stood = moved || r.chance(0.4)
      out.append(
        Sample(
          start: start, end: end, created: end + r.seconds(0...240), value: 0, source: .watch,
          unit: stood ? .standStood : .standIdle, pointer: UInt32(truncatingIfNeeded: r.next())))
    }
  }

  private func mindful(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.mindful, plan.index)
    guard plan.index % 5 == 1 || r.chance(0.15) else { return }
    let start = instant(plan.date, 12 * 3600 + 30 * 60 + r.seconds(0...3600))
    let end = start + r.seconds(60...300)
    out.append(
      Sample(
        start: start, end: end, created: end + r.seconds(1...10), value: 0, source: .watch, unit: .noValue,
        pointer: UInt32(truncatingIfNeeded: r.next())))
  }

  private func swimming(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    guard let workout = plan.workout else { return }
    var r = rng(.swimRecords, plan.index)
    if workout.kind == .poolSwim {
      for length in workout.lengths {
        let start = Int64(length.start)
        let end = Int64(length.end)
        let pointer = UInt32(truncatingIfNeeded: r.next())
        if type == .swimmingStrokeCount {
          out.append(
            Sample(
              start: start, end: end, created: workout.end + 2, value: Double(length.strokes), source: .watch,
              unit: .count, pointer: pointer, metadata: .strokeStyle, metadataValue: length.style))
        } else {
          out.append(
            Sample(
              start: start, end: end, created: workout.end + 2, value: 25, source: .watch, unit: .meter,
              pointer: pointer))
        }
      }
    } else if workout.kind == .openWaterSwim && type == .distanceSwimming {
      // Open water: distance in irregular slices, no stroke samples.
      var t = workout.start
      while t < workout.end - 10 {
        let end = min(workout.end, t + r.seconds(60...180))
        out.append(
          Sample(
            start: t, end: end, created: end + r.seconds(1...30),
            value: Double(end - t) * workout.pace * r.double(0.9, 1.1),
            source: .watch, unit: .meter, decimals: 2, pointer: UInt32(truncatingIfNeeded: r.next())))
        t = end
      }
    }
  }
}
