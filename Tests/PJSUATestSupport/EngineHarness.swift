import Foundation
import SwiftPJSUA

/// A running engine on 127.0.0.1 with a local account and a temporary folder, for one test.
public struct EngineHarness: Sendable {
    public let engine: PJSUA
    public let log: EventLog
    public let account: Account
    public let transport: TransportInfo
    /// The run's own folder, for files and peers that live inside the run only: the peers
    /// launched into it are stopped when the body ends, before the engine shuts down, and
    /// the folder is removed after.
    public let folder: TemporaryFolder

    /// `sip:user@127.0.0.1:port` of this engine's transport.
    public func uri(_ user: String = "engine") -> String { "sip:\(user)@\(transport.host):\(transport.port)" }

    /// Starts an engine on a free UDP port of 127.0.0.1 (or the given transports; the local
    /// account is on the first) with the null sound device (or the given media settings; RTP
    /// ports are `rtpPorts`, or else a random window; the account's media is encrypted as `srtp`
    /// says), runs `body`, and shuts the engine down whatever happens (first stopping the
    /// peers launched into ``folder``, as a `defer` at the body's end would, and removing the
    /// folder after).
    public static func run<R: Sendable>(
        maxCalls: Int = Configuration.defaultMaxCalls, logHandler: (any PJSUALogHandler)? = nil, logLevel: Int = 0,
        transports: [TransportConfiguration] = [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
        media: MediaConfiguration = MediaConfiguration(soundDevice: .null),
        nativeAdjustments: NativeAdjustments = NativeAdjustments(), timers: SIPTimers = SIPTimers(),
        rtpPorts: ClosedRange<UInt16>? = nil, dns: DNSConfiguration = DNSConfiguration(),
        srtp: SRTPConfiguration = .disabled, limits: IncomingLimits = IncomingLimits(),
        _ body: (EngineHarness) async throws -> R
    ) async throws -> R {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        var media = media
        media.rtpPorts = rtpPorts ?? randomRTPPorts()
        var configuration = Configuration(
            transports: transports, logLevel: logLevel, logHandler: logHandler, maxCalls: maxCalls, media: media,
            timers: timers)
        configuration.nativeAdjustments = nativeAdjustments
        configuration.dns = dns
        configuration.limits = limits
        try await engine.start(configuration)
        let folder: TemporaryFolder
        do {
            folder = try TemporaryFolder()
        } catch {
            await engine.shutdown()
            throw error
        }
        defer { folder.remove() }
        do {
            let account = try await srtp == .disabled ? engine.addLocalAccount() : engine.addLocalAccount(srtp: srtp)
            guard let transport = try await engine.transports().first else {
                throw TimedOut(what: "a transport", seen: [])
            }
            let harness = EngineHarness(
                engine: engine, log: log, account: account, transport: transport, folder: folder)
            let result = try await body(harness)
            folder.stopProcesses()
            await engine.shutdown()
            return result
        } catch {
            folder.stopProcesses()
            await engine.shutdown()
            throw error
        }
    }

    /// A window of 2000 RTP ports at a random place in 10000–29999 (below Linux's ephemeral
    /// range, where sipp and ``FreePort`` take theirs). pjsua allocates RTP ports upwards from
    /// the start of the range and gives up after 100 bound pairs in a row, so engines in
    /// parallel test processes that all start at the default 4000 run out under load.
    public static func randomRTPPorts() -> ClosedRange<UInt16> {
        let start = UInt16.random(in: 5...14) * 2000
        return start...(start + 1999)
    }

    /// Polls `condition` on the engine every 20 ms until it holds or the deadline passes.
    /// For counters that have no event (RTP statistics), never for call signalling.
    public func poll(
        _ what: String, timeout: Duration = .seconds(10), until condition: (PJSUA) async throws -> Bool
    ) async throws {
        try await waitUntil(what, timeout: timeout, seen: { log.events.map { "\($0)" }.joined(separator: "\n  ") }) {
            try await condition(engine)
        }
    }
}

extension EngineHarness {
    /// Records what `call` receives until `packets` more RTP packets have arrived, then
    /// closes the file and analyses it for `frequency`.
    public func recordTone(
        _ call: Call, to file: URL, packets: UInt64 = 100, frequency: Double = 1000
    ) async throws -> ToneAnalysis {
        let start = try await engine.streamStatistics(call).packetsReceived
        let recorder = try await engine.record(file: file.path, from: call)
        try await poll("\(packets) packets on \(call)") {
            try await $0.streamStatistics(call).packetsReceived >= start + packets
        }
        try await engine.stop(recorder)
        return ToneAnalysis(try WAVAudio(contentsOf: file), frequency: frequency)
    }
}

extension PJSUA {
    /// Calls `uri` (this engine's own address) from `account`, answers the incoming leg with
    /// `statusCode`, and returns both legs once the INVITE has arrived and been answered.
    public func answeredSelfCall(
        to uri: String, from account: Account, log: EventLog, statusCode: Int = 200
    ) async throws -> (caller: Call, callee: Call) {
        let caller = try makeCall(to: uri, from: account)
        let incoming = try await log.first("incoming call") { $0.incomingCall != nil }
        guard let callee = incoming.incomingCall else { throw TimedOut(what: "incoming call", seen: []) }
        try answer(callee, statusCode: statusCode)
        return (caller, callee)
    }
}
