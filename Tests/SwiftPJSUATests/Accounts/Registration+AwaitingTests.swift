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

/// What the adversarial pass found in the awaitable API, and its fixes.
extension EngineTests {
    @Test("A REGISTER 2xx with Expires 4294967295 (pjsip's sentinel) registers; it no longer aborts the process")
    func registrarExpiresSentinel() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let registrar = try await Sipp.start(scenario: "registrar_expires_sentinel.xml", folder: folder)
        defer { registrar.stop() }
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

    @Test("register(_:) while a REGISTER is in flight waits for its answer instead of throwing PJSIP_EBUSY")
    func registerWhileInFlight() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        try await EngineHarness.run { h in
            // Right after the add, its first REGISTER (and its digest retry) is still out.
            let alice = try await h.engine.addAccount(Self.account("alice", at: kamailio))
            async let first = h.engine.register(alice, deadline: .seconds(10))
            async let second = h.engine.register(alice, deadline: .seconds(10))
            let (a, b) = try await (first, second)
            #expect(a.isRegistered && b.isRegistered && a.account == alice && b.account == alice)
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
            let alice = try await h.engine.addAccount(configuration)
            let engine = h.engine
            let started = ContinuousClock.now
            let waiter = Task { try await engine.register(alice, deadline: .seconds(20)) }
            try await Task.sleep(for: .milliseconds(300))
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
            try await Task.sleep(for: .milliseconds(300))
            await engine.shutdown()
            let error = try await #require(throws: RegistrationFailedError.self) { try await waiter.value }
            #expect(error.statusCode == 0 && !error.isDeadlineExceeded, "\(error)")
            #expect(error.localizedDescription == "registration of \(error.account) failed: 0 engine shut down")
        }
    }

    @Test("Headers pjsip cannot parse are refused before they go out; integer literals pick the current hangup")
    func unparseableHeadersRefused() async throws {
        try await EngineHarness.run { h in
            for header in [SIPHeader(name: "Expires", value: "not-a-number"), SIPHeader(name: "Max-Forwards", value: "many")] {
                await #expect(throws: PJSUAUsageError.invalidHeader("\(header.name): \(header.value)")) {
                    try await h.engine.placeCall(to: h.uri("x"), from: h.account, headers: [header])
                }
            }
            // Well-formed ones of the same headers still go out.
            let outgoing = try await h.engine.placeCall(
                to: h.uri("x"), from: h.account, headers: [SIPHeader(name: "Expires", value: "60")])
            let arrived = try await h.log.first("incoming call") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = arrived else { return }
            #expect(incoming.headers.value(of: "Expires") == "60")
            try await h.engine.hangup(incoming.call, statusCode: 486)  // the Int? form, no deprecation warning
            for await _ in outgoing.events {}
            await #expect(throws: PJSUAUsageError.invalidArgument("a DTMF digit lasts 1 ms to 10 s, not 20.0 seconds")) {
                try await h.engine.sendDTMF(outgoing.call, digits: "1", duration: .seconds(20))
            }
        }
    }

    @Test("A media adjustment pjmedia would assert on is refused by start with PJSUAError")
    func mediaAdjustmentRefused() async throws {
        let engine = PJSUA()
        var configuration = Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null))
        configuration.nativeAdjustments.media = NativeAdjustment { media in media.audio_frame_ptime = 0 }
        let error = try await #require(throws: PJSUAError.self) { try await engine.start(configuration) }
        #expect(error.code == .invalidArgument && error.message.contains("audio_frame_ptime 0"), "\(error)")
        configuration.nativeAdjustments.media = NativeAdjustment { media in media.clock_rate = 1 }
        let second = try await #require(throws: PJSUAError.self) { try await engine.start(configuration) }
        #expect(second.message.contains("clock_rate 1"), "\(second)")
        // The engine is unchanged: a valid start works afterwards.
        configuration.nativeAdjustments.media = nil
        try await engine.start(configuration)
        await engine.shutdown()
    }
}
