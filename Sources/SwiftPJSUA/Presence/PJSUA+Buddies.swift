extension PJSUA {
    // MARK: Buddies: presence (RFC 3856) and dialog state (RFC 4235)

    /// Presence and dialog-state changes of every buddy, from the moment of this access on,
    /// in order, none dropped: a ``BuddyEvent/presence(_:)`` for each change of a presence
    /// subscription or of the presence a NOTIFY carried, a ``BuddyEvent/dialogs(_:)`` for
    /// each dialog-event NOTIFY and subscription change.
    ///
    /// Each access is a new unbounded subscription; the streams do not end when the engine
    /// shuts down. Wraps pjsua's `on_buddy_state`, `on_buddy_evsub_state` and
    /// `on_buddy_dlg_event_state` callbacks. Safe from any thread.
    public nonisolated var buddyEvents: AsyncStream<BuddyEvent> { PresenceStreams.buddies.subscribe() }

    /// Whether this build can watch a buddy's dialogs (RFC 4235, busy lamps): `false` with
    /// pjproject 2.12.1, whose pjsua lacks dialog-event subscriptions.
    public nonisolated static var supportsDialogWatching: Bool { Native.dialogEventSupported }

    /// Whether this build can name the account a buddy's subscription uses: `false` with
    /// pjproject 2.12.1, where pjsua picks the account that matches the buddy's URI.
    public nonisolated static var supportsBuddyAccounts: Bool { Native.buddyAccountSupported }

    /// Adds a buddy and, as asked, subscribes to its presence or its dialog state.
    ///
    /// The subscription goes out through the account's outbound proxy and route set,
    /// authenticated with its credentials; pjsua refreshes it and resubscribes after it
    /// ends (after `retry-after` when the notifier gave one). Changes arrive on
    /// ``buddyEvents``. pjsua keeps one subscription per buddy: presence or dialogs, not both.
    /// Wraps `pjsua_buddy_add`.
    /// - Parameters:
    ///   - uri: the buddy's SIP or SIPS URI (its address-of-record).
    ///   - subscribesToPresence: subscribe to the `presence` package at once.
    ///   - watchesDialogs: subscribe to the `dialog` package (a busy lamp) instead.
    ///   - account: the account whose identity and route the subscription uses; `nil` lets
    ///     pjsua pick the account that matches the URI best (`pjsua_acc_find_for_outgoing`).
    /// - Returns: the buddy's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)``; ``PJSUAUsageError/invalidArgument(_:)``
    ///   when both subscriptions are asked for; ``PJSUAUsageError/unsupported(_:)`` for
    ///   `watchesDialogs` or an `account` with pjproject 2.12.1; ``PJSUAUsageError/unknownAccount(_:)``;
    ///   ``PJSUAError`` when pjsua refuses (`PJ_ETOOMANY` with every buddy slot taken, or a
    ///   URI already added).
    public func addBuddy(
        _ uri: String, subscribesToPresence: Bool = true, watchesDialogs: Bool = false, account: Account? = nil
    ) throws -> Buddy {
        _ = try runtime()
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        if subscribesToPresence, watchesDialogs {
            throw PJSUAUsageError.invalidArgument("a buddy has one subscription: presence or dialogs, not both")
        }
        if watchesDialogs, !Native.dialogEventSupported {
            throw PJSUAUsageError.unsupported("dialog-event subscriptions (pjsua_buddy_config.subscribe_dlg_event)")
        }
        var accountSlot: Int32 = -1
        if let account {
            guard Native.buddyAccountSupported else {
                throw PJSUAUsageError.unsupported("a buddy's account (pjsua_buddy_config.acc_id)")
            }
            accountSlot = try liveSlot(account)
        }
        return try Native.addBuddy(
            uri, presence: subscribesToPresence, dialogs: watchesDialogs, account: accountSlot)
    }

    /// Removes a buddy, ending its subscription (an unSUBSCRIBE, `Expires: 0`). Wraps
    /// `pjsua_buddy_del`.
    /// - Throws: ``PJSUAUsageError/unknownBuddy(_:)``; ``PJSUAError`` when pjsua refuses.
    public func removeBuddy(_ buddy: Buddy) throws {
        let slot = try liveSlot(buddy)
        try PJ.check(Native.deleteBuddy(slot), "pjsua_buddy_del")
    }

    /// Starts or ends the presence subscription of a buddy. Wraps `pjsua_buddy_subscribe_pres`.
    /// - Throws: ``PJSUAUsageError/unknownBuddy(_:)``; ``PJSUAError`` when pjsua refuses.
    public func setSubscribesToPresence(_ subscribes: Bool, of buddy: Buddy) throws {
        let slot = try liveSlot(buddy)
        try Native.subscribePresence(slot, subscribes)
    }

    /// Starts or ends the dialog-event subscription (RFC 4235) of a buddy. Wraps
    /// `pjsua_buddy_subscribe_dlg_event`.
    /// - Throws: ``PJSUAUsageError/unknownBuddy(_:)``; ``PJSUAUsageError/unsupported(_:)``
    ///   with pjproject 2.12.1; ``PJSUAError`` when pjsua refuses.
    public func setWatchesDialogs(_ watches: Bool, of buddy: Buddy) throws {
        let slot = try liveSlot(buddy)
        guard Native.dialogEventSupported else {
            throw PJSUAUsageError.unsupported("dialog-event subscriptions (pjsua_buddy_subscribe_dlg_event)")
        }
        try Native.subscribeDialogs(slot, watches)
    }

    /// The buddy's presence subscription and last reported presence now. Wraps
    /// `pjsua_buddy_get_info`.
    /// - Throws: ``PJSUAUsageError/unknownBuddy(_:)``.
    public func presence(of buddy: Buddy) throws -> BuddyPresence {
        let slot = try liveSlot(buddy)
        guard let presence = Native.buddyPresence(slot, retryAfter: nil) else {
            throw PJSUAUsageError.unknownBuddy(buddy)
        }
        return presence
    }

    /// Sets what an account tells about its user's presence: PUBLISHed to the account's
    /// presence server when it has ``AccountConfiguration/publishesPresence``, otherwise sent
    /// in a NOTIFY to each watcher its ``AccountConfiguration/watchers`` policy admitted.
    ///
    /// ``Availability/busy`` and ``Availability/away`` are sent as basic status `open` with
    /// that RPID activity, ``Availability/offline`` (and ``Availability/unknown``) as `closed`.
    /// Wraps `pjsua_acc_set_online_status2`.
    /// - Parameters:
    ///   - status: the availability and note.
    ///   - account: the account.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAError`` when pjsua refuses.
    public func setPresence(_ status: PresenceStatus, for account: Account) throws {
        let slot = try liveSlot(account)
        try Native.setOnlineStatus(slot, status)
    }

    func liveSlot(_ buddy: Buddy) throws(PJSUAUsageError) -> Int32 {
        _ = try runtime()
        guard let slot = Native.liveSlot(buddy) else { throw .unknownBuddy(buddy) }
        return slot
    }
}
