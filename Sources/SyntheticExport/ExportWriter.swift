internal import HealthModel

/// The elements the generator writes, for counting.
enum WrittenElement: Int, CaseIterable {
  case healthData, exportDate, me, record, metadataEntry, heartRateVariabilityMetadataList
  case instantaneousBeatsPerMinute, correlation, workout, workoutActivity, workoutEvent, workoutStatistics
  case workoutRoute, fileReference, activitySummary

  var xmlName: String {
    let name = String(describing: self)
    return name.prefix(1).uppercased() + name.dropFirst()
  }
}

/// Writes export.xml: header, every record type over all days, then correlations, workouts and
/// activity summaries, in that order (as the Health app does). Everything goes through one
/// `ByteSink`; per day only that day's samples of one type are held.
struct ExportWriter: ~Copyable {
  var out: ByteSink
  let model: SampleModel
  let exportInstant: Int64
  private(set) var elementCounts = [Int](repeating: 0, count: WrittenElement.allCases.count)
  private(set) var recordCounts = [Int](repeating: 0, count: RecordType.allCases.count)
  private var scratch: [Sample] = []
  private var helper: [Sample] = []

  init(out: consuming ByteSink, model: SampleModel, exportInstant: Int64) {
    self.out = out
    self.model = model
    self.exportInstant = exportInstant
  }

  /// Whether the document is written in the iOS 8–9 format.
  private var iOS8: Bool { model.profile.writesIOS8Format }

  @inline(__always) private mutating func count(_ element: WrittenElement, _ n: Int = 1) {
    elementCounts[element.rawValue] += n
  }

  mutating func writeDocument() {
    header()
    for type in RecordType.allCases {
      for day in 0..<model.days {
        let plan = model.plan(day)
        scratch.removeAll(keepingCapacity: true)
        model.samples(type, plan, into: &scratch)
        for index in scratch.indices {
          record(type, scratch[index], nested: false)
        }
        recordCounts[type.rawValue] += scratch.count
      }
    }
    guard model.profile.wearsWatch else {
      // No Watch: no activity summaries; correlations only from the cuff and food apps of
      // `food-glucose-bp`, and only the runs a third-party app logged.
      for day in 0..<model.days {
        let plan = model.plan(day)
        for reading in model.cuffReadings(plan) { correlation(reading) }
        if model.profile == .foodGlucoseBP {
          for meal in model.meals(plan) { foodCorrelation(meal) }
        }
      }
      for day in 0..<model.days {
        for run in model.thirdPartyRuns(model.plan(day)) { thirdPartyWorkout(run) }
      }
      out.put("</HealthData>\n")
      out.flush()
      return
    }
    for day in 0..<model.days {
      let plan = model.plan(day)
      if let reading = model.bloodPressure(plan) { correlation(reading) }
    }
    for day in 0..<model.days {
      let plan = model.plan(day)
      if plan.workout != nil { workout(plan) }
    }
    for day in 0..<model.days { activitySummary(model.plan(day)) }
    out.put("</HealthData>\n")
    out.flush()
  }

  // MARK: - Header

  private mutating func header() {
    out.put("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
    // iOS 8–9 wrote no DTD, and none of the characteristics added since.
    if !iOS8 {
      var dtd = exportDTD
      dtd.withUTF8 { out.put(UnsafeRawBufferPointer($0)) }
      out.put("\n")
    }
    out.put("<HealthData locale=\"en_DE\">\n <ExportDate value=\"")
    out.date(exportInstant)
    out.put("\"/>\n <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1990-07-14\"")
    out.put(" HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexFemale\"")
    out.put(" HKCharacteristicTypeIdentifierBloodType=\"HKBloodTypeAPositive\"")
    if iOS8 {
      out.put("/>\n")
    } else {
      out.put(" HKCharacteristicTypeIdentifierFitzpatrickSkinType=\"HKFitzpatrickSkinTypeNotSet\"")
      out.put(" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=\"None\"/>\n")
    }
    count(.healthData)
    count(.exportDate)
    count(.me)
  }

  // MARK: - Records

  /// One `Record` in real attribute order: type, sourceName, sourceVersion, device, unit,
  /// creationDate, startDate, endDate, value.
  private mutating func record(_ type: RecordType, _ sample: Sample, nested: Bool) {
    out.put(nested ? "  <Record type=\"" : " <Record type=\"")
    out.put(type.identifier)
    if iOS8 { return legacyRecord(type, sample) }
    out.put("\" sourceName=\"")
    out.put(sample.source.name)
    out.put("\" sourceVersion=\"")
    out.put(sample.source.version)
    if sample.hasDevice, let suffix = sample.source.deviceSuffix {
      out.put("\" device=\"")
      out.put(sample.source.devicePrefix)
      device(pointer: sample.pointer, suffix: suffix)
    }
    unitAttribute(sample)
    out.put("\" creationDate=\"")
    out.date(sample.created)
    out.put("\" startDate=\"")
    out.date(sample.start)
    out.put("\" endDate=\"")
    out.date(sample.end)
    valueAttribute(sample)
    count(.record)
    let childIndent: StaticString = nested ? "   " : "  "
    switch sample.metadata {
    case .none, .dayAggregate, .recordCount, .sessionId:
      // The last three are attributes of the iOS 8–9 format (`legacyRecord`).
      out.put("\"/>\n")
      return
    case .motionContext:
      out.put("\">\n")
      out.put(childIndent)
      out.put("<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"")
      out.int(Int(sample.metadataValue))
      out.put("\"/>\n")
    case .userEntered:
      out.put("\">\n")
      out.put(childIndent)
      out.put("<MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>\n")
    case .timeZone:
      out.put("\">\n")
      out.put(childIndent)
      out.put("<MetadataEntry key=\"HKTimeZone\" value=\"Europe/Berlin\"/>\n")
    case .strokeStyle:
      out.put("\">\n")
      out.put(childIndent)
      out.put("<MetadataEntry key=\"HKSwimmingStrokeStyle\" value=\"")
      out.int(Int(sample.metadataValue))
      out.put("\"/>\n")
    case .beats:
      out.put("\">\n")
      beats(sample)
    }
    if sample.metadata != .beats { count(.metadataEntry) }
    out.put(nested ? "  </Record>\n" : " </Record>\n")
  }

  /// `unit`, for a quantity (a category record has none).
  private mutating func unitAttribute(_ sample: Sample) {
    guard !sample.unit.isCategory else { return }
    out.put("\" unit=\"")
    out.put(sample.unit.text)
  }

  /// `value`: the number, or a category's value name (none for a category without one).
  private mutating func valueAttribute(_ sample: Sample) {
    if sample.unit.isCategory {
      guard sample.unit != .noValue else { return }
      out.put("\" value=\"")
      out.put(sample.unit.text)
    } else {
      out.put("\" value=\"")
      out.decimal(sample.value, digits: Int(sample.decimals))
    }
  }

  /// The rest of an iOS 8–9 `Record` after its type: `source` (no version, device or creation
  /// date), compact dates each at its own offset, category values as HealthKit's raw numbers
  /// (none for Jawbone's in-bed and Withings' stages), discrete quantities as day aggregates,
  /// and metadata as attributes — Health Mate's with spaces in their names, Withings' `Sleep
  /// Stage` among them.
  private mutating func legacyRecord(_ type: RecordType, _ sample: Sample) {
    out.put("\" source=\"")
    out.put(sample.source.name)
    unitAttribute(sample)
    out.put("\" startDate=\"")
    out.date(sample.start)
    out.put("\" endDate=\"")
    out.date(sample.end)
    switch sample.metadata {
    case .dayAggregate:
      let digits = Int(sample.decimals)
      out.put("\" min=\"")
      out.decimal(sample.aggregate.min, digits: digits)
      out.put("\" max=\"")
      out.decimal(sample.aggregate.max, digits: digits)
      out.put("\" average=\"")
      out.decimal(sample.value, digits: digits)
      out.put("\" recordCount=\"")
      out.int(Int(sample.metadataValue))
    case .recordCount:
      valueAttribute(sample)
      out.put("\" recordCount=\"")
      out.int(Int(sample.metadataValue))
    case .sessionId:
      legacyValueAttribute(sample)
      out.put("\" sessionId=\"")
      out.int(Int(sample.pointer))
    case .userEntered:
      legacyValueAttribute(sample)
      out.put("\" HKWasUserEntered=\"1")
    case .none, .motionContext, .timeZone, .strokeStyle, .beats:
      legacyValueAttribute(sample)
    }
    if sample.source == .healthMate {
      out.put("\" Health Mate App Version=\"")
      out.put(sample.source.version)
      out.put("\" Withings User Identifier=\"4711")
    }
    if sample.unit.isWithingsStage {
      out.put("\" Sleep Stage=\"")
      out.put(sample.unit.text)
    }
    out.put("\"/>\n")
    count(.record)
  }

  /// `value` as iOS 8–9 wrote it: numbers for quantities and for category values alike.
  private mutating func legacyValueAttribute(_ sample: Sample) {
    guard sample.unit.isCategory else { return valueAttribute(sample) }
    guard let text = sample.unit.legacyText else { return }
    out.put("\" value=\"")
    out.put(text)
  }

  /// The rest of a `device` text after `0x`: a nine-digit object pointer that differs per record.
  private mutating func device(pointer: UInt32, suffix: StaticString) {
    out.put("28")
    out.hex(UInt64(pointer & 0x0FFF_FFFF), width: 7, upper: false)
    out.put(suffix)
  }

  /// The beat-to-beat list of an HRV reading: one entry per beat across the reading, its time of
  /// day on Alex's own (DST-aware) clock in the en_US style `10:14:48.94 PM` — so, as in real
  /// exports, an hour off the record's dates when those carry the summer offset in winter.
  private mutating func beats(_ sample: Sample) {
    var r = SplitMix64(state: UInt64(sample.pointer) << 32 ^ UInt64(bitPattern: sample.start))
    // 48–78 beats over the minute-long reading: a resting rate.
    let count = r.int(48...78)
    let offset = Double(model.zone.offset(at: Instant(seconds: sample.start)))
    var t = Double(sample.start) + r.double(0, 1)
    var rate = Double(count) * 60 / Double(max(50, sample.end - sample.start)) * r.double(0.95, 1.0)
    out.put("  <HeartRateVariabilityMetadataList>\n")
    for _ in 0..<count {
      rate = min(110, max(38, rate + r.gaussian() * 1.5))
      out.put("   <InstantaneousBeatsPerMinute bpm=\"")
      out.int(Int(rate.rounded()))
      out.put("\" time=\"")
      clockTime(t + offset)
      out.put("\"/>\n")
      t += 60 / rate
    }
    out.put("  </HeartRateVariabilityMetadataList>\n")
    self.count(.heartRateVariabilityMetadataList)
    self.count(.instantaneousBeatsPerMinute, count)
  }

  /// `h:mm:ss.cc AM` for local epoch seconds.
  private mutating func clockTime(_ local: Double) {
    let whole = Int64(local.rounded(.down))
    let centiseconds = Int64((local - Double(whole)) * 100)
    let second = whole - floorDiv(whole, 86_400) * 86_400
    let hour = second / 3600
    out.int(hour % 12 == 0 ? 12 : hour % 12)
    out.byte(0x3A)
    out.padded(second / 60 % 60, width: 2)
    out.byte(0x3A)
    out.padded(second % 60, width: 2)
    out.byte(0x2E)
    out.padded(centiseconds, width: 2)
    out.put(hour < 12 ? " AM" : " PM")
  }

  // MARK: - Correlations

  /// The weekly blood-pressure reading: a `Correlation` holding the two records that also appear
  /// at top level.
  private mutating func correlation(_ reading: SampleModel.BloodPressureReading) {
    out.put(" <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"")
    out.put(reading.source.name)
    out.put("\" sourceVersion=\"")
    out.put(reading.source.version)
    out.put("\" creationDate=\"")
    out.date(reading.created)
    out.put("\" startDate=\"")
    out.date(reading.time)
    out.put("\" endDate=\"")
    out.date(reading.time)
    out.put("\">\n")
    count(.correlation)
    for (type, value) in [
      (RecordType.bloodPressureSystolic, reading.systolic), (RecordType.bloodPressureDiastolic, reading.diastolic),
    ] {
      record(
        type,
        Sample(
          start: reading.time, end: reading.time, created: reading.created, value: Double(value),
          source: reading.source, unit: .millimeterOfMercury, pointer: 0),
        nested: true)
    }
    out.put(" </Correlation>\n")
  }

  /// A meal: a `Food` correlation holding its `Dietary*` records, which also appear at top level.
  private mutating func foodCorrelation(_ meal: Meal) {
    out.put(" <Correlation type=\"HKCorrelationTypeIdentifierFood\" sourceName=\"")
    out.put(meal.source.name)
    out.put("\" sourceVersion=\"")
    out.put(meal.source.version)
    out.put("\" creationDate=\"")
    out.date(meal.created)
    out.put("\" startDate=\"")
    out.date(meal.time)
    out.put("\" endDate=\"")
    out.date(meal.time)
    out.put("\">\n")
    count(.correlation)
    for (type, sample) in meal.members { record(type, sample, nested: true) }
    out.put(" </Correlation>\n")
  }

  // MARK: - Workouts

  /// Totals of the samples recorded during a workout, so its statistics match its records.
  private struct WorkoutTotals {
    var activeKcal = 0.0
    var basalKcal = 0.0
    var meters = 0.0
    var steps = 0.0
    var swimMeters = 0.0
    var strokes = 0.0
    var heartRateSum = 0.0
    var heartRateCount = 0
    var heartRateMin = Double.infinity
    var heartRateMax = 0.0
  }

  private mutating func totals(_ plan: DayPlan, _ workout: PlannedWorkout) -> WorkoutTotals {
    var totals = WorkoutTotals()
    let span = workout.interval
    func inside(_ sample: Sample) -> Bool {
      sample.source == .watch && sample.start >= span.start && sample.end <= span.end
    }

    helper.removeAll(keepingCapacity: true)
    model.samples(.heartRate, plan, into: &helper)
    for sample in helper where inside(sample) {
      totals.heartRateSum += sample.value
      totals.heartRateCount += 1
      totals.heartRateMin = min(totals.heartRateMin, sample.value)
      totals.heartRateMax = max(totals.heartRateMax, sample.value)
    }
    helper.removeAll(keepingCapacity: true)
    model.samples(.activeEnergyBurned, plan, into: &helper)
    for sample in helper where inside(sample) { totals.activeKcal += sample.value }
    helper.removeAll(keepingCapacity: true)
    model.samples(.basalEnergyBurned, plan, into: &helper)
    for sample in helper where sample.end > span.start && sample.start < span.end {
      // Basal samples straddle the workout: count the share inside it.
      let share =
        Double(Interval(start: sample.start, end: sample.end).overlap(span)) / Double(sample.end - sample.start)
      totals.basalKcal += sample.value * share
    }
    if workout.kind.isOnFoot {
      for chunk in model.footChunks(plan)
      where chunk.source == .watch && chunk.start >= span.start && chunk.end <= span.end {
        totals.steps += chunk.steps
        totals.meters += chunk.meters
      }
    }
    if workout.kind == .poolSwim || workout.kind == .openWaterSwim {
      helper.removeAll(keepingCapacity: true)
      model.samples(.distanceSwimming, plan, into: &helper)
      for sample in helper { totals.swimMeters += sample.value }
      for length in workout.lengths { totals.strokes += Double(length.strokes) }
    }
    if workout.kind == .cycling { totals.meters = workout.movingSeconds * workout.pace }
    return totals
  }

  private enum EventType {
    case pause, resume, lap, segment

    var text: StaticString {
      switch self {
      case .pause: return "HKWorkoutEventTypePause"
      case .resume: return "HKWorkoutEventTypeResume"
      case .lap: return "HKWorkoutEventTypeLap"
      case .segment: return "HKWorkoutEventTypeSegment"
      }
    }
  }

  private struct Event {
    var date: Int64
    var type: EventType
    /// Minutes; nil for pause and resume.
    var minutes: Double?
  }

  private struct WorkoutWeather {
    var temperature: Double
    var temperatureDigits: Int
    var humidity: Int
    var elevation: Int
    var mets: Double
  }

  private mutating func workout(_ plan: DayPlan) {
    guard let workout = plan.workout else { return }
    var r = model.rng(.workoutDetails, plan.index)
    let totals = totals(plan, workout)
    let kind = workout.kind
    let pointer = UInt32(truncatingIfNeeded: r.next())
    let weather = WorkoutWeather(
      temperature: r.double(41, 64), temperatureDigits: r.chance(0.5) ? 0 : 4, humidity: r.int(45...92) * 100,
      elevation: r.int(600...6500), mets: r.double(kind.averageMETs.lowerBound, kind.averageMETs.upperBound))
    workoutStartTag(workout, totals, pointer: pointer, &r)
    workoutMetadata(kind, weather)
    if kind == .legacyRunning {
      out.put(" </Workout>\n")
      return
    }
    if kind == .triathlon {
      triathlon(plan, workout, totals, &r)
      if let route = model.route(plan) { workoutRoute(route, of: workout, &r) }
      workoutMetadata(kind, weather)
      out.put(" </Workout>\n")
      return
    }
    let (events, segments) = plannedEvents(workout, &r)
    for event in events { workoutEvent(event, indent: "  ") }
    if kind == .poolSwim { swimEvents(workout) }
    if kind == .running { workoutActivity(workout, totals, segments: segments, &r) }
    workoutStatistics(workout, totals, indent: "  ")
    if let route = model.route(plan) { workoutRoute(route, of: workout, &r) }
    // Real exports repeat the workout's metadata after its other children.
    workoutMetadata(kind, weather)
    out.put(" </Workout>\n")
  }

  /// A run a third-party app logged: only the old total attributes, no events, statistics or
  /// route, as Garmin Connect and Runtastic write them.
  private mutating func thirdPartyWorkout(_ run: ThirdPartyRun) {
    out.put(" <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"")
    out.decimal(run.workout.movingSeconds / 60, digits: 12)
    out.put("\" durationUnit=\"min\" totalDistance=\"")
    out.decimal(run.meters / 1000, digits: 3)
    out.put("\" totalDistanceUnit=\"km\" totalEnergyBurned=\"")
    out.decimal(run.kilocalories, digits: 0)
    if iOS8 {
      out.put("\" totalEnergyBurnedUnit=\"kcal\" source=\"")
      out.put(run.source.name)
    } else {
      out.put("\" totalEnergyBurnedUnit=\"kcal\" sourceName=\"")
      out.put(run.source.name)
      out.put("\" sourceVersion=\"")
      out.put(run.source.version)
      out.put("\" creationDate=\"")
      out.date(run.workout.end + 95)
    }
    out.put("\" startDate=\"")
    out.date(run.workout.start)
    out.put("\" endDate=\"")
    out.date(run.workout.end)
    out.put("\"/>\n")
    count(.workout)
  }

  /// `<Workout …>` with its attributes; legacy runs carry the old total attributes.
  private mutating func workoutStartTag(
    _ workout: PlannedWorkout, _ totals: WorkoutTotals, pointer: UInt32, _ r: inout SplitMix64
  ) {
    out.put(" <Workout workoutActivityType=\"")
    out.put(workout.kind.activityType)
    out.put("\" duration=\"")
    out.decimal(workout.movingSeconds / 60, digits: 12)
    out.put("\" durationUnit=\"min")
    if workout.kind == .legacyRunning {
      out.put("\" totalDistance=\"")
      out.decimal(totals.meters / 1609.344, digits: 2)
      out.put("\" totalDistanceUnit=\"mi\" totalEnergyBurned=\"")
      out.decimal(totals.activeKcal, digits: 0)
      out.put("\" totalEnergyBurnedUnit=\"Cal")
    }
    out.put("\" sourceName=\"")
    out.put(SampleSource.watch.name)
    out.put("\" sourceVersion=\"")
    out.put(SampleSource.watch.version)
    out.put("\" device=\"")
    out.put(SampleSource.watch.devicePrefix)
    device(pointer: pointer, suffix: SampleSource.watch.deviceSuffix!)
    out.put("\" creationDate=\"")
    out.date(workout.end + r.seconds(1...12))
    out.put("\" startDate=\"")
    out.date(workout.start)
    out.put("\" endDate=\"")
    out.date(workout.end)
    out.put("\">\n")
    count(.workout)
  }

  /// The workout's events in date order (pause and resume, two manual laps, a segment per
  /// kilometre for runs and walks), and the segments alone, which a run's activity repeats.
  private func plannedEvents(_ workout: PlannedWorkout, _ r: inout SplitMix64) -> (all: [Event], segments: [Event]) {
    var events: [Event] = []
    if workout.hasPause {
      events.append(Event(date: workout.pause.start, type: .pause))
      events.append(Event(date: workout.pause.end, type: .resume))
    }
    var segments: [Event] = []
    if workout.kind == .running || workout.kind == .walking {
      // A segment per kilometre, as the Watch splits runs and walks.
      let kilometres = Int(workout.movingSeconds / workout.pace)
      var moving = 0.0
      for _ in 0..<kilometres {
        var date = workout.start + Int64(moving)
        if workout.hasPause && date >= workout.pause.start { date += workout.pause.end - workout.pause.start }
        let seconds = workout.pace * r.double(0.94, 1.06)
        segments.append(Event(date: date, type: .segment, minutes: seconds / 60))
        moving += seconds
      }
      // Two manual laps, each half the moving time.
      let half = workout.movingSeconds / 2
      events.append(Event(date: workout.start, type: .lap, minutes: half / 60))
      var second = workout.start + Int64(half)
      if workout.hasPause && second >= workout.pause.start { second += workout.pause.end - workout.pause.start }
      events.append(Event(date: second, type: .lap, minutes: half / 60))
    }
    events.append(contentsOf: segments)
    events.sort { $0.date < $1.date }
    return (events, segments)
  }

  /// A run's one `WorkoutActivity`, which repeats its segments and statistics.
  private mutating func workoutActivity(
    _ workout: PlannedWorkout, _ totals: WorkoutTotals, segments: [Event], _ r: inout SplitMix64
  ) {
    out.put("  <WorkoutActivity uuid=\"")
    uuid(&r)
    out.put("\" startDate=\"")
    out.date(workout.start)
    out.put("\" endDate=\"")
    out.date(workout.end)
    out.put("\" duration=\"")
    out.decimal(workout.movingSeconds / 60, digits: 12)
    out.put("\" durationUnit=\"min\">\n")
    count(.workoutActivity)
    for event in segments { workoutEvent(event, indent: "   ") }
    workoutStatistics(workout, totals, indent: "   ")
    out.put("  </WorkoutActivity>\n")
  }

  /// The `WorkoutRoute` that names the route's GPX file.
  private mutating func workoutRoute(_ route: RouteSpec, of workout: PlannedWorkout, _ r: inout SplitMix64) {
    out.put("  <WorkoutRoute sourceName=\"")
    out.put(SampleSource.watch.name)
    out.put("\" sourceVersion=\"")
    out.put(SampleSource.watch.version)
    out.put("\" creationDate=\"")
    out.date(workout.end + r.seconds(10...90))
    out.put("\" startDate=\"")
    out.date(route.start)
    out.put("\" endDate=\"")
    out.date(route.end)
    out.put("\">\n   <MetadataEntry key=\"HKMetadataKeySyncVersion\" value=\"2\"/>\n")
    out.put("   <MetadataEntry key=\"HKMetadataKeySyncIdentifier\" value=\"")
    uuid(&r)
    out.put("\"/>\n   <FileReference path=\"/workout-routes/")
    out.put(route.fileName)
    out.put("\"/>\n  </WorkoutRoute>\n")
    count(.workoutRoute)
    count(.metadataEntry, 2)
    count(.fileReference)
  }

  private mutating func workoutMetadata(_ kind: WorkoutKind, _ weather: WorkoutWeather) {
    func entry(_ out: inout ByteSink, _ key: StaticString) {
      out.put("  <MetadataEntry key=\"")
      out.put(key)
      out.put("\" value=\"")
    }
    var entries = 0
    if kind == .poolSwim {
      entry(&out, "HKLapLength")
      out.put("25 m\"/>\n")
      entries += 1
    }
    entry(&out, "HKIndoorWorkout")
    out.put(kind == .strength ? "1\"/>\n" : "0\"/>\n")
    entry(&out, "HKTimeZone")
    out.put("Europe/Berlin\"/>\n")
    entries += 2
    if kind == .poolSwim || kind == .openWaterSwim {
      entry(&out, "HKSwimmingLocationType")
      out.put(kind == .poolSwim ? "1\"/>\n" : "2\"/>\n")
      entries += 1
    }
    if kind != .poolSwim && kind != .strength {
      entry(&out, "HKWeatherTemperature")
      out.decimal(weather.temperature, digits: weather.temperatureDigits)
      out.put(" degF\"/>\n")
      entry(&out, "HKWeatherHumidity")
      out.int(weather.humidity)
      out.put(" %\"/>\n")
      entries += 2
    }
    if kind == .running || kind == .walking || kind == .cycling || kind == .triathlon {
      entry(&out, "HKElevationAscended")
      out.int(weather.elevation)
      out.put(" cm\"/>\n")
      entries += 1
    }
    if kind != .legacyRunning {
      entry(&out, "HKAverageMETs")
      out.decimal(weather.mets, digits: 5)
      out.put(" kcal/hr·kg\"/>\n")
      entries += 1
    }
    count(.metadataEntry, entries)
  }

  private mutating func workoutEvent(_ event: Event, indent: StaticString) {
    out.put(indent)
    out.put("<WorkoutEvent type=\"")
    out.put(event.type.text)
    out.put("\" date=\"")
    out.date(event.date)
    if let minutes = event.minutes {
      out.put("\" duration=\"")
      out.decimal(minutes, digits: 12)
      out.put("\" durationUnit=\"min")
    }
    out.put("\"/>\n")
    count(.workoutEvent)
  }

  /// A segment per set and a lap per length, each with its SWOLF score and the lap's stroke style.
  private mutating func swimEvents(_ workout: PlannedWorkout) {
    var index = 0
    let lengths = workout.lengths
    while index < lengths.count {
      var last = index
      while last + 1 < lengths.count && lengths[last + 1].set == lengths[index].set { last += 1 }
      let setLengths = lengths[index...last]
      let swolf = setLengths.reduce(0.0) { $0 + $1.swolf } / Double(setLengths.count)
      out.put("  <WorkoutEvent type=\"HKWorkoutEventTypeSegment\" date=\"")
      out.date(Int64(lengths[index].start))
      out.put("\" duration=\"")
      out.decimal((lengths[last].end - lengths[index].start) / 60, digits: 12)
      out.put("\" durationUnit=\"min\">\n   <MetadataEntry key=\"HKSWOLFScore\" value=\"")
      out.decimal(swolf, digits: 10)
      out.put("\"/>\n  </WorkoutEvent>\n")
      count(.workoutEvent)
      count(.metadataEntry)
      for length in setLengths {
        out.put("  <WorkoutEvent type=\"HKWorkoutEventTypeLap\" date=\"")
        out.date(Int64(length.start))
        out.put("\" duration=\"")
        out.decimal(length.duration / 60, digits: 12)
        out.put("\" durationUnit=\"min\">\n   <MetadataEntry key=\"HKSwimmingStrokeStyle\" value=\"")
        out.int(Int(length.style))
        out.put("\"/>\n   <MetadataEntry key=\"HKSWOLFScore\" value=\"")
        out.decimal(length.swolf, digits: 10)
        out.put("\"/>\n  </WorkoutEvent>\n")
        count(.workoutEvent)
        count(.metadataEntry, 2)
      }
      index = last + 1
    }
  }

  private mutating func workoutStatistics(_ workout: PlannedWorkout, _ totals: WorkoutTotals, indent: StaticString) {
    let kind = workout.kind
    statistic(workout, "HKQuantityTypeIdentifierActiveEnergyBurned", sum: totals.activeKcal, 3, "kcal", indent)
    statistic(workout, "HKQuantityTypeIdentifierBasalEnergyBurned", sum: totals.basalKcal, 3, "kcal", indent)
    switch kind {
    case .running, .walking:
      statistic(workout, "HKQuantityTypeIdentifierDistanceWalkingRunning", sum: totals.meters / 1000, 5, "km", indent)
      statistic(workout, "HKQuantityTypeIdentifierStepCount", sum: totals.steps, 0, "count", indent)
    case .cycling:
      statistic(workout, "HKQuantityTypeIdentifierDistanceCycling", sum: totals.meters / 1000, 5, "km", indent)
    case .poolSwim:
      statistic(workout, "HKQuantityTypeIdentifierDistanceSwimming", sum: totals.swimMeters, 2, "m", indent)
      statistic(workout, "HKQuantityTypeIdentifierSwimmingStrokeCount", sum: totals.strokes, 0, "count", indent)
    case .openWaterSwim:
      statistic(workout, "HKQuantityTypeIdentifierDistanceSwimming", sum: totals.swimMeters, 2, "m", indent)
    case .strength, .legacyRunning, .triathlon:
      break
    }
    heartRateStatistic(workout, totals, indent: indent)
  }

  private mutating func heartRateStatistic(_ workout: PlannedWorkout, _ totals: WorkoutTotals, indent: StaticString) {
    guard totals.heartRateCount > 0 else { return }
    out.put(indent)
    out.put("<WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\" startDate=\"")
    out.date(workout.start)
    out.put("\" endDate=\"")
    out.date(workout.end)
    out.put("\" average=\"")
    out.decimal(totals.heartRateSum / Double(totals.heartRateCount), digits: 3)
    out.put("\" minimum=\"")
    out.decimal(totals.heartRateMin, digits: 0)
    out.put("\" maximum=\"")
    out.decimal(totals.heartRateMax, digits: 0)
    out.put("\" unit=\"count/min\"/>\n")
    count(.workoutStatistics)
  }

  private mutating func statistic(
    _ workout: PlannedWorkout, _ type: StaticString, sum: Double, _ digits: Int, _ unit: StaticString,
    _ indent: StaticString
  ) {
    out.put(indent)
    out.put("<WorkoutStatistics type=\"")
    out.put(type)
    out.put("\" startDate=\"")
    out.date(workout.start)
    out.put("\" endDate=\"")
    out.date(workout.end)
    out.put("\" sum=\"")
    out.decimal(sum, digits: digits)
    out.put("\" unit=\"")
    out.put(unit)
    out.put("\"/>\n")
    count(.workoutStatistics)
  }

  /// A triathlon as the Watch saves one (iOS 16+, after the multi-activity workouts of real
  /// exports): one `WorkoutActivity` per leg — swim, transition, ride, transition, run, tiling the
  /// workout — each with its own `workoutActivityType`, times, Segment event and statistics from
  /// the samples of its stretch; the workout holds the same Segments and the totals.
  private mutating func triathlon(
    _ plan: DayPlan, _ workout: PlannedWorkout, _ whole: WorkoutTotals, _ r: inout SplitMix64
  ) {
    let types: [StaticString] = [
      "HKWorkoutActivityTypeSwimming", "HKWorkoutActivityTypeTransition", "HKWorkoutActivityTypeCycling",
      "HKWorkoutActivityTypeTransition", "HKWorkoutActivityTypeRunning",
    ]
    let shares = [0.2, 0.03, 0.5, 0.02, 0.25]
    // Metres a second: an open-water swim, the ride at the plan's speed, a run at 5:00–6:00 /km.
    let speeds = [r.double(0.65, 0.8), 0, workout.pace, 0, 1000 / r.double(300, 360)]
    // Active energy shared out by overlap: a transition is shorter than the minute samples.
    helper.removeAll(keepingCapacity: true)
    model.samples(.activeEnergyBurned, plan, into: &helper)
    let energy = helper.filter { $0.source == .watch && $0.end > $0.start }
    var legs: [PlannedWorkout] = []
    var legTotals: [WorkoutTotals] = []
    var share = 0.0
    var start = workout.start
    for index in shares.indices {
      share += shares[index]
      var leg = workout
      leg.start = start
      leg.end =
        index == shares.count - 1
        ? workout.end : workout.start + Int64((Double(workout.end - workout.start) * share).rounded())
      leg.pause = Interval(start: leg.start, end: leg.start)
      // The last leg ends where the workout does, short of the whole second like its duration.
      leg.fraction = index == shares.count - 1 ? workout.fraction : 0
      // Samples are a ride's (`cycling`): no steps or swim strokes counted into the legs.
      leg.kind = .cycling
      var totals = totals(plan, leg)
      totals.meters = speeds[index] * Double(leg.end - leg.start)
      totals.activeKcal = energy.reduce(0) { sum, sample in
        let overlap = Interval(start: sample.start, end: sample.end).overlap(leg.interval)
        return sum + sample.value * Double(overlap) / Double(sample.end - sample.start)
      }
      legs.append(leg)
      legTotals.append(totals)
      start = leg.end
    }
    for leg in legs {
      workoutEvent(Event(date: leg.start, type: .segment, minutes: leg.movingSeconds / 60), indent: "  ")
    }
    for index in legs.indices {
      let leg = legs[index]
      out.put("  <WorkoutActivity uuid=\"")
      uuid(&r)
      out.put("\" workoutActivityType=\"")
      out.put(types[index])
      out.put("\" startDate=\"")
      out.date(leg.start)
      out.put("\" endDate=\"")
      out.date(leg.end)
      out.put("\" duration=\"")
      out.decimal(leg.movingSeconds / 60, digits: 12)
      out.put("\" durationUnit=\"min\">\n")
      count(.workoutActivity)
      workoutEvent(Event(date: leg.start, type: .segment, minutes: leg.movingSeconds / 60), indent: "   ")
      triathlonStatistics(leg, index, legTotals[index], indent: "   ")
      heartRateStatistic(leg, legTotals[index], indent: "   ")
      out.put("  </WorkoutActivity>\n")
    }
    var sum = WorkoutTotals()
    for totals in legTotals {
      sum.activeKcal += totals.activeKcal
      sum.basalKcal += totals.basalKcal
    }
    statistic(workout, "HKQuantityTypeIdentifierActiveEnergyBurned", sum: sum.activeKcal, 3, "kcal", "  ")
    statistic(workout, "HKQuantityTypeIdentifierBasalEnergyBurned", sum: sum.basalKcal, 3, "kcal", "  ")
    for index in [0, 2, 4] { triathlonDistance(workout, index, legTotals[index], indent: "  ") }
    heartRateStatistic(workout, whole, indent: "  ")
  }

  /// A leg's energy and distance statistics.
  private mutating func triathlonStatistics(
    _ leg: PlannedWorkout, _ index: Int, _ totals: WorkoutTotals, indent: StaticString
  ) {
    statistic(leg, "HKQuantityTypeIdentifierActiveEnergyBurned", sum: totals.activeKcal, 3, "kcal", indent)
    statistic(leg, "HKQuantityTypeIdentifierBasalEnergyBurned", sum: totals.basalKcal, 3, "kcal", indent)
    triathlonDistance(leg, index, totals, indent: indent)
  }

  /// The distance of leg `index` (swim in m, ride and run in km; none for a transition), dated
  /// like `span`.
  private mutating func triathlonDistance(
    _ span: PlannedWorkout, _ index: Int, _ totals: WorkoutTotals, indent: StaticString
  ) {
    switch index {
    case 0: statistic(span, "HKQuantityTypeIdentifierDistanceSwimming", sum: totals.meters, 2, "m", indent)
    case 2: statistic(span, "HKQuantityTypeIdentifierDistanceCycling", sum: totals.meters / 1000, 5, "km", indent)
    case 4:
      statistic(span, "HKQuantityTypeIdentifierDistanceWalkingRunning", sum: totals.meters / 1000, 5, "km", indent)
    default: break
    }
  }

  /// An upper-case random (version 4) UUID.
  private mutating func uuid(_ r: inout SplitMix64) {
    let high = r.next()
    let low = r.next()
    out.hex(high >> 32, width: 8, upper: true)
    out.byte(0x2D)
    out.hex(high >> 16 & 0xFFFF, width: 4, upper: true)
    out.byte(0x2D)
    out.hex(0x4000 | (high & 0x0FFF), width: 4, upper: true)
    out.byte(0x2D)
    out.hex(0x8000 | (low >> 48 & 0x3FFF), width: 4, upper: true)
    out.byte(0x2D)
    out.hex(low & 0xFFFF_FFFF_FFFF, width: 12, upper: true)
  }

  // MARK: - Activity summaries

  private mutating func activitySummary(_ plan: DayPlan) {
    var r = model.rng(.summary, plan.index)
    helper.removeAll(keepingCapacity: true)
    model.samples(.activeEnergyBurned, plan, into: &helper)
    let active = helper.reduce(0.0) { $0 + $1.value }
    helper.removeAll(keepingCapacity: true)
    model.samples(.appleStandHour, plan, into: &helper)
    let stood = helper.reduce(0) { $0 + ($1.unit == .standStood ? 1 : 0) }
    var exercise = plan.workout.map { Int($0.movingSeconds / 60) } ?? 0
    for bout in plan.bouts where bout.cadence > 110 { exercise += Int((bout.end - bout.start) / 60) }
    exercise += r.int(0...4)
    out.put(" <ActivitySummary dateComponents=\"")
    var date = [UInt8]()
    LocalTimeFormatter.appendDate(plan.date, to: &date)
    out.put(date)
    out.put("\" activeEnergyBurned=\"")
    out.decimal(active, digits: 3)
    out.put("\" activeEnergyBurnedGoal=\"520\" activeEnergyBurnedUnit=\"Cal\" appleMoveTime=\"0\"")
    out.put(" appleMoveTimeGoal=\"0\" appleExerciseTime=\"")
    out.int(exercise)
    out.put("\" appleExerciseTimeGoal=\"30\" appleStandHours=\"")
    out.int(stood)
    out.put("\" appleStandHoursGoal=\"12\"/>\n")
    count(.activitySummary)
  }
}
