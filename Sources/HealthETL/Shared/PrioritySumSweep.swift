/// The source merge for sums (Pipelines/README.md, "Source priority" and "Interval statistics"),
/// as a sweep over samples in start order.
///
/// Time is cut at every sample boundary. For each piece, the winner is the best-ranked group
/// (smallest rank ordinal) among the samples covering it; every sample of that group covering
/// the piece contributes its value pro rata by time (`value × piece / sample length`), the others
/// nothing. A piece nobody covers contributes nothing. Zero-length samples never enter the sweep:
/// they are not merged away and the caller counts them whole.
///
/// The sweep holds only the samples that cover the current instant (`active`), so its memory is
/// the largest overlap, not the number of samples.
struct PrioritySumSweep {
  struct Active {
    var start: Int64
    var end: Int64
    var value: Double
    var rank: Int32
  }

  private(set) var active: [Active] = []
  /// Pieces before this instant have been handed out.
  private var cursor = Int64.min

  /// Where the next piece starts; nil while no sample covers anything not yet handed out.
  var pendingFrom: Int64? { active.isEmpty ? nil : cursor }

  /// Adds a sample with `start < end`; samples must come in start order, after `advance(to: start)`.
  mutating func add(start: Int64, end: Int64, value: Double, rank: Int32) {
    precondition(start < end && start >= cursor)
    if active.isEmpty { cursor = start }
    active.append(Active(start: start, end: end, value: value, rank: rank))
  }

  /// Hands out every piece before `limit`: `emit(pieceStart, pieceEnd, sample)` once per winning
  /// sample of each piece. Call with the next sample's start before adding it, and with
  /// `Int64.max` at the end. Every `limit` also cuts a piece there; `StatisticsSweep` cuts at its
  /// bucket boundaries too, which changes no bucket's share.
  mutating func advance(to limit: Int64, _ emit: (Int64, Int64, Active) -> Void) {
    while !active.isEmpty && cursor < limit {
      var nextEnd = Int64.max
      var winner = Int32.max
      for sample in active {
        nextEnd = Swift.min(nextEnd, sample.end)
        winner = Swift.min(winner, sample.rank)
      }
      let pieceEnd = Swift.min(nextEnd, limit)
      for sample in active where sample.rank == winner { emit(cursor, pieceEnd, sample) }
      cursor = pieceEnd
      // Drop what has ended, keeping the order of the rest (it fixes the order of the additions).
      if nextEnd <= cursor { active.removeAll { $0.end <= pieceEnd } }
    }
    if cursor < limit { cursor = limit }
  }
}
