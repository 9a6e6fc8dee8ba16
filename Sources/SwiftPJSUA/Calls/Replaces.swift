/// An INVITE with a `Replaces` header (RFC 3891) for one of our calls, as the replace
/// request handler sees it before the engine answers.
public struct ReplaceRequest: Sendable, Hashable {
    /// The call the INVITE asks to replace (confirmed, or early).
    public var call: Call
    /// The new INVITE's Call-ID.
    public var sipCallID: String
    /// The new INVITE's From header: who takes the call over.
    public var from: SIPAddress
    /// Every header of the new INVITE in order (the `Replaces` header among them).
    public var headers: [SIPHeader]

    /// Creates a request; the engine makes one for each INVITE with `Replaces`.
    public init(call: Call, sipCallID: String, from: SIPAddress, headers: [SIPHeader] = []) {
        self.call = call
        self.sipCallID = sipCallID
        self.from = from
        self.headers = headers
    }
}

/// What the engine does with an INVITE with `Replaces` for one of our calls.
public enum ReplaceDecision: Sendable, Hashable {
    /// Take the new call in place of the old one: answer it as the old call was answered
    /// and end the old call.
    case accept
    /// Answer the new INVITE with a final error response (400–699, for example 603 or 486;
    /// a code outside that range is clamped into it);
    /// the old call stays as it was.
    case reject(statusCode: Int)
}

/// The payload of ``PJSUAEvent/callReplaced(_:)``: a call replaced by another (RFC 3891).
public struct CallReplacement: Sendable, Hashable {
    /// The replaced call; it ends next.
    public var call: Call
    /// The new call that takes its place (reported by ``PJSUAEvent/incomingCall(_:)`` with
    /// ``IncomingCall/replaces`` set to ``call``).
    public var replacement: Call

    /// Creates the payload; the engine fills it from `on_call_replaced`.
    public init(call: Call, replacement: Call) {
        self.call = call
        self.replacement = replacement
    }
}
