import Foundation
import SwiftPJSUA

/// `swiftpjsua call URI`: places one call; exit 0 when it was confirmed and ended normally.
enum Dial {
    static func run(_ options: Options) async throws -> Int32 {
        guard options.positionals.count == 1, let uri = options.positionals.first else {
            throw UsageError(message: "call needs exactly one URI")
        }
        let port = try options.int("port", in: 0...65535) ?? 0
        let hangupAfter = try options.seconds("hangup-after")
        let play = options.string("play")
        let record = options.string("record")
        try requireReadable(play)
        let features = try CallFeatures(options)
        let printer = EventPrinter()
        let engine = PJSUA()
        let signals = SignalShutdown.shared
        signals.attach(engine)
        let events = engine.events
        try await engine.start(configuration(options: options, port: UInt16(port)))
        if await signals.shutDownIfSignalled(engine) { return 130 }
        let (account, usable) = try await setUpAccount(
            engine: engine, options: AccountOptions(options), events: events, printer: printer)
        guard usable else {
            await engine.shutdown()
            out("registration failed")
            return 1
        }
        let call: Call
        do {
            call = try await engine.makeCall(to: uri, from: account, headers: features.headers)
        } catch let error as PJSUAUsageError {
            throw UsageError(message: error.description)
        }
        printer.line("calling \(uri)")
        var confirmed = false
        var attached = false
        var finalStatus = 0
        var finalReason = ""
        var playback = HeldPlayback(file: play)
        for await event in events where event.call == call {
            printer.event(event)
            if case .callMediaState(let mediaChange) = event {
                try await playback.update(mediaChange, engine: engine, printer: printer)
            }
            switch event {
            case .callMediaState(let mediaChange) where mediaChange.media.contains(where: \.isFlowingAudio) && !attached:
                attached = true
                if let record { try await engine.record(call, to: record) }
            case .callState(let change) where change.state == .confirmed:
                confirmed = true
                features.start(on: call, engine: engine, printer: printer)
                if let hangupAfter {
                    Task {
                        try await Task.sleep(for: hangupAfter)
                        printer.line("hanging up")
                        try? await engine.hangup(call)
                    }
                }
            case .callState(let change) where change.state == .disconnected:
                let status = change.lastStatus
                let reason = change.reason
                finalStatus = status
                finalReason = reason
            default:
                break
            }
            if case .callState(let change) = event, change.state == .disconnected { break }
        }
        await engine.shutdown()
        out("final status: \(finalStatus) \(finalReason)")
        if signals.received != nil { return 130 }
        // A call the engine ended because the peer vanished did not end well.
        let vanished = [PJSUA.mediaTimeoutReason, PJSUA.transportLostReason].contains(finalReason)
        return confirmed && (200..<300).contains(finalStatus) && !vanished ? 0 : 1
    }
}
