/// What the engine does with a confirmed call when the TCP or TLS connection its SIP
/// messages went over closes or fails (pjsip reports `PJSIP_TP_STATE_DISCONNECTED`).
///
/// A connection can close for two very different reasons: the peer is gone (its process
/// died, its host went away), or the peer or a proxy closed an idle connection on purpose
/// (RFC 3261 §18 lets either side do so; pjsip itself closes a connection it opened after
/// 33 s without a transaction, and Kamailio after its `tcp_connection_lifetime`). The
/// engine cannot tell them apart from the close alone, so the default asks the peer:
/// ``reinvite``, which keeps a call whose peer answers and ends one whose peer is gone.
public enum TransportLossPolicy: String, Sendable, Hashable, CaseIterable {
    /// End the call at once: BYE (pjsip opens a new connection for it) and a
    /// ``CallState/disconnected`` event with the reason ``PJSUA/transportLostReason``. Right
    /// when a closed connection means a vanished peer, as with a proxy that keeps its
    /// connections open (a registered account refreshes its own).
    case endCall
    /// The default. Keep the call and send a re-INVITE with the same offer (`pjsua_call_reinvite`), which
    /// pjsip sends over a new connection to the peer's Contact (or route). If it cannot be
    /// sent, or fails without a live peer behind it (408, 481, or a timeout or transport
    /// error pjsip reports itself), the call ends with the reason
    /// ``PJSUA/transportLostReason``; any other answer (2xx, or an error response such as
    /// 488 or 491) shows the peer is there and the call goes on.
    case reinvite
}

/// A confirmed call's audio stream received no RTP for the account's
/// ``AccountConfiguration/mediaInactivityTimeout``; the engine has sent BYE and reports the
/// call ``CallState/disconnected`` with the reason ``PJSUA/mediaTimeoutReason`` right after
/// this event.
public struct MediaInactivity: Sendable, Hashable {
    /// The call that was ended.
    public var call: Call
    /// The index of the silent audio stream's `m=` line in the SDP, from 0.
    public var mediaIndex: Int
    /// The configured timeout that was exceeded.
    public var timeout: Duration
    /// How long the engine saw the stream's received-packet count stand still: at least
    /// ``timeout``, at most ``timeout`` plus two of the engine's checks (half a second each).
    public var silence: Duration
    /// RTP packets received on the stream before it fell silent (pjmedia's RTCP counter; a
    /// renegotiated stream starts again from 0).
    public var packetsReceived: UInt64

    /// Creates a report; the engine makes these (an app's tests may too).
    public init(call: Call, mediaIndex: Int, timeout: Duration, silence: Duration, packetsReceived: UInt64) {
        self.call = call
        self.mediaIndex = mediaIndex
        self.timeout = timeout
        self.silence = silence
        self.packetsReceived = packetsReceived
    }
}

/// The TCP or TLS connection a confirmed call's SIP messages last went over closed or failed
/// (`on_transport_state` with `PJSIP_TP_STATE_DISCONNECTED`).
public struct TransportLoss: Sendable, Hashable {
    /// The call that used the connection.
    public var call: Call
    /// The connection, as `TYPE local->remote`, for example `TCP 127.0.0.1:5060->127.0.0.1:40112`.
    public var connection: String
    /// pjsip's description of why it closed, for example `End of file (PJ_EEOF)` when the
    /// peer closed it, or a socket error.
    public var reason: String
    /// What the engine does about it: end the call, or re-INVITE over a new connection.
    public var action: TransportLossPolicy

    /// Creates a report; the engine makes these (an app's tests may too).
    public init(call: Call, connection: String, reason: String, action: TransportLossPolicy) {
        self.call = call
        self.connection = connection
        self.reason = reason
        self.action = action
    }
}
