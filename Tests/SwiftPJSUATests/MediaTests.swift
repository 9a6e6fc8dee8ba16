import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Synchronization
import Testing

/// Collects pjsip's log lines.
final class CapturedLog: PJSUALogHandler {
    private let lines = Mutex<[String]>([])
    func log(level: Int, message: String) { lines.withLock { $0.append(message) } }
    var all: [String] { lines.withLock { $0 } }
}

extension EngineTests {
    @Test("Log lines reach the handler; two subscribers see the same events in the same order")
    func logHandlerAndSubscribers() async throws {
        let captured = CapturedLog()
        try await EngineHarness.run(logHandler: captured, logLevel: 5) { h in
            let second = EventLog(h.engine.events)
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: caller) }
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

    @Test("With the device attached by the app, no RTP flows until activateAudioDevice")
    func audioDeviceActivation() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let (caller, callee) = try await engine.answeredSelfCall(
            to: "sip:self@127.0.0.1:\(port)", from: account, log: log)
        try await log.wait("audio on both legs") { events in
            events.contains { $0.hasActiveAudio(caller) } && events.contains { $0.hasActiveAudio(callee) }
        }
        // The bridge has no clock: half a second of nothing sent.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await engine.streamStatistics(caller).packetsSent == 0)
        try await engine.activateAudioDevice()
        let deadline = ContinuousClock.now + .seconds(5)
        while try await engine.streamStatistics(callee).packetsReceived < 25, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await engine.streamStatistics(callee).packetsReceived >= 25)
        try await engine.deactivateAudioDevice()
        let frozen = try await engine.streamStatistics(caller).packetsSent
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await engine.streamStatistics(caller).packetsSent <= frozen + 1)
        await engine.shutdown()
        #expect(log.states(of: caller).last == .disconnected)
        #expect(log.states(of: callee).last == .disconnected)
    }
}
