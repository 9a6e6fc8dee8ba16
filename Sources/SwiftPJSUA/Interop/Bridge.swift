import CPJSUAShim
import Synchronization

/// What pjsua's C callbacks can reach while an engine is running: the event hub, the engine
/// thread (to hand work back to it) and the media links to keep. It holds no reference to
/// the ``PJSUA`` actor.
final class EngineBridge: Sendable {
    let hub: EventHub
    let executor: EngineExecutor
    let logHandler: (any PJSUALogHandler)?
    let media = Protected(MediaPlan())
    /// Incoming calls' Call-IDs longer than `pjsua_call_info` holds, by call generation.
    let longCallIDs = Protected<[UInt64: String]>([:])
    /// The account each live call was first seen with, by call generation: pjsua names
    /// accounts by slot, and a removed account's slot can go to a new account while the call
    /// lives on. Removed when the call ends.
    let callAccounts = Protected<[UInt64: Account]>([:])
    /// Media-inactivity and lost-connection detection (settings, watches, connections).
    let deadPeers = DeadPeerWatch()
    /// What the engine keeps per account: configuration, wanted registration, retries.
    let accountRecords = AccountRecords()
    /// How incoming REFERs are answered; read by the transfer-request callback.
    let transferHandler = Protected<(@Sendable (TransferRequest) -> TransferDecision)?>(nil)
    /// How INVITEs with `Replaces` are answered; read by the replace-request callback.
    let replaceHandler = Protected<(@Sendable (ReplaceRequest) -> ReplaceDecision)?>(nil)
    /// What the replace-request callback read from an accepted INVITE with `Replaces`, by
    /// the replaced call's generation, for the replaced-call callback that reports the new
    /// call right after (it gets no request).
    let pendingReplacements = Protected<[UInt64: PendingReplacement]>([:])
    /// Whether calls' audio streams are linked to the sound device port (slot 0).
    let linksSoundDevice: Bool
    /// Our ports on the conference bridge (frame ports, tone generators), so that shutdown
    /// can take off (and end the readers of) those whose removal was still queued.
    let livePorts = Protected<[ObjectIdentifier: any BridgePort]>([:])
    /// The sound-device frame stream's tap, while one runs (at most one).
    let soundDeviceTap = Protected<FramePort?>(nil)
    /// The tones of local ringback (``MediaConfiguration/localRingback``), validated.
    let ringbackTones: [Tone]?
    /// Outgoing calls that hear local ringback now, and the generator they share.
    let ringback = Protected(Ringback())
    /// When pjsua was last asked to handle a network change and until when the engine waits
    /// for it to complete; `nil` when none is in progress.
    let networkChangeUntil = Protected<ContinuousClock.Instant?>(nil)
    /// How many network changes were started, and the count when each incoming call
    /// arrived (by call generation): a call that rang through a change answers with the
    /// account's current Contact.
    let networkChangeCount = Protected(0)
    let incomingCallNetworkEpochs = Protected<[UInt64: Int]>([:])
    /// Set just before `pjsua_destroy`: what fails from then on was cut short by shutdown.
    let isDestroying = Protected(false)

    init(
        hub: EventHub, executor: EngineExecutor, logHandler: (any PJSUALogHandler)?, linksSoundDevice: Bool,
        ringbackTones: [Tone]? = nil
    ) {
        self.hub = hub
        self.ringbackTones = ringbackTones
        self.executor = executor
        self.logHandler = logHandler
        self.linksSoundDevice = linksSoundDevice
    }

    /// The bridge of the engine that is running in this process, if any. pjsua is one per
    /// process, so there is at most one.
    static let current = Protected<EngineBridge?>(nil)

    static func active() -> EngineBridge? { current.withLock { $0 } }

    /// Makes `bridge` the running engine's; `false` when another engine runs.
    static func claim(_ bridge: EngineBridge) -> Bool {
        current.withLock { current in
            guard current == nil else { return false }
            current = bridge
            return true
        }
    }

    /// Clears the running engine if it is `bridge`.
    static func release(_ bridge: EngineBridge) {
        current.withLock { current in
            if current === bridge { current = nil }
        }
    }
}

/// An accepted INVITE with `Replaces`, between pjsua's replace-request and replaced-call
/// callbacks.
struct PendingReplacement: Sendable {
    var account: Account
    var sipCallID: String
    var from: SIPAddress
    var headers: [SIPHeader]
}

/// Conference-bridge links the engine keeps for each call and re-applies on every
/// media-state change (a re-INVITE can give the call a new conference slot).
struct MediaPlan {
    /// Ports that feed a call's transmitted audio (players), by call generation.
    var sources: [UInt64: [pjsua_conf_port_id]] = [:]
    /// Ports that receive a call's received audio (recorders), by call generation.
    var sinks: [UInt64: [pjsua_conf_port_id]] = [:]
    /// Players and recorders to destroy when the call ends, by call generation.
    var players: [UInt64: [Player]] = [:]
    var recorders: [UInt64: [Recorder]] = [:]
    /// Our bridge ports (frame streams and writers, tones) to take off when the call ends.
    var bridgePorts: [UInt64: [any BridgePort]] = [:]
    /// Calls whose transmitted audio is muted (conference tx level 0), by generation.
    var muted: Set<UInt64> = []
    /// Conference links between calls: audio received on `from` is sent to `to`.
    var callLinks: Set<CallLink> = []
    /// Each call's audio conference slots as last reported, so a link can reach the other
    /// call without taking that call's lock.
    var conferenceSlots: [UInt64: [pjsua_conf_port_id]] = [:]

    struct CallLink: Hashable {
        var from: UInt64
        var to: UInt64
    }

    mutating func removeAll(
        for generation: UInt64
    ) -> (players: [pjsua_player_id], recorders: [pjsua_recorder_id], frames: [any BridgePort]) {
        sources[generation] = nil
        sinks[generation] = nil
        muted.remove(generation)
        conferenceSlots[generation] = nil
        callLinks = callLinks.filter { $0.from != generation && $0.to != generation }
        let owned = (
            (players[generation] ?? []).map(\.id), (recorders[generation] ?? []).map(\.id), bridgePorts[generation] ?? []
        )
        players[generation] = nil
        recorders[generation] = nil
        bridgePorts[generation] = nil
        return owned
    }
}

/// Process-wide generation counter for call and account handles.
let handleGenerations = Atomic<UInt64>(0)

func nextGeneration() -> UInt64 {
    handleGenerations.add(1, ordering: .relaxed).newValue
}

/// The generation the next handle will get: every handle made so far is below it.
func upcomingGeneration() -> UInt64 {
    handleGenerations.load(ordering: .relaxed) + 1
}

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
    /// Whether pjsua still holds `call` in its slot (see ``Handles/slotHolds(_:)``).
    static func slotHolds(_ call: Call) -> Bool { Handles.slotHolds(call) }
}
