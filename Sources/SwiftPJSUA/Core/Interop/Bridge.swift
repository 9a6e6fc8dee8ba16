/// What pjsua's C callbacks can reach while an engine is running: the event hub, the engine
/// thread (to hand work back to it) and each capability's state. It holds no reference to
/// the ``PJSUA`` actor.
///
/// Each capability's mutable state is one struct, defined by that capability's `Interop/`
/// code, behind one lock: what a callback or the engine reads together, it reads in one
/// `withLock`, so an invariant between two fields of a capability holds at every read.
final class EngineBridge: Sendable {
    let hub: EventHub
    let executor: EngineExecutor
    let logHandler: (any PJSUALogHandler)?
    /// Calls: long Call-IDs, each call's account, the transfer and replace handlers, the
    /// replacements and re-offers in flight (``CallsState``).
    let calls = Protected(CallsState())
    /// Media: the conference-bridge plan, our ports on the bridge, the sound-device tap,
    /// local ringback and the SRTP keying each call negotiated (``MediaState``).
    let media = Protected(MediaState())
    /// Network changes: the one in progress, how many were started, and which change each
    /// incoming call arrived after (``NetworkChangeState``).
    let network = Protected(NetworkChangeState())
    /// Messages: the MESSAGE requests we sent that wait for their final response.
    let messages = Protected(MessagesState())
    /// Media-inactivity and lost-connection detection (settings, watches, connections).
    let deadPeers = DeadPeerWatch()
    /// What the engine keeps per account: configuration, wanted registration, retries.
    let accountRecords = AccountRecords()
    /// Whether calls' audio streams are linked to the sound device port (slot 0).
    let linksSoundDevice: Bool
    /// The tones of local ringback (``MediaConfiguration/localRingback``), validated.
    let ringbackTones: [Tone]?
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
let handleGenerations = Protected<UInt64>(0)

func nextGeneration() -> UInt64 {
    handleGenerations.withLock { generation in
        generation += 1
        return generation
    }
}

/// The generation the next handle will get: every handle made so far is below it.
func upcomingGeneration() -> UInt64 {
    handleGenerations.withLock { $0 } + 1
}
