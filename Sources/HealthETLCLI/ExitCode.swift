/// sysexits-style exit codes (SPEC §11).
enum ExitCode {
  static let success: Int32 = 0
  static let usage: Int32 = 64
  static let dataError: Int32 = 65
  static let noInput: Int32 = 66
  static let cannotCreate: Int32 = 73
  static let ioError: Int32 = 74
  static let locked: Int32 = 75
}
