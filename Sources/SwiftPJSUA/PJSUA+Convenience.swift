/// How far a call placed with ``PJSUA/call(_:from:awaiting:)`` must get before the method
/// returns.
public enum CallMilestone: Sendable, Hashable {
    /// A provisional response with a To tag (``CallState/early``) or anything later.
    case early
    /// The session is established (``CallState/confirmed``): the far end answered.
    case confirmed

    func isReached(by state: CallState) -> Bool {
        switch self {
        case .early: [.early, .connecting, .confirmed].contains(state)
        case .confirmed: state == .confirmed
        }
    }
}

/// A call placed with ``PJSUA/call(_:from:awaiting:)`` ended before it reached the awaited
/// milestone.
public struct CallFailedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that ended (its handle is stale now).
    public var call: Call
    /// The last SIP status of the call (300–699 for a rejection such as 486, 408 when the
    /// far end never answered), or 0 when the engine ended the call without a response
    /// (for example at shutdown).
    public var statusCode: Int
    /// The reason phrase of ``statusCode``, or the engine's reason for a synthesized end.
    public var reason: String

    /// Creates the error; the engine fills it from the call's terminal event.
    public init(call: Call, statusCode: Int, reason: String) {
        self.call = call
        self.statusCode = statusCode
        self.reason = reason
    }

    public var description: String { "\(call) failed: \(statusCode) \(reason)" }
}

extension PJSUA {
    // MARK: Convenience

    /// Places a call and returns it with a subscription to its events that was made
    /// before the INVITE went out, so it holds every state of the call, from
    /// ``CallState/calling`` to its one terminal event, even one that pjsua reports before
    /// this method returns. Subscribing with ``events(for:)`` after ``makeCall(to:from:)``
    /// can miss those early events.
    ///
    /// Wraps `pjsua_call_make_call`.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    /// - Returns: the call and its events; the stream finishes right after the terminal
    ///   event (unbounded buffer, nothing dropped).
    /// - Throws: as ``makeCall(to:from:)``.
    public func makeCallWithEvents(
        to uri: String, from account: Account
    ) throws -> (call: Call, events: AsyncStream<PJSUAEvent>) {
        let hub = try runtime().bridge.hub
        let accountSlot = try liveSlot(account)
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        let generation = nextGeneration()
        let events = hub.subscribe(generation: generation)
        do {
            let call = try Native.makeCall(to: uri, from: accountSlot, generation: generation)
            return (call, events)
        } catch {
            // pjsua can report a first state and then fail the call without reporting its
            // end: the call's subscribers (and the global stream) still get one.
            hub.synthesizeEnd(generation: generation, reason: "placing the call failed: \(error)")
            throw error
        }
    }

    /// Places a call and waits until it reaches `milestone`.
    ///
    /// If the task awaiting this method is cancelled before then, the call is hung up
    /// (CANCEL, or ACK and BYE should the far end answer at the same moment) and the
    /// method throws `CancellationError`. The engine is never held while waiting: other
    /// engine methods run meanwhile.
    ///
    /// Wraps `pjsua_call_make_call` (and `pjsua_call_hangup` on cancellation).
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - milestone: ``CallMilestone/confirmed`` (the default) or ``CallMilestone/early``.
    /// - Returns: the call, in the milestone's state or later.
    /// - Throws: ``CallFailedError`` with the final SIP status when the call ends first
    ///   (rejected, timed out, or ended by the engine's shutdown); `CancellationError` when
    ///   the task is cancelled; otherwise as ``makeCall(to:from:)``.
    public func call(_ uri: String, from account: Account, awaiting milestone: CallMilestone = .confirmed)
        async throws -> Call
    {
        try Task.checkCancellation()
        let (call, events) = try makeCallWithEvents(to: uri, from: account)
        for await event in events {
            guard case .callState(_, let state, _, let status, let reason) = event else { continue }
            if state.isTerminal { throw CallFailedError(call: call, statusCode: status, reason: reason) }
            if milestone.isReached(by: state) { return call }
        }
        // The stream ended without a terminal event: the task was cancelled (a finished
        // engine delivers the terminal event before finishing streams).
        if Task.isCancelled {
            // Throws unknownCall when the call ended meanwhile: nothing left to hang up.
            try? hangup(call)
            throw CancellationError()
        }
        throw CallFailedError(call: call, statusCode: 0, reason: Self.engineShutDownReason)
    }
}
