/// Fans engine events out to every subscriber, in one order, never dropping one.
///
/// Each subscriber gets an `AsyncStream` with an unbounded buffer: signalling events are
/// never dropped, and a slow consumer only delays itself. The hub also enforces the call
/// lifecycle contract: exactly one `disconnected` state per call, as that call's last
/// event; events for a call that already ended are discarded.
final class EventHub: Sendable {
    private enum Sink {
        case plain(AsyncStream<PJSUAEvent>.Continuation)
        case timestamped(AsyncStream<TimestampedEvent>.Continuation)

        func yield(_ event: PJSUAEvent, at instant: ContinuousClock.Instant) {
            switch self {
            case .plain(let continuation): continuation.yield(event)
            case .timestamped(let continuation): continuation.yield(TimestampedEvent(event: event, raisedAt: instant))
            }
        }

        func finish() {
            switch self {
            case .plain(let continuation): continuation.finish()
            case .timestamped(let continuation): continuation.finish()
            }
        }
    }

    private struct Subscriber {
        let sink: Sink
        /// The generation of the one call this subscriber follows, or `nil` for every event.
        /// Generations are unique in the process, so the slot is not needed to match.
        let filter: UInt64?
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var finished = false
        /// Calls seen and not yet ended, with their last known Call-ID.
        var liveCalls: [Call: String] = [:]
        /// Which calls have delivered their terminal event, in memory bounded by the call
        /// slots rather than by the calls ever made.
        var ended = EndedCalls()
        /// The events that describe each live call now, by generation, replayed to a new
        /// subscription to that call.
        var snapshots: [UInt64: CallSnapshot] = [:]
        /// The REFER each call has sent and not yet seen resolved, by call generation.
        var transfers: [UInt64: PendingTransfer] = [:]
        /// The calls in a reconnection episode (a `reconnecting` delivered, no outcome yet),
        /// by generation.
        var reconnecting: Set<UInt64> = []
    }

    /// A REFER we sent whose final ``PJSUAEvent/transferStatus(_:)`` has not been delivered.
    private struct PendingTransfer {
        var call: Call
        /// Names this REFER among every one the process sends (its Timer N carries it).
        var id: UInt64
        /// A NOTIFY of its subscription has arrived (Timer N no longer applies).
        var notified = false
    }

    /// The latest events of one live call that say what it is and where it stands.
    private struct CallSnapshot {
        var incoming: PJSUAEvent?
        var state: PJSUAEvent?
        var media: PJSUAEvent?
        /// The `reconnecting` of the episode running now, if one is.
        var reconnection: PJSUAEvent?

        var events: [PJSUAEvent] { [incoming, state, media, reconnection].compactMap { $0 } }

        mutating func record(_ event: PJSUAEvent) {
            switch event {
            case .incomingCall: incoming = event
            case .callState: state = event
            case .callMediaState: media = event
            case .reconnection(let reconnection): self.reconnection = reconnection.isReconnecting ? event : nil
            default: break
            }
        }
    }

    private let state = Protected(State())
    /// Serializes the hand-over of events to the streams, so every subscriber sees one order
    /// and a call's terminal event last, without holding `state` while yielding.
    ///
    /// Yielding to a stream resumes the task waiting on it, which takes that task's status
    /// lock; cancelling that task holds its status lock while running the stream's
    /// `onTermination`, which unregisters here and needs `state`. Yielding under `state`
    /// therefore deadlocked against a consumer's cancellation (found by the cancellation
    /// test: an event being delivered while `call(_:from:)`'s task was cancelled). Nothing
    /// that runs under a task's status lock takes `delivery`, so this order has no cycle.
    /// The value counts the events delivered. (Not `Protected<Void>`: an `inout` access to a
    /// zero-sized value points one past the object, where ThreadSanitizer then reports races
    /// against whatever object happens to be allocated next.)
    private let delivery = Protected<UInt64>(0)
    /// Calls with a lower generation were created before this hub (by an earlier run or
    /// another engine) and have ended.
    private let firstGeneration: UInt64

    init(firstGeneration: UInt64) {
        self.firstGeneration = firstGeneration
    }

    private func isFromEarlierRun(_ call: Call) -> Bool { call.generation < firstGeneration }

    /// A new subscription that sees every event from now on. It finishes when the engine
    /// shuts down.
    func subscribe() -> AsyncStream<PJSUAEvent> {
        subscribe(generation: nil)
    }

    /// A subscription to one live call that starts with the events describing it now (its
    /// ``PJSUAEvent/incomingCall(_:)`` if we received it, its latest state, its latest
    /// media state and the `reconnecting` of an episode running now, in that order) and
    /// goes on with every later event of the call, with no gap or repeat between the two.
    /// It finishes right after the call's terminal event, or at once for a call that has
    /// ended.
    func subscribe(following call: Call) -> AsyncStream<PJSUAEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PJSUAEvent.self, bufferingPolicy: .unbounded)
        let sink = Sink.plain(continuation)
        // Under `delivery`: no event is handed over between the snapshot and the registration.
        delivery.withLock { _ in
            let registered: (id: UInt64, snapshot: [PJSUAEvent])? = state.withLock { state in
                guard !state.ended.contains(call),
                    let id = Self.add(sink, filter: call.generation, to: &state, firstGeneration: firstGeneration)
                else { return nil }
                return (id, state.snapshots[call.generation]?.events ?? [])
            }
            guard let registered else {
                sink.finish()
                return
            }
            continuation.onTermination = { [weak self] _ in self?.unregister(registered.id) }
            for event in registered.snapshot { continuation.yield(event) }
        }
        return stream
    }

    /// A subscription to the call that has (or will be given) `generation`, or to every
    /// event when `nil`. Subscribing by generation before the call is placed is how a caller
    /// sees a call's every event, including a terminal one that arrives before `makeCall`
    /// returns.
    func subscribe(generation: UInt64?) -> AsyncStream<PJSUAEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PJSUAEvent.self, bufferingPolicy: .unbounded)
        if let id = register(.plain(continuation), filter: generation) {
            continuation.onTermination = { [weak self] _ in self?.unregister(id) }
        }
        return stream
    }

    /// A subscription to every event, each with the instant the engine received it.
    func subscribeTimestamped() -> AsyncStream<TimestampedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: TimestampedEvent.self, bufferingPolicy: .unbounded)
        if let id = register(.timestamped(continuation), filter: nil) {
            continuation.onTermination = { [weak self] _ in self?.unregister(id) }
        }
        return stream
    }

    /// Adds a subscriber, or finishes its sink at once (returning `nil`) when the hub has
    /// finished or the call it follows has ended.
    private func register(_ sink: Sink, filter generation: UInt64?) -> UInt64? {
        let id = state.withLock { Self.add(sink, filter: generation, to: &$0, firstGeneration: firstGeneration) }
        if id == nil { sink.finish() }
        return id
    }

    private static func add(_ sink: Sink, filter generation: UInt64?, to state: inout State, firstGeneration: UInt64)
        -> UInt64?
    {
        if state.finished { return nil }
        // A generation given here without its call is one reserved for a call about to be
        // placed (``subscribe(generation:)``): it cannot have ended yet.
        if let generation, generation < firstGeneration { return nil }
        let id = state.nextID
        state.nextID += 1
        state.subscribers[id] = Subscriber(sink: sink, filter: generation)
        return id
    }

    private func unregister(_ id: UInt64) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }

    /// Delivers `event` to every subscriber. Returns `false` when it was discarded (the
    /// hub has finished, or the event is about a call that already ended, or it is a
    /// transfer status with no REFER of that call waiting for it, or a reconnection event
    /// out of order: a `reconnecting` while the call's episode runs, an outcome with none
    /// running).
    ///
    /// Transfer statuses follow the call's pending REFER (``beginTransfer(on:id:)``): the
    /// first with a final code (200–699) or pjsua's final flag is delivered as final and
    /// resolves the REFER; later ones are discarded. A call's terminal event is preceded by
    /// a final status for a REFER still pending (``PJSUA/transferCallEndedReason``).
    @discardableResult
    func emit(_ event: PJSUAEvent) -> Bool {
        emit(event, transferID: nil)
    }

    /// `transferID`: deliver a transfer status only while that REFER is pending and no
    /// NOTIFY of it has arrived (Timer N's verdict).
    private func emit(_ event: PJSUAEvent, transferID: UInt64?) -> Bool {
        let now = ContinuousClock.now
        return delivery.withLock { delivered in
            // The bookkeeping, and who gets the events, under the state lock; the hand-over
            // to the streams after releasing it (see `delivery`).
            let batches: [(event: PJSUAEvent, all: [Sink], finishing: [Sink])]? = state.withLock { state in
                guard !state.finished else { return nil }
                var outgoing = [event]
                var isTerminal = false
                if let call = event.call {
                    if state.ended.contains(call) || isFromEarlierRun(call) { return nil }
                    if case .transferStatus(var progress) = event {
                        guard let pending = state.transfers[call.generation] else { return nil }
                        if let transferID, pending.id != transferID || pending.notified { return nil }
                        if progress.isFinal || progress.statusCode >= 200 {
                            progress.isFinal = true
                            state.transfers[call.generation] = nil
                            outgoing = [.transferStatus(progress)]
                        }
                    }
                    if case .reconnection(let reconnection) = event {
                        // One outcome per episode, and only after its `reconnecting`.
                        if reconnection.isReconnecting {
                            guard state.reconnecting.insert(call.generation).inserted else { return nil }
                        } else {
                            guard state.reconnecting.remove(call.generation) != nil else { return nil }
                        }
                    }
                    if case .callState(let change) = event {
                        if change.state.isTerminal {
                            state.reconnecting.remove(call.generation)
                            isTerminal = true
                            state.liveCalls.removeValue(forKey: call)
                            state.ended.insert(call, live: state.liveCalls.keys)
                            state.snapshots.removeValue(forKey: call.generation)
                            if state.transfers.removeValue(forKey: call.generation) != nil {
                                // RFC 3515 gives the REFER no outcome now; it gets one, before the end.
                                let unresolved = TransferProgress(
                                    call: call, statusCode: 487, reason: PJSUA.transferCallEndedReason, isFinal: true)
                                outgoing.insert(.transferStatus(unresolved), at: 0)
                            }
                        } else {
                            state.liveCalls[call] = change.sipCallID
                        }
                    } else if case .incomingCall(let incoming) = event {
                        state.liveCalls[call] = incoming.sipCallID
                    } else if state.liveCalls[call] == nil {
                        state.liveCalls[call] = ""
                    }
                    if !isTerminal { state.ended.noteLive(call, live: state.liveCalls.keys) }
                    if !isTerminal { state.snapshots[call.generation, default: CallSnapshot()].record(event) }
                }
                return outgoing.enumerated().map { index, outgoingEvent in
                    let terminal = isTerminal && index == outgoing.count - 1
                    var all: [Sink] = []
                    var finishing: [Sink] = []
                    for (id, subscriber) in state.subscribers {
                        if let filter = subscriber.filter {
                            guard filter == outgoingEvent.call?.generation else { continue }
                            all.append(subscriber.sink)
                            if terminal {
                                // Per-call subscriptions end after the terminal event.
                                finishing.append(subscriber.sink)
                                state.subscribers.removeValue(forKey: id)
                            }
                        } else {
                            all.append(subscriber.sink)
                        }
                    }
                    return (outgoingEvent, all, finishing)
                }
            }
            guard let batches else { return false }
            for batch in batches {
                delivered += 1
                for sink in batch.all { sink.yield(batch.event, at: now) }
                for sink in batch.finishing { sink.finish() }
            }
            return true
        }
    }

    // MARK: Transfers we asked for (RFC 3515)

    /// Records the REFER about to be sent on `call`. Returns `false` (recording nothing)
    /// when the call has ended or already has a REFER pending.
    func beginTransfer(on call: Call, id: UInt64) -> Bool {
        state.withLock { state in
            guard !state.finished, !state.ended.contains(call), !isFromEarlierRun(call),
                state.transfers[call.generation] == nil
            else { return false }
            state.transfers[call.generation] = PendingTransfer(call: call, id: id)
            return true
        }
    }

    /// Forgets the REFER `id` of `call`, which pjsua did not send.
    func abandonTransfer(on call: Call, id: UInt64) {
        state.withLock { state in
            if state.transfers[call.generation]?.id == id { state.transfers[call.generation] = nil }
        }
    }

    /// A NOTIFY of the pending REFER's subscription arrived: Timer N no longer applies.
    func noteTransferNotify(on call: Call) {
        state.withLock { $0.transfers[call.generation]?.notified = true }
    }

    /// Timer N of REFER `id` fired: when that REFER is still pending and no NOTIFY of it has
    /// arrived, delivers its final status, 408 with `reason`.
    func expireTransfer(id: UInt64, reason: String) {
        let call = state.withLock { $0.transfers.values.first { $0.id == id }?.call }
        guard let call else { return }
        let expired = TransferProgress(call: call, statusCode: 408, reason: reason, isFinal: true)
        _ = emit(.transferStatus(expired), transferID: id)
    }

    /// Ends a call that was never reported (the engine rejected it before any event): its
    /// later events, the terminal one included, are discarded like those of an ended call.
    func suppress(_ call: Call) {
        state.withLock { state in
            state.liveCalls.removeValue(forKey: call)
            state.ended.insert(call, live: state.liveCalls.keys)
            state.snapshots.removeValue(forKey: call.generation)
        }
    }

    /// Whether the call has delivered its terminal event.
    func hasEnded(_ call: Call) -> Bool {
        isFromEarlierRun(call) || state.withLock { $0.ended.contains(call) }
    }

    /// What the ended-call bookkeeping holds: the slots it tracks and the generations it
    /// keeps above their floors (for tests of its bound).
    var endedBookkeeping: (slots: Int, retained: Int) {
        state.withLock { ($0.ended.slotCount, $0.ended.retainedCount) }
    }

    /// Calls that have been seen and have not ended, with their Call-IDs.
    var liveCalls: [Call: String] {
        state.withLock { $0.liveCalls }
    }

    /// Delivers a terminal event that pjsua did not report, for a call that has not ended.
    /// Returns `false` (and emits nothing) when the call has already ended.
    @discardableResult
    func synthesizeEnd(of call: Call, reason: String) -> Bool {
        guard let sipCallID = state.withLock({ $0.liveCalls[call] }) else { return false }
        return emit(
            .callState(
                CallStateChange(
                    call: call, state: .disconnected, sipCallID: sipCallID, statusCode: 0, reason: reason)))
    }

    /// Like ``synthesizeEnd(of:reason:)`` for the live call with `generation`, if any (a
    /// call whose slot the caller never learned, for example when placing it failed after
    /// pjsua had reported its first state).
    @discardableResult
    func synthesizeEnd(generation: UInt64, reason: String) -> Bool {
        let call = state.withLock { $0.liveCalls.keys.first { $0.generation == generation } }
        guard let call else { return false }
        return synthesizeEnd(of: call, reason: reason)
    }

    /// Finishes every subscription; later subscriptions finish at once.
    func finish() {
        delivery.withLock { _ in
            let subscribers = state.withLock { state in
                state.finished = true
                let subscribers = state.subscribers
                state.subscribers = [:]
                return subscribers
            }
            subscribers.values.forEach { $0.sink.finish() }
        }
    }
}

/// The calls that have delivered their terminal event, kept per call slot as a floor and a
/// few generations above it, so that memory does not grow with every call ever made.
///
/// pjsua holds one call per slot at a time and gives a slot to a new call only after the
/// previous one there is gone, and generations only grow. So on each slot, once every
/// generation at or below some value that the hub has seen is ended, every generation at
/// or below it is ended (one the hub never saw held the slot before a later call did, so
/// pjsua is done with it): the floor. A generation above the floor is ended when it is in
/// the slot's small set; the set keeps only those above a call still live on that slot
/// (a terminal event can be delivered after a later call on the slot has been seen).
struct EndedCalls {
    private struct Slot {
        /// Every generation at or below it has ended.
        var floor: UInt64 = 0
        /// Ended generations above `floor`.
        var above: Set<UInt64> = []
    }

    private var slots: [Int32: Slot] = [:]

    /// How many generations are kept above the floors, over every slot (for tests).
    var retainedCount: Int { slots.values.reduce(0) { $0 + $1.above.count } }

    /// How many slots are tracked (for tests).
    var slotCount: Int { slots.count }

    func contains(_ call: Call) -> Bool {
        guard let slot = slots[call.slot] else { return false }
        return call.generation <= slot.floor || slot.above.contains(call.generation)
    }

    /// Records the terminal event of `call`; `live` are the calls not ended (`call` not among them).
    mutating func insert(_ call: Call, live: some Sequence<Call>) {
        slots[call.slot, default: Slot()].above.insert(call.generation)
        compact(call.slot, live: live)
    }

    /// A call was seen before its end: lower generations on its slot may now fold into the floor.
    mutating func noteLive(_ call: Call, live: some Sequence<Call>) {
        guard let slot = slots[call.slot], !slot.above.isEmpty else { return }
        compact(call.slot, live: live)
    }

    private mutating func compact(_ slotID: Int32, live: some Sequence<Call>) {
        guard var slot = slots[slotID] else { return }
        // The floor may rise to the highest ended generation below every live call on the slot.
        let lowestLive = live.lazy.filter { $0.slot == slotID }.map(\.generation).min() ?? .max
        if let top = slot.above.filter({ $0 < lowestLive }).max() {
            slot.floor = max(slot.floor, top)
            slot.above = slot.above.filter { $0 > slot.floor }
        }
        slots[slotID] = slot
    }
}
