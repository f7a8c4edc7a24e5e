/// `elements`: the export's other top-level elements, attributes as written (Pipelines/README.md,
/// "Other elements").
public struct ElementsJobKind: JobKind {
  public var name: String { "elements" }
  public var tables: [TableSchema] { ElementTables.all }
  public var keys: [String] { ["names"] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(
      names: job.names,
      destinations: job.outputs.map { ElementMart.Destination(table: $0.table, file: $0.file, format: $0.format) })
  }

  struct Work: JobWork {
    /// As the pipeline lists them; nil keeps every other element.
    var names: [String]?
    var destinations: [ElementMart.Destination]

    var explanation: String { names.map { " of \($0.joined(separator: ", "))" } ?? "" }

    func columnNames(of table: TableSchema) -> [String] {
      guard let variable = table.variableColumns else { return table.columnNames }
      return [table.columnNames.first!, "(\(variable))", table.columnNames.last!]
    }

    /// Not in `health.sqlite`: its columns depend on the attributes the export holds.
    func databaseKeys(of table: TableSchema) -> TableKeys? { nil }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      ElementMart(transaction: build.transaction, destinations: destinations, names: names.map(Set.init))
    }
  }
}
