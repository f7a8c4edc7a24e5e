import Foundation
public import HealthExtract

/// Bytes read of total, MB/s and ETA on stderr, twice a second, only when stderr is a terminal
/// (and not `--quiet`); the line is erased when the read ends.
public final class ProgressReporter {
  private let enabled: Bool
  private let started = ContinuousClock.now
  private var lastPrint = ContinuousClock.now
  private var printed = false

  public init(quiet: Bool) {
    enabled = !quiet && isatty(STDERR_FILENO) == 1
  }

  public func update(_ progress: ReadProgress) {
    guard enabled else { return }
    let now = ContinuousClock.now
    guard now - lastPrint > .milliseconds(500) else { return }
    lastPrint = now
    let seconds = Self.seconds(now - started)
    let done = Double(progress.rawBytes)
    let total = progress.rawTotal.map(Double.init)
    let rate = done / max(seconds, 0.001) / 1e6
    var line = String(format: "\rread %.1f MB", done / 1e6)
    if let total, total > 0 {
      line += String(format: " of %.1f MB (%.0f%%)", total / 1e6, 100 * done / total)
      let eta = (total - done) / max(rate * 1e6, 1)
      line += String(format: ", %.1f MB/s, ETA %.0fs   ", rate, eta)
    } else {
      line += String(format: ", %.1f MB/s   ", rate)
    }
    try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    printed = true
  }

  public func done() {
    if printed { try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K".utf8)) }
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
