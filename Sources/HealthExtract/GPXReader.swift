/// One `<trkpt>` of a GPX file, as written: each field is the text of its attribute or child
/// element (surrounding white space removed), nil when the point has none. Borrowed: valid only
/// during the handler call that receives it.
public struct GPXPoint {
  /// `lat` and `lon` attributes, degrees.
  public var latitude: UnsafeRawBufferPointer?
  public var longitude: UnsafeRawBufferPointer?
  /// `<ele>`, metres.
  public var elevation: UnsafeRawBufferPointer?
  /// `<time>`, ISO 8601 (`2019-06-11T22:00:42Z`).
  public var time: UnsafeRawBufferPointer?
  /// Apple's `<extensions>`: `<speed>` (m/s), `<course>` (degrees), `<hAcc>` and `<vAcc>` (m).
  public var speed: UnsafeRawBufferPointer?
  public var course: UnsafeRawBufferPointer?
  public var horizontalAccuracy: UnsafeRawBufferPointer?
  public var verticalAccuracy: UnsafeRawBufferPointer?
  /// Whether the point opens a `<trkseg>` (or a `<trk>`): no distance is measured across such a
  /// break.
  public var startsSegment: Bool
  /// The line of the file where the `<trkpt>` starts (1-based), for messages about the point.
  public var line: Int

  public init(
    latitude: UnsafeRawBufferPointer? = nil, longitude: UnsafeRawBufferPointer? = nil,
    elevation: UnsafeRawBufferPointer? = nil, time: UnsafeRawBufferPointer? = nil,
    speed: UnsafeRawBufferPointer? = nil, course: UnsafeRawBufferPointer? = nil,
    horizontalAccuracy: UnsafeRawBufferPointer? = nil, verticalAccuracy: UnsafeRawBufferPointer? = nil,
    startsSegment: Bool = false, line: Int = 0
  ) {
    self.latitude = latitude
    self.longitude = longitude
    self.elevation = elevation
    self.time = time
    self.speed = speed
    self.course = course
    self.horizontalAccuracy = horizontalAccuracy
    self.verticalAccuracy = verticalAccuracy
    self.startsSegment = startsSegment
    self.line = line
  }
}

/// How reading one GPX file ended.
public struct GPXReadResult: Sendable, Equatable {
  /// `<trkpt>` elements handed to the handler.
  public var points = 0
  /// Why the file could not be read to its end (not readable, not XML, not GPX, broken or cut
  /// short), with the line; nil when it was read whole. Points before the problem were handed on.
  public var problem: String?

  public init(points: Int = 0, problem: String? = nil) {
    self.points = points
    self.problem = problem
  }
}

/// Streams the track points of GPX files (the routes `WorkoutRoute`s name) through libxml2's SAX2
/// parser, with the protections of the main parse: the DOCTYPE is blanked before parsing, no
/// network, no external entity. Only `<trkpt>` elements and the fields above are looked at; a
/// file's size does not matter, nothing of it is kept.
public enum GPXReader {
  /// Reads `stream` to its end, calling `point` for every `<trkpt>` in document order.
  public static func read(_ stream: ExportFileStream, point: (GPXPoint) -> Void) -> GPXReadResult {
    LibXML2GPXParser().parse(
      name: stream.relativePath,
      read: { buffer throws(ExtractError) in
        try stream.read(into: buffer)
      }, point: point)
  }

  /// Reads GPX bytes held in memory (tests).
  public static func read(bytes: [UInt8], name: String = "<memory>", point: (GPXPoint) -> Void) -> GPXReadResult {
    var memory = BytesInMemory(bytes)
    return LibXML2GPXParser().parse(name: name, read: { memory.read(into: $0) }, point: point)
  }
}
