public import HealthModel

/// The run's interned vocabulary: every distinct type, source, unit, device and metadata key seen,
/// with what HealthETL derives from each (worked out once per distinct value).
public final class SampleCatalog {
  let types = ByteInterner()
  let sources = ByteInterner()
  let versions = ByteInterner()
  let units = ByteInterner()
  let devices = ByteInterner()
  let metadataKeys = ByteInterner()
  let categoryValues = ByteInterner()
  private var typeInfos: [SampleTypeInfo] = []
  private var unitConversions: [UnitConversion] = []
  /// `unitConversions` as two flat arrays, read per record without copying a struct with a String.
  private var unitFactors: [Double] = []
  private var unitOffsets: [Double] = []
  /// The values a sample in each unit may take once converted (`Plausibility`), flat likewise.
  private var unitRanges: [ClosedRange<Double>] = []
  private var deviceDescriptions: [DeviceDescription] = []
  private var categoryShortNames: [Int64: String] = [:]

  public init() {}

  public func typeInfo(_ id: Int32) -> SampleTypeInfo { typeInfos[Int(id)] }
  public func sourceName(_ id: Int32) -> String { sources[id] }
  public func sourceVersion(_ id: Int32) -> String? { id < 0 ? nil : versions[id] }
  public func unit(_ id: Int32) -> String? { id < 0 ? nil : units[id] }
  public func unitConversion(_ id: Int32) -> UnitConversion? { id < 0 ? nil : unitConversions[Int(id)] }
  public func device(_ id: Int32) -> DeviceDescription? { id < 0 ? nil : deviceDescriptions[Int(id)] }
  public func metadataKey(_ id: Int32) -> String { metadataKeys[id] }
  public var typeCount: Int { typeInfos.count }
  public var sourceCount: Int { sources.count }
  public var allSourceNames: [String] { sources.strings }
  public var allDevices: [DeviceDescription] { deviceDescriptions }
  public var allUnits: [(String, UnitConversion)] { Array(zip(units.strings, unitConversions)) }

  /// Short name of a category value (`asleepCore`) for a type.
  public func categoryShortName(value: Int32, type: Int32) -> String {
    let key = Int64(value) << 32 | Int64(UInt32(bitPattern: type))
    if let known = categoryShortNames[key] { return known }
    let raw: String? = value < 0 ? nil : categoryValues[value]
    let name = CategoryValueName.shortName(raw: raw, typeShortName: typeInfo(type).shortName)
    categoryShortNames[key] = name
    return name
  }

  /// `raw` in the canonical unit of `unit` (unchanged when there is no unit).
  @inline(__always) func canonicalValue(_ raw: Double, unit: Int32) -> Double {
    unit < 0 ? raw : raw * unitFactors[Int(unit)] + unitOffsets[Int(unit)]
  }

  /// What a value converted from `unit` may be: its canonical unit's range, or for a unit
  /// HealthETL does not convert (and no unit) any magnitude up to 1e15.
  @inline(__always) func plausibleRange(unit: Int32) -> ClosedRange<Double> {
    unit < 0 ? Self.unconvertedRange : unitRanges[Int(unit)]
  }

  private static let unconvertedRange =
    -Plausibility.largestUnconvertedMagnitude...Plausibility.largestUnconvertedMagnitude

  func internType(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    let id = types.intern(bytes)
    if Int(id) == typeInfos.count { typeInfos.append(SampleTypeInfo(identifier: types[id])) }
    return id
  }

  func internUnit(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    let id = units.intern(bytes)
    if Int(id) == unitConversions.count {
      let conversion = UnitConversion.forUnit(units[id])
      unitConversions.append(conversion)
      unitFactors.append(conversion.factor)
      unitOffsets.append(conversion.offset)
      // A unit HealthETL keeps as written (W, mL/min·kg, …) has its symbol as its canonical unit.
      unitRanges.append(Plausibility.range(ofCanonicalUnit: conversion.canonicalUnit) ?? Self.unconvertedRange)
    }
    return id
  }

  /// Devices are interned without their `<<HKDevice: 0x…>` pointer prefix, which differs per record.
  func internDevice(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    var body = bytes
    if bytes.count > 2, bytes[0] == UInt8(ascii: "<"), bytes[1] == UInt8(ascii: "<"),
      let close = bytes.firstIndex(of: UInt8(ascii: ">"))
    {
      body = UnsafeRawBufferPointer(rebasing: bytes[(close + 1)...])
    }
    let id = devices.intern(body)
    if Int(id) == deviceDescriptions.count {
      deviceDescriptions.append(DeviceDescription(parsing: "<<HKDevice>" + devices[id]))
    }
    return id
  }
}
