/// A pipeline file that cannot be used, with the file and the key path at fault.
public struct PipelineError: Error, Equatable, CustomStringConvertible {
  public var path: String
  public var keyPath: String
  public var message: String

  public init(path: String, keyPath: String, message: String) {
    self.path = path
    self.keyPath = keyPath
    self.message = message
  }

  public var description: String {
    keyPath.isEmpty ? "\(path): \(message)" : "\(path): \(keyPath): \(message)"
  }
}
