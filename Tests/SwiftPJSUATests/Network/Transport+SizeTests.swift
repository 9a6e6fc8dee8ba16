import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Which transport a request travels on when the engine has UDP and TCP.
extension EngineTests {
    /// The account of `user` at `kamailio`, with its password.
    private static func kamailioAccount(_ user: String, at kamailio: Kamailio, transport: Transport? = nil)
        -> AccountConfiguration
    {
        AccountConfiguration(
            identity: kamailio.aor(user), registrar: kamailio.uri,
            credentials: [.password(Kamailio.passwords[user] ?? "", username: user)], transport: transport)
    }

    @Test(
        """
        With the default UDP and TCP transports, an INVITE over 1300 bytes goes over TCP (RFC 3261 §18.1.1), a small \
        one over UDP
        """
    )
    func largeRequestMovesToTCP() async throws {
        try await withKamailio { kamailio in
            // The default transports, on loopback and on a free port instead of 5060.
            let port = FreePort.tcpAndUDP()
            let transports = Configuration.defaultTransports.map { transport in
                var transport = transport
                transport.bindAddress = "127.0.0.1"
                transport.port = port
                return transport
            }
            let sizes = SIPSizeLog()
            try await EngineHarness.run(logHandler: sizes, logLevel: 5, transports: transports) { h in
                #expect(try await h.engine.transports().map(\.type) == [.udp, .tcp])
                let alice = try await h.registeredAccount(Self.kamailioAccount("alice", at: kamailio))
                func invites() -> [Kamailio.Request] {
                    kamailio.receivedRequests.filter { $0.method == "INVITE" && $0.user == "alice" }
                }
                #expect(kamailio.receivedRequests.first { $0.method == "REGISTER" }?.transport == "udp")

                // A small call: PCMU alone keeps the offer short. bob is not registered, so
                // Kamailio answers 404 once the credentials check out. The INVITE and its retry
                // with Proxy-Authorization stay under 1300 bytes and go over UDP. (With every codec
                // offered, pjsua's INVITE to Kamailio is about 1300 bytes before the challenge and
                // 1490 after: the retry moves to TCP.)
                for codec in try await h.engine.codecs() where !codec.id.hasPrefix("PCMU/") {
                    try await h.engine.setCodecPriority(codec.id, 0)
                }
                let small = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
                let smallEnd = try await h.log.first("small call ended") { $0.isState(.disconnected, of: small) }
                #expect(smallEnd.finalStatus == 404, "\(smallEnd)")
                #expect(invites().map(\.transport) == ["udp", "udp"], "\(kamailio.receivedRequests)")
                let smallSent = sizes.invites
                #expect(smallSent.map(\.transport) == ["UDP", "UDP"], "\(smallSent)")
                #expect(smallSent.allSatisfy { $0.bytes < 1300 }, "\(smallSent)")

                // Padded past 1300 bytes from the start: both INVITEs go over TCP.
                let padding = SIPHeader(name: "X-Padding", value: String(repeating: "p", count: 900))
                let large = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice, headers: [padding])
                let largeEnd = try await h.log.first("large call ended") { $0.isState(.disconnected, of: large) }
                #expect(largeEnd.finalStatus == 404, "\(largeEnd)")
                #expect(invites().map(\.transport).suffix(2) == ["tcp", "tcp"], "\(kamailio.receivedRequests)")
                let largeSent = sizes.invites.suffix(2)
                #expect(largeSent.map(\.transport) == ["TCP", "TCP"], "\(largeSent)")
                #expect(largeSent.allSatisfy { $0.bytes >= 1300 }, "\(largeSent)")

                // An account bound to the UDP transport keeps its requests there, whatever their size
                // (a path MTU below the datagram would fragment it).
                let udp = try #require(try await h.engine.transports().first { $0.type == .udp }?.transport)
                let bound = try await h.registeredAccount(Self.kamailioAccount("alice", at: kamailio, transport: udp))
                let pinned = try await h.engine.makeCall(to: kamailio.aor("bob"), from: bound, headers: [padding])
                let pinnedEnd = try await h.log.first("pinned call ended") { $0.isState(.disconnected, of: pinned) }
                #expect(pinnedEnd.finalStatus == 404, "\(pinnedEnd)")
                #expect(invites().map(\.transport).suffix(2) == ["udp", "udp"], "\(kamailio.receivedRequests)")
                let pinnedSent = sizes.invites.suffix(2)
                #expect(pinnedSent.map(\.transport) == ["UDP", "UDP"], "\(pinnedSent)")
                #expect(pinnedSent.allSatisfy { $0.bytes >= 1300 }, "\(pinnedSent)")
            }
        }
    }
}

/// The INVITEs pjsip logged sending ("TX n bytes Request msg INVITE/cseq=… (…) to TCP …"):
/// their size and transport, in order.
final class SIPSizeLog: PJSUALogHandler {
    private let sent = Protected<[(bytes: Int, transport: String)]>([])

    func log(level: Int, message: String) {
        guard let match = message.firstMatch(of: #/TX (\d+) bytes Request msg INVITE/cseq=\d+ \([^)]*\) to (\w+) /#),
            let bytes = Int(match.1)
        else { return }
        sent.withLock { $0.append((bytes, String(match.2))) }
    }

    var invites: [(bytes: Int, transport: String)] { sent.withLock { $0 } }
}
