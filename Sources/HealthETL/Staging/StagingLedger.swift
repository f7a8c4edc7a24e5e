import Foundation
import HealthExtract
import HealthModel

/// What every element family of the staging layer reports into: the export's facts about
/// itself, the zone votes and the rejected elements.
final class StagingLedger {
  var facts = ExportFacts()
  var rejections = RejectionLog()
  /// Position of each `HKTimeZone` value in `facts.timeZoneVotes`.
  private var voteIndex: [String: Int] = [:]

  /// The run's clock, for an export without an `ExportDate` (Pipelines/docs/input.md, "Bad input").
  private lazy var now = Instant(seconds: Int64(time(nil)))

  /// Why a record or workout starting at `start` holds no day of data, or nil when it may: before
  /// 2000, or more than a day after the export date (the run's clock without one).
  func implausibleStart(_ start: Instant) -> String? {
    if start < Plausibility.earliestStart { return "is before 2000-01-01" }
    let latest = (facts.exportDate ?? now) + Plausibility.secondsAfterExport
    guard latest < start else { return nil }
    return facts.exportDate == nil
      ? "is more than a day after this run's clock (the export has no ExportDate)"
      : "is more than a day after the export date"
  }

  /// One vote for the run's zone (Pipelines/docs/samples.md, "Time zone"): one per distinct Record,
  /// Workout or Correlation that carries the key.
  func vote(forZone value: String) {
    // No zone name is that long (the tz database's are under 100 bytes), so a longer value is
    // kept as an excerpt: it is listed in run.json, never looked up.
    let name = value.utf8.count < 100 ? value : ElementAttributes.excerpt(value)
    if let index = voteIndex[name] {
      facts.timeZoneVotes[index].votes += 1
    } else {
      voteIndex[name] = facts.timeZoneVotes.count
      facts.timeZoneVotes.append((name, 1))
    }
  }
}
