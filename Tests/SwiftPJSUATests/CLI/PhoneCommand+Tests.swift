import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// `swiftpjsua phone`, the interactive softphone: a full call driven from a script on
/// standard input, and the usage screen under tmux as a person would see it.
extension EngineTests {
    @Test("CLI: phone from a script on stdin: dial, hold, resume, DTMF, a message, blind transfer, hang up")
    func phoneScript() async throws {
        try await withTemporaryFolder { folder in
            let peerPort = FreePort.udp()
            let targetPort = FreePort.udp()
            let peer = try await PeerProcess.swiftpjsua(
                "phone-peer", ["listen", "--bind", "127.0.0.1", "--port", String(peerPort), "--messages"],
                folder: folder)
            let target = try await PeerProcess.swiftpjsua(
                "phone-target", ["listen", "--bind", "127.0.0.1", "--port", String(targetPort)], folder: folder)
            let script = """
                ; a comment line, then a full call
                d sip:peer@127.0.0.1:\(peerPort)
                w confirmed
                H
                v
                # 123
                ; RFC 4733 sends the three digits over about 0.7 s: let them go out before the transfer
                sleep 1
                m sip:peer@127.0.0.1:\(peerPort) hello from the phone
                x sip:target@127.0.0.1:\(targetPort)
                w transferred
                h
                w disconnected
                l
                bogus
                q
                """
            let scriptFile = folder.file("phone-script.txt")
            try script.write(to: scriptFile, atomically: true, encoding: .utf8)
            let phone = try PeerProcess(
                "phone", executable: "/bin/sh",
                arguments: [
                    "-c", "exec \"$0\" phone --bind 127.0.0.1 < \"$1\"", Repository.tool.path, scriptFile.path,
                ],
                folder: folder)
            let status = try await phone.waitForExit(timeout: .seconds(60))
            let output = phone.output
            #expect(status == 0, "\(output)")
            for expected in [
                "dialing #1", "ok confirmed", "held #1", "resumed #1", "sent dtmf 123", "message delivered 200 OK",
                "transferring #1 to sip:target@127.0.0.1:\(targetPort)", "ok transferred", "ok disconnected",
                "#1 call", "error: unknown command bogus", "shut down",
            ] {
                #expect(output.contains(expected), "missing \"\(expected)\" in:\n\(output)")
            }
            // The only error is the bogus command's.
            #expect(output.components(separatedBy: "error:").count == 2, "\(output)")

            // What the far ends saw.
            try await peer.waitForOutput(containing: "message from sip:127.0.0.1 text/plain: hello from the phone")
            let peerOutput = peer.output
            for digit in ["1", "2", "3"] {
                #expect(peerOutput.contains(" \(digit) rfc4733"), "dtmf \(digit) missing in:\n\(peerOutput)")
            }
            #expect(peerOutput.contains("audio remoteHold"), "no hold seen:\n\(peerOutput)")
            #expect(peerOutput.contains("transfer-request"), "\(peerOutput)")
            try await target.waitForOutput(containing: "incoming")
        }
    }

    @Test("CLI: phone under tmux prints the usage screen on ? and quits on q")
    func phoneUnderTmux() async throws {
        try await TmuxSession.with("phone --bind 127.0.0.1") { session in
            try await session.waitForScreen("the phone's prompt line") { $0.contains("? for help") }
            session.type("?")
            let shown = try await session.waitForScreen("the usage screen") { $0.contains("end of input quits") }
            print("tmux screen after ?:\n\(shown)")
            for expected in ["d URI", "# DIGITS", "x URI", "m URI TEXT", "w WHAT [S]"] {
                #expect(shown.contains(expected), "\(shown)")
            }
            session.type("q")
            try await waitUntil("the phone to quit", timeout: .seconds(20), seen: { session.screen }) {
                !session.isRunning
            }
        }
    }

    @Test("CLI: phone waiting for a terminal's input exits 0 on SIGTERM, shutting the engine down")
    func phoneSIGTERMAtPrompt() async throws {
        // The shell stays to print the phone's exit status.
        try await TmuxSession.with("phone --bind 127.0.0.1; echo exit=$?; sleep 60") { session in
            try await session.waitForScreen("the phone's prompt line") { $0.contains("? for help") }
            let shell = try #require(session.panePID)
            let phone = try #require(commandOutput("/usr/bin/pgrep", ["-P", String(shell)])?.output)
            #expect(kill(try #require(Int32(phone)), SIGTERM) == 0)
            let screen = try await session.waitForScreen("the exit status") { $0.contains("exit=") }
            #expect(screen.contains("shut down") && screen.contains("exit=0"), "\(screen)")
        }
    }
}

/// A tmux server of its own (`-L`) running one session of `swiftpjsua` in an 110×40 pane:
/// a terminal, as a person at it would see it.
struct TmuxSession {
    static let tmux = "/usr/bin/tmux"
    let socket = "swiftpjsua-phone-\(UUID().uuidString.prefix(8))"

    /// Runs `body` with a session running `arguments` (a bash command line after the tool's
    /// path); the server is killed afterwards, whatever happens.
    static func with(_ arguments: String, _ body: (TmuxSession) async throws -> Void) async throws {
        #expect(FileManager.default.isExecutableFile(atPath: tmux), "tmux is not installed (scripts/provision.sh)")
        let session = TmuxSession()
        defer {
            // The pane's processes first (they may ignore the SIGHUP kill-server sends: the test
            // process's ignored signals are inherited), then the server, then its socket.
            if let pane = session.panePID { _ = commandOutput("/usr/bin/pkill", ["-KILL", "-s", String(pane)]) }
            _ = commandOutput(tmux, ["-L", session.socket, "kill-server"])
            try? FileManager.default.removeItem(atPath: "/tmp/tmux-\(getuid())/\(session.socket)")
        }
        // new-session starts the tmux server, which keeps every file it inherits open, the
        // test process's pipes among them: through bash, which closes all but 0-2 (made
        // /dev/null), so that reading the shell's output ends.
        let closeInherited = #"for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done"#
        let started = commandOutput(
            "/bin/bash",
            [
                "-c",
                closeInherited + "; exec \"$0\" -L \"$1\" new-session -d -s phone -x 110 -y 40 \"$2 $3\""
                    + " </dev/null >/dev/null 2>&1", tmux, session.socket, Repository.tool.path, arguments,
            ])
        #expect(started?.status == 0)
        try await body(session)
    }

    /// What the pane shows now.
    var screen: String { commandOutput(Self.tmux, ["-L", socket, "capture-pane", "-p", "-t", "phone"])?.output ?? "" }

    /// Whether the session (its command) still runs.
    var isRunning: Bool { commandOutput(Self.tmux, ["-L", socket, "has-session", "-t", "phone"])?.status == 0 }

    /// The process id of the pane's command.
    var panePID: Int32? {
        commandOutput(Self.tmux, ["-L", socket, "display-message", "-p", "-t", "phone", "#{pane_pid}"])
            .flatMap { Int32($0.output) }
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        _ = commandOutput(Self.tmux, ["-L", socket, "send-keys", "-t", "phone", line, "Enter"])
    }

    /// Waits up to 10 s until the screen satisfies `condition`, and returns it.
    @discardableResult
    func waitForScreen(_ what: String, _ condition: (String) -> Bool) async throws -> String {
        try await waitUntil(what, timeout: .seconds(10), seen: { screen }) { condition(screen) }
        return screen
    }
}
