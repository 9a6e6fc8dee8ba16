import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Credentials with a precomputed HA1 instead of the password (`Credential.digest(ha1:…)`),
/// against Kamailio's REGISTER challenges and a sipp UAS that challenges INVITE.
extension EngineTests {
    @Test("Kamailio: the HA1 of the right password registers (200); the HA1 of a wrong one fails with 401")
    func ha1RegistersAtKamailio() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let configuration = try kamailio.ha1Account("alice")
                let alice = try await h.engine.addAccount(configuration)
                let event = try await h.log.first("alice's registration") { $0.isRegistration(of: alice) }
                #expect(event.registrationOutcome(of: alice) == .registered(expiration: .seconds(300)), "\(event)")
                #expect(try await h.engine.accountInfo(alice).statusCode == 200)
                // What the engine keeps and prints names the realm, never the HA1.
                guard case .ha1(let ha1) = configuration.credentials.first?.secret else {
                    Issue.record("not an HA1 credential: \(configuration.credentials)")
                    return
                }
                let kept = try await h.engine.accountConfiguration(alice)
                #expect(!"\(kept)".contains(ha1) && "\(kept)".contains("ha1(<redacted>)"), "\(kept)")

                let bob = try await h.engine.addAccount(try kamailio.ha1Account("bob", password: "not-bobs-password"))
                let failed = try await h.log.first("bob's registration") { $0.isRegistration(of: bob) }
                guard case .failed(let code, _) = failed.registrationOutcome(of: bob) else {
                    Issue.record("bob registered with the HA1 of a wrong password: \(failed)")
                    return
                }
                #expect(code == 401, "\(failed)")
                #expect(try await !h.engine.accountInfo(bob).isRegistered)
            }
            // Both answered the challenge: each sent an authenticated repeat.
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            #expect(registers.filter { $0.user == "alice" }.count >= 2, "\(registers)")
            #expect(registers.filter { $0.user == "bob" }.count >= 2, "\(registers)")
        }
    }

    @Test("The HA1 never appears in the log, at level 6, through registration")
    func ha1NeverLogged() async throws {
        try await withKamailio { kamailio in
            let captured = CapturedLog()
            let configuration = try kamailio.ha1Account("alice")
            guard case .ha1(let ha1) = configuration.credentials.first?.secret else {
                Issue.record("not an HA1 credential: \(configuration.credentials)")
                return
            }
            try await EngineHarness.run(logHandler: captured, logLevel: 6) { h in
                _ = try await h.registeredAccount(configuration)
            }
            let lines = captured.all
            #expect(lines.contains { $0.contains("Authorization: Digest") })
            #expect(!lines.contains { $0.lowercased().contains(ha1) })
        }
    }

    @Test("Kamailio: a call from an HA1 account is challenged with 407 and reaches the callee")
    func ha1AnswersProxyChallengeAtKamailio() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let alice = try await h.registeredAccount(try kamailio.ha1Account("alice"))
                _ = try await h.registeredAccount(kamailio.account("bob"))
                let call = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
                let callee = try await h.answeredCall(fromUser: "alice")
                try await h.log.first("alice's call confirmed") { $0.isState(.confirmed, of: call) }
                try await h.hangUp(call, waitingFor: callee)
            }
            // The INVITE was challenged (407, realm 127.0.0.1) and sent again with credentials.
            let invites = kamailio.receivedRequests.filter { $0.method == "INVITE" && $0.user == "alice" }
            #expect(invites.count == 2, "\(kamailio.receivedRequests)")
            #expect(kamailio.output.contains("LOOKUP bob"), "\(kamailio.output)")
        }
    }

    @Test("Kamailio challenging with SHA-256: a SHA-256 HA1 registers where pjsip has it, else addAccount throws")
    func sha256HA1AtKamailio() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder, digestAlgorithm: "SHA-256")
            try await EngineHarness.run { h in
                let configuration = try kamailio.ha1Account("alice", algorithm: .sha256)
                guard DigestAlgorithm.sha256.isAvailable else {
                    await #expect(
                        throws: PJSUAUsageError.unsupported(
                            "SHA-256 HA1 credentials (pjproject 2.15.1 or later with OpenSSL)")
                    ) { try await h.engine.addAccount(configuration) }
                    return
                }
                let alice = try await h.engine.addAccount(configuration)
                let event = try await h.log.first("alice's registration") { $0.isRegistration(of: alice) }
                #expect(event.registrationOutcome(of: alice) == .registered(expiration: .seconds(300)), "\(event)")
                // An MD5 HA1 does not answer a SHA-256 challenge.
                let bob = try await h.engine.addAccount(try kamailio.ha1Account("bob"))
                let failed = try await h.log.first("bob's registration") { $0.isRegistration(of: bob) }
                #expect(try await !h.engine.accountInfo(bob).isRegistered, "\(failed)")
                // Alice's answer was a SHA-256 digest, 64 hex digits.
                let answers = kamailio.output.split(whereSeparator: \.isNewline)
                    .filter { $0.contains("AUTHZ REGISTER user=alice") }
                #expect(!answers.isEmpty && answers.allSatisfy { $0.contains("algorithm=SHA-256") }, "\(answers)")
                #expect(answers.allSatisfy { $0.contains(/response="[0-9a-f]{64}"/) }, "\(answers)")
            }
        }
    }

    @Test("A malformed HA1 or a wildcard realm is refused by addAccount with invalidConfiguration")
    func malformedHA1RefusedByAddAccount() async throws {
        try await EngineHarness.run { h in
            let before = try await h.engine.accounts()
            let short = AccountConfiguration(
                identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1",
                credentials: [.digest(ha1: "5ebe2294ecd0e0f0", username: "alice", realm: "127.0.0.1")])
            await #expect(
                throws: PJSUAUsageError.invalidConfiguration(
                    "the HA1 credential of alice must be 32 hex digits (MD5 HA1)")
            ) { try await h.engine.addAccount(short) }
            var wildcard = short
            wildcard.credentials = [
                Credential(realm: "*", username: "alice", secret: .ha1("5ebe2294ecd0e0f08eab7690d2a6ee69"))
            ]
            await #expect(
                throws: PJSUAUsageError.invalidConfiguration(
                    "the HA1 credential of alice needs the realm it was computed for, not '*'")
            ) { try await h.engine.addAccount(wildcard) }
            #expect(try await h.engine.accounts() == before)
        }
    }

    /// The account that calls the challenging sipp UAS (no registrar) with the HA1 of
    /// `password` for `alice` in `sipp.test`.
    private func sippCaller(password: String) throws -> AccountConfiguration {
        let ha1 = try DigestHA1.of(username: "alice", realm: "sipp.test", password: password)
        return AccountConfiguration(
            identity: "sip:alice@127.0.0.1", credentials: [.digest(ha1: ha1, username: "alice", realm: "sipp.test")])
    }

    @Test("A call challenged with 401 connects with the HA1 of the right password (sipp verifies it)")
    func ha1AnswersCallChallenge() async throws {
        try await withSipp(scenario: "uas_digest_invite.xml") { sipp in
            try await EngineHarness.run { h in
                let alice = try await h.engine.addAccount(try sippCaller(password: "s3cret-pass"))
                let call = try await h.confirmedCall(to: sipp.uri, from: alice)
                try await h.hangUp(call)
            }
            try await sipp.expectFinished()
            #expect(sipp.receivedRequests == ["INVITE", "ACK", "INVITE", "ACK", "BYE"], "\(sipp.receivedRequests)")
            let invites = sipp.messageBlocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("INVITE ") }
            let authorization = try #require(invites.last?.header("Authorization"), "\(sipp.messages)")
            #expect(authorization.contains("username=\"alice\"") && authorization.contains("realm=\"sipp.test\""))
            #expect(sipp.messageBlocks.contains { $0.direction == .sent && $0.firstLine.hasPrefix("SIP/2.0 200") })
        }
    }

    @Test("A call challenged with 401 ends with 403 when the HA1 is of a wrong password")
    func wrongHA1CallEndsWith403() async throws {
        try await withSipp(scenario: "uas_digest_invite.xml") { sipp in
            try await EngineHarness.run { h in
                let alice = try await h.engine.addAccount(try sippCaller(password: "not-the-password"))
                let call = try await h.engine.makeCall(to: sipp.uri, from: alice)
                let end = try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
                #expect(end.finalStatus == 403, "\(end)")
                #expect(!h.log.states(of: call).contains(.confirmed))
            }
            try await sipp.expectFinished()
            #expect(sipp.receivedRequests == ["INVITE", "ACK", "INVITE", "ACK"], "\(sipp.receivedRequests)")
            #expect(sipp.messageBlocks.contains { $0.direction == .sent && $0.firstLine.hasPrefix("SIP/2.0 403") })
        }
    }
}
