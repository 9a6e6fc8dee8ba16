import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// The checks of the STUN, ICE and TURN settings, in the engine and in the CLI. (ICE itself
/// cannot run on loopback: pjnath gathers no host candidate on 127.0.0.1, so the calls are in
/// ICE+TopologyTests.swift, inside a Topology.)
extension EngineTests {
    @Test("STUN, ICE and TURN settings are checked at start and at addAccount")
    func mediaNATSettingsAreChecked() async throws {
        let loopback = [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)]
        func rejected(_ edit: (inout Configuration) -> Void, saying text: String) async {
            let engine = PJSUA()
            var configuration = Configuration(transports: loopback, media: MediaConfiguration(soundDevice: .null))
            edit(&configuration)
            await #expect {
                try await engine.start(configuration)
            } throws: { error in
                guard case .invalidConfiguration(let message) = error as? PJSUAUsageError else { return false }
                return message.contains(text)
            }
            #expect(await !engine.isRunning)
        }
        await rejected(
            { $0.stun.servers = (1...9).map { "192.0.2.\($0)" } }, saying: "at most \(PJSUA.maxSTUNServers) STUN")
        await rejected({ $0.stun.servers = ["stun example.test"] }, saying: "STUN server")
        await rejected({ $0.media.ice.hostCandidateLimit = -1 }, saying: "hostCandidateLimit")
        await rejected({ $0.media.turn = TURNConfiguration(server: "") }, saying: "TURN server")
        await rejected(
            { $0.media.turn = TURNConfiguration(server: "192.0.2.1", credential: .password("x", username: "")) },
            saying: "TURN credential")
        await rejected(
            {
                $0.media.turn = TURNConfiguration(
                    server: "192.0.2.1", transport: .tls, tls: TLSConfiguration(caFile: "/nonexistent.pem"))
            },
            saying: "TURN TLS file")
        #expect(PJSUA.maxSTUNServers == 8)

        try await EngineHarness.run { h in
            var account = AccountConfiguration(identity: "sip:turn@\(h.transport.host):\(h.transport.port)")
            account.turn = .custom(TURNConfiguration(server: "bad server"))
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(account) }
            account.turn = .custom(nil)
            account.ice = .custom(ICEConfiguration(isEnabled: true, hostCandidateLimit: -2))
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(account) }
            account.ice = .custom(.enabled)
            _ = try await h.engine.addAccount(account)
        }
    }

    @Test("CLI: --turn needs --ice, and a malformed --turn or --stun is a usage error")
    func cliMediaNATOptionErrors() async throws {
        try await withTemporaryFolder { folder in
            let cases: [[String]] = [
                ["call", "sip:b@127.0.0.1", "--turn", "turn:u:p@192.0.2.1"],
                ["call", "sip:b@127.0.0.1", "--ice", "--turn", "stun:192.0.2.1"],
                ["call", "sip:b@127.0.0.1", "--ice", "--turn", "turn:u@192.0.2.1"],
                ["call", "sip:b@127.0.0.1", "--ice", "--turn", "turn:192.0.2.1?transport=sctp"],
                [
                    "call", "sip:b@127.0.0.1", "--ice", "--turn", "turn:u@192.0.2.1",
                    "--turn-password-env", "SWIFTPJSUA_UNSET",
                ],
                ["listen", "--port", "0", "--stun", "1,2,3,4,5,6,7,8,9"],
                ["listen", "--port", "0", "--turn-password-env", "X"],
            ]
            for (index, arguments) in cases.enumerated() {
                let tool = try PeerProcess(
                    "nat-usage-\(index)", executable: Repository.tool.path, arguments: arguments, folder: folder)
                #expect(try await tool.waitForExit() == 64, "\(arguments): \(tool.output)")
                #expect(tool.output.contains("usage: swiftpjsua"), "\(tool.output)")
            }
        }
    }
}
