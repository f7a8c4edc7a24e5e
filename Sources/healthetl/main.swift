import Foundation
import HealthETLCLI

exit(HealthETLCommand.main(Array(CommandLine.arguments.dropFirst())))
