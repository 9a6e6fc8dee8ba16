import Foundation
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKitTesting
import Testing

/// The contract of `CallControlling`, run against the shipped fake and against the real
/// engine on loopback (a call from the engine to itself), so that the fake cannot drift from
/// what the engine does.
extension EngineTests {
    /// The two implementations the contract runs on.
    enum ContractSubject: String, CaseIterable, CustomTestStringConvertible {
        case fake
        case engine

        var testDescription: String { rawValue }
    }

    @Test(
        "CallControlling contract: state order, one terminal event, stale handles, events(for:) replay",
        arguments: ContractSubject.allCases)
    func callControllingContract(_ subject: ContractSubject) async throws {
        switch subject {
        case .fake:
            let fake = FakeCallEngine()
            let account = fake.makeAccount()
            let bed = ContractBed(
                engine: fake, account: account, target: "sip:peer@127.0.0.1",
                answered: { script in fake.setScript(script, for: "sip:peer@127.0.0.1") },
                incoming: { fake.receiveCall(from: SIPAddress(uri: "sip:alice@127.0.0.1"), to: account) })
            try await bed.run()
        case .engine:
            try await EngineHarness.run { h in
                let target = h.uri("self")
                // The engine plays the far end of its own call: the callee leg is answered or
                // rejected as the script says.
                let bed = ContractBed(
                    engine: h.engine, account: h.account, target: target, answered: { _ in },
                    incoming: nil,
                    farEnd: { incoming, step in
                        switch step {
                        case .answer: try await h.engine.answer(incoming, statusCode: 200)
                        case .reject(let code): try await h.engine.answer(incoming, statusCode: code)
                        case .ring(let code): try await h.engine.answer(incoming, statusCode: code)
                        case .hangUp: try await h.engine.hangup(incoming)
                        case .sendDTMF(let digits): try await h.engine.sendDTMF(incoming, digits: digits)
                        }
                    })
                try await bed.run()
            }
        }
    }
}

/// One run of the contract over an implementation.
///
/// With `farEnd` set (the real engine), each call to `target` arrives back at the engine and
/// `farEnd` plays the peer's steps on that incoming leg; otherwise (the fake) the script is
/// handed to `answered` and the fake plays it.
private struct ContractBed {
    let engine: any CallControlling
    let account: Account
    let target: String
    let answered: @Sendable (PeerScript) -> Void
    let incoming: (@Sendable () -> Call)?
    var farEnd: (@Sendable (Call, PeerScript.Step) async throws -> Void)? = nil

    /// Every event since the bed began, collected from one `events` subscription.
    final class Collector: Sendable {
        let log = RecordLog<PJSUAEvent>()
        let task: Task<Void, Never>

        init(_ events: AsyncStream<PJSUAEvent>) {
            let log = log
            task = Task {
                for await event in events { log.append(event) }
            }
        }

        func states(of call: Call) -> [CallStateChange] {
            log.records.compactMap { if case .callState(let change) = $0, change.call == call { change } else { nil } }
        }

        func waitForState(_ state: CallState, of call: Call) async throws {
            try await log.wait("\(state) of \(call)") { records in
                records.contains {
                    if case .callState(let c) = $0 { c.call == call && c.state == state } else { false }
                }
            }
        }

        /// Waits for an incoming call other than those in `known`.
        func waitForIncoming(besides known: [Call]) async throws -> Call {
            let records = try await log.wait("an incoming call") { records in
                records.contains { if case .incomingCall(let i) = $0 { !known.contains(i.call) } else { false } }
            }
            for case .incomingCall(let incoming) in records where !known.contains(incoming.call) {
                return incoming.call
            }
            throw RecordLogTimeout(what: "an incoming call", seen: [])
        }

        var incomingCalls: [Call] {
            log.records.compactMap { if case .incomingCall(let incoming) = $0 { incoming.call } else { nil } }
        }
    }

    /// Places a call whose far end plays `steps` and returns the caller's leg (and the far
    /// end's, on the real engine).
    func place(_ steps: [PeerScript.Step], events: Collector) async throws -> (caller: Call, callee: Call?) {
        var script = PeerScript()
        for (index, step) in steps.enumerated() { script = script.then(after: .milliseconds(20 * (index + 1)), step) }
        answered(script)
        let known = events.incomingCalls
        let caller = try await engine.makeCall(to: target, from: account, headers: [])
        guard let farEnd else { return (caller, nil) }
        let callee = try await events.waitForIncoming(besides: known)
        for step in steps { try await farEnd(callee, step) }
        return (caller, callee)
    }

    func run() async throws {
        let events = Collector(engine.events)
        defer { events.task.cancel() }

        // An answered call, hung up by us.
        let (caller, callee) = try await place([.ring(statusCode: 180), .answer], events: events)
        try await events.waitForState(.confirmed, of: caller)
        // events(for:) of a live call starts with what describes it now.
        let replay = engine.events(for: caller)
        var replayed: [PJSUAEvent] = []
        for await event in replay {
            replayed.append(event)
            if replayed.count == 1 { try await engine.hangup(caller, statusCode: nil, headers: []) }
        }
        #expect(replayed.first.flatMap(Self.state) == .confirmed, "\(replayed)")
        #expect(replayed.contains { if case .callMediaState = $0 { true } else { false } }, "\(replayed)")
        #expect(replayed.last.flatMap(Self.state) == .disconnected, "\(replayed)")
        #expect(replayed.compactMap(Self.state).filter { $0 == .disconnected }.count == 1)
        if let callee { try await events.waitForState(.disconnected, of: callee) }
        // Time for a second terminal event, if one were coming.
        try await Task.sleep(for: .milliseconds(300))
        Self.expectLegalOrder(events.states(of: caller).map(\.state), from: .calling)
        let kinds = events.log.records.filter { $0.call == caller }.map(Self.kind)
        print("contract \(type(of: engine)) answered caller:", kinds)
        // What both implementations must give, event for event.
        #expect(
            kinds == [
                "calling(0)", "early(180)", "connecting(200)", "media(active)", "confirmed(200)", "disconnected(200)",
            ],
            "\(kinds)")
        if let callee {
            Self.expectLegalOrder(events.states(of: callee).map(\.state), from: .incoming)
            print("contract callee:", events.log.records.filter { $0.call == callee }.map(Self.kind))
        }

        // A stale handle: every operation throws unknownCall, events(for:) finishes empty.
        await Self.expectUnknownCall(caller) { try await engine.hangup(caller, statusCode: nil, headers: []) }
        await Self.expectUnknownCall(caller) { try await engine.setHold(caller) }
        await Self.expectUnknownCall(caller) { try await engine.resume(caller) }
        await Self.expectUnknownCall(caller) { try await engine.setMuted(caller, muted: true) }
        await Self.expectUnknownCall(caller) {
            try await engine.sendDTMF(caller, digits: "1", method: .rfc4733, duration: .milliseconds(160))
        }
        await Self.expectUnknownCall(caller) { try await engine.answer(caller, statusCode: 200, headers: []) }
        var afterEnd: [PJSUAEvent] = []
        for await event in engine.events(for: caller) { afterEnd.append(event) }
        #expect(afterEnd.isEmpty, "\(afterEnd)")

        // A call the far end rejects: one terminal event carrying the far end's status.
        let (rejected, _) = try await place([.ring(statusCode: 180), .reject(statusCode: 486)], events: events)
        try await events.waitForState(.disconnected, of: rejected)
        try await Task.sleep(for: .milliseconds(300))
        let rejectedStates = events.states(of: rejected)
        Self.expectLegalOrder(rejectedStates.map(\.state), from: .calling)
        #expect(rejectedStates.last?.statusCode == 486, "\(rejectedStates)")
        print("contract rejected:", rejectedStates.map { "\($0.state) \($0.statusCode) \($0.reason)" })
        #expect(rejectedStates.map(\.state) == [.calling, .early, .disconnected], "\(rejectedStates)")

        // A call the far end answers and then ends.
        let (ended, _) = try await place([.answer, .hangUp], events: events)
        try await events.waitForState(.disconnected, of: ended)
        try await Task.sleep(for: .milliseconds(300))
        Self.expectLegalOrder(events.states(of: ended).map(\.state), from: .calling)
        let endedStates = events.states(of: ended)
        print("contract far-end hangup:", endedStates.map { "\($0.state) \($0.statusCode) \($0.reason)" })
        #expect(endedStates.map(\.state) == [.calling, .connecting, .confirmed, .disconnected], "\(endedStates)")
        #expect(endedStates.last?.statusCode == 200, "\(endedStates)")

        // An incoming call the app rings and answers, then hangs up.
        let answering: Call? =
            if let incoming { incoming() } else { try await place([], events: events).callee }
        if let answering {
            try await engine.answer(answering, statusCode: 180, headers: [])
            try await engine.answer(answering, statusCode: 200, headers: [])
            try await events.waitForState(.confirmed, of: answering)
            try await engine.hangup(answering, statusCode: nil, headers: [])
            try await events.waitForState(.disconnected, of: answering)
            try await Task.sleep(for: .milliseconds(300))
            let kinds = events.log.records.filter { $0.call == answering }.map(Self.kind)
            print("contract answered incoming:", kinds)
            #expect(
                kinds == [
                    "incomingCall", "incoming(0)", "early(180)", "media(active)", "connecting(200)",
                    "confirmed(200)", "disconnected(200)",
                ], "\(kinds)")
        }

        // An incoming call (the fake's own; the engine's callee legs were checked above):
        // events(for:) replays the incoming-call event first.
        let arriving: Call? =
            if let incoming { incoming() } else { try await place([], events: events).callee }
        if let arriving {
            var replay: [PJSUAEvent] = []
            for await event in engine.events(for: arriving) {
                replay.append(event)
                if replay.count == 1 { try await engine.hangup(arriving, statusCode: 486, headers: []) }
            }
            if case .incomingCall(let payload) = replay.first {
                #expect(payload.call == arriving)
            } else {
                Issue.record("events(for:) of an incoming call did not start with it: \(replay)")
            }
            #expect(replay.compactMap(Self.state).last == .disconnected, "\(replay)")
            print("contract incoming replay:", replay.map(Self.kind))
            #expect(replay.map(Self.kind) == ["incomingCall", "incoming(0)", "disconnected(486)"], "\(replay)")
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    static func state(_ event: PJSUAEvent) -> CallState? {
        if case .callState(let change) = event { change.state } else { nil }
    }

    static func kind(_ event: PJSUAEvent) -> String {
        switch event {
        case .callState(let change): "\(change.state)(\(change.statusCode))"
        case .callMediaState(let change): "media(\(change.media.map(\.status.rawValue).joined(separator: ",")))"
        case .incomingCall: "incomingCall"
        case .dtmf(let digit): "dtmf(\(digit.digit))"
        default: "\(event)"
        }
    }

    static let rank: [CallState: Int] = [
        .null: 0, .calling: 1, .incoming: 1, .early: 2, .connecting: 3, .confirmed: 4, .disconnected: 5,
    ]

    /// States only move forward (EARLY may repeat, with a new provisional response), start
    /// with `first` and end with exactly one DISCONNECTED.
    static func expectLegalOrder(
        _ states: [CallState], from first: CallState, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(states.first == first, "\(states)", sourceLocation: sourceLocation)
        #expect(states.last == .disconnected, "\(states)", sourceLocation: sourceLocation)
        #expect(states.filter { $0 == .disconnected }.count == 1, "\(states)", sourceLocation: sourceLocation)
        for (a, b) in zip(states, states.dropFirst()) {
            let forward = (rank[b] ?? 0) > (rank[a] ?? 0) || (a == .early && b == .early)
            #expect(forward, "\(a) → \(b) in \(states)", sourceLocation: sourceLocation)
        }
    }

    static func expectUnknownCall(
        _ call: Call, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("no error for the ended \(call)", sourceLocation: sourceLocation)
        } catch let error as PJSUAUsageError {
            #expect(error == .unknownCall(call), sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error) for the ended \(call)", sourceLocation: sourceLocation)
        }
    }
}
