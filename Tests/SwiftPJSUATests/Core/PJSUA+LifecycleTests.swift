import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    @Test("events(for:) of a call from an earlier run finishes at once, after shutdown and after restart")
    func eventsForCallOfEarlierRun() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let call = try await engine.makeCall(to: "sip:self@127.0.0.1:\(port)", from: account)
        try await engine.hangup(call)
        try await log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
        #expect(await finishes(engine.events(for: call), within: .seconds(2)))
        await engine.shutdown()
        #expect(await finishes(engine.events(for: call), within: .seconds(2)))
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        #expect(await finishes(engine.events(for: call), within: .seconds(2)))
        await engine.shutdown()
    }

    @Test("A second shutdown waits for the one in progress; start works right after")
    func concurrentShutdownWaits() async throws {
        try await withSipp(scenario: "registrar_ignores_unregister.xml") { registrar in
            let engine = PJSUA()
            let log = EventLog(engine.events)
            try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
            _ = try await engine.addAccount(
                AccountConfiguration(
                    identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"))
            try await log.first("registered") { $0.isRegistration(active: true) }
            let first = Task { await engine.shutdown(deadline: .seconds(2)) }
            // sipp's scenario ends when the unregistration arrives (and stays unanswered): the
            // first shutdown is now waiting for it, up to its deadline.
            try await registrar.expectFinished()
            await engine.shutdown()
            #expect(await !engine.isRunning)
            // Were the first shutdown still running, start would throw alreadyStarted.
            try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
            await engine.shutdown()
            await first.value
        }
    }

    @Test(
        "IPv6: a local account on udp6 [::1] places and receives a call",
        .enabled(if: PJSUA.supportsIPv6, "this pjproject was built without IPv6"))
    func ipv6SelfCall() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp6, bindAddress: "::1", port: 0)], media: nullSound))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let (caller, callee) = try await engine.answeredSelfCall(to: "sip:self@[::1]:\(port)", from: account, log: log)
        try await log.first("media on the caller") { $0.hasActiveAudio(caller) }
        try await engine.hangup(caller)
        try await log.first("DISCONNECTED") { $0.isState(.disconnected, of: callee) }
        await engine.shutdown()
    }

    @Test("Header text with CR/LF is rejected instead of injected")
    func lineBreaksRejected() async throws {
        let engine = PJSUA()
        await #expect(throws: PJSUAUsageError.self) {
            try await engine.start(
                Configuration(transports: loopbackUDP, userAgent: "x\r\nX-Injected: 1", media: nullSound))
        }
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        await #expect(throws: PJSUAUsageError.self) {
            try await engine.addAccount(
                AccountConfiguration(
                    identity: "sip:a@127.0.0.1", registersOnAdd: false,
                    registerHeaders: [SIPHeader(name: "X-A", value: "1\r\nX-B: 2")]))
        }
        await engine.shutdown()
    }
}

extension EngineTests {
    @Test("Misuse throws typed errors and the engine keeps working")
    func misuseThrowsTypedErrors() async throws {
        let engine = PJSUA()
        let stale = Call(slot: 0, generation: 999_999)
        await #expect(throws: PJSUAUsageError.notStarted) {
            try await engine.makeCall(to: "sip:a@127.0.0.1", from: Account(slot: 0, generation: 1))
        }
        await #expect(throws: PJSUAUsageError.notStarted) { try await engine.hangup(stale) }
        // Nothing to end or detach before start: both return without touching pjsua.
        await engine.hangupAll()
        await engine.deactivateAudioDevice()
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: nullSound))
        await #expect(throws: PJSUAUsageError.alreadyStarted) { try await engine.start() }
        let other = PJSUA()
        await #expect(throws: PJSUAUsageError.anotherEngineRunning) {
            try await other.start(
                Configuration(
                    transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
                    media: nullSound))
        }
        let account = try await engine.addLocalAccount()
        await #expect(throws: PJSUAUsageError.unknownCall(stale)) { try await engine.hangup(stale) }
        await #expect(throws: PJSUAUsageError.unknownCall(stale)) { try await engine.callInfo(stale) }
        await #expect(throws: PJSUAUsageError.invalidURI("not a uri")) {
            try await engine.makeCall(to: "not a uri", from: account)
        }
        await #expect(throws: PJSUAUsageError.unknownAccount(Account(slot: 7, generation: 1))) {
            try await engine.makeCall(to: "sip:a@127.0.0.1", from: Account(slot: 7, generation: 1))
        }
        await #expect(throws: PJSUAUsageError.invalidStatusCode(99)) { try await engine.answer(stale, statusCode: 99) }
        // A bad file is pjsua's error, typed, with its text.
        let log = EventLog(engine.events)
        let port = try #require(try await engine.transports().first?.port)
        let call = try await engine.makeCall(to: "sip:self@127.0.0.1:\(port)", from: account)
        do {
            try await engine.play(file: "/nonexistent/file.wav", into: call, loop: true)
            Issue.record("playing a missing file did not throw")
        } catch let error as PJSUAError {
            #expect(error.function == "pjsua_player_create")
            #expect(!error.message.isEmpty)
        }
        try await engine.hangup(call)
        try await log.first("caller DISCONNECTED") { $0.isState(.disconnected, of: call) }
        // The handle is stale once the call ended.
        await #expect(throws: PJSUAUsageError.unknownCall(call)) { try await engine.hangup(call) }
        await engine.shutdown()
        await engine.shutdown()
        await #expect(throws: PJSUAUsageError.shutDown) {
            try await engine.makeCall(to: "sip:a@127.0.0.1", from: account)
        }
        // Start again in the same process.
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: nullSound))
        #expect(await engine.isRunning)
        _ = try await engine.addLocalAccount()
        await engine.shutdown()
    }

    @Test("A failed start cleans up so start can be tried again")
    func failedStartCanBeRetried() async throws {
        let engine = PJSUA()
        // Two transports on the same fixed port: the second bind fails inside pjsua.
        let port = FreePort.udp()
        let clash = Configuration(
            transports: [
                TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port),
                TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port),
            ], media: nullSound)
        await #expect(throws: PJSUAError.self) { try await engine.start(clash) }
        #expect(await !engine.isRunning)
        await #expect(
            throws: PJSUAUsageError.invalidConfiguration("maxCalls must be 1...\(PJSUA.compiledCallLimit), got 0")
        ) {
            try await engine.start(Configuration(maxCalls: 0, media: nullSound))
        }
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port)], media: nullSound
            ))
        let bound = try await engine.transports()
        #expect(bound.map(\.port) == [port])
        await engine.shutdown()
    }
}

extension EngineTests {
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

extension EngineTests {
    @Test("Log lines reach the handler; two subscribers see the same events in the same order")
    func logHandlerAndSubscribers() async throws {
        let captured = CapturedLog()
        try await EngineHarness.run(logHandler: captured, logLevel: 5) { h in
            let second = EventLog(h.engine.events)
            let (caller, callee) = try await h.selfCall()
            try await h.engine.hangup(caller)
            for log in [h.log, second] {
                try await log.wait("both ended") { events in
                    events.contains { $0.isState(.disconnected, of: caller) }
                        && events.contains { $0.isState(.disconnected, of: callee) }
                }
            }
            #expect(h.log.events == second.events)
            #expect(h.log.states(of: callee) == [.incoming, .connecting, .confirmed, .disconnected])
        }
        let lines = captured.all
        #expect(lines.contains { $0.contains("INVITE sip:self@127.0.0.1") })
        #expect(lines.allSatisfy { !$0.hasSuffix("\n") })
    }
}
