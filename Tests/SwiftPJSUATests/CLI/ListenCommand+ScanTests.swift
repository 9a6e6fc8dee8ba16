import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// `swiftpjsua listen` registered at Kamailio, scanned by SIPVicious from 127.0.0.3.
extension EngineTests {
    @Test(
        "CLI: svwar -m INVITE at a registered listen rings nothing, via Kamailio it rings; --who-may-call anyone rings",
        arguments: [true, false])
    func listenScannedBySvwar(policyOn: Bool) async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let arguments =
                [
                    "listen", "--bind", "127.0.0.1", "--port", "0", "--registrar", kamailio.uri, "--id",
                    kamailio.aor("bob"), "--username", "bob", "--password-env", "TEST_SIP_PASSWORD",
                ] + (policyOn ? [] : ["--who-may-call", "anyone"])
            let listener = try PeerProcess(
                "listen-bob", executable: Repository.tool.path, arguments: arguments, folder: folder,
                environment: ["TEST_SIP_PASSWORD": Kamailio.passwords["bob"] ?? ""])
            try await listener.waitForOutput(containing: "registered expires=")
            let line = try #require(listener.output.split(separator: "\n").first { $0.contains("listening on udp") })
            let port = try #require(line.split(separator: ":").last.flatMap { UInt16($0) }, "\(line)")
            let names = folder.file("extensions.txt")
            try "100\n101\n200\nbob\nadmin\n".write(to: names, atomically: true, encoding: .utf8)
            let svwar = try Self.svwar(names: names, port: port, folder: folder)
            _ = try await svwar.waitForExit(timeout: .seconds(60))
            if policyOn {
                #expect(!listener.output.contains("incoming call"), "\(listener.output)")
                #expect(svwar.output.contains("SIP/2.0 403 Forbidden"), "\(svwar.output)")
                // The same kind of INVITE through the registrar rings.
                try await EngineHarness.run { h in
                    let alice = try await h.registeredAccount(kamailio.account("alice"))
                    let call = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
                    try await listener.waitForOutput(containing: "incoming call")
                    try await h.hangUp(call)
                }
            } else {
                try await listener.waitForOutput(containing: "incoming call")
            }
            listener.stop()
        }
    }
}
