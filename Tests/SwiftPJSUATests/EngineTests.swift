import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Every test that runs pjsua. pjsua is one per process, so they run one at a time.
@Suite("Engine against real peers", .serialized)
struct EngineTests {
    @Test("Outgoing call to sipp's UAS runs CALLING → EARLY → CONNECTING → CONFIRMED → DISCONNECTED")
    func outgoingCallToSippUAS() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sipp = try await Sipp.start(scenario: "uas", folder: folder)
        defer { sipp.stop() }
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
            try await h.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
            let info = try await h.engine.callInfo(call)
            #expect(info.role == .caller)
            #expect(info.state == .confirmed)
            #expect(info.lastStatusCode == 200)
            #expect(info.remote.uri.contains("127.0.0.1:\(sipp.port)"))
            try await h.engine.hangup(call)
            try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
            #expect(h.log.states(of: call) == [.calling, .early, .connecting, .confirmed, .disconnected])
        }
        let result = try await sipp.finish()
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.successfulCalls == 1, "\(result)")
        #expect(result.failedCalls == 0, "\(result)")
        #expect(sipp.receivedRequests.contains("BYE"))
    }

    @Test("Incoming call from sipp's UAC carries its Call-ID, is answered 200 and ended by sipp's BYE")
    func incomingCallFromSippUAC() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(scenario: "uac", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let event = try await h.log.first("incoming call") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = event else { return }
            let account = incoming.account
            let call = incoming.call
            let sipCallID = incoming.sipCallID
            let video = incoming.offeredVideo
            #expect(account == h.account)
            #expect(!video)
            try await h.engine.answer(call, statusCode: 200)
            let events = try await h.log.wait("DISCONNECTED") { $0.contains { $0.isState(.disconnected, of: call) } }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            #expect(result.exitStatus == 0, "\(result)")
            #expect(sipp.sentInviteCallIDs == [sipCallID], "\(sipp.messages.prefix(600))")
            #expect(h.log.states(of: call).first == .incoming)
            #expect(h.log.states(of: call).suffix(2) == [.confirmed, .disconnected])
            #expect(events.filter { $0.isState(.disconnected, of: call) }.count == 1)
            #expect(sipp.receivedStatusCodes.contains(200))
        }
    }

    @Test("Incoming call rejected with 486: sipp sees 486")
    func incomingCallRejected() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_expect_486.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let event = try await h.log.first("incoming call") { $0.incomingCall != nil }
            let call = try #require(event.incomingCall)
            try await h.engine.answer(call, statusCode: 486)
            let end = try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
            if case .callState(let change) = end { #expect(change.lastStatus == 486) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            #expect(sipp.receivedStatusCodes.last == 486)
        }
    }

    @Test("A From display-name with escaped quotes and UTF-8 comes through exactly")
    func displayNameIsExact() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_display_name.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let event = try await h.log.first("incoming call") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = event else { return }
            let call = incoming.call
            let from = incoming.from
            #expect(from.displayName == "Zoë \"Z\" Tester 測試")
            #expect(from.uri == "sip:alice@example.com")
            let info = try await h.engine.callInfo(call)
            #expect(info.remote.displayName == "Zoë \"Z\" Tester 測試")
            try await h.engine.answer(call, statusCode: 486)
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
        }
    }

    @Test("Self-call: the 1 kHz tone played into one leg is recorded on the other")
    func selfCallCarriesTone() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        let received = folder.file("received.wav")
        let echoed = folder.file("caller-received.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(5)).write(to: tone)
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.wait("audio on both legs") { events in
                events.contains { $0.hasActiveAudio(caller) } && events.contains { $0.hasActiveAudio(callee) }
            }
            try await h.engine.play(file: tone.path, into: caller, loop: true)
            try await h.engine.record(callee, to: received.path)
            try await h.engine.record(caller, to: echoed.path)
            // 100 packets of 20 ms: two seconds of audio.
            try await h.poll("100 RTP packets received") { try await $0.streamStatistics(callee).packetsReceived >= 100 }
            let sent = try await h.engine.streamStatistics(caller)
            #expect(sent.packetsSent >= 100)
            #expect(try await h.engine.callInfo(caller).audioCodec != nil)
            try await h.engine.hangup(caller)
            try await h.log.wait("both legs ended") { events in
                events.contains { $0.isState(.disconnected, of: caller) }
                    && events.contains { $0.isState(.disconnected, of: callee) }
            }
        }
        // The recorders were closed when the calls ended (and pjsua was destroyed).
        let analysis = ToneAnalysis(try WAVAudio(contentsOf: received), frequency: 1000)
        #expect(analysis.detected(), "\(analysis)")
        #expect(analysis.toneEnergyRatio > 0.8, "\(analysis)")
        // The other direction carried no tone: the same check says no.
        let control = ToneAnalysis(try WAVAudio(contentsOf: echoed), frequency: 1000)
        #expect(!control.detected(), "\(control)")
    }

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
        try await engine.start(Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: nullSound))
        await #expect(throws: PJSUAUsageError.alreadyStarted) { try await engine.start() }
        let other = PJSUA()
        await #expect(throws: PJSUAUsageError.anotherEngineRunning) {
            try await other.start(Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: nullSound))
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
        await #expect(throws: PJSUAUsageError.shutDown) { try await engine.makeCall(to: "sip:a@127.0.0.1", from: account) }
        // Start again in the same process.
        try await engine.start(Configuration(
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
        let clash = Configuration(transports: [
            TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port),
            TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port),
        ], media: nullSound)
        await #expect(throws: PJSUAError.self) { try await engine.start(clash) }
        #expect(await !engine.isRunning)
        await #expect(throws: PJSUAUsageError.invalidConfiguration("maxCalls must be 1...\(PJSUA.compiledCallLimit), got 0")) {
            try await engine.start(Configuration(maxCalls: 0, media: nullSound))
        }
        try await engine.start(Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: port)], media: nullSound))
        let bound = try await engine.transports()
        #expect(bound.map(\.port) == [port])
        await engine.shutdown()
    }
}
