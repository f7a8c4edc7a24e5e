/// How `healthetl` ends: the sysexits codes of README.md, "Exit codes". Every error
/// type of the program maps to one of these; nothing else spells the numbers.
public enum ExitCode: Int32, Sendable, CaseIterable {
  case success = 0
  /// A command line or a pipeline/configuration file that cannot be used.
  case usage = 64
  /// The export (or a state file) holds data that cannot be used.
  case dataError = 65
  /// The input does not exist or cannot be opened.
  case noInput = 66
  /// An output folder or file cannot be created.
  case cannotCreate = 73
  /// Reading or writing failed part-way.
  case ioError = 74
  /// Another run holds the output folder (or a server asked to retry later): try again later.
  case temporaryFailure = 75
}
