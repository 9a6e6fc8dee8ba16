import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    @Test("Digest registration with a sipp registrar: 401 challenge, 200 with 60 s, unregistered on shutdown")
    func digestRegistration() async throws {
        try await withSipp(scenario: "registrar_digest.xml") { sipp in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(sipp.port)",
                        credentials: [.password("s3cret-pass", username: "alice")],
                        registrationExpiry: .seconds(60)))
                let event = try await h.log.first("registration") { $0.isRegistration(of: account) }
                guard case .registrationState(let registration) = event else { return }
                let outcome = registration.outcome
                let code = registration.statusCode
                let expiration = registration.expiration
                #expect(outcome == .registered(expiration: .seconds(60)))
                #expect(code == 200)
                #expect(expiration == .seconds(60))
                let info = try await h.engine.accountInfo(account)
                #expect(info.isRegistered)
                #expect(info.hasRegistration)
                #expect(info.expiresIn > .seconds(50))
            }
            // Shutdown unregistered the account: sipp's scenario ends only after that REGISTER.
            try await sipp.expectFinished()
            #expect(sipp.receivedRequests == ["REGISTER", "REGISTER", "REGISTER"])
        }
    }

    @Test("A wrong password gets 403 and a failed registration event")
    func wrongPassword() async throws {
        try await withSipp(scenario: "registrar_digest.xml") { sipp in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(sipp.port)",
                        credentials: [.password("wrong", username: "alice")]))
                let event = try await h.log.first("registration") { $0.isRegistration(of: account) }
                guard case .registrationState(let registration) = event else { return }
                let outcome = registration.outcome
                let code = registration.statusCode
                #expect(outcome == .failed(statusCode: 403, reason: "Forbidden"))
                #expect(code == 403)
                #expect(try await !h.engine.accountInfo(account).isRegistered)
            }
            _ = try await sipp.finish()
            #expect(sipp.receivedRequests.count == 2)
        }
    }

    @Test("Account configuration is validated before pjsua sees it")
    func accountValidation() async throws {
        try await EngineHarness.run { h in
            // pjsua appends Contact parameters verbatim after the '>': they must start with ';'.
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registersOnAdd: false, contactParameters: "ob"))
            }
            await #expect(throws: PJSUAUsageError.invalidURI("alice")) {
                try await h.engine.addAccount(AccountConfiguration(identity: "alice"))
            }
            await #expect(throws: PJSUAUsageError.invalidURI("nowhere")) {
                try await h.engine.addAccount(AccountConfiguration(identity: "sip:a@b", registrar: "nowhere"))
            }
            let local = try await h.engine.addAccount(
                AccountConfiguration(
                    identity: "\"Alice\" <sip:alice@127.0.0.1>", registersOnAdd: false))
            #expect(try await h.engine.accounts().contains(local))
            try await h.engine.removeAccount(local)
            await #expect(throws: PJSUAUsageError.unknownAccount(local)) { try await h.engine.accountInfo(local) }
        }
    }
}
