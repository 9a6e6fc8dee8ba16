/// The INVITE session state of a call (RFC 3261 dialog states as pjsip names them).
public enum CallState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Before an INVITE is sent or received.
    case null
    /// An INVITE was sent; no provisional response yet.
    case calling
    /// An INVITE was received and not yet answered.
    case incoming
    /// A provisional response (1xx with a To tag) was sent or received: an early dialog.
    case early
    /// A 2xx was sent or received; waiting for the ACK.
    case connecting
    /// The session is established (ACK sent or received).
    case confirmed
    /// The session ended. This is a call's one terminal state.
    case disconnected

    /// The case name, for logs: `confirmed`, `disconnected`.
    public var description: String { rawValue }

    /// Whether this is the terminal state.
    public var isTerminal: Bool { self == .disconnected }
}

/// Which side of the call this user agent is.
public enum CallRole: String, Sendable, Hashable {
    /// We sent the INVITE (UAC).
    case caller
    /// We received the INVITE (UAS).
    case callee
}

/// A snapshot of a call, converted from `pjsua_call_info` when it was taken.
public struct CallInfo: Sendable, Hashable {
    /// The call this snapshot describes.
    public var call: Call
    /// Whether we placed or received the call.
    public var role: CallRole
    /// The account the call belongs to; `nil` once that account has been removed.
    public var account: Account?
    /// The INVITE session state.
    public var state: CallState
    /// The SIP Call-ID header value, exactly as sent or received.
    public var sipCallID: String
    /// Our address (From for calls we place, To for calls we receive).
    public var local: SIPAddress
    /// The far end's address.
    public var remote: SIPAddress
    /// The far end's Contact URI, empty until known.
    public var remoteContact: String
    /// The last SIP status code seen on the INVITE session (100–699), 0 before any.
    public var statusCode: Int
    /// The reason phrase that came with ``statusCode``.
    public var reason: String
    /// Time since the call was confirmed (zero before).
    public var connectDuration: Duration
    /// Time since the call was created.
    public var totalDuration: Duration
    /// The call's media streams, in SDP order.
    public var media: [MediaStream]
    /// The negotiated audio codec, for example `opus/48000` or `PCMU/8000`; `nil` without audio.
    public var audioCodec: String?

    /// Creates a snapshot; the engine fills it from `pjsua_call_info`. Public so that a test
    /// double can hand an app the snapshots the engine would.
    public init(
        call: Call, role: CallRole, account: Account?, state: CallState, sipCallID: String,
        local: SIPAddress, remote: SIPAddress, remoteContact: String = "", statusCode: Int = 0,
        reason: String = "", connectDuration: Duration = .zero, totalDuration: Duration = .zero,
        media: [MediaStream] = [], audioCodec: String? = nil
    ) {
        self.call = call
        self.role = role
        self.account = account
        self.state = state
        self.sipCallID = sipCallID
        self.local = local
        self.remote = remote
        self.remoteContact = remoteContact
        self.statusCode = statusCode
        self.reason = reason
        self.connectDuration = connectDuration
        self.totalDuration = totalDuration
        self.media = media
        self.audioCodec = audioCodec
    }
}
