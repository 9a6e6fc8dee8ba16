import Foundation
import Synchronization

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

    private struct Runtime {
        let bridge: EngineBridge
        let configuration: Configuration
        let transports: [Transport]

        /// The configured bind address of one of the transports created at start.
        func bindAddress(of transport: Transport) -> String? {
            guard let index = transports.firstIndex(of: transport) else { return nil }
            return configuration.transports[index].bindAddress
        }
    }

    private let executor: EngineExecutor
    private var lifecycle: Lifecycle = .idle
    /// The hub that subscriptions made now attach to; replaced after each shutdown.
    private let currentHub = Mutex(EventHub(firstGeneration: upcomingGeneration()))
    /// Callers of `shutdown` waiting for the one in progress.
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

    /// The engine thread. All actor-isolated code, and so every pjsua call, runs there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Creates an engine and its thread. Nothing of pjsua is created until ``start(_:)``.
    public init() {
        executor = EngineExecutor()
    }

    deinit {
        if case .running(let runtime) = lifecycle {
            // Dropped while running: tear pjsua down on its own thread, then stop the thread.
            let bridge = runtime.bridge
            executor.post {
                Native.hangupAll()
                Native.destroy()
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

    /// The events of one call, from now on, finishing right after its one terminal
    /// (``CallState/disconnected``) state event. Finishes at once if the call already ended.
    public nonisolated func events(for call: Call) -> AsyncStream<PJSUAEvent> {
        currentHub.withLock { $0 }.subscribe(call: call)
    }

    // MARK: Lifecycle

    /// Creates, configures and starts pjsua: `pjsua_create`, `pjsua_init`, the transports,
    /// `pjsua_start` and the sound device.
    ///
    /// - Parameter configuration: transports, limits, logging and media settings.
    /// - Throws: ``PJSUAUsageError/alreadyStarted`` when running or still shutting down;
    ///   ``PJSUAUsageError/anotherEngineRunning`` when another engine runs in this process;
    ///   ``PJSUAUsageError/invalidConfiguration(_:)`` for out-of-range values; ``PJSUAError``
    ///   when pjsua fails (for example a port in use). After a failure nothing is left
    ///   running and `start` can be tried again.
    public func start(_ configuration: Configuration = Configuration()) throws {
        switch lifecycle {
        case .running, .stopping: throw PJSUAUsageError.alreadyStarted
        case .idle, .shutDown: break
        }
        try Self.validate(configuration)
        let hub = currentHub.withLock { $0 }
        let bridge = EngineBridge(
            hub: hub, executor: executor, logHandler: configuration.logHandler,
            linksSoundDevice: true)
        guard EngineBridge.claim(bridge) else { throw PJSUAUsageError.anotherEngineRunning }
        do {
            let transports = try Native.start(configuration)
            lifecycle = .running(Runtime(bridge: bridge, configuration: configuration, transports: transports))
        } catch {
            EngineBridge.release(bridge)
            throw error
        }
    }

    private static func validate(_ configuration: Configuration) throws(PJSUAUsageError) {
        let limit = Native.buildCallLimit
        guard (1...limit).contains(configuration.maxCalls) else {
            throw .invalidConfiguration("maxCalls must be 1...\(limit), got \(configuration.maxCalls)")
        }
        guard !configuration.transports.isEmpty else {
            throw .invalidConfiguration("at least one transport is needed")
        }
        guard !configuration.userAgent.containsLineBreakOrControl else {
            throw .invalidConfiguration("userAgent must not contain control characters")
        }
        guard (0...6).contains(configuration.logLevel) else {
            throw .invalidConfiguration("logLevel must be 0...6, got \(configuration.logLevel)")
        }
        guard [8000, 16000, 32000, 44100, 48000].contains(configuration.media.clockRate) else {
            throw .invalidConfiguration("clockRate must be 8000, 16000, 32000, 44100 or 48000 Hz")
        }
        guard configuration.media.rtpPorts.count >= 2 else {
            throw .invalidConfiguration("rtpPorts must hold at least two ports")
        }
    }

    /// Ends every call, destroys pjsua (`pjsua_destroy`, which unregisters accounts) and
    /// finishes every event subscription after the calls' terminal events.
    ///
    /// Idempotent: calling it when not running returns at once. Calls that pjsua did not
    /// report as ended get a synthesized ``CallState/disconnected`` event with the reason
    /// "engine shut down".
    /// - Parameter deadline: how long to wait for calls to end before destroying pjsua.
    public func shutdown(deadline: Duration = .seconds(3)) async {
        if case .stopping = lifecycle {
            // Another caller is shutting down: return when it has finished.
            await withCheckedContinuation { shutdownWaiters.append($0) }
            return
        }
        guard case .running(let runtime) = lifecycle else { return }
        lifecycle = .stopping
        let hub = runtime.bridge.hub
        let clock = ContinuousClock()
        let start = clock.now
        if !hub.liveCalls.isEmpty {
            let stream = hub.subscribe()
            Native.hangupAll()
            await Self.waitUntil(deadline: deadline, events: stream) { _ in hub.liveCalls.isEmpty }
        }
        let registered = Native.registeredAccounts()
        if !registered.isEmpty {
            let pending = RegistrationSet(registered)
            let stream = hub.subscribe()
            for account in registered {
                if (try? Native.unregister(account.slot)) == nil { pending.remove(account) }
            }
            let remaining = max(.milliseconds(200), deadline - (clock.now - start))
            await Self.waitUntil(deadline: remaining, events: stream) { event in
                if case .registrationState(let account, false, _, _, _) = event { pending.remove(account) }
                return pending.isEmpty
            }
        }
        Native.destroy()
        for (call, sipCallID) in hub.liveCalls {
            hub.emit(.callState(call: call, state: .disconnected, sipCallID: sipCallID, lastStatus: 0,
                                reason: "engine shut down"))
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
        private let pending: Mutex<Set<Account>>
        init(_ accounts: [Account]) { pending = Mutex(Set(accounts)) }
        func remove(_ account: Account) { _ = pending.withLock { $0.remove(account) } }
        var isEmpty: Bool { pending.withLock { $0.isEmpty } }
    }

    /// Waits until `condition` holds, checking it first with `nil` and then with each event,
    /// or until the deadline. The condition runs off the engine thread: it must not touch pjsua.
    private static func waitUntil(
        deadline: Duration, events: AsyncStream<PJSUAEvent>, _ condition: @escaping @Sendable (PJSUAEvent?) -> Bool
    ) async {
        if condition(nil) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events where condition(event) { return }
            }
            group.addTask { try? await Task.sleep(for: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Whether the engine is running.
    public var isRunning: Bool {
        if case .running = lifecycle { return true }
        return false
    }

    private func runtime() throws(PJSUAUsageError) -> Runtime {
        switch lifecycle {
        case .running(let runtime): return runtime
        case .idle: throw .notStarted
        case .stopping, .shutDown: throw .shutDown
        }
    }

    private func liveSlot(_ call: Call) throws(PJSUAUsageError) -> Int32 {
        _ = try runtime()
        guard let slot = Native.liveSlot(call) else { throw .unknownCall(call) }
        return slot
    }

    private func liveSlot(_ account: Account) throws(PJSUAUsageError) -> Int32 {
        _ = try runtime()
        guard let slot = Native.liveSlot(account) else { throw .unknownAccount(account) }
        return slot
    }

    // MARK: Transports and accounts

    /// The SIP transports created at start, with their bound addresses and ports.
    /// Wraps `pjsua_transport_get_info`.
    /// - Throws: ``PJSUAUsageError/notStarted`` or ``PJSUAUsageError/shutDown``.
    public func transports() throws -> [TransportInfo] {
        try runtime().transports.map { try Native.transportInfo($0) }
    }

    /// Adds an account for calls straight to and from a transport's address, with no
    /// registrar (its identity is `<sip:host:port>` of the transport).
    /// Wraps `pjsua_acc_add` (as `pjsua_acc_add_local` does, with the engine's RTP ports).
    /// - Parameters:
    ///   - transport: the transport; `nil` means the first one configured.
    ///   - isDefault: make it the account for requests no other account matches.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError`` when not running; ``PJSUAError`` when pjsua refuses.
    public func addLocalAccount(on transport: Transport? = nil, isDefault: Bool = true) throws -> Account {
        let runtime = try runtime()
        guard let transport = transport ?? runtime.transports.first else {
            throw PJSUAUsageError.invalidConfiguration("no transport")
        }
        let media = runtime.configuration.media
        return try Native.addLocalAccount(
            transport: transport, isDefault: isDefault, rtpPorts: media.rtpPorts,
            rtpAddress: media.rtpAddress ?? runtime.bindAddress(of: transport))
    }

    /// Adds an account, registering it with its registrar when it has one and
    /// ``AccountConfiguration/registersOnAdd`` is set. Registration outcomes arrive as
    /// ``PJSUAEvent/registrationState(account:active:statusCode:reason:expiration:)`` events.
    /// Wraps `pjsua_acc_add`.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)`` when the identity, registrar or a proxy is
    ///   not a SIP URI; ``PJSUAUsageError/invalidConfiguration(_:)`` for out-of-range values;
    ///   ``PJSUAError`` when pjsua refuses (for example ``PJSUAError/Code/tooMany`` accounts).
    public func addAccount(_ configuration: AccountConfiguration) throws -> Account {
        let runtime = try runtime()
        let identity = SIPAddress(parsing: configuration.identity).uri
        guard Native.isValidSIPURI(identity) else { throw PJSUAUsageError.invalidURI(configuration.identity) }
        for uri in [configuration.registrar].compactMap({ $0 }) + configuration.outboundProxies {
            guard Native.isValidSIPURI(SIPAddress(parsing: uri).uri) else { throw PJSUAUsageError.invalidURI(uri) }
        }
        let texts = [configuration.contactParameters] + configuration.registerHeaders.flatMap { [$0.name, $0.value] }
        guard !texts.contains(where: \.containsLineBreakOrControl) else {
            throw PJSUAUsageError.invalidConfiguration("header and Contact parameter text must not contain control characters")
        }
        guard configuration.credentials.count <= Native.maxCredentials else {
            throw PJSUAUsageError.invalidConfiguration("at most \(Native.maxCredentials) credentials")
        }
        guard configuration.outboundProxies.count <= Native.maxProxies else {
            throw PJSUAUsageError.invalidConfiguration("at most \(Native.maxProxies) outbound proxies")
        }
        guard configuration.registrationExpiry >= .seconds(1), configuration.retryInterval >= .zero else {
            throw PJSUAUsageError.invalidConfiguration("registrationExpiry must be at least 1 s")
        }
        if let transport = configuration.transport, !runtime.transports.contains(transport) {
            throw PJSUAUsageError.invalidConfiguration("unknown \(transport)")
        }
        let media = runtime.configuration.media
        let transport = configuration.transport ?? runtime.transports.first
        return try Native.addAccount(
            configuration, rtpPorts: media.rtpPorts,
            rtpAddress: media.rtpAddress ?? transport.flatMap { runtime.bindAddress(of: $0) })
    }

    /// A snapshot of an account's state. Wraps `pjsua_acc_get_info`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle.
    public func accountInfo(_ account: Account) throws -> AccountInfo {
        _ = try liveSlot(account)
        return try Native.accountInfo(account)
    }

    /// Every account, in pjsua's order. Wraps `pjsua_enum_accs`.
    public func accounts() throws -> [Account] {
        _ = try runtime()
        return Native.accounts()
    }

    /// Registers (`renew: true`) or unregisters the account now; the outcome arrives as a
    /// registration event. Wraps `pjsua_acc_set_registration`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAError`` when the account has
    ///   no registrar.
    public func setRegistration(_ account: Account, renew: Bool) throws {
        try Native.setRegistration(try liveSlot(account), renew: renew)
    }

    /// Removes an account. Wraps `pjsua_acc_del` (which unregisters a registered account).
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle.
    public func removeAccount(_ account: Account) throws {
        let slot = try liveSlot(account)
        try Native.removeAccount(Account(slot: slot, generation: account.generation))
    }

    // MARK: Calls

    /// Places a call: sends an INVITE to `uri` from `account`.
    ///
    /// Returns once the INVITE is on its way (state ``CallState/calling``); follow the call
    /// with ``events(for:)``. Wraps `pjsua_call_make_call`.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI, for example `sip:bob@example.com`.
    ///   - account: the account the call is made from.
    /// - Returns: the call's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)`` when `uri` does not parse;
    ///   ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAError`` with code
    ///   ``PJSUAError/Code/tooMany`` at the call limit, or another pjsua failure.
    public func makeCall(to uri: String, from account: Account) throws -> Call {
        let accountSlot = try liveSlot(account)
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        return try Native.makeCall(to: uri, from: accountSlot)
    }

    /// Answers an incoming call with a provisional (180, 183) or final (200–699) response.
    ///
    /// 180 rings, 183 answers with session progress (early media, SDP included), 200 accepts,
    /// 3xx–6xx reject. Wraps `pjsua_call_answer2`.
    /// - Throws: ``PJSUAUsageError/invalidStatusCode(_:)`` outside 100–699;
    ///   ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)`` when
    ///   the call is not an unanswered incoming call; ``PJSUAError`` when pjsua refuses.
    public func answer(_ call: Call, statusCode: Int = 200) throws {
        guard (100...699).contains(statusCode) else { throw PJSUAUsageError.invalidStatusCode(statusCode) }
        let slot = try liveSlot(call)
        if let info = Native.readCallInfo(slot, call: call),
           info.info.role != .callee || ![.incoming, .early].contains(info.state) {
            throw PJSUAUsageError.invalidCallState(call, info.state)
        }
        try Native.answer(slot, statusCode: statusCode)
    }

    /// Ends a call: CANCEL before an answer, a final response to an unanswered incoming
    /// call, BYE once established. Wraps `pjsua_call_hangup`.
    /// - Parameter statusCode: for an unanswered incoming call, the final response
    ///   (300–699); `nil` lets pjsua choose (603 for incoming, otherwise the BYE/CANCEL).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidStatusCode(_:)``.
    public func hangup(_ call: Call, statusCode: Int? = nil) throws {
        if let statusCode, !(300...699).contains(statusCode) {
            throw PJSUAUsageError.invalidStatusCode(statusCode)
        }
        let slot = try liveSlot(call)
        try Native.hangup(slot, statusCode: statusCode ?? 0)
    }

    /// Ends every call. Wraps `pjsua_call_hangup_all`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func hangupAll() throws {
        _ = try runtime()
        Native.hangupAll()
    }

    /// A snapshot of a call. Wraps `pjsua_call_get_info` (and `pjsua_call_get_stream_info`
    /// for the codec).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)`` when the call has ended.
    public func callInfo(_ call: Call) throws -> CallInfo {
        let slot = try liveSlot(call)
        guard let info = Native.readCallInfo(slot, call: call) else { throw PJSUAUsageError.unknownCall(call) }
        return info.info
    }

    /// Calls that have started and not yet reported their terminal event.
    public func activeCalls() throws -> [Call] {
        try runtime().bridge.hub.liveCalls.keys.sorted { $0.generation < $1.generation }
    }

    /// RTP/RTCP counters of one of a call's media streams. Wraps `pjsua_call_get_stream_stat`.
    /// - Parameter mediaIndex: the stream's index in the SDP (0 for the usual single audio).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the stream has no
    ///   statistics (no such index, or media not set up).
    public func streamStatistics(_ call: Call, mediaIndex: Int = 0) throws -> StreamStatistics {
        let slot = try liveSlot(call)
        return try Native.streamStatistics(slot, mediaIndex: mediaIndex)
    }

    // MARK: Media

    /// Plays a WAV file into a call: the far end hears it. The link is kept across media
    /// changes and the player is destroyed when the call ends.
    /// Wraps `pjsua_player_create` and `pjsua_conf_connect`.
    /// - Parameters:
    ///   - file: path of a 16-bit PCM WAV file.
    ///   - call: the call to play into.
    ///   - loop: start over at the end of the file.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   opened or is not a supported WAV file.
    @discardableResult
    public func play(file: String, into call: Call, loop: Bool = true) throws -> Player {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let player = try Native.attachPlayer(bridge: runtime.bridge, call: call, file: file, loop: loop)
        if runtime.bridge.hub.hasEnded(call) {
            Native.releaseMedia(bridge: runtime.bridge, of: call)
            throw PJSUAUsageError.unknownCall(call)
        }
        return player
    }

    /// Records the audio a call receives into a WAV file (16-bit PCM at the bridge's clock
    /// rate, mono). The file is closed when the call ends or the recorder is stopped.
    /// Wraps `pjsua_recorder_create` and `pjsua_conf_connect`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   created.
    @discardableResult
    public func record(_ call: Call, to file: String) throws -> Recorder {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let recorder = try Native.attachRecorder(bridge: runtime.bridge, call: call, file: file)
        if runtime.bridge.hub.hasEnded(call) {
            Native.releaseMedia(bridge: runtime.bridge, of: call)
            throw PJSUAUsageError.unknownCall(call)
        }
        return recorder
    }

    /// Stops and destroys a player before its call ends. Wraps `pjsua_player_destroy`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already destroyed.
    public func stop(_ player: Player) throws {
        guard Native.detach(bridge: try runtime().bridge, player: player, recorder: nil) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Stops a recorder and closes its file before its call ends. Wraps `pjsua_recorder_destroy`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already closed.
    public func stop(_ recorder: Recorder) throws {
        guard Native.detach(bridge: try runtime().bridge, player: nil, recorder: recorder) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Attaches the configured sound device to the conference bridge (for example when the
    /// system's audio session becomes active). Wraps `pjsua_set_null_snd_dev` or
    /// `pjsua_set_snd_dev`.
    /// - Throws: ``PJSUAUsageError`` when not running; ``PJSUAError`` when the device cannot
    ///   be opened.
    public func activateAudioDevice() throws {
        let runtime = try runtime()
        try Native.attachSoundDevice(runtime.configuration.media.soundDevice)
    }

    /// Detaches the sound device; no audio flows through the bridge until it is activated
    /// again. Wraps `pjsua_set_no_snd_dev`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func deactivateAudioDevice() throws {
        _ = try runtime()
        Native.detachSoundDevice()
    }
}
