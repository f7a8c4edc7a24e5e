import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// `daily.csv`'s rounding and rows (Pipelines/docs/daily.md, "Daily"); the join of a whole run's
/// `daily.csv` with the files it repeats is `Tests/EndToEnd/test_daily.py`.
@Suite struct DailyMartTests {
  @Test func valuesAreScaledThenRoundedHalfAwayFromZeroOnTheDecimalValue() {
    // 18 s = 0.005 h exactly: rounds up to 0.01 (a Double just below 0.005 would give 0).
    #expect(DailyMeasure.asleepHours.shown(18) == 0.01)
    // 8 h 34 min = 30 840 s = 8.5666… h → 8.57.
    #expect(DailyMeasure.asleepHours.shown(30_840) == 8.57)
    // 1235 m = 1.235 km, a half: 1.24. 1234.99999 m → 1.23.
    #expect(DailyMeasure.distanceKm.shown(1235) == 1.24)
    #expect(DailyMeasure.distanceKm.shown(1234.99999) == 1.23)
    // Steps: 15706.6359 → 15707; bpm: 154.0909 → 154.1; 59.95 → 60 (shown as 60, not 60.0).
    #expect(DailyMeasure.steps.shown(15706.6359) == 15707)
    #expect(DailyMeasure.heartRateAvg.shown(154.0909) == 154.1)
    #expect(DailyMeasure.restingHeartRate.shown(59.95) == 60)
    // Workout minutes: 1283.982 s = 21.3997 min → 21.
    #expect(DailyMeasure.workoutMinutes.shown(1283.982) == 21)
  }

  /// `shown` rounds through the decimal only near a half; everywhere it must give what rounding
  /// the decimal of every value gives: here values at and next to the halves of every column's
  /// places, and spread over magnitudes from 1e-6 to 1e9, in both signs.
  @Test func shownIsTheDecimalRoundingForEveryValue() {
    func exact(_ measure: DailyMeasure, _ written: Double) -> Double {
      let converted = measure.conversion?.fromBase(written) ?? written
      let rounded = (ExactDecimal(converted)?.rounded(places: measure.places).doubleValue) ?? converted
      return rounded == 0 ? 0 : rounded
    }
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [0, -0.0, 0.0049, -0.0049, 1e-300, 4_503_599_627_370_497, 1e300]
    for half in 0..<2_000 {
      let value = (Double(half) + 0.5) / 1000
      values += [value, value.nextUp, value.nextDown, value * 100, (value * 100).nextDown, -value]
    }
    for _ in 0..<4_000 {
      let value = Double.random(in: 1...10, using: &generator) * Foundation.pow(10, Double(Int.random(in: -6...9)))
      values += [value, -value]
    }
    for measure in [DailyMeasure.steps, .distanceKm, .asleepHours, .heartRateAvg, .bodyFat, .workoutMinutes] {
      for value in values {
        let shown = measure.shown(value)
        guard shown.bitPattern == exact(measure, value).bitPattern else {
          Issue.record("\(measure) \(value): \(shown), not \(exact(measure, value))")
          return
        }
      }
    }
  }

  @Test func roundingIsOnTheDecimalTheValueStandsFor() {
    // 0.7909990439770554 × 10^15 lands on …055.5 in Doubles; the decimal's 16th digit is a 4.
    #expect(NumberText.rounded(0.7909990439770554, significantDigits: 15) == 0.790999043977055)
    #expect(NumberText.rounded(0.5890009560229444, significantDigits: 15) == 0.589000956022944)
    // Halves go away from zero, also when the Double is just below the half.
    #expect(NumberText.rounded(1.005, decimals: 2) == 1.01)
    #expect(NumberText.rounded(48.05295, decimals: 4) == 48.053)
    #expect(NumberText.rounded(-2.5, decimals: 0) == -3)
    #expect(NumberText.rounded(17.22222222222222, decimals: 2) == 17.22)
    #expect(NumberText.rounded(59.99999999999999, significantDigits: 12) == 60)
    // Places beyond the table of exact powers of ten, and negative places, still round.
    #expect(NumberText.rounded(1.25e-30, decimals: 31) == 1.3e-30)
    #expect(NumberText.rounded(1234, decimals: -2) == 1200)
  }

  @Test func integersAreWrittenDigitByDigit() {
    for value: Int64 in [0, 7, -7, 10, -10, 1_234_567_890_123, .max, .min] {
      var out: [UInt8] = []
      CSVField.appendInteger(value, to: &out)
      #expect(String(decoding: out, as: UTF8.self) == String(value))
    }
    var out: [UInt8] = []
    CSVField.appendNumber(-42, to: &out)
    CSVField.appendNumber(2.5, to: &out)
    #expect(String(decoding: out, as: UTF8.self) == "-422.5")
  }

  @Test func theWrittenValueIsRoundedToItsOwnPrecisionFirst() {
    // A statistic written as 2.5 (0.0001 of 2.49996) shows as 3, as a user rounding the CSV
    // cell would get; the raw 2.49996 alone would give 2.
    let collector = DailyCollector()
    let day = CivilDate(year: 2024, month: 1, day: 1)
    collector.set(.steps, on: day, written: 2.49996, precision: .decimals(4))
    #expect(collector.table().first?[.steps] == 3)
  }

  @Test func datesRunWithoutGapsAndEmptyDatesHaveNoValues() {
    let collector = DailyCollector()
    collector.set(.steps, on: CivilDate(year: 2024, month: 2, day: 27), written: 100, precision: .asRecorded)
    collector.workout(on: CivilDate(year: 2024, month: 3, day: 1), seconds: 1800, kilocalories: 250.4)
    collector.workout(on: CivilDate(year: 2024, month: 3, day: 1), seconds: 900, kilocalories: nil)
    let table = collector.table()
    // 2024 is a leap year: 27, 28, 29 February, 1 March.
    #expect(table.map(\.date.description) == ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"])
    #expect(table[1].isEmpty && table[2].isEmpty)
    #expect(table[0][.steps] == 100 && table[0][.workouts] == nil)
    #expect(table[3][.workouts] == 2)
    #expect(table[3][.workoutMinutes] == 45)
    #expect(table[3][.workoutKilocalories] == 250)
    let fields = DailyTables.daily().fields(of: table[1])
    #expect(fields.count == DailyTables.daily().columns.count)
    #expect(fields.dropFirst().allSatisfy { $0 == .missing })
  }

  @Test func sleepCellsAreEmptyWhereTheNightMeasuredNothing() {
    // Three nights, as sleep_daily.csv has them:
    //   03-01 unstaged: "Asleep" 0–25200 s (7 h) and in bed 27000 s → asleep 7, in bed 7.5, no stages;
    //   03-02 in bed only, 30600 s → in bed 8.5, asleep empty;
    //   03-03 awake only, 1800 s → asleep 0 (a real zero), awake 0.5, no stages;
    //   03-04 the Watch: core 3600 s, REM 1800 s, awake 360 s → deep 0 (a real zero).
    func night(_ day: Int, _ pieces: [(Int64, Int64, SleepStage)], inBed: Int64?) -> SleepNightSummary {
      let tally = SleepTally(
        session: pieces.map {
          SleepPiece(start: Instant(seconds: $0.0), end: Instant(seconds: $0.1), stage: $0.2, group: 0)
        },
        inBed: inBed)
      return SleepNightSummary(date: CivilDate(year: 2024, month: 3, day: day), tally: tally)
    }
    let collector = DailyCollector()
    collector.sleep(night(1, [(0, 25200, .asleepUnspecified)], inBed: 27000))
    collector.sleep(night(2, [], inBed: 30600))
    collector.sleep(night(3, [(0, 1800, .awake)], inBed: nil))
    collector.sleep(night(4, [(0, 3600, .asleepCore), (3600, 3960, .awake), (3960, 5760, .asleepREM)], inBed: nil))
    let sleepColumns: [DailyMeasure] = [.asleepHours, .inBedHours, .coreHours, .deepHours, .remHours, .awakeHours]
    let table = collector.table()
    #expect(
      table.map { day in sleepColumns.map { day[$0] } } == [
        [7, 7.5, nil, nil, nil, nil],
        [nil, 8.5, nil, nil, nil, nil],
        [0, nil, nil, nil, nil, 0.5],
        [1.5, nil, 1, 0, 0.5, 0.1],
      ])
    #expect(table[1].bedtime == nil && table[2].bedtime == nil && table[3].bedtime == Instant(seconds: 0))
  }

  @Test func activitySummaryRingsConvertKilojoules() {
    let collector = DailyCollector()
    collector.activitySummary(
      GenericElement(
        name: "ActivitySummary",
        attributes: [
          ("dateComponents", "2024-05-02"), ("activeEnergyBurned", "1255.2"), ("activeEnergyBurnedGoal", "2092"),
          ("activeEnergyBurnedUnit", "kJ"), ("appleExerciseTime", "41"), ("appleExerciseTimeGoal", "30"),
          ("appleStandHours", "11"), ("appleStandHoursGoal", "12"),
        ], line: 1))
    let day = collector.table()
    #expect(day.count == 1)
    // 1255.2 kJ / 4.184 = 300 kcal; 2092 kJ = 500 kcal.
    #expect(day[0][.moveKcal] == 300 && day[0][.moveGoalKcal] == 500)
    #expect(day[0][.exerciseRingMin] == 41 && day[0][.standHours] == 11 && day[0][.standGoalHours] == 12)
  }
}
