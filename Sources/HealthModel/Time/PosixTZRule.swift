/// A POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3`, the rule a TZif footer gives for all
/// instants after its last explicit transition.
struct PosixTZRule {
  /// Seconds east of UTC (POSIX writes the opposite sign).
  let standardOffset: Int32
  let daylight: (offset: Int32, start: DateRule, end: DateRule)?

  enum DateRule {
    /// Month, week (1…5, 5 = last), weekday (0 = Sunday), seconds after local midnight.
    case monthWeekDay(month: Int, week: Int, weekday: Int, time: Int)
    /// Day 1…365, never counting February 29.
    case julianNoLeap(day: Int, time: Int)
    /// Day 0…365, counting February 29.
    case zeroBasedDay(day: Int, time: Int)
  }

  init?(_ text: String) {
    var scanner = Scanner(bytes: Array(text.utf8))
    guard scanner.skipName(), let std = scanner.offset() else { return nil }
    standardOffset = Int32(-std)
    if scanner.atEnd {
      daylight = nil
      return
    }
    guard scanner.skipName() else { return nil }
    var dst = -std + 3600
    if let explicit = scanner.offset() { dst = -explicit }
    guard scanner.eat(","), let start = scanner.dateRule(), scanner.eat(","), let end = scanner.dateRule() else {
      return nil
    }
    daylight = (Int32(dst), start, end)
  }

  /// The transitions that fall in `year`, in order, each with the offset that starts there.
  func transitions(in year: Int) -> [(Int64, Int32)] {
    guard let daylight else { return [] }
    let start = Self.localSeconds(of: daylight.start, year: year) - Int64(standardOffset)
    let end = Self.localSeconds(of: daylight.end, year: year) - Int64(daylight.offset)
    return [(start, daylight.offset), (end, standardOffset)].sorted { $0.0 < $1.0 }
  }

  static func localSeconds(of rule: DateRule, year: Int) -> Int64 {
    switch rule {
    case .monthWeekDay(let month, let week, let weekday, let time):
      let first = CivilDate(year: year, month: month, day: 1)
      let firstWeekday = (first.isoWeekdayIndex + 1) % 7  // 0 = Sunday
      var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
      let length = CivilDate.daysInMonth(year: year, month: month)
      while day > length { day -= 7 }
      return CivilDate(year: year, month: month, day: day).daysSinceEpoch * 86_400 + Int64(time)
    case .julianNoLeap(let day, let time):
      var days = CivilDate(year: year, month: 1, day: 1).daysSinceEpoch + Int64(day - 1)
      if CivilDate.isLeapYear(year) && day >= 60 { days += 1 }
      return days * 86_400 + Int64(time)
    case .zeroBasedDay(let day, let time):
      return (CivilDate(year: year, month: 1, day: 1).daysSinceEpoch + Int64(day)) * 86_400 + Int64(time)
    }
  }

  struct Scanner {
    let bytes: [UInt8]
    var index = 0
    var atEnd: Bool { index >= bytes.count }

    mutating func eat(_ character: Character) -> Bool {
      guard !atEnd, bytes[index] == character.asciiValue else { return false }
      index += 1
      return true
    }

    mutating func skipName() -> Bool {
      if eat("<") {
        while !atEnd, bytes[index] != UInt8(ascii: ">") { index += 1 }
        return eat(">")
      }
      let start = index
      while !atEnd, (bytes[index] | 0x20) >= 0x61, (bytes[index] | 0x20) <= 0x7A { index += 1 }
      return index - start >= 3
    }

    mutating func number() -> Int? {
      var value: Int?
      while !atEnd, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        value = (value ?? 0) * 10 + Int(bytes[index] - 0x30)
        index += 1
      }
      return value
    }

    /// `[+-]hh[:mm[:ss]]` as signed seconds.
    mutating func offset() -> Int? {
      var sign = 1
      if eat("-") { sign = -1 } else { _ = eat("+") }
      guard let hours = number() else { return nil }
      var seconds = hours * 3600
      if eat(":") { seconds += (number() ?? 0) * 60 }
      if eat(":") { seconds += number() ?? 0 }
      return sign * seconds
    }

    mutating func dateRule() -> DateRule? {
      let rule: DateRule
      if eat("M") {
        guard let month = number(), eat("."), let week = number(), eat("."), let weekday = number(),
          (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday)
        else { return nil }
        rule = .monthWeekDay(month: month, week: week, weekday: weekday, time: 7200)
      } else if eat("J") {
        guard let day = number(), (1...365).contains(day) else { return nil }
        rule = .julianNoLeap(day: day, time: 7200)
      } else {
        guard let day = number(), (0...365).contains(day) else { return nil }
        rule = .zeroBasedDay(day: day, time: 7200)
      }
      guard eat("/") else { return rule }
      guard let time = offset() else { return nil }
      switch rule {
      case .monthWeekDay(let m, let w, let d, _): return .monthWeekDay(month: m, week: w, weekday: d, time: time)
      case .julianNoLeap(let d, _): return .julianNoLeap(day: d, time: time)
      case .zeroBasedDay(let d, _): return .zeroBasedDay(day: d, time: time)
      }
    }
  }
}
