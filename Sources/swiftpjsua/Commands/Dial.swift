import Foundation
import SwiftPJSUA

/// `swiftpjsua call URI`: places one call; exit 0 when it was confirmed and ended normally.
struct Dial: Command {
    static let valuedOptions = EngineOptions.valued.union(AccountOptions.names).union(AccountOptions.callPolicyNames)
        .union(["port", "play", "record", "hangup-after"]).union(CallFeatures.optionNames)
    static let flagOptions = EngineOptions.flags.union(["follow-network"]).union(CallFeatures.flagNames)
    static let interruptedStatus: Int32 = 130

    let uri: String
    let hangupAfter: Duration?
    let play: String?
    let record: String?
    let features: CallFeatures
    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        guard options.positionals.count == 1, let uri = options.positionals.first else {
            throw UsageError(message: "call needs exactly one URI")
        }
        self.uri = uri
        let port = try options.int("port", in: 0...65535) ?? 0
        hangupAfter = try options.seconds("hangup-after")
        play = options.string("play")
        record = options.string("record")
        try HeldPlayback.requireReadable(play)
        features = try CallFeatures(options)
        engineOptions = try EngineOptions(options, port: UInt16(port))
    }

    func run() async throws -> Int32 {
        let printer = EventPrinter()
        let session = EngineSession()
        let status = Self.interruptedStatus
        return try await session.run(engineOptions, printer: printer, interruptedStatus: status) { account, _ in
            try await follow(from: account, in: session, printer: printer)
        }
    }

    /// Places the call, follows it and the calls its transfers place to the last one's end.
    /// - Returns: the exit status.
    private func follow(from account: Account, in session: EngineSession, printer: EventPrinter) async throws -> Int32 {
        let (engine, events, signals) = (session.engine, session.events, SignalShutdown.shared)
        let call: Call
        do {
            call = try await engine.makeCall(to: uri, from: account, headers: features.headers)
        } catch let error as PJSUAUsageError {
            throw UsageError(message: error.description)
        }
        printer.line("calling \(uri)")
        // The calls this command follows: its own, and each call the engine places because
        // the far end transferred one of them (an accepted REFER, RFC 3515). pjsua places
        // that call inside the REFER's callback, so its first event (CALLING, a call this
        // command did not place) comes right after the accepted transferRequest event.
        var followed: Set<Call> = [call]
        var acceptedREFERs = 0
        var attached: Set<Call> = []
        var confirmed = false
        var finalStatus = 0
        var finalReason = ""
        var playback = HeldPlayback(file: play)
        var lastAnswer: ContinuousClock.Instant?
        for await event in events {
            guard let eventCall = event.call else { continue }
            if !followed.contains(eventCall) {
                guard acceptedREFERs > 0, case .callState(let change) = event, change.state == .calling else {
                    continue
                }
                acceptedREFERs -= 1
                followed.insert(eventCall)
                printer.line("following \(eventCall), placed by the transfer")
            }
            printer.event(event)
            if case .callMediaState(let mediaChange) = event {
                try await playback.update(mediaChange, engine: engine, printer: printer)
            }
            switch event {
            case .transferRequest(let answer) where answer.isAccepted:
                acceptedREFERs += 1
            case .transferStatus(let progress):
                await features.finishTransfer(progress, engine: engine, printer: printer)
            case .callMediaState(let mediaChange)
            where mediaChange.media.contains(where: \.isFlowingAudio) && !attached.contains(eventCall):
                attached.insert(eventCall)
                if engineOptions.reportsMediaPath {
                    MediaNATOptions.report(eventCall, engine: engine, printer: printer)
                }
                // One recording file: the call this command placed.
                if let record, eventCall == call { try await engine.record(file: record, from: call) }
            case .callState(let change) where change.state == .confirmed:
                confirmed = true
                lastAnswer = .now
                guard eventCall == call else { break }
                features.start(on: call, engine: engine, printer: printer)
                if let hangupAfter {
                    Task {
                        try await Task.sleep(for: hangupAfter)
                        printer.line("hanging up")
                        try? await engine.hangup(call)
                    }
                }
            case .callState(let change) where change.state == .disconnected:
                playback.ended(eventCall)
                followed.remove(eventCall)
                // A REFER accepted on this call that placed nothing (pjsua could not) never will.
                if followed.isEmpty { acceptedREFERs = 0 }
                finalStatus = change.statusCode
                finalReason = change.reason
            default:
                break
            }
            if followed.isEmpty { break }
        }
        await Self.afterLastCall(answeredAt: lastAnswer, signals: signals)
        await engine.shutdown()
        out("final status: \(finalStatus) \(finalReason)")
        if signals.received != nil { return 130 }
        // A call the engine ended because the peer vanished did not end well.
        let vanished = [PJSUA.mediaTimeoutReason, PJSUA.transportLostReason].contains(finalReason)
        return confirmed && (200..<300).contains(finalStatus) && !vanished ? 0 : 1
    }

    /// Waits, before the engine shuts down, for a 2xx the far end may still retransmit
    /// because our ACK was lost, so that the engine can ACK it (RFC 3261 §13.3.1.4: the UAS
    /// retransmits its 2xx until it gets an ACK, at T1, 2·T1, 4·T1… never more than T2
    /// apart, for up to 64·T1). A 2xx received `d` before the end is retransmitted next
    /// within `d + T1` (the gaps double from T1), and never more than T2 later: waiting
    /// `min(d + T1, T2)` (at most 4 s with the default timers) gives every such peer one more
    /// retransmission to ACK. Waiting out 64·T1 (32 s) would cover every retransmission but
    /// hold every exit half a minute; after 64·T1 the peer has stopped anyway. A signal ends
    /// the wait.
    static func afterLastCall(answeredAt answer: ContinuousClock.Instant?, signals: SignalShutdown) async {
        guard let answer else { return }
        let timers = SIPTimers()
        let sinceAnswer = ContinuousClock.now - answer
        guard sinceAnswer < timers.transactionTimeout else { return }
        let deadline = ContinuousClock.now + min(sinceAnswer + timers.t1, timers.t2)
        while ContinuousClock.now < deadline, signals.received == nil {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
