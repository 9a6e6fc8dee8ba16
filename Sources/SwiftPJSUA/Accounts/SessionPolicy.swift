/// Whether an account's calls use reliable provisional responses (`100rel`, RFC 3262): 18x
/// responses retransmitted until the caller acknowledges them with PRACK.
///
/// A struct with static values, so that new policies break nobody's `switch`. Set on
/// ``AccountConfiguration/reliableProvisionals``.
public struct ReliableProvisionalPolicy: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The policy's name, for logs.
    public var rawValue: String
    /// Creates a policy from its name; only the static values below mean anything to the
    /// engine: ``PJSUA/addAccount(_:)`` throws ``PJSUAUsageError/invalidConfiguration(_:)`` for
    /// any other.
    /// - Parameter rawValue: the name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Leave `100rel` out of the `Supported` header of the account's INVITEs and of its answers
    /// (18x, 2xx), so that a peer never sends reliable provisionals on the account's outgoing
    /// calls. pjsua still supports `100rel` as a UAS: an incoming INVITE that *requires* it
    /// (`Require: 100rel`) still gets reliable provisionals rather than 420.
    public static let off = ReliableProvisionalPolicy(rawValue: "off")
    /// The default: advertise `Supported: 100rel`; use reliable provisionals when the peer
    /// asks for them (`pjsua_acc_config.require_100rel` = `PJSUA_100REL_NOT_USED`).
    public static let supported = ReliableProvisionalPolicy(rawValue: "supported")
    /// Send `Require: 100rel` in the account's INVITEs and send every 18x of its incoming calls
    /// reliably (`PJSUA_100REL_MANDATORY`). A peer that does not support 100rel rejects the
    /// INVITE with 420 Bad Extension, and the call ends with that status; an incoming INVITE
    /// without `Supported: 100rel` is answered 421 Extension Required.
    public static let required = ReliableProvisionalPolicy(rawValue: "required")

    /// The policy's name.
    public var description: String { rawValue }
}

/// Session timers (RFC 4028) for an account's calls: how long a confirmed call's session lasts
/// without a refresh (`Session-Expires`), the shortest interval the account accepts (`Min-SE`),
/// and whether the extension is used at all.
///
/// The refresher (the side that sends the refreshes, re-INVITE or, when the peer allows it,
/// UPDATE) sends one at half the interval; the other side ends the call when no refresh came
/// by the interval less a third (at most 32 s). pjsua offers no choice of refresher: the UAS
/// names it in its 2xx (`refresher=uac` or `uas`), and pjsip as the UAS names the caller when
/// the caller supports session timers, itself otherwise. The shortest interval pjsip allows is
/// 90 s (``minimumAllowedInterval``), so the first refresh comes 45 s into a call at the
/// soonest. A refresh the peer answers 481 or 408 ends the call with the reason
/// ``PJSUA/sessionRefreshFailedReason``.
///
/// Wraps `pjsua_acc_config.use_timer` and `timer_setting`.
public struct SessionTimers: Sendable, Hashable {
    /// Whether session timers are used. A struct with static values, so that new modes break
    /// nobody's `switch`.
    public struct Mode: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The mode's name, for logs.
        public var rawValue: String
        /// Creates a mode from its name; only the static values below mean anything to the
        /// engine: ``PJSUA/addAccount(_:)`` throws ``PJSUAUsageError/invalidConfiguration(_:)``
        /// for any other.
        /// - Parameter rawValue: the name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Not used (`PJSUA_SIP_TIMER_INACTIVE`): no `Session-Expires`, and `timer` is left out of
        /// the `Supported` header of the account's INVITEs and answers (pjsua advertises it for
        /// every account, so a peer could pick us as a refresher that never refreshes). An
        /// incoming INVITE that requires timers (`Require: timer`) still gets them: pjsua
        /// honours the requirement.
        public static let off = Mode(rawValue: "off")
        /// The default: advertised in `Supported` and used when the peer uses them too
        /// (`PJSUA_SIP_TIMER_OPTIONAL`).
        public static let optional = Mode(rawValue: "optional")
        /// Required: `Require: timer` in the account's INVITEs, and an incoming INVITE without
        /// `Supported: timer` is answered 421 Extension Required (`PJSUA_SIP_TIMER_REQUIRED`).
        public static let required = Mode(rawValue: "required")
        /// Always used, even when the peer does not support them: the engine then refreshes
        /// the session itself (`PJSUA_SIP_TIMER_ALWAYS`).
        public static let always = Mode(rawValue: "always")

        /// The mode's name.
        public var description: String { rawValue }
    }

    /// The shortest `Min-SE` (and so session interval) pjsip accepts, 90 s (RFC 4028 §4).
    public static let minimumAllowedInterval: Duration = .seconds(90)
    /// The longest interval the engine accepts, one day.
    public static let maximumInterval: Duration = .seconds(86_400)

    /// Whether session timers are used; ``Mode-swift.struct/optional`` by default.
    public var mode: Mode
    /// The session interval the account asks for (`Session-Expires`), in whole seconds; 1800 s
    /// by default. From ``minimumInterval`` up to ``maximumInterval``.
    public var interval: Duration
    /// The shortest interval the account accepts from a peer (`Min-SE`), in whole seconds; an
    /// incoming INVITE asking for less is answered 422 with this value. 90 s by default, at
    /// least ``minimumAllowedInterval``. When a peer answers the account's INVITE with 422 and
    /// a larger `Min-SE`, pjsip sends the INVITE again with the peer's value as both interval
    /// and `Min-SE`.
    public var minimumInterval: Duration

    /// Creates a session-timer policy.
    /// - Parameters:
    ///   - mode: whether session timers are used.
    ///   - interval: the `Session-Expires` asked for, whole seconds.
    ///   - minimumInterval: the `Min-SE` accepted, whole seconds, at least 90 s.
    public init(mode: Mode = .optional, interval: Duration = .seconds(1800), minimumInterval: Duration = .seconds(90)) {
        self.mode = mode
        self.interval = interval
        self.minimumInterval = minimumInterval
    }

    /// The default: optional, 1800 s, `Min-SE` 90 s (pjsua's own defaults).
    public static let `default` = SessionTimers()
    /// No session timers.
    public static let off = SessionTimers(mode: .off)

    /// Checks the RFC 4028 limits. Throws ``PJSUAUsageError/invalidConfiguration(_:)``.
    func validate() throws(PJSUAUsageError) {
        guard [Mode.off, .optional, .required, .always].contains(mode) else {
            throw .invalidConfiguration("sessionTimers.mode \(mode) is not off, optional, required or always")
        }
        func isWholeSeconds(_ value: Duration) -> Bool { value.components.attoseconds == 0 }
        guard isWholeSeconds(interval), isWholeSeconds(minimumInterval) else {
            throw .invalidConfiguration("sessionTimers.interval and minimumInterval must be whole seconds")
        }
        guard minimumInterval >= Self.minimumAllowedInterval else {
            throw .invalidConfiguration("sessionTimers.minimumInterval (Min-SE) must be at least 90 s (RFC 4028 §4)")
        }
        guard interval >= minimumInterval else {
            throw .invalidConfiguration("sessionTimers.interval (Session-Expires) must be at least minimumInterval")
        }
        guard interval <= Self.maximumInterval else {
            throw .invalidConfiguration("sessionTimers.interval must be at most 1 day")
        }
    }
}

extension ReliableProvisionalPolicy {
    /// Throws ``PJSUAUsageError/invalidConfiguration(_:)`` for a name the engine does not know.
    func validate() throws(PJSUAUsageError) {
        guard [Self.off, .supported, .required].contains(self) else {
            throw .invalidConfiguration("reliableProvisionals \(self) is not off, supported or required")
        }
    }
}
