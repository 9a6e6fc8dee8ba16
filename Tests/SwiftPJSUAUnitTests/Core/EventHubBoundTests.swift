import Testing

@testable import SwiftPJSUA

/// The hub's memory for ended calls is bounded by the call slots, and the lifecycle
/// contract (one terminal event per call, nothing after it) still holds.
@Suite("Event hub: ended-call bookkeeping")
struct EventHubBoundTests {
    private static func state(_ call: Call, _ state: CallState, status: Int = 200) -> PJSUAEvent {
        .callState(
            CallStateChange(
                call: call, state: state, sipCallID: "c\(call.generation)@h", statusCode: status, reason: ""))
    }

    /// Counts, per generation, the terminal events a subscriber got and the events after one.
    private static func audit(_ events: [PJSUAEvent]) -> (terminals: [UInt64: Int], afterEnd: Int) {
        var terminals: [UInt64: Int] = [:]
        var afterEnd = 0
        for event in events {
            guard let call = event.call else { continue }
            if terminals[call.generation] != nil { afterEnd += 1 }
            if case .callState(let change) = event, change.state.isTerminal {
                terminals[call.generation, default: 0] += 1
            }
        }
        return (terminals, afterEnd)
    }

    @Test("20 000 calls over 4 slots: one terminal event each, late events dropped, bookkeeping stays at the slots")
    func twentyThousandCalls() async {
        let hub = EventHub(firstGeneration: 1)
        let stream = hub.subscribe()
        var generation: UInt64 = 1
        var largest = (slots: 0, retained: 0)
        for index in 0..<20_000 {
            let call = Call(slot: Int32(index % 4), generation: generation)
            generation += 1
            hub.emit(Self.state(call, .calling, status: 0))
            hub.emit(Self.state(call, .confirmed))
            #expect(hub.emit(Self.state(call, .disconnected)))
            // A second end and a late state change are discarded, now and after many more calls.
            #expect(!hub.emit(Self.state(call, .disconnected)))
            #expect(!hub.emit(Self.state(call, .confirmed)))
            #expect(hub.hasEnded(call))
            let now = hub.endedBookkeeping
            largest = (max(largest.slots, now.slots), max(largest.retained, now.retained))
        }
        // The first call's slot has been reused 4 999 times since: it is still ended.
        let first = Call(slot: 0, generation: 1)
        #expect(hub.hasEnded(first))
        #expect(!hub.emit(Self.state(first, .disconnected)))
        #expect(hub.liveCalls.isEmpty)
        hub.finish()
        var events: [PJSUAEvent] = []
        for await event in stream { events.append(event) }
        let (terminals, afterEnd) = Self.audit(events)
        #expect(events.count == 60_000)
        #expect(terminals.count == 20_000)
        #expect(terminals.values.allSatisfy { $0 == 1 })
        #expect(afterEnd == 0)
        // At most one generation per slot above its floor at any time; four slots.
        #expect(largest.slots == 4)
        #expect(largest.retained <= 4, "\(largest)")
        #expect(hub.endedBookkeeping.retained == 0)
    }

    @Test("A terminal event after a later call on the same slot was seen is delivered once, then both are ended")
    func endAfterSlotReuse() async {
        let hub = EventHub(firstGeneration: 1)
        let stream = hub.subscribe()
        let older = Call(slot: 2, generation: 10)
        let newer = Call(slot: 2, generation: 11)
        hub.emit(Self.state(older, .confirmed))
        hub.emit(Self.state(newer, .calling, status: 0))
        #expect(hub.emit(Self.state(newer, .disconnected)))
        // The newer call ended first: the older one is still live, and not ended by the floor.
        #expect(!hub.hasEnded(older))
        #expect(hub.hasEnded(newer))
        #expect(hub.endedBookkeeping.retained == 1)
        #expect(hub.emit(Self.state(older, .disconnected)))
        #expect(!hub.emit(Self.state(older, .disconnected)))
        #expect(hub.hasEnded(older))
        #expect(hub.endedBookkeeping.retained == 0)
        // A generation below the floor that the hub never saw held the slot earlier: ended.
        #expect(hub.hasEnded(Call(slot: 2, generation: 9)))
        // The same generation numbers on another slot are not ended (no history there).
        #expect(!hub.hasEnded(Call(slot: 3, generation: 12)))
        hub.finish()
        var events: [PJSUAEvent] = []
        for await event in stream { events.append(event) }
        let (terminals, afterEnd) = Self.audit(events)
        #expect(terminals == [10: 1, 11: 1])
        #expect(afterEnd == 0)
    }

    @Test("A subscription to an ended call finishes at once, also once its generation is under the floor")
    func subscriptionToEndedCall() async {
        let hub = EventHub(firstGeneration: 1)
        let first = Call(slot: 0, generation: 1)
        hub.emit(Self.state(first, .confirmed))
        hub.emit(Self.state(first, .disconnected))
        for generation in UInt64(2)...50 {
            let call = Call(slot: 0, generation: generation)
            hub.emit(Self.state(call, .calling, status: 0))
            hub.emit(Self.state(call, .disconnected))
        }
        var seen = 0
        for await _ in hub.subscribe(following: first) { seen += 1 }
        #expect(seen == 0)
        hub.finish()
    }
}
