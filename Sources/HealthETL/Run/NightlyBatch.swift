import Foundation
import HealthExtract
import HealthModel

/// `healthetl nightly`: every export in the inbox not processed yet (by content hash), oldest
/// first, each as one atomic run into the output folder, under the folder's lock (Pipelines/README.md, "Runs and the nightly batch").
///
/// Safe to kill at any moment: an export's outputs, the state recording it as processed, and
/// the delta it adds to `workout_records.new.json` are committed together or not at all; the next
/// night processes what was not committed and keeps whatever delta was left pending.
public enum NightlyBatch {
  public struct Options: Sendable {
    public var inbox: String
    public var outputDirectory: String
    public var plan: RunPlan
    public var zone: RunZone.Request = .auto
    /// Progress shows only when stderr is a terminal anyway (never under cron).
    public var quiet = false

    public init(inbox: String, outputDirectory: String, plan: RunPlan) {
      self.inbox = inbox
      self.outputDirectory = outputDirectory
      self.plan = plan
    }
  }

  public struct Result: Sendable {
    /// Inbox files processed this night, in order.
    public var processed: [String] = []
    /// Inbox files skipped because their content was processed before.
    public var alreadyProcessed = 0
    /// Records in tonight's `workout_records.new.json`.
    public var newWorkoutRecords = 0
  }

  public static func run(_ options: Options) throws(ETLError) -> Result {
    let lock: OutputLock
    do { lock = try OutputLock(directory: options.outputDirectory) } catch { throw .output(error) }
    defer { lock.release() }
    var result = Result()
    for candidate in try inboxFiles(options.inbox) {
      let hash = try sha256(ofFile: candidate.path)
      let state: DeliveryState
      do { state = try DeliveryState.load(from: options.outputDirectory) } catch { throw .output(error) }
      if state.processed.contains(where: { $0.sha256 == hash }) {
        result.alreadyProcessed += 1
        continue
      }
      var run = ExportRun.RunOptions(input: .path(candidate.path), plan: options.plan)
      run.outputDirectory = options.outputDirectory
      run.zone = options.zone
      run.quiet = options.quiet
      run.nightlyEntry = DeliveryState.Processed(sha256: hash, name: candidate.name, bytes: candidate.bytes)
      _ = try ExportRun.run(run)
      result.processed.append(candidate.name)
    }
    do {
      var state = try DeliveryState.load(from: options.outputDirectory)
      result.newWorkoutRecords = state.pending.count
      let transaction = try OutputTransaction(outputDirectory: options.outputDirectory)
      try state.finishNight(transaction)
      try transaction.commit()
    } catch {
      throw .output(error)
    }
    return result
  }

  struct Candidate {
    var path: String
    var name: String
    var bytes: Int64
    var modified: Int64
  }

  /// Exports in the inbox (`.zip` and `.xml` files), oldest first, then by name.
  static func inboxFiles(_ inbox: String) throws(ETLError) -> [Candidate] {
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: inbox) } catch {
      throw .extract(.notFound(path: inbox))
    }
    var candidates: [Candidate] = []
    for name in names where !name.hasPrefix(".") {
      let lower = name.lowercased()
      guard lower.hasSuffix(".zip") || lower.hasSuffix(".xml") else { continue }
      let path = inbox + "/" + name
      var info = stat()
      guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
      candidates.append(
        Candidate(path: path, name: name, bytes: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec)))
    }
    return candidates.sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
  }

  static func sha256(ofFile path: String) throws(ETLError) -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw .extract(.unreadable(path: path, reason: "cannot open"))
    }
    defer { try? handle.close() }
    let digest = Digest.SHA256Stream()
    while let chunk = try? handle.read(upToCount: 1 << 22), !chunk.isEmpty {
      chunk.withUnsafeBytes { digest.update($0) }
    }
    return digest.finalizeHex()
  }
}
