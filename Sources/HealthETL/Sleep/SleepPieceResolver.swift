public import HealthModel

/// A stretch of a session with one winning stage (Pipelines/docs/sleep.md, "Sleep jobs", step 4).
public struct SleepPiece: Sendable, Hashable {
  public var start: Instant
  public var end: Instant
  /// Never `inBed`: in-bed samples do not decide stages.
  public var stage: SleepStage
  /// The winning sample's group (its position in the run's ranking, 0 highest).
  public var group: Int32

  public init(start: Instant, end: Instant, stage: SleepStage, group: Int32) {
    self.start = start
    self.end = end
    self.stage = stage
    self.group = group
  }

  public var length: Int64 { end - start }
}

/// Decides what each stretch of a session was (Pipelines/docs/sleep.md, "Sleep jobs", steps 4–5) and
/// how long the person was in bed.
public enum SleepPieceResolver {
  /// The pieces of a session whose samples are `intervals`, sorted by start (as
  /// `SleepSessionizer.sessions` leaves them), in time order.
  ///
  /// Time is cut at every sample boundary; each piece takes the stage of the best sample covering
  /// it (`SleepInterval.beats`), ignoring in-bed and zero-length samples. Stretches no such sample
  /// covers are not pieces. Neighbouring pieces with the same stage and group are joined, which
  /// changes no sum.
  ///
  /// An event sweep over the samples with the covering ones in a heap ordered by `beats`:
  /// O(n log n) for n samples. Samples that have ended stay in the heap until they reach the top,
  /// which is safe because a sample below the top never decides a piece.
  public static func pieces(of intervals: ArraySlice<SleepInterval>) -> [SleepPiece] {
    var pieces: [SleepPiece] = []
    var active = CoveringHeap()
    var next = intervals.startIndex
    func skipNonCandidates() {
      while next < intervals.endIndex && !intervals[next].canWinPiece { next += 1 }
    }
    skipNonCandidates()
    guard next < intervals.endIndex else { return pieces }
    var time = intervals[next].start
    while true {
      while next < intervals.endIndex && intervals[next].start <= time {
        active.push(intervals[next])
        next += 1
        skipNonCandidates()
      }
      while let top = active.top, top.end <= time { active.popTop() }
      guard let winner = active.top else {
        // A stretch no candidate covers: jump to the next start, or stop.
        guard next < intervals.endIndex else { break }
        time = intervals[next].start
        continue
      }
      // The winner holds until it ends or a sample that might beat it starts.
      var until = winner.end
      if next < intervals.endIndex { until = min(until, intervals[next].start) }
      if let last = pieces.last, last.end == time, last.stage == winner.stage, last.group == winner.group {
        pieces[pieces.count - 1].end = until
      } else {
        pieces.append(SleepPiece(start: time, end: until, stage: winner.stage, group: winner.group))
      }
      time = until
    }
    return pieces
  }

  /// Seconds covered by at least one in-bed sample of `intervals` (sorted by start): the length
  /// of their union, so overlapping in-bed samples of several sources count once. Nil when there
  /// is no in-bed sample at all (a zero-length one makes it 0).
  public static func inBedSeconds(of intervals: ArraySlice<SleepInterval>) -> Int64? {
    var total: Int64 = 0
    var found = false
    var runStart = Instant(seconds: 0)
    var runEnd = Instant(seconds: 0)
    for sample in intervals where sample.stage == .inBed {
      if !found {
        found = true
        runStart = sample.start
        runEnd = sample.end
      } else if sample.start > runEnd {
        total += runEnd - runStart
        runStart = sample.start
        runEnd = sample.end
      } else {
        runEnd = max(runEnd, sample.end)
      }
    }
    return found ? total + (runEnd - runStart) : nil
  }
}

/// A binary max-heap of sleep samples ordered by `SleepInterval.beats`.
struct CoveringHeap {
  private var storage: [SleepInterval] = []

  var top: SleepInterval? { storage.first }

  mutating func push(_ element: SleepInterval) {
    storage.append(element)
    var child = storage.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard storage[child].beats(storage[parent]) else { break }
      storage.swapAt(child, parent)
      child = parent
    }
  }

  mutating func popTop() {
    guard !storage.isEmpty else { return }
    storage.swapAt(0, storage.count - 1)
    storage.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      guard left < storage.count else { break }
      var best = left
      if left + 1 < storage.count && storage[left + 1].beats(storage[left]) { best = left + 1 }
      guard storage[best].beats(storage[parent]) else { break }
      storage.swapAt(best, parent)
      parent = best
    }
  }
}
