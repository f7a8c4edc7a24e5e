internal import HealthModel

/// A workout route: its time span and the GPX file that holds it.
struct RouteSpec {
  var start: Int64
  var end: Int64
  /// `route_2024-03-18_6.41pm.gpx`: the route's end on the local 12-hour clock, as the Health app
  /// names the files.
  var fileName: [UInt8]
  /// `Route 2024-03-18 6:41pm`, the track name inside the file.
  var trackName: [UInt8]
}

extension SampleModel {
  func route(_ plan: DayPlan) -> RouteSpec? {
    guard profile.wearsWatch, let workout = plan.workout, workout.kind.hasRoute else { return nil }
    var r = rng(.route, plan.index)
    let start = workout.start + r.seconds(1...6)
    let end = workout.end - r.seconds(2...40)
    let local = zone.localSeconds(at: Instant(seconds: end))
    let day = floorDiv(local, 86_400)
    let second = local - day * 86_400
    let hour = second / 3600
    var clock: [UInt8] = Array(String(hour % 12 == 0 ? 12 : hour % 12).utf8)
    let minute = second / 60 % 60
    let minuteText: [UInt8] = [UInt8(48 + minute / 10), UInt8(48 + minute % 10)]
    let meridiem: [UInt8] = Array((hour < 12 ? "am" : "pm").utf8)
    var date: [UInt8] = []
    LocalTimeFormatter.appendDate(CivilDate(daysSinceEpoch: day), to: &date)
    var fileName: [UInt8] = Array("route_".utf8) + date + [UInt8(ascii: "_")] + clock
    fileName += [UInt8(ascii: ".")] + minuteText + meridiem + Array(".gpx".utf8)
    clock += [UInt8(ascii: ":")] + minuteText + meridiem
    let trackName = Array("Route ".utf8) + date + [UInt8(ascii: " ")] + clock
    return RouteSpec(start: start, end: end, fileName: fileName, trackName: trackName)
  }

  /// The GPX 1.1 file of a route: a few dozen points (one a second with `denseRoutes`) on a loop
  /// around a Berlin park or lake, times in UTC.
  func gpx(_ plan: DayPlan, _ route: RouteSpec, exportInstant: Int64) -> ByteSink {
    var out = ByteSink(target: .memory)
    guard let workout = plan.workout else { return out }
    var r = rng(.route, plan.index &+ 1_000_003)
    out.put("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
    out.put("<gpx version=\"1.1\" creator=\"Apple Health Export\" xmlns=\"http://www.topografix.com/GPX/1/1\"")
    out.put(" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"")
    out.put(" xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd\">\n")
    out.put("  <metadata>\n    <time>")
    out.utc(exportInstant)
    out.put("</time>\n  </metadata>\n  <trk>\n    <name>")
    out.put(route.trackName)
    out.put("</name>\n    <trkseg>\n")

    let (latitude, longitude): (Double, Double)
    let speed: Double
    switch workout.kind {
    case .cycling, .triathlon:
      (latitude, longitude) = (52.4700, 13.2400)  // Grunewald
      speed = workout.pace
    case .openWaterSwim:
      (latitude, longitude) = (52.4380, 13.6470)  // Müggelsee
      speed = workout.pace
    default:
      (latitude, longitude) = (52.5145, 13.3501)  // Tiergarten
      speed = 1000 / workout.pace
    }
    let sparse = r.int(36...60)
    let points = denseRoutes ? Int(route.end - route.start) + 1 : sparse
    let seconds = Double(route.end - route.start)
    let radius = speed * seconds / (2 * Double.pi)
    let metersPerDegreeLatitude = 111_320.0
    let metersPerDegreeLongitude = 111_320.0 * 0.6088  // cos(52.5°)
    let phase = r.double(0, 2 * Double.pi)
    for index in 0..<points {
      let fraction = Double(index) / Double(points - 1)
      let angle = phase + 2 * Double.pi * fraction
      let wobble = 1 + r.gaussian() * 0.01
      let lat = latitude + radius * wobble * Trig.sin(angle) / metersPerDegreeLatitude
      let lon = longitude + radius * wobble * Trig.cos(angle) / metersPerDegreeLongitude
      let time = route.start + Int64(seconds * fraction)
      var course = (90 - (angle + Double.pi / 2) * 180 / Double.pi).truncatingRemainder(dividingBy: 360)
      if course < 0 { course += 360 }
      out.put("      <trkpt lon=\"")
      out.fixed(lon, digits: 6)
      out.put("\" lat=\"")
      out.fixed(lat, digits: 6)
      out.put("\"><ele>")
      out.fixed(34 + 3 * Trig.sin(angle * 2) + r.gaussian() * 0.3, digits: 6)
      out.put("</ele><time>")
      out.utc(time)
      out.put("</time><extensions><speed>")
      out.fixed(max(0, speed * (1 + r.gaussian() * 0.05)), digits: 6)
      out.put("</speed><course>")
      out.fixed(course, digits: 6)
      out.put("</course><hAcc>")
      out.fixed(r.double(1.5, 5), digits: 6)
      out.put("</hAcc><vAcc>")
      out.fixed(r.double(1, 4), digits: 6)
      out.put("</vAcc></extensions></trkpt>\n")
    }
    out.put("    </trkseg>\n  </trk>\n</gpx>\n")
    return out
  }
}

/// Sine and cosine from plain arithmetic, so route files do not depend on the C library's `sin`.
enum Trig {
  static func sin(_ x: Double) -> Double {
    // Reduce to [-π, π], then a Taylor series (error < 1e-9 there, ample for coordinates).
    var y = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if y > Double.pi { y -= 2 * Double.pi }
    if y < -Double.pi { y += 2 * Double.pi }
    let y2 = y * y
    var term = y
    var sum = y
    for n in stride(from: 2, through: 30, by: 2) {
      term *= -y2 / Double(n * (n + 1))
      sum += term
    }
    return sum
  }

  static func cos(_ x: Double) -> Double { sin(x + Double.pi / 2) }
}
