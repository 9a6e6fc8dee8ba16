import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Calls between registered users through Kamailio, and the CLI's account options.
extension EngineTests {
    /// `swiftpjsua listen` registered as `user` at Kamailio, answering every call, optionally
    /// recording what it hears. Returns once it reports the registration.
    static func registeredListener(
        _ user: String, at kamailio: Kamailio, record: URL? = nil, folder: TemporaryFolder
    ) async throws -> PeerProcess {
        var arguments = [
            "listen", "--bind", "127.0.0.1", "--port", "0", "--registrar", kamailio.uri, "--id", kamailio.aor(user),
            "--username", user, "--password-env", "TEST_SIP_PASSWORD",
        ]
        if let record { arguments += ["--record", record.path] }
        let listener = try PeerProcess(
            "listen-\(user)", executable: Repository.tool.path, arguments: arguments, folder: folder,
            environment: ["TEST_SIP_PASSWORD": Kamailio.passwords[user] ?? ""])
        try await listener.waitForOutput(containing: "registered expires=")
        return listener
    }

    @Test("CLI: two swiftpjsua processes call each other through the registrar")
    func cliCallThroughRegistrar() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let bob = try await Self.registeredListener("bob", at: kamailio, folder: folder)
            let carol = try PeerProcess(
                "call-carol", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", kamailio.aor("bob"), "--registrar", kamailio.uri,
                    "--id", kamailio.aor("carol"),
                    "--username", "carol", "--password-env", "TEST_SIP_PASSWORD", "--hangup-after", "1",
                ], folder: folder, environment: ["TEST_SIP_PASSWORD": Kamailio.passwords["carol"] ?? ""])
            #expect(try await carol.waitForExit(timeout: .seconds(20)) == 0, "\(carol.output)")
            #expect(carol.output.contains("CONFIRMED"), "\(carol.output)")
            #expect(carol.output.contains("final status: 200"), "\(carol.output)")
            #expect(kamailio.receivedRequests.contains { $0.method == "INVITE" && $0.user == "carol" })
            try await bob.waitForOutput(containing: "DISCONNECTED")
        }
    }

    @Test("CLI: register --once exits 0 after registering and unregistering, 1 with a wrong password")
    func cliRegisterOnce() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            func register(password: String, transport: String = "udp") throws -> PeerProcess {
                try PeerProcess(
                    "register-\(password)-\(transport)", executable: Repository.tool.path,
                    arguments: [
                        "register", "--bind", "127.0.0.1", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                        "--username", "alice",
                        "--password-env", "ALICE_PASSWORD", "--transport", transport, "--expires", "90", "--once",
                    ], folder: folder, environment: ["ALICE_PASSWORD": password])
            }
            let password = try #require(Kamailio.passwords["alice"])
            for transport in ["udp", "tcp"] {
                let good = try register(password: password, transport: transport)
                #expect(try await good.waitForExit(timeout: .seconds(20)) == 0, "\(good.output)")
                #expect(good.output.contains("registered expires=90s"), "\(good.output)")
                #expect(good.output.contains("unregister: unregistered"), "\(good.output)")
                #expect(good.output.contains("registration succeeded"), "\(good.output)")
                #expect(!good.output.contains(password))
            }
            let bad = try register(password: "wrong-password")
            #expect(try await bad.waitForExit(timeout: .seconds(20)) == 1, "\(bad.output)")
            #expect(bad.output.contains("failed 401"), "\(bad.output)")
            #expect(bad.output.contains("registration failed"), "\(bad.output)")
            let transports = Set(kamailio.receivedRequests.filter { $0.method == "REGISTER" }.map(\.transport))
            #expect(transports == ["udp", "tcp"])
        }
    }

    @Test("A log level without a handler logs through the default handler: pjsip's lines on standard error")
    func logLevelWithoutHandlerLogs() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let password = try #require(Kamailio.passwords["alice"])
            // The tool sets no handler of its own: --log-level alone reaches the engine.
            func register(logLevel: Int) async throws -> String {
                let process = try PeerProcess(
                    "register-log-\(logLevel)", executable: Repository.tool.path,
                    arguments: [
                        "register", "--bind", "127.0.0.1", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                        "--username", "alice", "--password-env", "ALICE_PASSWORD", "--once",
                        "--log-level", String(logLevel),
                    ], folder: folder, environment: ["ALICE_PASSWORD": password])
                #expect(try await process.waitForExit(timeout: .seconds(20)) == 0, "\(process.output)")
                return process.output
            }
            let logged = try await register(logLevel: 4)
            // At level 4 pjsip logs every SIP message it sends and receives.
            #expect(logged.contains("REGISTER sip:"), "\(logged)")
            #expect(logged.contains("SIP/2.0 200 OK"), "\(logged)")
            #expect(!logged.contains(password))
            let quiet = try await register(logLevel: 0)
            #expect(quiet.contains("registered expires="), "\(quiet)")
            #expect(!quiet.contains("REGISTER sip:"), "\(quiet)")
        }
    }

    @Test("CLI: account options are checked before anything starts")
    func cliAccountOptionErrors() async throws {
        try await withTemporaryFolder { folder in
            let cases: [[String]] = [
                [
                    "register", "--registrar", "sip:127.0.0.1:5999", "--id", "sip:a@127.0.0.1", "--username", "a",
                    "--password-env", "SWIFTPJSUA_UNSET_VARIABLE",
                ],
                ["register", "--bind", "127.0.0.1", "--id", "sip:a@127.0.0.1"],
                ["register", "--registrar", "sip:127.0.0.1:5999", "--id", "sip:a@127.0.0.1", "--transport", "sctp"],
                [
                    "call", "sip:b@127.0.0.1", "--registrar", "sip:127.0.0.1:5999", "--id", "sip:a@127.0.0.1",
                    "--ca-file", "/nonexistent.pem",
                ],
                [
                    "listen", "--registrar", "sip:127.0.0.1:5999", "--id", "sip:a@127.0.0.1", "--who-may-call",
                    "friends",
                ],
                ["listen", "--port", "0", "--bind", "127.0.0.1", "--rate-limit", "5"],
                ["listen", "--port", "0", "--bind", "127.0.0.1", "--rate-limit", "10/5"],
                ["listen", "--port", "0", "--bind", "127.0.0.1", "--max-ringing", "0"],
            ]
            for (index, arguments) in cases.enumerated() {
                let tool = try PeerProcess(
                    "usage-\(index)", executable: Repository.tool.path, arguments: arguments, folder: folder)
                #expect(try await tool.waitForExit() == 64, "\(arguments): \(tool.output)")
                #expect(tool.output.contains("usage: swiftpjsua"), "\(tool.output)")
            }
            // The limit options' good values are taken: the listener starts.
            for limits in [
                ["--rate-limit", "off", "--max-ringing", "off"], ["--rate-limit", "50/100", "--max-ringing", "8"],
            ] {
                let arguments = ["listen", "--port", String(FreePort.udp()), "--bind", "127.0.0.1"] + limits
                let listener = try await PeerProcess.swiftpjsua("limits-\(limits[3])", arguments, folder: folder)
                #expect(listener.exitStatus == nil, "\(listener.output)")
                listener.stop()
            }
        }
    }
}
