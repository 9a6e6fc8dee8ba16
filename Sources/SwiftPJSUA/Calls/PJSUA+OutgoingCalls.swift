import Foundation

/// How far a call placed with ``PJSUA/call(_:from:headers:awaiting:)`` must get before the method
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

/// A call placed with ``PJSUA/call(_:from:headers:awaiting:)`` ended before it reached the awaited
/// milestone.
public struct CallFailedError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
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

    /// `<call> failed: <statusCode> <reason>`, for example `call 0#6 failed: 486 Busy Here`.
    public var description: String { "\(call) failed: \(statusCode)" + (reason.isEmpty ? "" : " \(reason)") }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// A call placed with ``PJSUA/placeCall(to:from:headers:)``: its handle and a subscription
/// to its events made before the INVITE went out.
public struct OutgoingCall: Sendable {
    /// The call's handle.
    public var call: Call
    /// Every event of the call, from ``CallState/calling`` to its one terminal
    /// (``CallState/disconnected``) state event, after which the stream finishes. Unbounded
    /// buffer: nothing is dropped, also when nobody reads for a while.
    public var events: AsyncStream<PJSUAEvent>

    /// Creates the value; the engine fills it when it places the call.
    public init(call: Call, events: AsyncStream<PJSUAEvent>) {
        self.call = call
        self.events = events
    }
}

extension PJSUA {
    // MARK: Placing calls with their events

    /// Places a call and returns it with a subscription to its events that was made before
    /// the INVITE went out — the race-free way to follow a call you place.
    ///
    /// The stream holds every state of the call, from ``CallState/calling`` to its one
    /// terminal event, even one that pjsua reports before this method returns. (Subscribing
    /// with ``events(for:)`` after ``makeCall(to:from:headers:)`` starts from the call's
    /// state at that moment instead, so it can miss the states in between.)
    ///
    /// <!-- snippet-setup:
    /// let engine = PJSUA()
    /// let account: Account = placeholder()
    /// -->
    /// ```swift
    /// let outgoing = try await engine.placeCall(
    ///     to: "sip:bob@example.com", from: account, headers: [SIPHeader(name: "X-Campaign", value: "7")])
    /// for await event in outgoing.events {
    ///     if case .callState(let change) = event { print(change.state, change.lastStatus) }
    /// }
    /// ```
    ///
    /// Runs on the engine thread; wraps `pjsua_call_make_call`.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - headers: extra headers for the INVITE, for example `X-Campaign: 7`.
    /// - Returns: the call and its events (see ``OutgoingCall/events``).
    /// - Throws: as ``makeCall(to:from:headers:)``.
    public func placeCall(to uri: String, from account: Account, headers: [SIPHeader] = []) throws -> OutgoingCall {
        let hub = try runtime().bridge.hub
        let accountSlot = try liveSlot(account)
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        try Self.validateHeaders(headers)
        let generation = nextGeneration()
        let events = hub.subscribe(generation: generation)
        do {
            let call = try Native.makeCall(to: uri, from: accountSlot, headers: headers, generation: generation)
            return OutgoingCall(call: call, events: events)
        } catch {
            // pjsua can report a first state and then fail the call without reporting its
            // end: the call's subscribers (and the global stream) still get one.
            hub.synthesizeEnd(generation: generation, reason: "placing the call failed: \(error)")
            throw error
        }
    }

    /// Places a call and returns it with its events; the former name of
    /// ``placeCall(to:from:headers:)``.
    @available(*, deprecated, renamed: "placeCall(to:from:headers:)")
    public func makeCallWithEvents(to uri: String, from account: Account) throws -> (
        call: Call, events: AsyncStream<PJSUAEvent>
    ) {
        let outgoing = try placeCall(to: uri, from: account)
        return (outgoing.call, outgoing.events)
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
    ///   - headers: extra headers for the INVITE.
    ///   - milestone: ``CallMilestone/confirmed`` (the default) or ``CallMilestone/early``.
    /// - Returns: the call, in the milestone's state or later.
    /// - Throws: ``CallFailedError`` with the final SIP status when the call ends first
    ///   (rejected, timed out, or ended by the engine's shutdown); `CancellationError` when
    ///   the task is cancelled; otherwise as ``makeCall(to:from:headers:)``.
    public func call(
        _ uri: String, from account: Account, headers: [SIPHeader] = [], awaiting milestone: CallMilestone = .confirmed
    ) async throws -> Call {
        try Task.checkCancellation()
        let outgoing = try placeCall(to: uri, from: account, headers: headers)
        let call = outgoing.call
        for await event in outgoing.events {
            guard case .callState(let change) = event else { continue }
            if change.state.isTerminal {
                throw CallFailedError(call: call, statusCode: change.lastStatus, reason: change.reason)
            }
            if milestone.isReached(by: change.state) { return call }
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
