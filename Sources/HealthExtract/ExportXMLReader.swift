/// Reads an export on the calling thread and hands every element to a handler.
public final class ExportXMLReader {
  private let handler: any ExportEventHandler
  private let allowTruncated: Bool
  private let recover: Bool
  private let progress: ((ReadProgress) -> Void)?

  public init(
    handler: any ExportEventHandler, allowTruncated: Bool = false, recover: Bool = false,
    progress: ((ReadProgress) -> Void)? = nil
  ) {
    self.handler = handler
    self.allowTruncated = allowTruncated
    self.recover = recover
    self.progress = progress
  }

  /// Reads the whole of `input`, calling the handler for every element.
  ///
  /// - Throws: `ExtractError.notAnExport` when the root element is not `HealthData`,
  ///   `.malformed` at the first well-formedness error, `.truncated` when the input ends inside
  ///   the document (unless `allowTruncated`), `.unreadable` on I/O errors. With `recover`,
  ///   neither of the first two: what was read past is in `ReadSummary.recovery`.
  public func read(_ input: ExportInput) throws(ExtractError) -> ReadSummary {
    let replayer = EventReplayer(handler: handler)
    return try LibXML2Parser().parse(DirectChunks(input), allowTruncated: allowTruncated, recover: recover) { batch in
      replayer.replay(batch)
      progress?(batch.progress)
      var reused = batch
      reused.clear()
      return reused
    }
  }
}

extension EventBatch {
  mutating func clear() {
    used = 0
    events.removeAll(keepingCapacity: true)
    attributes.removeAll(keepingCapacity: true)
  }
}
