import Foundation
import Testing

@testable import HealthETL

/// A plan is refused before any input is read when it would write more output files than a run
/// can keep open (Pipelines/README.md, "File format"), and checking a large plan stays fast.
@Suite struct PlanLimitTests {
  static func statistics(jobs count: Int) -> String {
    let jobs = (0..<count).map {
      #"{"name":"s\#($0)","kind":"statistics","type":"StepCount","interval":"1d","options":["sum"]}"#
    }
    return #"{"version":1,"name":"many","jobs":["# + jobs.joined(separator: ",") + "]}"
  }

  /// 60,000 statistics jobs used to open one file each and fail with EMFILE after the whole
  /// export had been read; now the decoder refuses such a list at once.
  @Test func moreJobsThanTheLimitAreRefusedAtOnce() throws {
    let started = ContinuousClock.now
    #expect {
      _ = try PipelineDecoder.decode(Data(Self.statistics(jobs: 60_000).utf8), path: "many.json")
    } throws: { error in
      guard let error = error as? ConfigFileError else { return false }
      return error.keyPath == "jobs" && error.message.contains("lists 60000 jobs, more than the 10000 output files")
    }
    #expect(ContinuousClock.now - started < .seconds(20))
  }

  /// Jobs within the limit whose outputs together pass it (a sleep job writes two files) are
  /// refused by the planner.
  @Test func moreOutputFilesThanTheLimitAreRefusedByThePlanner() throws {
    let big = try PipelineDecoder.decode(Data(Self.statistics(jobs: 9_999).utf8), path: "many.json")
    let sleep = try PipelineDecoder.decode(
      Data(#"{"version":1,"name":"sleep","jobs":[{"name":"sleep","kind":"sleep"}]}"#.utf8), path: "sleep.json")
    #expect {
      _ = try RunPlanner.plan([big, sleep])
    } throws: { error in
      guard let error = error as? ConfigFileError else { return false }
      return error.file == "sleep.json" && error.message.contains("the plan writes 10001 output files")
    }
  }

  /// Exactly the limit is accepted, and planning it takes moments (it took 340 s in a debug
  /// build when every output was compared with every other).
  @Test func thePlanAtTheLimitIsCheckedQuickly() throws {
    let started = ContinuousClock.now
    let pipeline = try PipelineDecoder.decode(
      Data(Self.statistics(jobs: RunPlanner.maximumOutputFiles).utf8), path: "many.json")
    let plan = try RunPlanner.plan([pipeline])
    #expect(plan.outputFiles.count == 10_000)
    #expect(plan.outputFiles.last == "stats/s9999.csv")
    #expect(ContinuousClock.now - started < .seconds(30))
  }

  /// The indexed check names the same earlier output as comparing with every earlier one in
  /// order, over random plans of nested files and `{type}`/`{name}` patterns.
  @Test func indexedClaimsAgreeWithComparingEveryPair() {
    var random = SystemRandomNumberGenerator()
    let parts = ["a", "b", "stats", "x.csv", "{type}.csv", "s_{name}.csv", "a.csv"]
    for _ in 0..<300 {
      var claims = OutputClaims()
      var earlier: [(file: String, by: String)] = []
      for index in 0..<12 {
        let depth = Int.random(in: 1...3, using: &random)
        let file = (0..<depth).map { _ in parts.randomElement(using: &random)! }.joined(separator: "/")
        let brute = earlier.lazy.compactMap { other in OutputPaths.conflict(file, other.file).map { ($0, other.by) } }
          .first
        let indexed = claims.conflict(file)
        #expect(indexed?.conflict == brute?.0 && indexed?.by == brute?.1, "\(file) after \(earlier.map(\.file))")
        if brute == nil {
          claims.add(file, by: "job \(index)")
          earlier.append((file, "job \(index)"))
        }
      }
    }
  }
}
