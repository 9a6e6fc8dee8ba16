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
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        try await EngineHarness.run { h in
            let registration = try await h.engine.addAccount(
                Self.account("alice", at: kamailio, expiry: .seconds(180)), awaitingRegistration: .seconds(10))
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

    @Test("Kamailio: a wrong password makes the awaited registration throw RegistrationFailedError; the account stays")
    func awaitedRegistrationRejected() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        try await EngineHarness.run { h in
            let error = try await #require(throws: RegistrationFailedError.self) {
                try await h.engine.addAccount(
                    Self.account("alice", at: kamailio, password: "wrong"), awaitingRegistration: .seconds(10))
            }
            #expect([401, 403].contains(error.statusCode), "\(error)")
            #expect(!error.isDeadlineExceeded)
            #expect(error.localizedDescription == "registration of \(error.account) failed: \(error.statusCode) \(error.reason)")
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

    @Test("events(for:) starts with the call's incomingCall, latest state and media, then follows it to its end")
    func callEventsReplaySnapshot() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri(), from: h.account, log: h.log)
            try await h.log.first("callee confirmed") { $0.isState(.confirmed, of: callee) }
            try await h.log.first("callee audio") { $0.hasActiveAudio(callee) }
            // Subscribed long after INCOMING: the stream still begins with it.
            var iterator = h.engine.events(for: callee).makeAsyncIterator()
            let first = await iterator.next()
            let second = await iterator.next()
            let third = await iterator.next()
            guard case .incomingCall(let incoming) = first else {
                Issue.record("first replayed event: \(String(describing: first))")
                return
            }
            #expect(incoming.call == callee && incoming.account == h.account)
            guard case .callState(let state) = second, case .callMediaState(let media) = third else {
                Issue.record("replayed: \(String(describing: second)), \(String(describing: third))")
                return
            }
            #expect(state.call == callee && state.state == .confirmed)
            #expect(media.call == callee && media.media.contains { $0.type == .audio && $0.status == .active })
            // Then the live events, with no repeat of the snapshot, to the one terminal event.
            try await h.engine.hangup(caller)
            var rest: [PJSUAEvent] = []
            while let event = await iterator.next() { rest.append(event) }
            #expect(rest.last?.isState(.disconnected, of: callee) == true, "\(rest)")
            #expect(rest.filter { $0.isState(.confirmed) }.isEmpty, "\(rest)")
            #expect(!rest.contains { if case .incomingCall = $0 { true } else { false } }, "\(rest)")
            // An ended call's stream finishes at once, empty.
            var ended = h.engine.events(for: callee).makeAsyncIterator()
            #expect(await ended.next() == nil)
        }
    }

    @Test("placeCall(to:from:headers:) puts the headers on the INVITE and streams the call from CALLING to its end")
    func placeCallWithHeaders() async throws {
        try await EngineHarness.run { h in
            let outgoing = try await h.engine.placeCall(
                to: h.uri("desk"), from: h.account, headers: [SIPHeader(name: "X-Campaign", value: "7")])
            let arrived = try await h.log.first("incoming call") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = arrived else { return }
            #expect(incoming.headers.value(of: "X-Campaign") == "7")
            try await h.engine.answer(incoming.call, statusCode: 486)
            var states: [CallState] = []
            for await event in outgoing.events {
                if case .callState(let change) = event {
                    #expect(change.call == outgoing.call)
                    states.append(change.state)
                }
            }
            #expect(states.first == .calling && states.last == .disconnected, "\(states)")
            // call(_:from:headers:awaiting:) takes headers too, and throws the rejection.
            let log = h.log
            let engine = h.engine
            let rejecter = Task {
                let second = try await log.first("second incoming call") {
                    if case .incomingCall(let next) = $0 { next.call != incoming.call } else { false }
                }
                guard case .incomingCall(let next) = second else { return "" }
                try await engine.answer(next.call, statusCode: 486)
                return next.headers.value(of: "X-Try") ?? ""
            }
            let error = try await #require(throws: CallFailedError.self) {
                try await h.engine.call(h.uri("busy"), from: h.account, headers: [SIPHeader(name: "X-Try", value: "2")])
            }
            #expect(try await rejecter.value == "2")
            #expect(error.statusCode == 486)
            #expect(error.localizedDescription == "\(error.call) failed: 486 \(error.reason)", "\(error)")
        }
    }

    @Test("Errors describe themselves: localizedDescription is the description, with the pjsua function")
    func errorsAreLocalized() async throws {
        #expect((PJSUAUsageError.notStarted as any Error).localizedDescription == "the engine is not started")
        #expect(
            (PJSUAUsageError.noRegistrar as any Error).localizedDescription == "the account has no registrar")
        try await EngineHarness.run { h in
            let error = try await #require(throws: PJSUAError.self) {
                try await h.engine.setCodecPriority("NO-SUCH-CODEC", 10)
            }
            let text = (error as any Error).localizedDescription
            #expect(text == error.description)
            #expect(text.hasPrefix("pjsua_codec_set_priority failed: "), "\(text)")
            await #expect(throws: PJSUAUsageError.invalidArgument("codec priority must be 0...255, got 256")) {
                try await h.engine.setCodecPriority("PCMU", 256)
            }
        }
    }
}
