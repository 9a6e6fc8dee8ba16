import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Failed registrations whose status code alone would hide what happened carry the
/// engine's documented reasons.
extension EngineTests {
    @Test("A registrar that calls every nonce stale: 401 with the stale-nonce-limit reason, not a plain Unauthorized")
    func staleNonceLimitReason() async throws {
        try await withSipp(scenario: "registrar_always_stale.xml") { registrar in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)",
                        credentials: [.password("pw", username: "alice")]))
                let failed = try await h.log.first("failed") { $0.isRegistration(of: account) }
                #expect(
                    failed.registrationOutcome(of: account)
                        == .failed(statusCode: 401, reason: RegistrationOutcome.staleNonceLimitReason))
                let info = try await h.engine.accountInfo(account)
                #expect(info.statusCode == 401 && info.reason == RegistrationOutcome.staleNonceLimitReason, "\(info)")
                // The first REGISTER and three stale retries: sipp's scenario saw exactly four.
                try await registrar.expectFinished()
            }
        }
    }

    @Test("A wrong password keeps the registrar's own status and phrase (403 Forbidden from this one)")
    func wrongPasswordReason() async throws {
        try await withSipp(scenario: "registrar_digest.xml") { registrar in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)",
                        credentials: [.password("not-the-password", username: "alice")]))
                let failed = try await h.log.first("failed") { $0.isRegistration(of: account) }
                #expect(failed.registrationOutcome(of: account) == .failed(statusCode: 403, reason: "Forbidden"))
            }
        }
    }

    @Test("An unregistration that shutdown cuts short says so in its reason")
    func unregistrationCutShortReason() async throws {
        try await withSipp(scenario: "registrar_ignores_unregister.xml") { registrar in
            let engine = PJSUA()
            let log = EventLog(engine.events)
            try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
            let account = try await engine.addAccount(
                AccountConfiguration(
                    identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"))
            try await log.first("registered") { $0.isRegistration(of: account, active: true) }
            await engine.shutdown(deadline: .seconds(1))
            let outcomes = log.events.compactMap { $0.registrationOutcome(of: account) }
            #expect(outcomes.count == 2, "\(outcomes)")
            guard case .failed(_, let reason)? = outcomes.last else {
                Issue.record("no failed unregistration: \(outcomes)")
                return
            }
            #expect(reason == RegistrationOutcome.unregistrationCutShortReason)
            #expect(try await registrar.finish().successfulCalls == 1)
        }
    }
}
