public import HealthExtract
import HealthModel

/// One point of a workout route (Pipelines/docs/workouts.md, "Routes"): a `<trkpt>` of a GPX file or an
/// inline `Location` of an older export, values parsed, nil where the point has none.
public struct RoutePoint: Sendable, Equatable {
  /// Epoch seconds (fractions kept when a GPX time has them).
  public var time: Double?
  /// Degrees.
  public var latitude: Double?
  public var longitude: Double?
  /// Metres above sea level (GPX `ele`, `Location` `altitude`).
  public var elevation: Double?
  /// m/s; HealthKit writes −1 for "unknown", kept as written.
  public var speed: Double?
  /// Degrees clockwise from north; −1 for "unknown", kept as written.
  public var course: Double?
  /// Metres.
  public var horizontalAccuracy: Double?
  public var verticalAccuracy: Double?
  /// The first point of a track segment: no distance is measured from the point before it.
  public var startsSegment = false

  public init(
    time: Double? = nil, latitude: Double? = nil, longitude: Double? = nil, elevation: Double? = nil,
    speed: Double? = nil, course: Double? = nil, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
    startsSegment: Bool = false
  ) {
    self.time = time
    self.latitude = latitude
    self.longitude = longitude
    self.elevation = elevation
    self.speed = speed
    self.course = course
    self.horizontalAccuracy = horizontalAccuracy
    self.verticalAccuracy = verticalAccuracy
    self.startsSegment = startsSegment
  }

  /// A GPX track point; a field that is not a number (or, for `time`, not an ISO 8601 instant) is nil.
  public init(gpx point: GPXPoint) {
    self.init(
      time: point.time.flatMap(Self.isoInstant), latitude: point.latitude.flatMap(DecimalParser.parse),
      longitude: point.longitude.flatMap(DecimalParser.parse), elevation: point.elevation.flatMap(DecimalParser.parse),
      speed: point.speed.flatMap(DecimalParser.parse), course: point.course.flatMap(DecimalParser.parse),
      horizontalAccuracy: point.horizontalAccuracy.flatMap(DecimalParser.parse),
      verticalAccuracy: point.verticalAccuracy.flatMap(DecimalParser.parse), startsSegment: point.startsSegment)
  }

  /// What `init(location:)` takes in.
  static let attributesRead: [ExportAttribute] = [
    .date, .latitude, .longitude, .altitude, .speed, .course, .horizontalAccuracy, .verticalAccuracy,
  ]

  /// An inline `<Location date latitude longitude altitude horizontalAccuracy verticalAccuracy
  /// course speed>` (exports before iOS 13).
  init(location attributes: ElementAttributes) {
    self.init(
      time: attributes.date(.date).map { Double($0.seconds) }, latitude: attributes.number(.latitude),
      longitude: attributes.number(.longitude), elevation: attributes.number(.altitude),
      speed: attributes.number(.speed), course: attributes.number(.course),
      horizontalAccuracy: attributes.number(.horizontalAccuracy),
      verticalAccuracy: attributes.number(.verticalAccuracy))
  }

  /// The instant written as ISO 8601 with a date, `T`, a time with optional fraction and `Z` or
  /// `±hh:mm` (`2019-06-11T22:00:42Z`, `2024-03-18T18:41:07.250+01:00`); nil for anything else.
  public static func isoInstant(_ bytes: UnsafeRawBufferPointer) -> Double? {
    let n = bytes.count
    guard n >= 20 else { return nil }
    func digits(_ from: Int, _ count: Int) -> Int? {
      var value = 0
      for index in from..<(from + count) {
        let digit = Int(bytes[index]) - 48
        guard digit >= 0, digit <= 9 else { return nil }
        value = value * 10 + digit
      }
      return value
    }
    guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
      bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
      let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2), let hour = digits(11, 2),
      let minute = digits(14, 2), let second = digits(17, 2), (1...12).contains(month), day >= 1,
      day <= CivilDate.daysInMonth(year: year, month: month), hour <= 23, minute <= 59, second <= 60
    else { return nil }
    var index = 19
    var fraction = 0.0
    if bytes[index] == UInt8(ascii: ".") {
      index += 1
      var scale = 0.1
      let first = index
      while index < n, bytes[index] >= 48, bytes[index] <= 57 {
        fraction += Double(bytes[index] - 48) * scale
        scale /= 10
        index += 1
      }
      guard index > first else { return nil }
    }
    guard index < n else { return nil }
    var offset = 0
    if bytes[index] == UInt8(ascii: "Z") {
      index += 1
    } else {
      guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"), index + 6 == n,
        bytes[index + 3] == UInt8(ascii: ":"), let hours = digits(index + 1, 2), let minutes = digits(index + 4, 2),
        hours <= 14, minutes <= 59
      else { return nil }
      offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
      index += 6
    }
    guard index == n else { return nil }
    let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
    let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
    return Double(seconds) + fraction
  }
}
