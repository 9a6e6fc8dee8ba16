import Foundation

/// The SIP user agent: one pjsua instance, driven with `async`/`await`.
///
/// `PJSUA` is an actor whose executor is one dedicated thread registered with PJLIB; every
/// pjsua function the engine calls runs on that thread. pjsua's own worker threads pump
/// SIP and media events; its callbacks copy what they report into ``PJSUAEvent`` values
/// delivered through ``events``.
///
/// pjsua is one per process: a second engine's `start` throws
/// ``PJSUAUsageError/anotherEngineRunning`` while the first is running.
///
/// ```swift
/// let engine = PJSUA()
/// try await engine.start(Configuration(transports: [.init(type: .udp, bindAddress: "127.0.0.1", port: 0)]))
/// let account = try await engine.addLocalAccount()
/// let call = try await engine.makeCall(to: "sip:bob@127.0.0.1:5070", from: account)
/// for await event in engine.events(for: call) { print(event) }
/// await engine.shutdown()
/// ```
public actor PJSUA {
    private enum Lifecycle {
        case idle
        case running(Runtime)
        case stopping
        case shutDown
    }

    struct Runtime {
        let bridge: EngineBridge
        let configuration: Configuration
        let transports: [Transport]

        /// The configured bind address of one of the transports created at start.
        func bindAddress(of transport: Transport) -> String? {
            guard let index = transports.firstIndex(of: transport) else { return nil }
            return configuration.transports[index].bindAddress
        }

        /// The configured public address of one of the transports created at start.
        func publicAddress(of transport: Transport) -> String? {
            guard let index = transports.firstIndex(of: transport) else { return nil }
            return configuration.transports[index].publicAddress
        }

        /// The address an account on `transport` advertises for RTP, when not its bound one.
        func rtpPublicAddress(of transport: Transport?) -> String? {
            configuration.media.rtpPublicAddress ?? transport.flatMap { publicAddress(of: $0) }
        }
    }

    private let executor: EngineExecutor
    private var lifecycle: Lifecycle = .idle
    /// The hub that subscriptions made now attach to; replaced after each shutdown.
    private let currentHub = Protected(EventHub(firstGeneration: upcomingGeneration()))
    /// Callers of `shutdown` waiting for the one in progress.
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    /// The periodic sweep for calls whose end pjsua did not report; runs while running.
    private var reaper: Task<Void, Never>?
    /// Handles the network monitor's changes while running with automatic network-change
    /// handling (see ``followNetwork(_:options:)``).
    var networkFollower: Task<Void, Never>?
    /// Calls the last sweep found gone from their slot without a terminal event.
    private var lostCallSuspects: Set<Call> = []
    /// When each call's queued RFC 4733 digits are expected to have gone out, for
    /// pjprojects that cannot count them (before 2.17); see ``waitForQueuedDigits(_:slot:)``.
    var dtmfDrainEstimates: [Call: ContinuousClock.Instant] = [:]

    /// How often the engine checks for calls whose end pjsua did not report. A call is
    /// declared ended on the second sweep that finds its slot gone, so between one and two
    /// intervals after pjsua dropped it.
    static let lostCallSweepInterval: Duration = .milliseconds(500)
    /// The reason of the terminal event the engine synthesizes at shutdown.
    static let engineShutDownReason = "engine shut down"
    /// The reason of the terminal event the engine synthesizes for a call pjsua dropped silently.
    static let lostCallReason = "call ended without a report from pjsua (slot freed or reused)"

    /// The engine thread. All actor-isolated code, and so every pjsua call, runs there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Creates an engine and its thread. Nothing of pjsua is created until ``start(_:)``.
    public init() {
        executor = EngineExecutor()
    }

    deinit {
        reaper?.cancel()
        networkFollower?.cancel()
        if case .running(let runtime) = lifecycle {
            // Dropped while running, possibly on any thread: tear pjsua down on its own
            // thread, deliver the terminal events pjsua did not, then stop the thread.
            let bridge = runtime.bridge
            executor.post {
                Native.hangupAll()
                Native.destroy()
                for call in bridge.hub.liveCalls.keys {
                    bridge.hub.synthesizeEnd(of: call, reason: Self.engineShutDownReason)
                }
                bridge.hub.finish()
                EngineBridge.release(bridge)
            }
        }
        executor.stop()
    }

    // MARK: Events

    /// Every event from the moment of this call on, in order, none dropped.
    ///
    /// Each access returns a new subscription with an unbounded buffer. A subscription made
    /// before ``start(_:)`` sees the events of that run. Subscriptions finish when the engine
    /// shuts down, after the last call's terminal event; one made after a shutdown sees the
    /// next run's events.
    public nonisolated var events: AsyncStream<PJSUAEvent> {
        currentHub.withLock { $0 }.subscribe()
    }

    /// Like ``events``, with each event paired with the instant pjsua's callback raised it:
    /// `ContinuousClock.now - raisedAt` on receipt is the delivery latency. Same ordering,
    /// buffering and lifetime as ``events``.
    public nonisolated var timestampedEvents: AsyncStream<TimestampedEvent> {
        currentHub.withLock { $0 }.subscribeTimestamped()
    }

    /// The events of one call: first the events that describe it now, then every later
    /// one, finishing right after its one terminal (``CallState/disconnected``) state event.
    ///
    /// The stream starts with a snapshot, as the events that reported it: the call's
    /// ``PJSUAEvent/incomingCall(_:)`` when we received it, its latest
    /// ``PJSUAEvent/callState(_:)``, its latest ``PJSUAEvent/callMediaState(_:)`` and, while
    /// it is reconnecting, the ``PJSUAEvent/reconnection(_:)`` that said so (each when it has
    /// one, in that order). Later events follow with no gap and no repeat, so a
    /// handler that subscribes when it sees an incoming call on ``events`` follows it from
    /// ``CallState/incoming`` even if the call has moved on meanwhile. Finishes at once,
    /// empty, for a call that has ended. To follow a call you place from its first state, use
    /// ``placeCall(to:from:headers:)``, which subscribes before the INVITE goes out.
    /// - Parameter call: a call handle; a stale one gives a stream that finishes at once.
    /// - Returns: an unbounded stream (nothing dropped).
    public nonisolated func events(for call: Call) -> AsyncStream<PJSUAEvent> {
        currentHub.withLock { $0 }.subscribe(following: call)
    }

    // MARK: Lifecycle

    /// The pjproject this engine runs on: the version of the libraries loaded at run time
    /// (`pj_get_version`, e.g. `2.17`) and the version of the headers it was compiled
    /// against. ``start(_:)`` refuses to run when they differ.
    public nonisolated static var pjprojectVersion: (loaded: String, compiled: String) {
        (Native.loadedVersion, Native.compiledVersion)
    }

    /// The most concurrent calls the pjproject build can hold (`PJSUA_MAX_CALLS`): 1024 in
    /// the `scripts/provision.sh` builds, 4 in the pinned iOS xcframework, 32 in pjproject's
    /// stock build. The upper bound of ``Configuration/maxCalls``; the same value as
    /// ``buildLimits``' ``BuildLimits/calls``.
    public nonisolated static var compiledCallLimit: Int { Native.buildCallLimit }

    /// Every fixed limit of the pjproject build: calls, accounts, players, recorders,
    /// conference ports, SIP transactions and dialogs, and the largest SIP message.
    public nonisolated static var buildLimits: BuildLimits { Native.buildLimits }

    /// Whether the pjproject build has IPv6 (`PJ_HAS_IPV6`). Without it, IPv6 transports
    /// and RTP addresses throw ``PJSUAError/Code/addressFamilyNotSupported``.
    public nonisolated static var supportsIPv6: Bool { Native.hasIPv6 }

    /// Whether RTP runs on pjmedia's own media worker thread (pjproject 2.13 and later, as
    /// in pjsua's C app) rather than on pjsua's SIP worker (pjproject 2.12, whose media
    /// worker stalls for up to 500 ms).
    public nonisolated static var usesMediaWorkerThread: Bool { Native.usesMediaWorker }

    /// Whether the linked pjproject has the Opus codec (`PJMEDIA_HAS_OPUS_CODEC`), which
    /// ``MediaConfiguration/opus`` needs; `false` on builds without it, such as iOS's.
    public nonisolated static var hasOpusCodec: Bool { Native.hasOpus }

    /// Creates, configures and starts pjsua: `pjsua_create`, `pjsua_init`, the transports,
    /// `pjsua_start` and the sound device.
    ///
    /// - Parameter configuration: transports, limits, logging and media settings.
    /// - Throws: ``PJSUAUsageError/alreadyStarted`` when running or still shutting down;
    ///   ``PJSUAUsageError/anotherEngineRunning`` when another engine runs in this process;
    ///   ``PJSUAUsageError/invalidConfiguration(_:)`` for out-of-range values, or for
    ///   ``MediaConfiguration/opus`` settings on a build without Opus (``hasOpusCodec``);
    ///   ``PJProjectVersionMismatchError`` when the pjproject loaded at run time is not the
    ///   one the engine was compiled against; ``PJSUAError`` when pjsua fails (for example
    ///   a port in use, or ``PJSUAError/Code/addressFamilyNotSupported`` for an IPv6
    ///   transport in a pjproject built without IPv6). After a failure nothing is left
    ///   running and `start` can be tried again.
    public func start(_ configuration: Configuration = Configuration()) throws {
        switch lifecycle {
        case .running, .stopping: throw PJSUAUsageError.alreadyStarted
        case .idle, .shutDown: break
        }
        try configuration.validate()
        if configuration.media.opus != nil, !Native.hasOpus {
            throw PJSUAUsageError.invalidConfiguration(
                "media.opus is set, but this pjproject build has no Opus codec (PJMEDIA_HAS_OPUS_CODEC is 0)")
        }
        let configuration = configuration.withDefaultLogHandler()
        guard Native.compiledVersion == Native.loadedVersion else {
            throw PJProjectVersionMismatchError(
                compiledVersion: Native.compiledVersion, loadedVersion: Native.loadedVersion)
        }
        let hub = currentHub.withLock { $0 }
        let bridge = EngineBridge(
            hub: hub, executor: executor, logHandler: configuration.logHandler,
            linksSoundDevice: true, ringbackTones: configuration.media.localRingback)
        guard EngineBridge.claim(bridge) else { throw PJSUAUsageError.anotherEngineRunning }
        do {
            let transports = try Native.start(configuration)
            var networkChanges: AsyncStream<NetworkPathChange>?
            do {
                try Self.applyCodecOrder(configuration.media.codecOrder)
                if let opus = configuration.media.opus { try Native.configureOpus(opus) }
                if case .automatic(let automatic) = configuration.networkChangeHandling {
                    networkChanges = try automatic.monitor.changes(debounce: automatic.debounce)
                }
            } catch {
                Native.destroy()
                throw error
            }
            lifecycle = .running(Runtime(bridge: bridge, configuration: configuration, transports: transports))
            startReaper()
            if let networkChanges, case .automatic(let automatic) = configuration.networkChangeHandling {
                followNetwork(networkChanges, options: automatic.options)
            }
        } catch {
            EngineBridge.release(bridge)
            throw error
        }
    }

    /// Ends every call, unregisters accounts, destroys pjsua and finishes every event
    /// subscription after the calls' terminal events.
    ///
    /// In order: `pjsua_call_hangup_all`, then wait (up to `deadline`) for every call's
    /// terminal event; REGISTER with expires 0 for each registered account, then wait for
    /// the registrar's answers (up to what is left of `deadline`, at least 200 ms);
    /// `pjsua_destroy2` without waiting for more responses. Calls that pjsua did not report
    /// as ended then get a synthesized ``CallState/disconnected`` event with the reason
    /// "engine shut down", and only after that do the streams finish. A registrar or peer
    /// that stops answering cannot hold shutdown much beyond `deadline`.
    ///
    /// Idempotent: calling it when not running returns at once; calling it while another
    /// shutdown runs waits for that one. Cancelling the calling task does not cut the
    /// waits short: the peers still get their BYE and the registrar its unregistration.
    /// - Parameter deadline: how long to wait for calls to end and accounts to unregister.
    public func shutdown(deadline: Duration = .seconds(3)) async {
        if case .stopping = lifecycle {
            // Another caller is shutting down: return when it has finished.
            await withCheckedContinuation { shutdownWaiters.append($0) }
            return
        }
        guard case .running(let runtime) = lifecycle else { return }
        lifecycle = .stopping
        reaper?.cancel()
        reaper = nil
        networkFollower?.cancel()
        networkFollower = nil
        lostCallSuspects = []
        let hub = runtime.bridge.hub
        let clock = ContinuousClock()
        let start = clock.now
        if !hub.liveCalls.isEmpty {
            let stream = hub.subscribe()
            Native.hangupAll()
            await Self.waitUntil(deadline: deadline, events: stream) { _ in hub.liveCalls.isEmpty }
        }
        let registered = Native.registeredAccounts(records: runtime.bridge.accountRecords)
        if !registered.isEmpty {
            let pending = RegistrationSet(registered)
            let stream = hub.subscribe()
            for account in registered {
                if (try? Native.unregister(account.slot)) == nil { pending.remove(account) }
            }
            let remaining = max(.milliseconds(200), deadline - (clock.now - start))
            await Self.waitUntil(deadline: remaining, events: stream) { event in
                if case .registrationState(let change) = event, !change.isRegistered { pending.remove(change.account) }
                return pending.isEmpty
            }
        }
        runtime.bridge.isDestroying.withLock { $0 = true }
        Native.removeAllBridgePorts(bridge: runtime.bridge)
        Native.destroy()
        // A MESSAGE still waiting for its response will not get one now.
        for send in runtime.bridge.messages.withLock({ $0.takeAll() }) {
            send.resume(throwing: PJSUAUsageError.shutDown)
        }
        for call in hub.liveCalls.keys {
            hub.synthesizeEnd(of: call, reason: Self.engineShutDownReason)
        }
        hub.finish()
        EngineBridge.release(runtime.bridge)
        currentHub.withLock { $0 = EventHub(firstGeneration: upcomingGeneration()) }
        lifecycle = .shutDown
        let waiters = shutdownWaiters
        shutdownWaiters = []
        waiters.forEach { $0.resume() }
    }

    /// Accounts waiting for their unregistration to finish during shutdown.
    private final class RegistrationSet: Sendable {
        private let pending: Protected<Set<Account>>
        init(_ accounts: [Account]) { pending = Protected(Set(accounts)) }
        func remove(_ account: Account) { _ = pending.withLock { $0.remove(account) } }
        var isEmpty: Bool { pending.withLock { $0.isEmpty } }
    }

    /// Waits until `condition` holds, checking it first with `nil` and then with each event,
    /// or until the deadline. The condition runs off the engine thread: it must not touch pjsua.
    ///
    /// The wait runs in its own task, so cancelling the caller does not cut it short (a
    /// cancelled caller would otherwise skip straight to `pjsua_destroy2` and leave peers
    /// without their BYE); the deadline still bounds it.
    static func waitUntil(
        deadline: Duration, events: AsyncStream<PJSUAEvent>, _ condition: @escaping @Sendable (PJSUAEvent?) -> Bool
    ) async {
        if condition(nil) { return }
        let deadline = min(deadline, longestWait)
        await Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events where condition(event) { return }
                }
                group.addTask { try? await Task.sleep(for: deadline) }
                await group.next()
                group.cancelAll()
            }
        }.value
    }

    /// The longest wait the awaiting methods take: a year (`Task.sleep` traps on deadlines near
    /// `Int64.max` seconds, the natural spelling of "forever").
    static let longestWait = Duration.seconds(365 * 24 * 3600)

    /// A wait's deadline must be positive and at most ``longestWait``.
    static func validateWaitDeadline(_ deadline: Duration) throws(PJSUAUsageError) {
        guard deadline > .zero, deadline <= longestWait else {
            throw .invalidArgument("a deadline must be more than zero and at most a year, got \(deadline)")
        }
    }

    // MARK: Lost calls

    /// Starts the periodic sweep for calls whose end pjsua did not report. It holds the
    /// engine only while a sweep runs, so dropping the engine still deinitializes it.
    private func startReaper() {
        reaper?.cancel()
        lostCallSuspects = []
        reaper = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.lostCallSweepInterval)
                guard !Task.isCancelled, let engine = self else { return }
                await engine.sweepLostCalls()
                await engine.superviseMedia()
            }
        }
    }

    /// One sweep: a call the hub still counts as live whose slot no longer holds it (pjsua
    /// freed the slot, or gave it to a newer call) without a terminal event is suspect; if
    /// the next sweep finds it so too, the engine delivers its terminal event with
    /// ``lostCallReason``. The grace of one interval lets a terminal event that pjsua is
    /// delivering right now on its own thread arrive first. Cheap: one lock and one
    /// `pjsua_call_get_user_data` per live call.
    func sweepLostCalls() {
        guard case .running(let runtime) = lifecycle else { return }
        let hub = runtime.bridge.hub
        var suspects: Set<Call> = []
        for call in hub.liveCalls.keys where !Native.slotHolds(call) {
            if lostCallSuspects.contains(call) {
                hub.synthesizeEnd(of: call, reason: Self.lostCallReason)
            } else {
                suspects.insert(call)
            }
        }
        lostCallSuspects = suspects
    }

    /// One media-inactivity check of every live call (see
    /// ``AccountConfiguration/mediaInactivityTimeout``), finished one-shot tones off the
    /// bridge, and local ringback of calls that ended unreported, on the engine thread.
    func superviseMedia() {
        guard case .running(let runtime) = lifecycle else { return }
        Native.superviseMedia(bridge: runtime.bridge, now: .now)
        Native.removeFinishedTones(bridge: runtime.bridge)
        Native.pruneRingback(bridge: runtime.bridge)
    }

    /// Call slots pjsua holds, including calls that have delivered their terminal event
    /// and whose SIP teardown (the CANCEL or BYE transaction after a local hangup) is still
    /// running. At ``Configuration/maxCalls`` held slots, ``makeCall(to:from:headers:)`` throws
    /// ``PJSUAError/Code/tooMany``. Wraps `pjsua_call_get_count`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func callSlotsInUse() throws(PJSUAUsageError) -> Int {
        _ = try runtime()
        return Native.activeCallCount()
    }

    /// Whether the engine is running.
    public var isRunning: Bool {
        if case .running = lifecycle { return true }
        return false
    }

    func runtime() throws(PJSUAUsageError) -> Runtime {
        switch lifecycle {
        case .running(let runtime): return runtime
        case .idle: throw .notStarted
        case .stopping, .shutDown: throw .shutDown
        }
    }

    func liveSlot(_ call: Call) throws(PJSUAUsageError) -> Int32 {
        _ = try runtime()
        guard let slot = Native.liveSlot(call) else { throw .unknownCall(call) }
        return slot
    }

    func liveSlot(_ account: Account) throws(PJSUAUsageError) -> Int32 {
        _ = try runtime()
        guard let slot = Native.liveSlot(account) else { throw .unknownAccount(account) }
        return slot
    }
}
