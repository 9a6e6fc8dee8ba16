import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Collects a stream; `true` when it finished within `timeout`.
func finishes(_ stream: AsyncStream<PJSUAEvent>, within timeout: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await _ in stream {}
            return true
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

let loopbackUDP = [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)]
/// No sound hardware: the default is the system's device, which a test machine lacks.
let nullSound = MediaConfiguration(soundDevice: .null)

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

    @Test("A stopped player's handle cannot stop the newer player that reuses its id")
    func stalePlayerHandle() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(1)).write(to: tone)
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: h.uri("self"), from: h.account)
            let first = try await h.engine.play(file: tone.path, into: call, loop: true)
            try await h.engine.stop(first)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(first) }
            let second = try await h.engine.play(file: tone.path, into: call, loop: true)
            #expect(second.id == first.id)
            #expect(second != first)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(first) }
            try await h.engine.stop(second)
            await h.engine.hangupAll()
        }
    }

    @Test("A second shutdown waits for the one in progress; start works right after")
    func concurrentShutdownWaits() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let registrar = try await Sipp.start(scenario: "registrar_ignores_unregister.xml", folder: folder)
        defer { registrar.stop() }
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        _ = try await engine.addAccount(AccountConfiguration(
            identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"))
        try await log.first("registered") { $0.isRegistration(active: true) }
        let first = Task { await engine.shutdown(deadline: .seconds(2)) }
        // sipp's scenario ends when the unregistration arrives (and stays unanswered): the
        // first shutdown is now waiting for it, up to its deadline.
        let result = try await registrar.finish()
        #expect(result.successfulCalls == 1, "\(result)")
        await engine.shutdown()
        #expect(await !engine.isRunning)
        // Were the first shutdown still running, start would throw alreadyStarted.
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        await engine.shutdown()
        await first.value
    }

    @Test("IPv6: a local account on udp6 [::1] places and receives a call", .enabled(if: PJSUA.supportsIPv6, "this pjproject was built without IPv6"))
    func ipv6SelfCall() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(Configuration(transports: [TransportConfiguration(type: .udp6, bindAddress: "::1", port: 0)], media: nullSound))
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
            try await engine.start(Configuration(transports: loopbackUDP, userAgent: "x\r\nX-Injected: 1", media: nullSound))
        }
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        await #expect(throws: PJSUAUsageError.self) {
            try await engine.addAccount(AccountConfiguration(
                identity: "sip:a@127.0.0.1", registersOnAdd: false,
                registerHeaders: [SIPHeader(name: "X-A", value: "1\r\nX-B: 2")]))
        }
        await engine.shutdown()
    }
}
