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
