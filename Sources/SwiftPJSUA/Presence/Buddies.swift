/// A handle to one buddy: a URI whose presence (RFC 3856) or dialog state (RFC 4235) the
/// engine watches.
///
/// pjsua reuses buddy slots (`pjsua_buddy_id`). Like ``Call``, a `Buddy` pairs the slot with
/// a process-wide generation, so a handle kept after ``PJSUA/removeBuddy(_:)`` (or across a
/// restart of the engine) never acts on a newer buddy in the same slot: operations on it
/// throw ``PJSUAUsageError/unknownBuddy(_:)``.
public struct Buddy: Hashable, Sendable, CustomStringConvertible {
    /// The pjsua buddy slot (`pjsua_buddy_id`).
    public let slot: Int32
    /// A process-wide counter value given to the buddy when it was added.
    public let generation: UInt64

    /// Creates a handle; handles come from ``PJSUA/addBuddy(_:subscribesToPresence:watchesDialogs:account:)``.
    public init(slot: Int32, generation: UInt64) {
        self.slot = slot
        self.generation = generation
    }

    /// The slot and generation, for logs: `buddy 0#12`.
    public var description: String { "buddy \(slot)#\(generation)" }
}

/// What a presence document says about availability, in the words RFC 4480 (RPID) and the
/// PIDF basic status (RFC 3863) give: open (online), closed (offline), and the activities
/// pjsip knows (busy, away). Other values may be added; compare with the static values.
public struct Availability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The name: `online`, `offline`, `busy`, `away` or `unknown`.
    public let rawValue: String

    /// Creates a value from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Basic status `open` with no activity the engine knows.
    public static let online = Availability(rawValue: "online")
    /// Basic status `closed`.
    public static let offline = Availability(rawValue: "offline")
    /// Basic status `open` with the RPID activity `busy` (RFC 4480 §3.2, for instance in a call).
    public static let busy = Availability(rawValue: "busy")
    /// Basic status `open` with the RPID activity `away`.
    public static let away = Availability(rawValue: "away")
    /// No presence known yet, or a document the engine could not read.
    public static let unknown = Availability(rawValue: "unknown")

    /// The name.
    public var description: String { rawValue }
}

/// A presence status: what a buddy's NOTIFY said, or what an account tells its watchers.
public struct PresenceStatus: Hashable, Sendable, CustomStringConvertible {
    /// Online, offline, busy, away, or unknown.
    public var availability: Availability
    /// The free-text note (the PIDF/RPID `note`), empty when there is none.
    public var note: String

    /// Creates a status.
    /// - Parameters:
    ///   - availability: the availability.
    ///   - note: a note for people to read, such as `"In a meeting"`.
    public init(_ availability: Availability, note: String = "") {
        self.availability = availability
        self.note = note
    }

    /// `busy ("In a call")`, or the availability alone without a note.
    public var description: String { note.isEmpty ? availability.rawValue : "\(availability) (\"\(note)\")" }
}

/// The state of a subscription (RFC 6665 §4.1.3 `Subscription-State`), with the details its
/// end gave.
public struct SubscriptionState: Hashable, Sendable, CustomStringConvertible {
    /// Where the subscription is. New values may be added; a `switch` should have a `default`.
    public struct Phase: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The name: `idle`, `sent`, `accepted`, `pending`, `active`, `terminated`, `unknown`.
        public let rawValue: String
        /// Creates a phase from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No subscription (not subscribed, or not yet started).
        public static let idle = Phase(rawValue: "idle")
        /// The SUBSCRIBE was sent; no answer yet.
        public static let sent = Phase(rawValue: "sent")
        /// The SUBSCRIBE got a 2xx; no NOTIFY yet.
        public static let accepted = Phase(rawValue: "accepted")
        /// A NOTIFY said `pending`: the notifier has not decided whether to authorize it.
        public static let pending = Phase(rawValue: "pending")
        /// A NOTIFY said `active`: the subscription is authorized.
        public static let active = Phase(rawValue: "active")
        /// It ended: refused, timed out, or a NOTIFY said `terminated`.
        public static let terminated = Phase(rawValue: "terminated")
        /// A state pjsip does not name.
        public static let unknown = Phase(rawValue: "unknown")

        /// The name.
        public var description: String { rawValue }
    }

    /// Where the subscription is.
    public var phase: Phase
    /// The reason it ended, when it ended with one: the `reason` parameter of a terminated
    /// `Subscription-State` (`deactivated`, `probation`, `rejected`, `timeout`, `giveup`,
    /// `noresource`), or the reason phrase of the response that ended it. `nil` otherwise.
    public var reason: String?
    /// The SIP status (300–699) of the response that ended it (a refused SUBSCRIBE, a 481 to
    /// a refresh), when one did; `nil` otherwise.
    public var statusCode: Int?
    /// How long the notifier asked to wait before subscribing again (`retry-after`), when
    /// the NOTIFY that ended it said so. pjsua resubscribes by itself after that time.
    public var retryAfter: Duration?

    /// Creates a state.
    public init(_ phase: Phase, reason: String? = nil, statusCode: Int? = nil, retryAfter: Duration? = nil) {
        self.phase = phase
        self.reason = reason
        self.statusCode = statusCode
        self.retryAfter = retryAfter
    }

    /// `terminated;reason=probation;retry-after=5` style text.
    public var description: String {
        var text = phase.rawValue
        if let reason { text += ";reason=\(reason)" }
        if let statusCode { text += ";status=\(statusCode)" }
        if let retryAfter { text += ";retry-after=\(retryAfter.components.seconds)" }
        return text
    }
}

/// A change of a buddy's presence subscription or of the presence it reported.
public struct BuddyPresence: Hashable, Sendable {
    /// The buddy.
    public var buddy: Buddy
    /// The buddy's URI as it was added.
    public var uri: String
    /// The presence subscription's state.
    public var subscription: SubscriptionState
    /// The presence the last NOTIFY gave (``Availability/unknown`` before the first, after
    /// the subscription ended, or for a body the engine could not read).
    public var status: PresenceStatus

    /// Creates the payload; the engine fills it from `pjsua_buddy_get_info`.
    public init(buddy: Buddy, uri: String, subscription: SubscriptionState, status: PresenceStatus) {
        self.buddy = buddy
        self.uri = uri
        self.subscription = subscription
        self.status = status
    }
}

/// The state of a dialog (RFC 4235 §3.7.1), as a busy lamp shows it. New values may be
/// added; compare with the static values.
public struct DialogState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The name, as the `state` element gives it: `trying`, `proceeding`, `early`,
    /// `confirmed`, `terminated`; empty when the document has no dialog.
    public let rawValue: String
    /// Creates a value from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An INVITE was sent, nothing answered yet.
    public static let trying = DialogState(rawValue: "trying")
    /// A provisional response without a To tag.
    public static let proceeding = DialogState(rawValue: "proceeding")
    /// Ringing: a provisional response with a To tag.
    public static let early = DialogState(rawValue: "early")
    /// Answered: the call is up.
    public static let confirmed = DialogState(rawValue: "confirmed")
    /// Ended.
    public static let terminated = DialogState(rawValue: "terminated")

    /// The name.
    public var description: String { rawValue }
}

/// A dialog-event NOTIFY (RFC 4235) for a buddy the engine watches for dialogs, or a change
/// of that subscription.
public struct BuddyDialogs: Hashable, Sendable {
    /// The buddy.
    public var buddy: Buddy
    /// The buddy's URI as it was added.
    public var uri: String
    /// The dialog-event subscription's state.
    public var subscription: SubscriptionState
    /// The state of the dialog the last NOTIFY described; `nil` when it described none
    /// (the buddy is idle) or none has arrived.
    public var state: DialogState?
    /// The dialog's `id` attribute, `nil` without a dialog.
    public var dialogID: String?
    /// `initiator` (the buddy called) or `recipient` (the buddy was called), when given.
    public var direction: String?
    /// The Call-ID of the buddy's dialog, when the notifier gave it.
    public var callID: String?
    /// The other party's identity URI, when the notifier gave it.
    public var remoteIdentity: String?

    /// Creates the payload; the engine fills it from `pjsua_buddy_get_dlg_event_info`.
    public init(
        buddy: Buddy, uri: String, subscription: SubscriptionState, state: DialogState? = nil,
        dialogID: String? = nil, direction: String? = nil, callID: String? = nil, remoteIdentity: String? = nil
    ) {
        self.buddy = buddy
        self.uri = uri
        self.subscription = subscription
        self.state = state
        self.dialogID = dialogID
        self.direction = direction
        self.callID = callID
        self.remoteIdentity = remoteIdentity
    }
}

/// What ``PJSUA/buddyEvents`` delivers. New kinds are added as new cases with struct
/// payloads; a `switch` over it should have a `default`.
public enum BuddyEvent: Hashable, Sendable {
    /// The presence subscription or the buddy's presence changed.
    case presence(BuddyPresence)
    /// The dialog-event subscription or the buddy's dialog state changed.
    case dialogs(BuddyDialogs)
}
