/// How DTMF digits travel (`pjsua_dtmf_method`).
public enum DTMFMethod: String, Sendable, Hashable, CaseIterable {
    /// RFC 4733 telephone-event packets in the RTP stream (pjsua's "RFC 2833").
    case rfc4733
    /// SIP INFO requests with an `application/dtmf-relay` body (`Signal=` and `Duration=`).
    case sipInfo
}

/// The payload of ``PJSUAEvent/dtmf(_:)``: one DTMF digit received.
public struct DTMFDigit: Sendable, Hashable {
    /// The call it arrived on.
    public var call: Call
    /// `0`–`9`, `*`, `#` or `A`–`D`.
    public var digit: Character
    /// RFC 4733 telephone-event or SIP INFO.
    public var method: DTMFMethod
    /// How long the digit lasted, as the sender reported it; `nil` when unknown.
    public var duration: Duration?

    /// Creates the payload; the engine fills it from `on_dtmf_event`.
    public init(call: Call, digit: Character, method: DTMFMethod, duration: Duration?) {
        self.call = call
        self.digit = digit
        self.method = method
        self.duration = duration
    }
}
