/// The payload of ``PJSUAEvent/incomingCall(_:)``: a new call from an INVITE we received.
public struct IncomingCall: Sendable, Hashable {
    /// The account the INVITE was addressed to.
    public var account: Account
    /// The new call (its state is ``CallState/incoming``).
    public var call: Call
    /// The INVITE's Call-ID header, exactly as received.
    public var sipCallID: String
    /// The From header's display-name (unescaped) and URI.
    public var from: SIPAddress
    /// The offer contained a video stream.
    public var offeredVideo: Bool
    /// Every header of the INVITE in order, as name/value pairs (X- headers,
    /// P-Asserted-Identity…); look one up with `headers.value(of:)`.
    public var headers: [SIPHeader]
    /// The call this one replaces, when the INVITE carried a `Replaces` header for it (RFC
    /// 3891); `nil` for an ordinary INVITE. The engine answers a replacement itself with
    /// 200 (the replaced call is confirmed, or one we placed that is still ringing), so
    /// CONNECTING and CONFIRMED follow without ``PJSUA/answer(_:statusCode:headers:)`` (which
    /// throws ``PJSUAUsageError/invalidCallState(_:_:)`` for it); the app can still end it
    /// with ``PJSUA/hangup(_:statusCode:headers:)``, or refuse it beforehand with
    /// ``PJSUA/setReplaceRequestHandler(_:)``. Its ``account`` is the replaced call's.
    public var replaces: Call?

    /// Creates the payload; the engine fills it from `on_incoming_call` (or
    /// `on_call_replaced`, with `replaces`).
    public init(
        account: Account, call: Call, sipCallID: String, from: SIPAddress, offeredVideo: Bool,
        headers: [SIPHeader] = [], replaces: Call? = nil
    ) {
        self.account = account
        self.call = call
        self.sipCallID = sipCallID
        self.from = from
        self.offeredVideo = offeredVideo
        self.headers = headers
        self.replaces = replaces
    }
}

/// The payload of ``PJSUAEvent/callState(_:)``: the INVITE session's new state.
public struct CallStateChange: Sendable, Hashable {
    /// The call.
    public var call: Call
    /// Its new state.
    public var state: CallState
    /// The call's Call-ID header.
    public var sipCallID: String
    /// The last SIP status code (100–699), or 0 before any response.
    public var statusCode: Int
    /// The reason phrase of that status, or the engine's reason for an end it caused (for
    /// example ``PJSUA/mediaTimeoutReason``).
    public var reason: String

    /// Creates the payload; the engine fills it from `on_call_state`.
    public init(call: Call, state: CallState, sipCallID: String, statusCode: Int, reason: String) {
        self.call = call
        self.state = state
        self.sipCallID = sipCallID
        self.statusCode = statusCode
        self.reason = reason
    }
}
