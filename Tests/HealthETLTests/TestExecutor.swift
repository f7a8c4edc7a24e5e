import RunExecution

/// The threads of the tests' runs: one executor for the test process, as a command makes one
/// for its process.
let testExecutor = RunExecutor.forThisMachine()
