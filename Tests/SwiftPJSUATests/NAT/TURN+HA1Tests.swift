import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// A TURN credential given as its long-term key (RFC 8489 §9.2.2,
/// `MD5(username:realm:password)`) instead of the password, against coturn on loopback.
extension EngineTests {
    @Test(
        "TURN with an HA1 key: coturn grants the allocation for the right key and refuses a wrong one",
        .enabled(
            if: !PJSUA.pjprojectVersion.loaded.hasPrefix("2.12"),
            "2.12.1's pjnath (Jami's) can wait forever listing this host's IPv6 addresses for ICE candidates"),
        arguments: [true, false])
    func turnAllocationWithHA1(rightKey: Bool) async throws {
        try await withTemporaryFolder { folder in
            let coturn = try await Coturn.start(
                folder: folder, address: "127.0.0.1", port: 3488, relayPorts: 40100...40199, name: "coturn-ha1")
            defer { coturn.stop() }
            let ha1 = try DigestHA1.of(
                username: Coturn.username, realm: Coturn.realm,
                password: rightKey ? Coturn.password : "not-\(Coturn.password)")
            var media = MediaConfiguration(soundDevice: .null)
            media.ice = .enabled
            media.turn = TURNConfiguration(
                server: coturn.server,
                credential: .digest(ha1: ha1, username: Coturn.username, realm: Coturn.realm))
            try await EngineHarness.run(media: media) { h in
                // pjsua gathers a call's candidates, the relayed one included, before the INVITE.
                let call = try await h.engine.makeCall(to: h.uri("turn"), from: h.account)
                if rightKey {
                    try await waitUntil("coturn to grant an allocation", timeout: .seconds(5), seen: { coturn.output })
                    {
                        coturn.allocationCount >= 1
                    }
                    #expect(coturn.output.contains("username=<\(Coturn.username)>"), "\(coturn.output)")
                } else {
                    // pjnath answers the first 401 with the nonce and a MESSAGE-INTEGRITY from the key.
                    try await waitUntil(
                        "coturn to refuse the key", timeout: .seconds(5), seen: { coturn.output }
                    ) { coturn.output.contains("user ice credentials are incorrect") }
                    #expect(coturn.allocationCount == 0, "\(coturn.output)")
                }
                try? await h.engine.hangup(call)
            }
        }
    }
}
