import Foundation
import SwiftPJSUA

/// Writes a line to standard output at once (unbuffered, so lines from the event loop and
/// from other tasks keep their order when piped).
func out(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// The line for an error a command reports and goes on after.
func errorLine(_ error: Error) -> String {
    "error: \(error)"
}

/// Sends pjsip's log lines to standard error (`--log-level N`).
struct StandardErrorLog: PJSUALogHandler {
    func log(level: Int, message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
