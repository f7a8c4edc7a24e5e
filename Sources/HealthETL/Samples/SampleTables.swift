/// The table of a samples job, declared once: every distinct record as a typed sample
/// (Pipelines/docs/samples.md, "Samples").
public enum SampleTables {
  public static let samples = TableSchema(
    "samples", rows: "one row per distinct record, in document order", defaultFile: "samples/{type}.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("id", "UUID v5 of type, source, start, end, raw value and raw unit: stable across re-exports"),
      .text("type", "the type identifier without its prefix (`StepCount`)"),
      .text("kind", "`quantity`, `category` or `other`"),
      .number(
        "value", precision: .significantDigits(15),
        "quantities in the canonical unit; categories as short names (`asleepCore`)"),
      .text("unit", "the canonical unit of a quantity"),
      .text(
        "raw_value",
        "the `value` attribute as written; for an iOS 8–9 record without one, the attribute its value was read "
          + "from: a day aggregate's `average`, Withings' `Sleep Stage`"),
      .text("raw_unit", "the unit exactly as written"),
      .instant("start", "`startDate`"),
      .instant("end", "`endDate`"),
      .instant("created", "`creationDate`"),
      .text("source", "`sourceName`"),
      .text("source_version", "`sourceVersion`"),
      .text("device_name", "the `name:` field of `device`"),
      .text("device_model", "the `model:` field of `device`"),
      .text("device_hardware", "the `hardware:` field of `device`"),
      .text("device_software", "the `software:` field of `device`"),
      .text("metadata", "the record's `MetadataEntry`s as one JSON object"),
    ],
    variableColumns: "`value` is a number for quantities and text for categories",
    keys: TableKeys(indexes: [["start_unix"]]))

  public static let all = [samples]
}
