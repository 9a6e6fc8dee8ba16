import CPJSIP
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

/// Process-wide generation counter for call and account handles.
let handleGenerations = Atomic<UInt64>(0)

func nextGeneration() -> UInt64 {
    handleGenerations.add(1, ordering: .relaxed).newValue
}

/// The generation the next handle will get: every handle made so far is below it.
func upcomingGeneration() -> UInt64 {
    handleGenerations.load(ordering: .relaxed) + 1
}
