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
        let tmux = "/usr/bin/tmux"
        #expect(FileManager.default.isExecutableFile(atPath: tmux), "tmux is not installed (scripts/provision.sh)")
        // A server of its own (-L), killed at the end whatever happens.
        let socket = "swiftpjsua-phone-\(UUID().uuidString.prefix(8))"
        defer { _ = commandOutput(tmux, ["-L", socket, "kill-server"]) }
        let command = "\(Repository.tool.path) phone --bind 127.0.0.1"
        // new-session starts the tmux server, which keeps the files it inherits open: no pipes.
        let start = Process()
        start.executableURL = URL(fileURLWithPath: tmux)
        start.arguments = ["-L", socket, "new-session", "-d", "-s", "phone", "-x", "110", "-y", "40", command]
        start.standardOutput = FileHandle.nullDevice
        start.standardError = FileHandle.nullDevice
        try start.run()
        start.waitUntilExit()
        #expect(start.terminationStatus == 0)
        func screen() -> String {
            commandOutput(tmux, ["-L", socket, "capture-pane", "-p", "-t", "phone"])?.output ?? ""
        }
        try await waitUntil("the phone's prompt line", timeout: .seconds(20), seen: { screen() }) {
            screen().contains("? for help")
        }
        _ = commandOutput(tmux, ["-L", socket, "send-keys", "-t", "phone", "?", "Enter"])
        try await waitUntil("the usage screen", timeout: .seconds(10), seen: { screen() }) {
            screen().contains("end of input quits")
        }
        let shown = screen()
        print("tmux screen after ?:\n\(shown)")
        for expected in ["d URI", "# DIGITS", "x URI", "m URI TEXT", "w WHAT [S]"] {
            #expect(shown.contains(expected), "\(shown)")
        }
        _ = commandOutput(tmux, ["-L", socket, "send-keys", "-t", "phone", "q", "Enter"])
        try await waitUntil("the phone to quit", timeout: .seconds(20), seen: { screen() }) {
            commandOutput(tmux, ["-L", socket, "has-session", "-t", "phone"])?.status != 0
        }
    }
}
