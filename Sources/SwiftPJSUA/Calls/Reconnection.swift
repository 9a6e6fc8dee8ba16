/// A confirmed call is reconnecting, or a reconnection it went through has an outcome: the
/// call as the user sees it while the engine repairs its signalling or media path.
///
/// An episode starts with ``Phase-swift.enum/reconnecting(_:)`` and ends with exactly one
/// outcome:
/// - ``Phase-swift.enum/reconnected``: the re-INVITE the engine sent was answered with 2xx
///   (for a lost connection, with any answer that shows the peer is there) and the media it
///   negotiated is in place (its ``PJSUAEvent/callMediaState(_:)`` came before);
/// - ``Phase-swift.enum/failed(statusCode:)``: the engine gave up on the re-INVITE and the
///   call goes on with the media it had (a ``PJSUAEvent/reinviteFailed(_:)`` came before);
/// - the call's ``CallState/disconnected`` event, with the reason it has without
///   reconnection (for example ``PJSUA/transportLostReason``, or the status pjsip ended the
///   call with): no reconnection event is sent for it, and there is no separate "lost" phase.
///
/// `reconnecting` comes right after the event that causes it (a network change's
/// ``NetworkChangeProgress/Step/targetRefreshSent``, a ``PJSUAEvent/transportLoss(_:)`` with
/// ``TransportLossPolicy/reinvite``) and before the re-INVITE's outcome; a second cause while
/// an episode runs joins it (no second `reconnecting`). The engine's event hub enforces the
/// order: never `reconnected` twice in a row or without `reconnecting` before it.
public struct CallReconnection: Sendable, Hashable {
    /// Why a call is reconnecting. A struct with static values, so that new reasons break
    /// nobody's `switch`.
    public struct Reason: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The reason's name, for logs.
        public var rawValue: String
        /// Creates a reason from its name.
        /// - Parameter rawValue: the name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The engine handles a network change (``PJSUA/handleNetworkChange(_:)`` or the
        /// automatic monitor) and re-INVITEs the call with new media transports, Contact
        /// and Via (`pjsua_handle_ip_change`, then `pjsua_call_reinvite2`).
        public static let networkChange = Reason(rawValue: "network-change")
        /// The TCP or TLS connection under the call was lost and the engine re-INVITEs over
        /// a new one (``TransportLossPolicy/reinvite``, `pjsua_call_reinvite`).
        public static let transportLoss = Reason(rawValue: "transport-loss")

        /// The reason's name.
        public var description: String { rawValue }
    }

    /// Where the call's reconnection stands.
    public enum Phase: Sendable, Hashable {
        /// The engine is reconnecting the call; its outcome follows.
        case reconnecting(Reason)
        /// The call is reconnected.
        case reconnected
        /// The engine gave up reconnecting the call, which stays up with the media it had.
        /// `statusCode` is the refused re-INVITE's final status (300–699), as in the
        /// ``ReinviteFailure`` just before.
        case failed(statusCode: Int)
    }

    /// The call.
    public var call: Call
    /// The phase reached.
    public var phase: Phase

    /// Creates a report; the engine makes these (an app's tests may too).
    /// - Parameters:
    ///   - call: the call.
    ///   - phase: the phase reached.
    public init(call: Call, phase: Phase) {
        self.call = call
        self.phase = phase
    }

    /// Whether this reports the start of an episode.
    public var isReconnecting: Bool {
        if case .reconnecting = phase { true } else { false }
    }
}
