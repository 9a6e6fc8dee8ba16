import CPJSUAShim

// MARK: - Handles stored in pjsua's per-call and per-account user data

enum Handles {
    /// The handle of the call in `slot`, giving the call a generation the first time it is
    /// seen. pjsua clears user data when it resets a slot, so a reused slot gets a new one.
    /// Runs on pjsua's threads inside callbacks (serialized per call by the dialog lock) or on
    /// the engine thread.
    ///
    /// pjsua copies a call's user data (its generation) into the call it creates for that
    /// call's accepted REFER (`on_call_transfered`) or for an INVITE with Replaces of it: a
    /// generation already owned by another slot is not this call's, and it gets its own.
    static func call(_ slot: pjsua_call_id) -> Call {
        let stored = UInt(bitPattern: pjsua_call_get_user_data(slot))
        if stored != 0 {
            let generation = UInt64(stored)
            let owned = owners.withLock { owners in
                if let owner = owners[generation] { return owner == slot }
                // Given before the slot was known (makeCall's user data): it is this slot's.
                owners[generation] = slot
                return true
            }
            if owned { return Call(slot: slot, generation: generation) }
        }
        let generation = nextGeneration()
        owners.withLock { $0[generation] = slot }
        pjsua_call_set_user_data(slot, UnsafeMutableRawPointer(bitPattern: UInt(generation)))
        return Call(slot: slot, generation: generation)
    }

    /// The slot each call generation handed out belongs to, until the call ends.
    private static let owners = Protected<[UInt64: pjsua_call_id]>([:])

    /// Forgets which slot an ended call's generation belonged to.
    static func forget(_ call: Call) {
        _ = owners.withLock { $0.removeValue(forKey: call.generation) }
    }

    /// Forgets every call's slot (pjsua has been destroyed).
    static func forgetAll() {
        owners.withLock { $0.removeAll() }
    }

    /// The handle of the call in `slot`, for a callback that can arrive after its call
    /// ended: as ``call(_:)``, but only while pjsua holds a call there or its handle is
    /// still stored (a call's first callback gets one); `nil` for a slot pjsua has freed. A
    /// subscription (a REFER's) keeps an ended call's dialog alive, and pjsua reports its
    /// events with the slot the call had: minting a handle for it would invent a call that
    /// never ends.
    static func liveCall(_ slot: pjsua_call_id) -> Call? {
        guard isCallSlot(slot) else { return nil }
        guard pjsua_call_get_user_data(slot) != nil || cpj_call_slot_in_use(slot) != 0 else { return nil }
        return call(slot)
    }

    /// Whether `slot` is a call slot of the running pjsua. pjsua's call functions assert
    /// (and abort, in a debug build of pjproject) on a slot outside `0..<max_calls`, the
    /// configured limit, which can be lower than the build limit: every handle a caller
    /// passes in is checked here first.
    static func isCallSlot(_ slot: Int32) -> Bool {
        slot >= 0 && slot < Int32(clamping: pjsua_call_get_max_count())
    }

    /// The slot of `call` if it still names a live call, else `nil`. A call being hung up
    /// (its terminal event already delivered) is not live.
    static func liveSlot(_ call: Call) -> pjsua_call_id? {
        guard isCallSlot(call.slot), pjsua_call_is_active(call.slot) != 0 else { return nil }
        let stored = UInt(bitPattern: pjsua_call_get_user_data(call.slot))
        return UInt64(stored) == call.generation ? call.slot : nil
    }

    /// Whether pjsua still holds `call` in its slot, in any state (including while the
    /// SIP teardown of a hung-up call runs). pjsua clears the slot's user data, where the
    /// generation lives, when it frees the slot, and a new call writes its own there.
    /// Engine thread only.
    static func slotHolds(_ call: Call) -> Bool {
        guard isCallSlot(call.slot) else { return false }
        return UInt64(UInt(bitPattern: pjsua_call_get_user_data(call.slot))) == call.generation
    }

    /// The handle of the account in `slot`, or `nil` when the slot holds no account (it was
    /// removed: pjsua still reports a removed account's id for its calls, and asserts in
    /// `pjsua_acc_get_user_data` on it). Gives the account a generation the first time it is
    /// seen; runs on the engine thread or, for existing accounts, inside pjsua's callbacks.
    static func account(_ slot: pjsua_acc_id) -> Account? {
        let stored = UInt(bitPattern: cpj_acc_user_data_if_valid(slot))
        if stored != 0 { return Account(slot: slot, generation: UInt64(stored)) }
        guard slot >= 0, pjsua_acc_is_valid(slot) != 0 else { return nil }
        let generation = nextGeneration()
        pjsua_acc_set_user_data(slot, UnsafeMutableRawPointer(bitPattern: UInt(generation)))
        return Account(slot: slot, generation: generation)
    }

    /// The handle of an account pjsua has just added (always valid).
    static func addedAccount(_ slot: pjsua_acc_id) throws(PJSUAError) -> Account {
        guard let account = account(slot) else { throw PJ.error(cpj_status_enotfound(), "pjsua_acc_add") }
        return account
    }

    static func liveSlot(_ account: Account) -> pjsua_acc_id? {
        let stored = UInt(bitPattern: cpj_acc_user_data_if_valid(account.slot))
        return stored != 0 && UInt64(stored) == account.generation ? account.slot : nil
    }
}

extension Native {
    static func liveSlot(_ call: Call) -> Int32? { Handles.liveSlot(call) }
    static func liveSlot(_ account: Account) -> Int32? { Handles.liveSlot(account) }

    /// Whether pjsua still holds `call` in its slot (see ``Handles/slotHolds(_:)``).
    static func slotHolds(_ call: Call) -> Bool { Handles.slotHolds(call) }
}
