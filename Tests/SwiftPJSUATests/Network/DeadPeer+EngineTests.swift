import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// Issue 12 item 7, peers that vanish: a call whose audio stops arriving, and a call whose TCP
// connection dies, against Tests/Peers/dead_peer.py, a SIP peer that answers and then
// misbehaves on cue, printing CLOCK_MONOTONIC times of what it did.

extension PJSUAEvent {
    var mediaInactivity: MediaInactivity? {
        if case .mediaInactivity(let payload) = self { return payload }
        return nil
    }

    var transportLoss: TransportLoss? {
        if case .transportLoss(let payload) = self { return payload }
        return nil
    }

    /// The reason of `call`'s terminal event.
    func disconnectReason(of call: Call) -> String? {
        if case .callState(let change) = self, change.call == call, change.state == .disconnected {
            return change.reason
        }
        return nil
    }
}

/// An engine on one transport of 127.0.0.1 whose events are also kept with the instant each
/// was raised, converted to CLOCK_MONOTONIC seconds to compare with the peer's times.
struct DeadPeerEngine: Sendable {
    let engine: PJSUA
    let log: EventLog
    let stamped: Journal<TimestampedEvent>
    let transport: TransportInfo
    /// One instant read on both clocks, to convert the one to the other.
    let reference: ContinuousClock.Instant
    let referenceMonotonic: Double

    static func run(
        _ type: TransportType, tls: TLSConfiguration = TLSConfiguration(), timers: SIPTimers = SIPTimers(),
        _ body: (DeadPeerEngine) async throws -> Void
    ) async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        let stamped = Journal<TimestampedEvent>()
        let stream = engine.timestampedEvents
        Task {
            for await event in stream { stamped.append(event) }
            stamped.finish()
        }
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: type, bindAddress: "127.0.0.1", port: 0, tls: tls)],
                media: MediaConfiguration(soundDevice: .null, rtpPorts: EngineHarness.randomRTPPorts()),
                timers: timers))
        do {
            guard let transport = try await engine.transports().first else {
                throw TimedOut(what: "a transport", seen: [])
            }
            let reference = ContinuousClock.now
            let referenceMonotonic = monotonicSeconds()
            try await body(
                DeadPeerEngine(
                    engine: engine, log: log, stamped: stamped, transport: transport, reference: reference,
                    referenceMonotonic: referenceMonotonic))
            await engine.shutdown()
        } catch {
            await engine.shutdown()
            throw error
        }
    }

    /// Calls the dead peer on 127.0.0.1:`port` from an account on this engine's transport
    /// with the given media inactivity timeout.
    func callPeer(at port: UInt16, mediaInactivityTimeout timeout: Duration) async throws -> Call {
        let account = try await engine.addAccount(
            AccountConfiguration(
                identity: "sip:engine@127.0.0.1:\(transport.port)", transport: transport.transport,
                mediaInactivityTimeout: timeout))
        return try await engine.makeCall(to: "sip:peer@127.0.0.1:\(port)", from: account)
    }

    /// The first event matching `predicate` and when it was raised (CLOCK_MONOTONIC seconds).
    func first(
        _ what: String, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (PJSUAEvent) -> Bool
    ) async throws -> (event: PJSUAEvent, at: Double) {
        let records = try await stamped.wait(what, timeout: timeout) { $0.contains { predicate($0.event) } }
        guard let record = records.first(where: { predicate($0.event) }) else { throw TimedOut(what: what, seen: []) }
        return (record.event, referenceMonotonic + (record.raisedAt - reference).inSeconds)
    }
}

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Tests/Peers/dead_peer.py in `mode` on `port`, once it listens.
func startDeadPeer(_ mode: String, port: UInt16, folder: TemporaryFolder, _ extra: [String] = []) async throws
    -> PeerProcess
{
    let script = Repository.root.appendingPathComponent("Tests/Peers/dead_peer.py").path
    let peer = try PeerProcess(
        "dead-peer-\(mode)", executable: "/usr/bin/python3",
        arguments: [script, "--mode", mode, "--port", "\(port)"] + extra, folder: folder, lifetimeSeconds: 60)
    try await peer.waitForOutput(containing: "listening")
    return peer
}

extension PeerProcess {
    /// The CLOCK_MONOTONIC time on the first line that starts with `what`.
    func time(of what: String) throws -> Double {
        for line in output.split(separator: "\n") where line.hasPrefix(what + " ") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        throw TimedOut(what: "\(name) line \"\(what)\"", seen: [output])
    }
}

extension EngineTests {
    /// The slack on top of the engine's own bound for a loaded two-core machine.
    static let deadPeerSlack = 0.75

    @Test("A media inactivity timeout outside 1 s...1 h throws invalidConfiguration; nil and in-range ones are taken")
    func mediaInactivityTimeoutIsValidated() async throws {
        try await EngineHarness.run { h in
            for timeout: Duration in [.zero, .milliseconds(999), .seconds(-5), .seconds(3601)] {
                let configuration = AccountConfiguration(identity: "sip:a@127.0.0.1", mediaInactivityTimeout: timeout)
                await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(configuration) }
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.addLocalAccount(isDefault: false, mediaInactivityTimeout: timeout)
                }
            }
            for timeout: Duration? in [nil, .seconds(1), .seconds(3600)] {
                let account = try await h.engine.addAccount(
                    AccountConfiguration(identity: "sip:b@127.0.0.1", mediaInactivityTimeout: timeout))
                #expect(try await h.engine.accountConfiguration(account).mediaInactivityTimeout == timeout)
                try await h.engine.removeAccount(account)
            }
        }
    }

    @Test("A peer that stops sending RTP mid-call is reported after the timeout, and the call ends with a BYE")
    func peerThatStopsSendingRTPIsHungUp() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let peer = try await startDeadPeer("rtp-stops", port: port, folder: folder, ["--rtp-seconds", "1.5"])
            let timeout = 2.0
            try await DeadPeerEngine.run(.udp) { e in
                let call = try await e.callPeer(at: port, mediaInactivityTimeout: .seconds(timeout))
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "rtp-stopped", timeout: .seconds(10))
                let stoppedAt = try peer.time(of: "rtp-stopped")
                let (event, reportedAt) = try await e.first("media inactivity", timeout: .seconds(10)) {
                    $0.mediaInactivity?.call == call
                }
                let inactivity = try #require(event.mediaInactivity)
                let after = reportedAt - stoppedAt
                let bound = timeout + 2 * PJSUA.mediaInactivityCheckInterval.inSeconds + Self.deadPeerSlack
                #expect(after >= timeout, "reported \(after) s after the last RTP packet")
                #expect(after <= bound, "reported \(after) s after the last RTP packet")
                #expect(inactivity.timeout == .seconds(timeout))
                #expect(inactivity.silence >= .seconds(timeout))
                #expect(inactivity.mediaIndex == 0)
                // 1.5 s at 50 packets a second reached the engine before it went quiet.
                #expect(inactivity.packetsReceived >= 50, "\(inactivity)")
                let (end, endedAt) = try await e.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
                #expect(end.disconnectReason(of: call) == PJSUA.mediaTimeoutReason)
                #expect(endedAt >= reportedAt)
                // The peer saw the BYE.
                try await peer.waitForOutput(containing: "bye conn=1", timeout: .seconds(5))
            }
        }
    }

    @Test(
        """
        A call the peer holds (sendonly or inactive, no RTP) is not ended by the media timeout; resumed without RTP it \
        is
        """,
        arguments: ["sendonly", "inactive"])
    func remoteHoldIsNotAMediaTimeout(direction: String) async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            // Held for 5 s, two and a half timeouts.
            let peer = try await startDeadPeer(direction, port: port, folder: folder, ["--resume-after", "5"])
            let timeout = 2.0
            try await DeadPeerEngine.run(.udp) { e in
                let call = try await e.callPeer(at: port, mediaInactivityTimeout: .seconds(timeout))
                try await e.log.first("remote hold") { $0.hasAudio(.remoteHold, call) }
                try await peer.waitForOutput(containing: "resumed", timeout: .seconds(10))
                let resumedAt = try peer.time(of: "resumed")
                // All through the hold: no report, no BYE, the call still up.
                #expect(!e.log.events.contains { $0.mediaInactivity != nil }, "\(e.log.events)")
                #expect(!peer.output.contains("bye"))
                #expect(try await e.engine.callInfo(call).state == .confirmed)
                // Resumed (sendrecv) and still silent: now it is a dead peer.
                let (_, reportedAt) = try await e.first("media inactivity", timeout: .seconds(8)) {
                    $0.mediaInactivity?.call == call
                }
                let after = reportedAt - resumedAt
                #expect(after >= timeout, "reported \(after) s after the resume")
                #expect(
                    after <= timeout + 2 * PJSUA.mediaInactivityCheckInterval.inSeconds + Self.deadPeerSlack,
                    "reported \(after) s after the resume")
                let (end, _) = try await e.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
                #expect(end.disconnectReason(of: call) == PJSUA.mediaTimeoutReason)
                try await peer.waitForOutput(containing: "bye conn=1", timeout: .seconds(5))
            }
        }
    }

    @Test(
        "A confirmed call whose TCP or TLS connection is closed is reported at once and ended (policy endCall)",
        arguments: [TransportType.tcp, .tls])
    func lostTCPConnectionEndsTheCall(type: TransportType) async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.tcpAndUDP()
            var tls = TLSConfiguration()
            var peerTLS: [String] = []
            if type == .tls {
                let certificates = try await TestCertificates.make(in: folder)
                tls = TLSConfiguration(caFile: certificates.caCertificate.path)
                peerTLS = ["--tls-cert", certificates.serverCertificate.path, "--tls-key", certificates.serverKey.path]
            }
            let peer = try await startDeadPeer("tcp-close", port: port, folder: folder, peerTLS)
            let name = type == .tls ? "TLS" : "TCP"
            try await DeadPeerEngine.run(type, tls: tls) { e in
                let account = try await e.engine.addLocalAccount(
                    on: e.transport.transport, transportLossPolicy: .endCall)
                let call = try await e.engine.makeCall(
                    to: "sip:peer@127.0.0.1:\(port);transport=\(name.lowercased())", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "closed", timeout: .seconds(5))
                let closedAt = try peer.time(of: "closed")
                let (event, reportedAt) = try await e.first("transport loss", timeout: .seconds(5)) {
                    $0.transportLoss?.call == call
                }
                let loss = try #require(event.transportLoss)
                #expect(reportedAt - closedAt < 1.0, "reported \(reportedAt - closedAt) s after the close")
                #expect(loss.action == .endCall)
                #expect(loss.connection.hasPrefix("\(name) "), "\(loss)")
                #expect(loss.connection.hasSuffix("->127.0.0.1:\(port)"), "\(loss)")
                let (end, endedAt) = try await e.first("DISCONNECTED", timeout: .seconds(5)) {
                    $0.isState(.disconnected, of: call)
                }
                #expect(end.disconnectReason(of: call) == PJSUA.transportLostReason)
                #expect(endedAt - closedAt < 1.0)
                // The BYE went out, over a new connection to the peer's Contact.
                try await peer.waitForOutput(containing: "bye conn=2", timeout: .seconds(5))
            }
        }
    }

    @Test("An incoming call over TCP whose connection the caller closes is reported at once and ended")
    func lostTCPConnectionOfIncomingCallEndsIt() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.tcpAndUDP()
            try await DeadPeerEngine.run(.tcp) { e in
                _ = try await e.engine.addLocalAccount(on: e.transport.transport, transportLossPolicy: .endCall)
                let peer = try await startDeadPeer(
                    "tcp-call", port: port, folder: folder, ["--engine-port", "\(e.transport.port)"])
                let incoming = try await e.log.first("incoming call") { $0.incomingCall != nil }
                let call = try #require(incoming.incomingCall)
                try await e.engine.answer(call)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "closed", timeout: .seconds(5))
                let closedAt = try peer.time(of: "closed")
                let (event, reportedAt) = try await e.first("transport loss", timeout: .seconds(5)) {
                    $0.transportLoss?.call == call
                }
                #expect(event.transportLoss?.action == .endCall)
                #expect(reportedAt - closedAt < 1.0, "reported \(reportedAt - closedAt) s after the close")
                let (end, _) = try await e.first("DISCONNECTED", timeout: .seconds(5)) {
                    $0.isState(.disconnected, of: call)
                }
                #expect(end.disconnectReason(of: call) == PJSUA.transportLostReason)
                // The BYE went to the caller's Contact, over a connection of the engine's.
                try await peer.waitForOutput(containing: "bye conn=2", timeout: .seconds(5))
            }
        }
    }

    @Test("With policy reinvite, a call whose TCP connection is closed re-INVITEs over a new connection and goes on")
    func lostTCPConnectionReinvites() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.tcpAndUDP()
            let peer = try await startDeadPeer("tcp-close", port: port, folder: folder)
            try await DeadPeerEngine.run(.tcp) { e in
                let account = try await e.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:engine@127.0.0.1:\(e.transport.port);transport=tcp",
                        transport: e.transport.transport,
                        transportLossPolicy: .reinvite))
                let call = try await e.engine.makeCall(to: "sip:peer@127.0.0.1:\(port);transport=tcp", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "closed", timeout: .seconds(5))
                let closedAt = try peer.time(of: "closed")
                let (event, reportedAt) = try await e.first("transport loss", timeout: .seconds(5)) {
                    $0.transportLoss?.call == call
                }
                #expect(event.transportLoss?.action == .reinvite)
                #expect(reportedAt - closedAt < 1.0, "reported \(reportedAt - closedAt) s after the close")
                // The re-INVITE arrived on a second connection, was answered 200, and ACKed there.
                try await peer.waitForOutput(containing: "request INVITE conn=2", timeout: .seconds(5))
                try await peer.waitForOutput(containing: "request ACK conn=2", timeout: .seconds(5))
                #expect(try await e.engine.callInfo(call).state == .confirmed)
                #expect(!e.log.events.contains { $0.isState(.disconnected, of: call) })
                // Reported as one reconnection: after the loss, before the re-INVITE's outcome,
                // and reconnected once the 200 came, after the media update it brought.
                let trail = try await e.log.wait("reconnected") { events in
                    events.contains { $0.reconnection == CallReconnection(call: call, phase: .reconnected) }
                }.reconnectionTrail(of: call)
                #expect(
                    trail == ["confirmed", "transport-loss", "reconnecting transport-loss", "media", "reconnected"],
                    "\(trail)")
                // The call goes on over the new connection: its BYE uses it, and its end is an
                // ordinary one.
                try await e.engine.hangup(call)
                try await peer.waitForOutput(containing: "bye conn=2", timeout: .seconds(5))
                let (end, _) = try await e.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
                #expect(end.disconnectReason(of: call) != PJSUA.transportLostReason)
                #expect(!peer.output.contains("conn=3"), "\(peer.output)")
            }
        }
    }

    @Test(
        "A call we hold (sendonly, the peer sends nothing) is not ended by the media timeout; resumed and silent it is")
    func localHoldIsNotAMediaTimeout() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let peer = try await startDeadPeer("rtp-stops", port: port, folder: folder, ["--rtp-seconds", "0.5"])
            let timeout = 2.0
            try await DeadPeerEngine.run(.udp) { e in
                let call = try await e.callPeer(at: port, mediaInactivityTimeout: .seconds(timeout))
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await e.engine.setHold(call)
                try await e.log.first("local hold") { $0.hasAudio(.localHold, call) }
                try await peer.waitForOutput(containing: "reinvite sendonly")
                // Held for two and a half timeouts, the peer silent since half a second in: not a
                // settle, the time in which no media timeout may fire.
                try await Task.sleep(for: .seconds(5))
                #expect(!e.log.events.contains { $0.mediaInactivity != nil }, "\(e.log.events)")
                #expect(!peer.output.contains("bye"))
                #expect(try await e.engine.callInfo(call).state == .confirmed)
                let held = e.stamped.records.count
                try await e.engine.resume(call)
                // The media event of the resume: the first active one after the hold.
                let records = try await e.stamped.wait("resumed") {
                    $0.dropFirst(held).contains { $0.event.hasAudio(.active, call) }
                }
                let resume = try #require(records.dropFirst(held).first { $0.event.hasAudio(.active, call) })
                let resumedAt = e.referenceMonotonic + (resume.raisedAt - e.reference).inSeconds
                let (_, reportedAt) = try await e.first("media inactivity", timeout: .seconds(8)) {
                    $0.mediaInactivity?.call == call
                }
                let after = reportedAt - resumedAt
                #expect(after >= timeout, "reported \(after) s after the resume")
                #expect(after <= timeout + 2 * PJSUA.mediaInactivityCheckInterval.inSeconds + Self.deadPeerSlack)
                let (end, _) = try await e.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
                #expect(end.disconnectReason(of: call) == PJSUA.mediaTimeoutReason)
            }
        }
    }

    @Test(
        """
        With policy reinvite, a call whose peer vanished (connection closed, nothing listens) ends when the re-INVITE \
        fails
        """
    )
    func lostTCPConnectionToVanishedPeerEndsAfterReinvite() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.tcpAndUDP()
            let peer = try await startDeadPeer("tcp-close", port: port, folder: folder, ["--vanish"])
            try await DeadPeerEngine.run(.tcp) { e in
                let account = try await e.engine.addLocalAccount(
                    on: e.transport.transport, transportLossPolicy: .reinvite)
                let call = try await e.engine.makeCall(to: "sip:peer@127.0.0.1:\(port);transport=tcp", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "closed", timeout: .seconds(5))
                let closedAt = try peer.time(of: "closed")
                let (event, _) = try await e.first("transport loss", timeout: .seconds(5)) {
                    $0.transportLoss?.call == call
                }
                #expect(event.transportLoss?.action == .reinvite)
                // The new connection is refused: pjsip fails the re-INVITE itself, and the call ends.
                let (end, endedAt) = try await e.first("DISCONNECTED", timeout: .seconds(5)) {
                    $0.isState(.disconnected, of: call)
                }
                #expect(end.disconnectReason(of: call) == PJSUA.transportLostReason)
                #expect(endedAt - closedAt < 2.0, "ended \(endedAt - closedAt) s after the close")
                // Reconnecting, then the end: no outcome of its own, and never reconnected.
                let trail = try await e.log.wait("DISCONNECTED in the log") {
                    $0.contains { $0.isState(.disconnected, of: call) }
                }.reconnectionTrail(of: call)
                #expect(
                    trail == [
                        "confirmed", "transport-loss", "reconnecting transport-loss",
                        "disconnected \(PJSUA.transportLostReason)",
                    ], "\(trail)")
                #expect(!peer.output.contains("conn=2"), "\(peer.output)")
            }
        }
    }

    /// T1 of 50 ms: a request nobody answers fails with 408 after 64 × T1, 3.2 s.
    static let shortTimers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(400), t4: .milliseconds(500))

    @Test(
        """
        Reconnection, lost connection: a peer that takes the new connection but never answers the re-INVITE gives \
        reconnecting, then the call's end with the transport-lost reason, and no reconnected
        """
    )
    func lostTCPConnectionWithUnansweredReinviteEndsWhileReconnecting() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.tcpAndUDP()
            let peer = try await startDeadPeer("tcp-close", port: port, folder: folder, ["--swallow-reinvite"])
            try await DeadPeerEngine.run(.tcp, timers: Self.shortTimers) { e in
                let account = try await e.engine.addLocalAccount(
                    on: e.transport.transport, transportLossPolicy: .reinvite)
                let call = try await e.engine.makeCall(to: "sip:peer@127.0.0.1:\(port);transport=tcp", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                try await peer.waitForOutput(containing: "swallowed", timeout: .seconds(5))
                // A subscription made while the call reconnects starts with its state, its media
                // and the running episode's reconnecting.
                try await e.log.first("reconnecting") { $0.reconnection?.call == call }
                var replay = e.engine.events(for: call).makeAsyncIterator()
                var replayed: [String] = []
                for _ in 0..<3 { if let event = await replay.next() { replayed.append("\(event)") } }
                #expect(replayed.count == 3, "\(replayed)")
                #expect(replayed.first?.contains("confirmed") == true, "\(replayed)")
                #expect(replayed.last?.contains("reconnecting(") == true, "\(replayed)")
                let end = try await e.log.first("DISCONNECTED", timeout: .seconds(10)) {
                    $0.isState(.disconnected, of: call)
                }
                #expect(end.disconnectReason(of: call) == PJSUA.transportLostReason)
                let trail = e.log.events.reconnectionTrail(of: call)
                #expect(
                    trail == [
                        "confirmed", "transport-loss", "reconnecting transport-loss",
                        "disconnected \(PJSUA.transportLostReason)",
                    ], "\(trail)\n\(peer.output)")
            }
        }
    }

    @Test(
        """
        Reconnection, network change: a peer that never answers the refresh re-INVITE gives reconnecting after the \
        refresh step, then the call's end with pjsip's reason, and no reconnected
        """
    )
    func networkChangeWithUnansweredReinviteEndsWhileReconnecting() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let peer = try await startDeadPeer(
                "rtp-stops", port: port, folder: folder, ["--rtp-seconds", "30", "--swallow-reinvite"])
            try await DeadPeerEngine.run(.udp, timers: Self.shortTimers) { e in
                let account = try await e.engine.addLocalAccount(on: e.transport.transport)
                let call = try await e.engine.makeCall(to: "sip:peer@127.0.0.1:\(port)", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                let report = try await e.engine.handleNetworkChange(
                    NetworkChangeOptions(restartsListeners: false))
                #expect(report.steps.contains { $0.step == .targetRefreshSent && $0.call == call }, "\(report)")
                try await peer.waitForOutput(containing: "swallowed", timeout: .seconds(5))
                let end = try await e.log.first("DISCONNECTED", timeout: .seconds(15)) {
                    $0.isState(.disconnected, of: call)
                }
                let trail = e.log.events.reconnectionTrail(of: call)
                let reason = end.disconnectReason(of: call) ?? "?"
                #expect(
                    trail == ["confirmed", "refresh-sent", "reconnecting network-change", "disconnected \(reason)"],
                    "\(trail)\n\(peer.output)")
                // The reason the call has without reconnection: pjsip's, not one the engine made up.
                #expect(reason != PJSUA.transportLostReason && reason != PJSUA.mediaTimeoutReason, "\(reason)")
            }
        }
    }

    @Test(
        """
        Reconnection, network change: a peer that refuses the refresh re-INVITE (488) gives reconnecting, the \
        re-INVITE failure, then reconnect-failed, and the call stays up
        """
    )
    func networkChangeWithRefusedReinviteFailsReconnecting() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let peer = try await startDeadPeer(
                "rtp-stops", port: port, folder: folder, ["--rtp-seconds", "30", "--refuse-reinvite", "488"])
            try await DeadPeerEngine.run(.udp) { e in
                let account = try await e.engine.addLocalAccount(on: e.transport.transport)
                let call = try await e.engine.makeCall(to: "sip:peer@127.0.0.1:\(port)", from: account)
                try await e.log.first("CONFIRMED") { $0.isState(.confirmed, of: call) }
                _ = try await e.engine.handleNetworkChange(NetworkChangeOptions(restartsListeners: false))
                let trail = try await e.log.wait("the reconnection's outcome") { events in
                    events.contains { $0.reconnection?.call == call && $0.reconnection?.isReconnecting == false }
                }.reconnectionTrail(of: call)
                #expect(
                    trail == [
                        "confirmed", "refresh-sent", "reconnecting network-change", "reinvite-failed 488",
                        "reconnect-failed 488",
                    ], "\(trail)\n\(peer.output)")
                #expect(try await e.engine.callInfo(call).state == .confirmed)
                try await e.engine.hangup(call)
            }
        }
    }

    @Test("swiftpjsua call --media-timeout 2 ends a call whose peer stopped sending RTP, with a BYE, and exits 1")
    func cliMediaTimeoutEndsTheCall() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let peer = try await startDeadPeer("rtp-stops", port: port, folder: folder, ["--rtp-seconds", "1"])
            let tool = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", "sip:peer@127.0.0.1:\(port)", "--port", "0", "--media-timeout", "2",
                ],
                folder: folder,
                lifetimeSeconds: 30)
            let status = try await tool.waitForExit(timeout: .seconds(15))
            #expect(status == 1, "\(tool.output)")
            #expect(tool.output.contains("media-timeout"), "\(tool.output)")
            #expect(tool.output.contains(PJSUA.mediaTimeoutReason), "\(tool.output)")
            #expect(peer.output.contains("bye conn=1"), "\(peer.output)")
        }
    }

    @Test("swiftpjsua rejects a --media-timeout outside 1...3600 s and an unknown --transport-loss (exit 64)")
    func cliDeadPeerOptionsAreValidated() async throws {
        try await withTemporaryFolder { folder in
            for arguments in [
                ["--media-timeout", "0.5"], ["--media-timeout", "4000"], ["--transport-loss", "retry"],
            ] {
                let tool = try PeerProcess(
                    "swiftpjsua-usage", executable: Repository.tool.path,
                    arguments: ["call", "--bind", "127.0.0.1", "sip:nobody@127.0.0.1:9", "--port", "0"] + arguments,
                    folder: folder)
                defer { tool.stop() }
                #expect(try await tool.waitForExit() == 64, "\(arguments): \(tool.output)")
            }
        }
    }
}

extension PJSUAEvent {
    var reconnection: CallReconnection? {
        if case .reconnection(let payload) = self { return payload }
        return nil
    }
}

extension [PJSUAEvent] {
    /// What `call` went through around a reconnection, one word each, in order: its
    /// confirmed and disconnected states (with the reason), media updates after it was
    /// confirmed, transport losses, network-change refreshes, re-INVITE failures and
    /// reconnection phases.
    func reconnectionTrail(of call: Call) -> [String] {
        var trail: [String] = []
        for event in self where event.call == call {
            switch event {
            case .callState(let change) where change.state == .confirmed: trail.append("confirmed")
            case .callState(let change) where change.state == .disconnected:
                trail.append("disconnected \(change.reason)")
            case .callMediaState where trail.contains("confirmed"): trail.append("media")
            case .transportLoss: trail.append("transport-loss")
            case .networkChange(let progress) where progress.step == .targetRefreshSent:
                trail.append("refresh-sent")
            case .reinviteFailed(let failure): trail.append("reinvite-failed \(failure.statusCode)")
            case .reconnection(let reconnection):
                switch reconnection.phase {
                case .reconnecting(let reason): trail.append("reconnecting \(reason)")
                case .reconnected: trail.append("reconnected")
                case .failed(let code): trail.append("reconnect-failed \(code)")
                }
            default: break
            }
        }
        return trail
    }
}
