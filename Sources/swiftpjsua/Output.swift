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
