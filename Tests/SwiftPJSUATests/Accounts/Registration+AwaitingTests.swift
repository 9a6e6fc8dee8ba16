import CPJSIP
import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// The operations users wait on anyway: awaited registration, a call's events replayed from
/// its current state, placing a call with headers and its events, errors that describe
/// themselves.
extension EngineTests {
    @Test("Kamailio: addAccount(awaitingRegistration:) returns the 200 with the granted expiry; register(_:) again")
    func awaitedRegistration() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let registration = try await h.engine.addAccount(
                    kamailio.account("alice", expiry: .seconds(180)), awaitingRegistration: .seconds(10))
                let alice = registration.account
                #expect(registration.outcome == .registered(expiration: .seconds(180)))
                #expect(registration.statusCode == 200 && registration.reason == "OK")
                #expect(try await h.engine.accountInfo(alice).isRegistered)
                let before = kamailio.receivedRequests.filter { $0.method == "REGISTER" }.count

                let refreshed = try await h.engine.register(alice, deadline: .seconds(10))
                #expect(refreshed.account == alice && refreshed.isRegistered)
                let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
                #expect(registers.count > before, "\(registers)")
                #expect(registers.allSatisfy { $0.user == "alice" })
            }
        }
    }

    @Test("Kamailio: a wrong password makes the awaited registration throw RegistrationFailedError; the account stays")
    func awaitedRegistrationRejected() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let error = try await #require(throws: RegistrationFailedError.self) {
                    try await h.engine.addAccount(
                        kamailio.account("alice", password: "wrong"), awaitingRegistration: .seconds(10))
                }
                #expect([401, 403].contains(error.statusCode), "\(error)")
                #expect(!error.isDeadlineExceeded)
                #expect(
                    error.localizedDescription
                        == "registration of \(error.account) failed: \(error.statusCode) \(error.reason)")
                // The account was added and is still there, unregistered, until removed.
                let info = try await h.engine.accountInfo(error.account)
                #expect(!info.isRegistered)
                #expect(try await h.engine.accounts().contains(error.account))
                try await h.engine.removeAccount(error.account)
                await #expect(throws: PJSUAUsageError.unknownAccount(error.account)) {
                    try await h.engine.accountInfo(error.account)
                }
            }
        }
    }

    @Test("A registrar that never answers: the awaited registration throws at its deadline, not at 32 s")
    func awaitedRegistrationDeadline() async throws {
        let silent = try RawSIPPeer()
        defer { silent.close() }
        try await EngineHarness.run { h in
            let started = ContinuousClock.now
            let error = try await #require(throws: RegistrationFailedError.self) {
                try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1:\(silent.port)", registrar: "sip:127.0.0.1:\(silent.port)",
                        credentials: [.password("x", username: "alice")]),
                    awaitingRegistration: .milliseconds(800))
            }
            let waited = ContinuousClock.now - started
            #expect(error.isDeadlineExceeded && error.statusCode == 408, "\(error)")
            #expect(waited >= .milliseconds(800) && waited < .seconds(5), "\(waited)")
            #expect(try await !h.engine.accountInfo(error.account).isRegistered)
        }
    }

    @Test("register(_:) and addAccount(awaitingRegistration:) refuse an account with no registrar")
    func awaitedRegistrationNeedsRegistrar() async throws {
        try await EngineHarness.run { h in
            await #expect(throws: PJSUAUsageError.noRegistrar) { try await h.engine.register(h.account) }
            await #expect(throws: PJSUAUsageError.noRegistrar) {
                try await h.engine.addAccount(
                    AccountConfiguration(identity: "sip:bob@127.0.0.1"), awaitingRegistration: .seconds(1))
            }
            let accounts = try await h.engine.accounts()
            #expect(accounts == [h.account])
        }
    }
}

/// What the adversarial pass found in the awaitable API, and its fixes.
extension EngineTests {
    @Test("A REGISTER 2xx with Expires 4294967295 (pjsip's sentinel) registers; it no longer aborts the process")
    func registrarExpiresSentinel() async throws {
        try await withSipp(scenario: "registrar_expires_sentinel.xml") { registrar in
            try await EngineHarness.run { h in
                let registration = try await h.engine.addAccount(
                    AccountConfiguration(identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"),
                    awaitingRegistration: .seconds(5))
                #expect(registration.isRegistered)
                #expect(registration.expiration == .seconds(4_294_967_294), "\(registration)")
                #expect(try await h.engine.removeAccount(registration.account) == .unregistered)
            }
            let result = try await registrar.finish()
            #expect(result.exitStatus == 0, "\(result)")
        }
    }

    @Test("register(_:) while a REGISTER is in flight waits for its answer instead of throwing PJSIP_EBUSY")
    func registerWhileInFlight() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                // Right after the add, its first REGISTER (and its digest retry) is still out.
                let alice = try await h.engine.addAccount(kamailio.account("alice"))
                async let first = h.engine.register(alice, deadline: .seconds(10))
                async let second = h.engine.register(alice, deadline: .seconds(10))
                let (a, b) = try await (first, second)
                #expect(a.isRegistered && b.isRegistered && a.account == alice && b.account == alice)
            }
        }
    }

    @Test("Awaited registration: removal while waiting throws unknownAccount at once; bad deadlines are usage errors")
    func awaitedRegistrationEdges() async throws {
        let silent = try RawSIPPeer()
        defer { silent.close() }
        try await EngineHarness.run { h in
            let configuration = AccountConfiguration(
                identity: "sip:alice@127.0.0.1:\(silent.port)", registrar: "sip:127.0.0.1:\(silent.port)")
            for deadline in [Duration.zero, .seconds(-5), .seconds(Int64.max)] {
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.addAccount(configuration, awaitingRegistration: deadline)
                }
            }
            // Registered by register(_:) alone: its REGISTER reaching the silent registrar shows
            // that the call is waiting for the answer.
            var waiting = configuration
            waiting.registersOnAdd = false
            let alice = try await h.engine.addAccount(waiting)
            let engine = h.engine
            let started = ContinuousClock.now
            let waiter = Task { try await engine.register(alice, deadline: .seconds(20)) }
            #expect(await silent.receivedRequest("REGISTER", timeout: .seconds(10)) != nil)
            _ = try await h.engine.removeAccount(alice, deadline: .milliseconds(200))
            await #expect(throws: PJSUAUsageError.unknownAccount(alice)) { try await waiter.value }
            #expect(ContinuousClock.now - started < .seconds(5))
            // removeAccount's own deadline is clamped, not trapped on.
            let bob = try await h.engine.addAccount(configuration)
            _ = try await h.engine.removeAccount(bob, deadline: .milliseconds(100))
        }
    }

    @Test("Shutdown while a registration is awaited: the error says the engine shut down, status 0")
    func awaitedRegistrationShutdown() async throws {
        let silent = try RawSIPPeer()
        defer { silent.close() }
        try await EngineHarness.run { h in
            let engine = h.engine
            let waiter = Task {
                try await engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1:\(silent.port)", registrar: "sip:127.0.0.1:\(silent.port)"),
                    awaitingRegistration: .seconds(20))
            }
            // Its REGISTER reaching the silent registrar: the registration is awaited.
            #expect(await silent.receivedRequest("REGISTER", timeout: .seconds(10)) != nil)
            await engine.shutdown()
            let error = try await #require(throws: RegistrationFailedError.self) { try await waiter.value }
            #expect(error.statusCode == 0 && !error.isDeadlineExceeded, "\(error)")
            #expect(error.localizedDescription == "registration of \(error.account) failed: 0 engine shut down")
        }
    }
}
