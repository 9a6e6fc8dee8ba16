import Foundation
import PJSUATestSupport
import Testing

/// Signals at start-up: the command-line tool must never lose one, whenever it arrives.
/// In the serialized engine suite: launch timing is what it tests, so no other test's load.
extension EngineTests {
    /// The delays cover the tool's whole start-up: main not reached yet (the handler comes
    /// from the executable's .preinit_array, right after the dynamic linker has loaded the
    /// libraries), options being parsed, the engine starting, and listening. A signal while
    /// the dynamic linker is still loading libraries takes the default action: no code of
    /// the program has run yet. `make build` links the tool's Swift runtime and Foundation
    /// statically for that (SWIFTPJSUA_TOOL points the tests at that copy): 33 libraries to
    /// load instead of 48, the handler in place before 10 ms.
    @Test("SIGTERM 10 ms after launch (50 launches), and 20–80 ms (50 more): swiftpjsua listen exits 0 every time")
    func sigtermDuringStartUp() async throws {
        var outcomes: [String] = []
        for launch in 0..<100 {
            let process = Process()
            process.executableURL = Repository.tool
            process.arguments = ["listen", "--bind", "127.0.0.1", "--port", "0"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
            process.terminationHandler = { _ in
                continuation.yield(); continuation.finish()
            }
            try process.run()
            // The signal's moment after launch is what is under test.
            try await Task.sleep(for: .milliseconds(launch < 50 ? 10 : 20 + (launch % 7) * 10))
            kill(process.processIdentifier, SIGTERM)
            let exited = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await _ in stream { return true }; return true
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10)); return false
                }  // the deadline
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !exited {
                process.terminate()
                kill(process.processIdentifier, SIGKILL)
                outcomes.append("still running 10 s after SIGTERM")
                continue
            }
            let reason = process.terminationReason == .exit ? "exit" : "signal"
            outcomes.append("\(reason) \(process.terminationStatus)")
        }
        #expect(outcomes.allSatisfy { $0 == "exit 0" }, "\(Dictionary(grouping: outcomes) { $0 }.mapValues(\.count))")
    }
}
