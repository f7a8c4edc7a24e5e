internal import Glibc
internal import HealthModel

/// Writes realistic synthetic Apple Health exports, deterministic by seed and of any size: the
/// project's own sample and benchmark data.
///
/// The export is that of "Alex", who lives in Europe/Berlin with an iPhone, an Apple Watch, the
/// AutoSleep app and Withings devices: overlapping step counts from phone and Watch, sleep stages
/// with an in-bed envelope and a third-party app's view of the same night, dense heart rate in
/// workouts, pool swims with per-length stroke samples, weekly blood pressure correlations, daily
/// activity summaries, GPX routes — and the quirks of real exports (one offset for every date,
/// repeated workout metadata, a sleep sample written twice, correlation records repeated at top
/// level, an old-style workout with only total attributes).
public enum SyntheticExportGenerator {
  /// Writes the export. Without zip, `path` is the XML file and GPX routes go to a
  /// `workout-routes/` folder beside it; with zip, `path` is the .zip holding
  /// apple_health_export/export.xml, apple_health_export/export_cda.xml (a tiny CDA stub starting
  /// `<?xml …?><ClinicalDocument xmlns="urn:hl7-org:v3">`), apple_health_export/workout-routes/*.gpx.
  ///
  /// - Throws: `SampleExportError`.
  public static func write(_ options: SyntheticExportOptions, to path: String) throws -> SampleExportStats {
    let zone: ZoneRules
    do {
      zone = try ZoneRules.load("Europe/Berlin")
    } catch {
      throw SampleExportError.timeZoneUnavailable(error.description)
    }
    let days = try dayCount(options, zone: zone)
    var model = SampleModel(seed: options.seed, start: options.start, days: days, zone: zone)
    model.denseRoutes = options.routes != nil
    model.profile = options.profile
    let exportInstant = model.instant(options.start.adding(days: Int64(days)), 9 * 3600)
    let directory = parentDirectory(of: path)
    try makeDirectory(directory)

    if !options.zip {
      var stats = try writeXML(model, exportInstant: exportInstant, to: path)
      let routesDirectory = directory + "/workout-routes"
      var madeDirectory = false
      try forEachRoute(model, exportInstant: exportInstant) { (name, bytes) throws(SampleExportError) in
        if !madeDirectory {
          try makeDirectory(routesDirectory)
          madeDirectory = true
        }
        try writeFile(routesDirectory + "/" + name, bytes)
        stats.routeFiles += 1
      }
      try forEachElectrocardiogram(model, options) { (name, bytes) throws(SampleExportError) in
        try makeDirectory(parentDirectory(of: directory + "/" + name))
        try writeFile(directory + "/" + name, bytes)
        stats.ecgFiles += 1
      }
      return stats
    }

    // The XML goes to a temporary file beside the zip first: the zip entry needs its size up front.
    let temporary = path + ".export-xml.tmp"
    defer { unlink(temporary) }
    var stats = try writeXML(model, exportInstant: exportInstant, to: temporary)
    let zip = try ZipWriter(path: path, modified: exportInstant)
    do {
      try zip.add("apple_health_export/export.xml", contentsOf: temporary)
      unlink(temporary)
      let cda = cdaStub(exportInstant: exportInstant, offset: zone.offset(at: Instant(seconds: exportInstant)))
      try cda.withUnsafeBytes { bytes in try zip.add("apple_health_export/export_cda.xml", bytes: bytes) }
      try forEachRoute(model, exportInstant: exportInstant) { (name, bytes) throws(SampleExportError) in
        try zip.add("apple_health_export/workout-routes/" + name, bytes: bytes)
        stats.routeFiles += 1
      }
      try forEachElectrocardiogram(model, options) { (name, bytes) throws(SampleExportError) in
        try zip.add("apple_health_export/" + name, bytes: bytes)
        stats.ecgFiles += 1
      }
      try zip.finish()
    } catch {
      unlink(path)
      throw error
    }
    return stats
  }

  // MARK: - Sizing

  static let bytesPerMegabyte = 1_000_000.0

  /// `options.days`, or the number of days that makes export.xml about `targetMegabytes`: measured
  /// by generating one and twenty-nine days without writing them (the weekly routine repeats, so
  /// four weeks give a fair average day).
  static func dayCount(_ options: SyntheticExportOptions, zone: ZoneRules) throws(SampleExportError) -> Int {
    // Dates are printed with four-digit years.
    let maximumDays = Int(CivilDate(year: 9998, month: 12, day: 31).daysSinceEpoch - options.start.daysSinceEpoch)
    // HealthETL rejects records dated before 2000 (Pipelines/docs/input.md, "Bad input").
    guard options.start.year >= 2000 else { throw .invalidOptions("the start date must be 2000-01-01 or later") }
    if let routes = options.routes {
      guard options.profile == .watch else {
        throw .invalidOptions("only the watch profile has workout routes; drop --routes or --profile")
      }
      guard routes >= 1 else { throw .invalidOptions("the number of routes must be at least 1 (got \(routes))") }
      // Days one by one until the routine has given that many routes: about two and a half a week.
      let model = SampleModel(seed: options.seed, start: options.start, days: maximumDays, zone: zone)
      var found = 0
      for day in 0..<maximumDays {
        if model.route(model.plan(day)) != nil { found += 1 }
        if found == routes { return day + 1 }
      }
      throw .invalidOptions("\(routes) routes need more days than the calendar allows")
    }
    guard let target = options.targetMegabytes else {
      guard options.days >= 1 else { throw .invalidOptions("days must be at least 1 (got \(options.days))") }
      guard options.days <= maximumDays else {
        throw .invalidOptions(
          "\(options.days) days from \(options.start) end after 9998-12-31; from that start at most \(max(maximumDays, 0)) days fit"
        )
      }
      return options.days
    }
    guard target >= 1 else { throw .invalidOptions("the target size must be at least 1 MB (got \(target))") }
    func measure(_ days: Int) -> Double {
      var model = SampleModel(seed: options.seed, start: options.start, days: days, zone: zone)
      model.profile = options.profile
      var writer = ExportWriter(
        out: ByteSink(
          target: .discard, compactDates: model.profile.writesIOS8Format,
          zone: model.profile.writesIOS8Format ? zone : nil),
        model: model, exportInstant: 0)
      writer.writeDocument()
      return Double(writer.out.totalBytes)
    }
    let one = measure(1)
    let perDay = (measure(29) - one) / 28
    let wanted = Double(target) * bytesPerMegabyte
    let days = Int(((wanted - one) / perDay).rounded()) + 1
    guard days <= maximumDays else { throw .invalidOptions("\(target) MB needs more days than the calendar allows") }
    return max(1, days)
  }

  // MARK: - Files

  static func writeXML(_ model: SampleModel, exportInstant: Int64, to path: String) throws(SampleExportError)
    -> SampleExportStats
  {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
    let offset = model.zone.offset(at: Instant(seconds: exportInstant))
    var writer = ExportWriter(
      out: ByteSink(
        target: .file(fd), offsetSeconds: offset, compactDates: model.profile.writesIOS8Format,
        // iOS 8–9 wrote each date with its own offset; later exports the export day's on all.
        zone: model.profile.writesIOS8Format ? model.zone : nil),
      model: model,
      exportInstant: exportInstant)
    writer.writeDocument()
    let failure = writer.out.failure
    let closed = close(fd)
    if failure != 0 { throw .writeFailed(path: path, reason: String(cString: strerror(failure))) }
    if closed != 0 { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }

    var elements: [String: Int] = [:]
    for element in WrittenElement.allCases where writer.elementCounts[element.rawValue] > 0 {
      elements[element.xmlName] = writer.elementCounts[element.rawValue]
    }
    var records: [String: Int] = [:]
    for type in RecordType.allCases where writer.recordCounts[type.rawValue] > 0 {
      records[type.shortName] = writer.recordCounts[type.rawValue]
    }
    return SampleExportStats(
      xmlBytes: writer.out.totalBytes, elements: elements, records: records, days: model.days, routeFiles: 0)
  }

  /// Calls `body` with the name and bytes of every route's GPX file, in date order.
  static func forEachRoute(
    _ model: SampleModel, exportInstant: Int64,
    _ body: (String, UnsafeRawBufferPointer) throws(SampleExportError) -> Void
  ) throws(SampleExportError) {
    for day in 0..<model.days {
      let plan = model.plan(day)
      guard let route = model.route(plan) else { continue }
      let gpx = model.gpx(plan, route, exportInstant: exportInstant)
      let name = String(decoding: route.fileName, as: UTF8.self)
      try gpx.withBytes { bytes throws(SampleExportError) in try body(name, bytes) }
    }
  }

  /// Calls `body` with the path (below the export's folder) and bytes of every ECG file, in date order.
  static func forEachElectrocardiogram(
    _ model: SampleModel, _ options: SyntheticExportOptions,
    _ body: (String, UnsafeRawBufferPointer) throws(SampleExportError) -> Void
  ) throws(SampleExportError) {
    for (index, recording) in model.electrocardiograms(count: options.ecgs, locale: options.ecgLocale).enumerated() {
      let file = model.electrocardiogramFile(recording, index: index, locale: options.ecgLocale)
      try file.withBytes { bytes throws(SampleExportError) in try body(recording.fileName, bytes) }
    }
  }

  static func writeFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws(SampleExportError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
      offset += written
    }
  }

  static func parentDirectory(of path: String) -> String {
    guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    if slash == path.utf8.startIndex { return "/" }
    return String(path[..<slash])
  }

  /// Creates `path` and its missing parents.
  static func makeDirectory(_ path: String) throws(SampleExportError) {
    var info = stat()
    if stat(path, &info) == 0 {
      guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .cannotCreate(path: path, reason: "not a folder") }
      return
    }
    let parent = parentDirectory(of: path)
    if parent != path { try makeDirectory(parent) }
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
      throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
    }
  }

  /// The clinical-document file every export.zip carries; a stub, since the sample has no
  /// clinical data.
  static func cdaStub(exportInstant: Int64, offset: Int32) -> [UInt8] {
    var text: [UInt8] = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)
    text += Array("<ClinicalDocument xmlns=\"urn:hl7-org:v3\">\n <title>Health Data Export</title>\n".utf8)
    text += Array(" <effectiveTime value=\"".utf8)
    text += Array(
      LocalTimeFormatter.compact(Instant(seconds: exportInstant), offsetSeconds: offset, withTime: true).utf8)
    let magnitude = Int(offset.magnitude)
    text.append(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
    for digit in [magnitude / 36_000, magnitude / 3600 % 10, magnitude / 600 % 6, magnitude / 60 % 10] {
      text.append(UInt8(48 + digit))
    }
    text += Array("\"/>\n</ClinicalDocument>\n".utf8)
    return text
  }
}
