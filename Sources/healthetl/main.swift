import Foundation
import HealthETLCLI

exit(HealthETLCommand.mainWithProcessArguments())
