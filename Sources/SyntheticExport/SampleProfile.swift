public import HealthModel

/// Whose export `healthetl sample` writes. The same life (days, nights, walks, runs) seen through
/// the devices and apps of people whose real exports look different from the Watch user's, so
/// that what is built and tested on samples meets the shapes real exports have. Each profile
/// imitates a real export (SampleData/README.md, "Other shapes of export").
public enum SampleProfile: String, CaseIterable, Sendable {
  /// Today's Apple Watch user: iPhone, Watch, AutoSleep and Withings; sleep stages, dense workout
  /// heart rate, routes, pool swims, activity summaries.
  case watch
  /// An iPhone without a Watch and sleep apps (Sleep Cycle, Pillow): steps from the phone, sleep
  /// only as in bed and asleep from two apps, in-bed records written twice, nights in bed without
  /// sleep, now and then a 12-hour "asleep"; no heart rate, no workouts, no activity summaries.
  case iphoneSleepApps = "iphone-sleep-apps"
  /// The iPhone-only sleeper on the nights that need a second look: the `iphone-sleep-apps` export,
  /// except that for the second week Sleep Cycle writes a flat 12.0 hours asleep every night (a
  /// schedule, not a measurement), and on the fourth Saturday a night typed in by hand lasts
  /// 25 hours over the apps' own (Pipelines/docs/nightly.md, "Worth a look").
  case sleepAppsOddities = "sleep-apps-oddities"
  /// Garmin Connect beside the iPhone: heart rate every 2 minutes, steps from Connect and the
  /// iPhone for the same walks, sleep without stages, no resting heart rate, runs as workouts
  /// with totals only, their distance three overlapping samples that run past the workout.
  case garmin
  /// An iPhone 6s on iOS 10: steps and sleep typed in by hand beside the phone's own and Mi Fit's,
  /// body mass typed in, runs from Runtastic with overlapping distance samples; from 2017.
  case ios10
  /// The same iPhone two years earlier, on iOS 8–9, in that era's format: no DTD, `source=` where
  /// later exports write `sourceName=`, compact dates each at its own offset (`+0100` in winter,
  /// `+0200` in summer) and no `HKTimeZone`, metadata as attributes; body mass from Withings'
  /// Health Mate, whose metadata attribute names hold spaces (`Health Mate App Version="2.6.2"`),
  /// as in some real iOS 8 exports: not well-formed XML; sleep as numbers (`value="1"` asleep,
  /// `value="0"` in bed), as Jawbone UP's in-bed records without a value and as Withings' `Sleep
  /// Stage` without a value; heart rate as Sleep Cycle's day aggregates in count/s (`min`, `max`,
  /// `average`, `recordCount`, no value); `recordCount` and `sessionId` attributes.
  case ios8

  /// The Watch user training for a triathlon: the `watch` export, except that the Saturday rides
  /// are saved as the Watch saves a triathlon (`SwimBikeRun` with one `WorkoutActivity` per leg).
  case multisport

  /// Runs as third-party running apps write them (Runkeeper on an iPhone without a Watch): each
  /// routine run's distance three overlapping samples that each hold the whole distance, the later
  /// two past the run's end; on day 9, a day without steps, five 4 km entries of the app in 90
  /// minutes; on day 20 a two-hour run whose distance comes in 20-second lumps 25 minutes apart;
  /// on day 16 a 5.5 km "run" in 341 s; headphone audio during the runs measured by AirPods named
  /// `AirPods Pro` (model `A2084`) or only by their code `0x200f`.
  case thirdPartyWorkouts = "third-party-workouts"
  /// The families beyond activity and sleep from many apps (21 sources): meals as `Food`
  /// correlations whose `Dietary*` members also appear at top level, blood glucose from a meter
  /// app in mg/dL and from another in mmol/L, blood-pressure correlations and one systolic without
  /// its diastolic, body composition, the iPhone's walking metrics, headphone and environmental
  /// audio, and cycling commutes from four apps.
  case foodGlucoseBP = "food-glucose-bp"

  /// Whether the export is the Watch user's (`watch`, and `multisport`, which only saves some
  /// workouts differently).
  var wearsWatch: Bool { self == .watch || self == .multisport }

  /// The first day when `--start` is not given: an old phone's export is from its years.
  public var defaultStart: CivilDate {
    switch self {
    case .ios10: return CivilDate(year: 2017, month: 1, day: 2)
    case .ios8: return CivilDate(year: 2015, month: 3, day: 2)
    case .watch, .iphoneSleepApps, .sleepAppsOddities, .garmin, .multisport, .thirdPartyWorkouts, .foodGlucoseBP:
      return CivilDate(year: 2024, month: 3, day: 18)
    }
  }

  /// An old iPhone with Mi Fit and Runtastic (the iOS 10 and iOS 8–9 profiles).
  var isOldPhone: Bool { self == .ios10 || self == .ios8 }

  /// Whether the export is written in the iOS 8–9 format.
  var writesIOS8Format: Bool { self == .ios8 }
}

/// A run a third-party app logged, with the distance it says the run covered.
struct ThirdPartyRun {
  var workout: PlannedWorkout
  var source: SampleSource
  var meters: Double
  var kilocalories: Double
}

extension SampleModel {
  /// The app that logs runs (Connect or Runtastic); the iPhone-only sleeper logs none.
  var runApp: SampleSource? {
    switch profile {
    case .garmin: return .garminConnect
    case .ios10, .ios8: return .runtastic
    case .thirdPartyWorkouts: return .runkeeper
    case .watch, .iphoneSleepApps, .sleepAppsOddities, .multisport, .foodGlucoseBP: return nil
    }
  }

  /// The phone of the profile: iOS 10 on the old iPhone, else today's.
  var phone: SampleSource { profile.isOldPhone ? .oldIPhone : .iPhone }

  /// The day's run as a third-party app logged it: the Monday and Tuesday runs of the routine.
  func thirdPartyRun(_ plan: DayPlan) -> ThirdPartyRun? {
    guard let source = runApp, let workout = plan.workout,
      workout.kind == .running || workout.kind == .legacyRunning
    else { return nil }
    let meters = (workout.movingSeconds / workout.pace * 1000).rounded()
    return ThirdPartyRun(
      workout: workout, source: source, meters: meters, kilocalories: (workout.movingSeconds / 60 * 12).rounded())
  }

  /// The samples of `type` in a profile other than `watch`, in start order.
  func profileSamples(_ type: RecordType, _ plan: DayPlan, into out: inout [Sample]) {
    let first = out.count
    switch type {
    case .stepCount, .distanceWalkingRunning:
      onFoot(type, plan, &out)
      if profile == .ios8 && type == .stepCount {
        // The phone's own counts carry how many samples they sum, as iOS 8–9 wrote them.
        for index in out.indices[first...] where out[index].metadata == .none {
          out[index].metadata = .recordCount
          out[index].metadataValue = 1
        }
      }
    case .heartRate where profile == .garmin: heartRateEveryTwoMinutes(plan, &out)
    case .heartRate where profile == .ios8: heartRateDayAggregate(plan, &out)
    case .sleepAnalysis: sleepWithoutStages(plan, &out)
    case .bodyMass:
      watchSamples(.bodyMass, plan, into: &out)
      if profile == .ios10 {
        // Typed into the Health app: the phone is the source, and no device.
        for index in out.indices[first...] {
          out[index].source = .oldIPhone
          out[index].hasDevice = false
          out[index].metadata = .userEntered
        }
      } else if profile == .ios8 {
        // Weighed on a Withings scale, written by its Health Mate app.
        for index in out.indices[first...] {
          out[index].source = .healthMate
          out[index].hasDevice = false
        }
      }
    case .flightsClimbed:
      // The day the phone stayed at home has no stairs either.
      if profile == .thirdPartyWorkouts && plan.index == ThirdPartyShapes.noStepsDay { return }
      watchSamples(.flightsClimbed, plan, into: &out)
      for index in out.indices[first...] { out[index].source = phone }
    case .headphoneAudioExposure where profile == .thirdPartyWorkouts: headphonesOnRuns(plan, &out)
    case .bloodPressureSystolic, .bloodPressureDiastolic, .headphoneAudioExposure, .environmentalAudioExposure,
      .dietaryEnergyConsumed, .dietaryCarbohydrates, .dietaryProtein, .dietaryFatTotal, .bloodGlucose,
      .bodyFatPercentage, .bodyMassIndex, .leanBodyMass, .walkingSpeed, .walkingStepLength,
      .walkingAsymmetryPercentage, .walkingDoubleSupportPercentage, .distanceCycling:
      guard profile == .foodGlucoseBP else { return }
      families(type, plan, &out)
    default: return
    }
    out[first...].sort { ($0.start, $0.source.rawValue) < ($1.start, $1.source.rawValue) }
  }

  /// Steps and distance: the phone's, Connect's for the walks its watch counted (Garmin), the
  /// steps typed in by hand, and each run's distance as its app wrote it — three samples a minute
  /// apart, each holding the whole distance, the later ones ending after the run.
  private func onFoot(_ type: RecordType, _ plan: DayPlan, _ out: inout [Sample]) {
    let run = thirdPartyRun(plan)
    // Day 9 of `third-party-workouts`: the phone stayed at home.
    let noSteps = profile == .thirdPartyWorkouts && plan.index == ThirdPartyShapes.noStepsDay
    for chunk in footChunks(plan) where !noSteps {
      var source = chunk.source
      if source == .watch {
        guard profile == .garmin else { continue }
        // The run's distance is the app's own samples below.
        if type == .distanceWalkingRunning, let run, run.workout.interval.overlaps(chunkInterval(chunk)) { continue }
        source = .garminConnect
      } else {
        source = phone
      }
      if type == .stepCount {
        out.append(
          Sample(
            start: chunk.start, end: chunk.end, created: chunk.created, value: chunk.steps, source: source,
            unit: .count, pointer: chunk.pointer, hasDevice: !chunk.userEntered,
            metadata: chunk.userEntered ? .userEntered : .none))
      } else if !chunk.userEntered {
        out.append(
          Sample(
            start: chunk.start, end: chunk.end, created: chunk.created + 1, value: chunk.meters / 1000, source: source,
            unit: .kilometer, decimals: 5, pointer: chunk.pointer ^ 0x5A5_A5A5))
      }
    }
    if type == .distanceWalkingRunning, let run {
      for copy in 0..<3 {
        let shift = Int64(copy) * 60
        out.append(
          Sample(
            start: run.workout.start + shift, end: run.workout.end + shift, created: run.workout.end + 95 + shift,
            value: run.meters, source: run.source, unit: .meter, decimals: 0, pointer: 0))
      }
    }
    if type == .distanceWalkingRunning && profile == .thirdPartyWorkouts { appDistanceOddities(plan, &out) }
  }

  private func chunkInterval(_ chunk: FootChunk) -> Interval { Interval(start: chunk.start, end: chunk.end) }

  /// Garmin Connect's heart rate: one sample every 2 minutes on the even minute, never two
  /// consecutive minutes, while the watch is worn.
  private func heartRateEveryTwoMinutes(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.heartRate, plan.index)
    var level = 56.0
    for segment in plan.segments where segment.kind != .offWrist {
      let target: Double
      switch segment.kind {
      case .asleep: target = 54
      case .idle, .offWrist: target = 72
      case .bout: target = 98
      case .workout: target = 152
      }
      let sinceMidnight = segment.start - plan.midnight
      var t = segment.start + (120 - (sinceMidnight - floorDiv(sinceMidnight, 120) * 120)) % 120
      while t < segment.end {
        level += (target - level) * 0.35 + r.gaussian() * 2.5
        out.append(
          Sample(
            start: t, end: t, created: t + r.seconds(300...3600), value: level.rounded(), source: .garminConnect,
            unit: .countPerMinute, pointer: 0))
        t += 120
      }
    }
  }

  /// Sleep Cycle's heart rate as iOS 8–9 exports hold it: one day aggregate from an afternoon to
  /// the next, in beats per second, with `min`, `max`, `average` and `recordCount` and no
  /// `value` (SampleData/README.md, "Shapes of real exports": `min="1.11667" max="1.11667" average="1.11667" recordCount="1"`,
  /// 67 bpm). Three days in four; one measurement a day, two or three every fourth day.
  private func heartRateDayAggregate(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.heartRate, plan.index)
    guard r.chance(0.75) else { return }
    let day = date(plan.index)
    let second = 16 * 3600 + r.seconds(0...7200)
    let start = instant(day, second)
    let end = instant(day.adding(days: 1), second)
    let measurements = plan.index % 4 == 0 ? r.int(2...3) : 1
    var low = Double.infinity
    var high = 0.0
    var sum = 0.0
    for _ in 0..<measurements {
      let bpm = (63 + r.gaussian() * 4).rounded()
      low = min(low, bpm)
      high = max(high, bpm)
      sum += bpm
    }
    var sample = Sample(
      start: start, end: end, created: end, value: sum / Double(measurements) / 60, source: .sleepCycle,
      unit: .countPerSecond, decimals: 5, pointer: 0, metadata: .dayAggregate, metadataValue: UInt8(measurements))
    sample.aggregate = (low / 60, high / 60)
    out.append(sample)
  }

  /// Sleep as apps without stages write it: in bed and asleep, several apps for one night.
  private func sleepWithoutStages(_ plan: DayPlan, _ out: inout [Sample]) {
    var r = rng(.sleepApps, plan.index)
    let night = plan.tonight
    func add(
      _ start: Int64, _ end: Int64, _ source: SampleSource, _ unit: SampleUnit, metadata: SampleMetadata = .none
    ) {
      out.append(
        Sample(
          start: start, end: end, created: end + r.seconds(60...1800), value: 0, source: source, unit: unit,
          pointer: UInt32(truncatingIfNeeded: r.next()), hasDevice: false, metadata: metadata))
    }
    /// Asleep from falling asleep to waking in `pieces` stretches with short wakes between.
    func asleep(_ source: SampleSource, _ unit: SampleUnit, pieces: Int) {
      let span = (night.wake - night.asleep) / Int64(pieces)
      var s = night.asleep
      for piece in 0..<pieces {
        let end = piece == pieces - 1 ? night.wake : s + span - r.seconds(300...900)
        add(s, end, source, unit)
        s = end + r.seconds(120...600)
      }
    }
    switch profile {
    case .iphoneSleepApps, .sleepAppsOddities:
      let inBedOnly = plan.index % 5 == 3
      let oddities = profile == .sleepAppsOddities
      add(night.inBed, night.outOfBed, .sleepCycle, .sleepInBed)
      if oddities && (7..<14).contains(plan.index) {
        // The second week: exactly 12 hours asleep every night, from its bedtime.
        add(night.inBed, night.inBed + 12 * 3600, .sleepCycle, .sleepAsleep)
      } else if oddities && plan.index == 26 {
        // Typed in by hand over the apps' night: 25 hours in bed and asleep.
        add(night.inBed - 8 * 3600, night.inBed + 17 * 3600, .iPhone, .sleepAsleep, metadata: .userEntered)
        asleep(.sleepCycle, .sleepAsleep, pieces: 1)
      } else if plan.index % 23 == 11 {
        // A night the app was left running: 12 hours "asleep".
        add(night.asleep, night.asleep + 12 * 3600, .sleepCycle, .sleepAsleep)
      } else if !inBedOnly {
        asleep(.sleepCycle, .sleepAsleep, pieces: 1)
      }
      if plan.index % 2 == 0 {
        // Pillow writes its in-bed record twice, byte for byte.
        let start = night.inBed + r.seconds(0...300)
        add(start, night.outOfBed, .pillow, .sleepInBed)
        out.append(out[out.count - 1])
        if !inBedOnly { asleep(.pillow, .sleepUnspecified, pieces: 2) }
      }
    case .garmin:
      // The phone's bedtime schedule every night, with its zone; Connect's sleep when the watch
      // was worn.
      add(night.inBed, night.outOfBed, .iPhone, .sleepInBed, metadata: .timeZone)
      if plan.index % 6 != 3 { asleep(.garminConnect, .sleepAsleep, pieces: r.int(2...4)) }
    case .ios10:
      asleep(.miFit, .sleepAsleep, pieces: 2)
      if plan.index % 3 == 0 { add(night.inBed, night.outOfBed, .oldIPhone, .sleepInBed, metadata: .userEntered) }
    case .ios8:
      // Mi Fit's band (asleep, one session id a night), except every fourth night, when a Withings
      // tracker recorded light and deep sleep; Jawbone UP's in-bed record (no value) on another
      // night in four; in bed typed in by hand every third night (the writer makes the values
      // the numbers of that era: asleep 1, in bed 0).
      if plan.index % 4 == 2 {
        var start = night.asleep
        var deep = false
        while start < night.wake {
          var end = min(start + (deep ? r.seconds(1200...3000) : r.seconds(1800...4800)), night.wake)
          // No sliver of a stage at the end: the last one runs to waking.
          if night.wake - end < 600 { end = night.wake }
          add(start, end, .healthMate, deep ? .withingsDeep : .withingsLight)
          start = end
          deep.toggle()
        }
      } else {
        asleep(.miFit, .sleepAsleep, pieces: 2)
        for index in out.indices.suffix(2) {
          out[index].metadata = .sessionId
          out[index].pointer = UInt32(40_000 + plan.index)
        }
      }
      if plan.index % 4 == 1 { add(night.inBed - r.seconds(0...600), night.outOfBed, .jawboneUP, .noValue) }
      if plan.index % 3 == 0 { add(night.inBed, night.outOfBed, .oldIPhone, .sleepInBed, metadata: .userEntered) }
    case .watch, .multisport, .thirdPartyWorkouts, .foodGlucoseBP:
      return
    }
  }
}
