import CPJSUAShim

/// The streams of ``PJSUA/buddyEvents``, process-wide like pjsua.
enum PresenceStreams {
    /// Reports only: nothing is refused without a reader.
    static let buddies = Consumers<BuddyEvent> { _ in }
}

extension Native {
    static var dialogEventSupported: Bool { cpj_dialog_event_supported() != 0 }
    static var buddyAccountSupported: Bool { cpj_buddy_account_supported() != 0 }

    /// `pjsua_buddy_add` with a new generation as the buddy's user data.
    static func addBuddy(_ uri: String, presence: Bool, dialogs: Bool, account: Int32) throws(PJSUAError) -> Buddy {
        let generation = nextGeneration()
        var slot = pjsua_buddy_id(-1)
        let status = PJ.withPJString(uri) { target in
            var target = target
            return cpj_buddy_add(
                &target, presence ? 1 : 0, dialogs ? 1 : 0, account,
                UnsafeMutableRawPointer(bitPattern: UInt(generation)), &slot)
        }
        try PJ.check(status, "pjsua_buddy_add", subject: uri)
        return Buddy(slot: slot, generation: generation)
    }

    static func deleteBuddy(_ slot: pjsua_buddy_id) -> pj_status_t { pjsua_buddy_del(slot) }

    static func subscribePresence(_ slot: pjsua_buddy_id, _ subscribes: Bool) throws(PJSUAError) {
        try PJ.check(pjsua_buddy_subscribe_pres(slot, subscribes ? 1 : 0), "pjsua_buddy_subscribe_pres")
    }

    static func subscribeDialogs(_ slot: pjsua_buddy_id, _ subscribes: Bool) throws(PJSUAError) {
        try PJ.check(cpj_buddy_subscribe_dialog(slot, subscribes ? 1 : 0), "pjsua_buddy_subscribe_dlg_event")
    }

    /// The slot of `buddy` if it still names that buddy.
    static func liveSlot(_ buddy: Buddy) -> pjsua_buddy_id? {
        let stored = UInt(bitPattern: cpj_buddy_user_data_if_valid(buddy.slot))
        return stored != 0 && UInt64(stored) == buddy.generation ? buddy.slot : nil
    }

    /// The handle of the buddy in `slot`, `nil` for a slot without one of the engine's buddies.
    static func buddyHandle(_ slot: pjsua_buddy_id) -> Buddy? {
        let stored = UInt(bitPattern: cpj_buddy_user_data_if_valid(slot))
        return stored == 0 ? nil : Buddy(slot: slot, generation: UInt64(stored))
    }

    /// `pjsua_acc_set_online_status2` with an RPID person element for busy and away.
    static func setOnlineStatus(_ account: pjsua_acc_id, _ status: PresenceStatus) throws(PJSUAError) {
        let scope = StringScope()
        var element = pjrpid_element()
        element.type = PJRPID_ELEMENT_TYPE_PERSON
        element.id = scope.pj("")
        switch status.availability {
        case .busy: element.activity = PJRPID_ACTIVITY_BUSY
        case .away: element.activity = PJRPID_ACTIVITY_AWAY
        default: element.activity = PJRPID_ACTIVITY_UNKNOWN
        }
        element.note = scope.pj(status.note)
        let online = [.online, .busy, .away].contains(status.availability)
        // pjsua copies the element into the account's pool.
        try PJ.check(pjsua_acc_set_online_status2(account, online ? 1 : 0, &element), "pjsua_acc_set_online_status2")
    }

    static func subscriptionPhase(_ state: pjsip_evsub_state) -> SubscriptionState.Phase {
        switch state {
        case PJSIP_EVSUB_STATE_NULL: .idle
        case PJSIP_EVSUB_STATE_SENT: .sent
        case PJSIP_EVSUB_STATE_ACCEPTED: .accepted
        case PJSIP_EVSUB_STATE_PENDING: .pending
        case PJSIP_EVSUB_STATE_ACTIVE: .active
        case PJSIP_EVSUB_STATE_TERMINATED: .terminated
        default: .unknown
        }
    }

    static func subscription(
        _ state: pjsip_evsub_state, code: UInt32, reason: pj_str_t, retryAfter: Int32?
    ) -> SubscriptionState {
        let phase = subscriptionPhase(state)
        guard phase == .terminated else { return SubscriptionState(phase) }
        let text = PJ.string(reason)
        return SubscriptionState(
            phase, reason: text.isEmpty ? nil : text, statusCode: code >= 300 ? Int(code) : nil,
            retryAfter: retryAfter.flatMap { $0 >= 0 ? .seconds(Int($0)) : nil })
    }

    /// The buddy's presence from `pjsua_buddy_get_info`, converted at once.
    static func buddyPresence(_ slot: pjsua_buddy_id, retryAfter: Int32?) -> BuddyPresence? {
        guard let buddy = buddyHandle(slot) else { return nil }
        var info = pjsua_buddy_info()
        guard pjsua_buddy_get_info(slot, &info) == cpj_success() else { return nil }
        let availability: Availability
        switch info.status {
        case PJSUA_BUDDY_STATUS_ONLINE:
            switch info.rpid.activity {
            case PJRPID_ACTIVITY_BUSY: availability = .busy
            case PJRPID_ACTIVITY_AWAY: availability = .away
            default: availability = .online
            }
        case PJSUA_BUDDY_STATUS_OFFLINE: availability = .offline
        default: availability = .unknown
        }
        let note = availability == .unknown ? "" : PJ.string(info.rpid.note)
        return BuddyPresence(
            buddy: buddy, uri: PJ.string(info.uri),
            subscription: subscription(
                info.sub_state, code: info.sub_term_code, reason: info.sub_term_reason, retryAfter: retryAfter),
            status: PresenceStatus(availability, note: note))
    }

    /// The buddy's dialog state from `pjsua_buddy_get_dlg_event_info`, converted at once.
    static func buddyDialogs(_ slot: pjsua_buddy_id) -> BuddyDialogs? {
        guard let buddy = buddyHandle(slot) else { return nil }
        let storage = UnsafeMutablePointer<cpj_dialog_state>.allocate(capacity: 1)
        defer { storage.deallocate() }
        guard cpj_buddy_dialog_state(slot, storage) == cpj_success() else { return nil }
        let info = storage.pointee
        func optional(_ value: pj_str_t) -> String? {
            let text = PJ.string(value)
            return text.isEmpty ? nil : text
        }
        return BuddyDialogs(
            buddy: buddy, uri: PJ.string(info.uri),
            subscription: subscription(
                pjsip_evsub_state(UInt32(bitPattern: info.sub_state)), code: info.term_code, reason: info.term_reason,
                retryAfter: nil),
            state: optional(info.state).map { DialogState(rawValue: $0.lowercased()) },
            dialogID: optional(info.dialog_id), direction: optional(info.direction), callID: optional(info.call_id),
            remoteIdentity: optional(info.remote_identity))
    }
}

// MARK: - C callbacks (pjsua's threads, pjsua's lock held; they copy and hand over)

/// `retry-after` of the NOTIFY that just ended a buddy's subscription, by slot, from
/// `on_buddy_evsub_state` to the `on_buddy_state` pjsua calls right after it (same thread,
/// pjsua's lock held throughout).
private let pendingRetryAfter = Protected<[pjsua_buddy_id: Int32]>([:])

/// `on_buddy_state`: a NOTIFY changed the buddy's presence, or (called right after
/// `on_buddy_evsub_state`) its subscription changed state. One event for both.
func onBuddyState(_ slot: pjsua_buddy_id) {
    let retryAfter = pendingRetryAfter.withLock { $0.removeValue(forKey: slot) }
    guard let presence = Native.buddyPresence(slot, retryAfter: retryAfter) else { return }
    PresenceStreams.buddies.deliver(.presence(presence))
}

/// `on_buddy_evsub_state`: the presence subscription changed state. Keeps a terminating
/// NOTIFY's `retry-after` for the `on_buddy_state` that follows, which reports the change.
func onBuddySubscriptionState(_ slot: pjsua_buddy_id, _ event: UnsafeMutablePointer<pjsip_event>?) {
    let retryAfter = cpj_evsub_event_retry_after(event)
    pendingRetryAfter.withLock { $0[slot] = retryAfter >= 0 ? retryAfter : nil }
}

/// `on_buddy_dlg_event_state`: a dialog-event NOTIFY or subscription change.
func onBuddyDialogState(_ slot: pjsua_buddy_id) {
    guard let dialogs = Native.buddyDialogs(slot) else { return }
    PresenceStreams.buddies.deliver(.dialogs(dialogs))
}
