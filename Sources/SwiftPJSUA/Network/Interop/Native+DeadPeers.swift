import CPJSUAShim

/// Dead-peer detection for one run of the engine: each account's settings, the
/// received-packet count of each watched call's audio, and the connection each call's SIP
/// transactions last used.
///
/// The media check runs on the engine thread (from the engine's periodic sweep), so a slow
/// `pjsua_call_get_stream_stat` never holds up pjsua's worker, which delivers events. The
/// transport bookkeeping runs in pjsua's callbacks and only takes this object's lock; what
/// must call pjsua (hang-up, re-INVITE) is handed to the engine thread.
final class DeadPeerWatch: Sendable {
    struct Settings: Sendable {
        var mediaInactivityTimeout: Duration?
        var transportLossPolicy: TransportLossPolicy
    }

    /// The received-packet count of the audio stream a call is expected to receive on, and
    /// when the engine last saw it change (or started watching).
    private struct MediaWatch: Sendable {
        var mediaIndex: Int
        var packets: UInt64
        var since: ContinuousClock.Instant
    }

    private struct State: Sendable {
        /// By account generation; kept after an account is removed, for the calls it leaves.
        var settings: [UInt64: Settings] = [:]
        /// By call generation.
        var media: [UInt64: MediaWatch] = [:]
        /// The connection (``Native/describeTransport(_:)``) each call's SIP transactions last
        /// went over, by call generation; only connection-oriented transports.
        var connections: [UInt64: String] = [:]
        /// Calls that have been confirmed, by generation (only those lose their connection).
        var confirmed: [UInt64: Call] = [:]
        /// The reason the call's terminal event must carry, set before the engine ends it.
        var endReasons: [UInt64: String] = [:]
        /// Calls whose re-INVITE after a lost connection has not been answered yet.
        var recovering: Set<UInt64> = []
    }

    private let state = Protected(State())

    func configure(_ account: Account, _ settings: Settings) {
        state.withLock { $0.settings[account.generation] = settings }
    }

    func settings(of account: Account?) -> Settings {
        let defaults = Settings(mediaInactivityTimeout: nil, transportLossPolicy: .endCall)
        guard let account else { return defaults }
        return state.withLock { $0.settings[account.generation] } ?? defaults
    }

    /// Notes the state and the connection of a call's event; forgets the call when it ends.
    func observe(_ call: Call, state callState: CallState?, connection: String?) {
        state.withLock { state in
            let generation = call.generation
            if callState == .disconnected {
                state.media[generation] = nil
                state.connections[generation] = nil
                state.confirmed[generation] = nil
                state.endReasons[generation] = nil
                state.recovering.remove(generation)
                return
            }
            if callState == .confirmed { state.confirmed[generation] = call }
            if let connection { state.connections[generation] = connection }
        }
    }

    /// The reason the call's terminal event must carry instead of pjsua's, if the engine
    /// ended it.
    func endReason(of call: Call) -> String? {
        state.withLock { $0.endReasons[call.generation] }
    }

    func setEndReason(_ reason: String?, of call: Call) {
        state.withLock { $0.endReasons[call.generation] = reason }
    }

    /// The confirmed calls whose last transaction went over `connection`; they are no longer
    /// counted as using it.
    func takeCalls(on connection: String) -> [Call] {
        state.withLock { state in
            let generations = state.connections.filter { $0.value == connection }.map(\.key)
            var calls: [Call] = []
            for generation in generations {
                state.connections[generation] = nil
                if let call = state.confirmed[generation] { calls.append(call) }
            }
            return calls
        }
    }

    func beginRecovery(of call: Call) {
        state.withLock { state in
            state.recovering.insert(call.generation)
            state.endReasons[call.generation] = PJSUA.transportLostReason
        }
    }

    /// Ends the recovery of `call` (the peer answered); `false` when none was running.
    func endRecovery(of call: Call, recovered: Bool) -> Bool {
        state.withLock { state in
            guard state.recovering.remove(call.generation) != nil else { return false }
            if recovered { state.endReasons[call.generation] = nil }
            return true
        }
    }

    /// Updates the call's watch with the stream's count at `now`; returns how long the count
    /// has stood still when that reaches `timeout` (the watch is then dropped).
    func check(
        _ call: Call, mediaIndex: Int, packets: UInt64, timeout: Duration, now: ContinuousClock.Instant
    ) -> Duration? {
        state.withLock { state in
            let generation = call.generation
            guard var watch = state.media[generation], watch.mediaIndex == mediaIndex else {
                state.media[generation] = MediaWatch(mediaIndex: mediaIndex, packets: packets, since: now)
                return nil
            }
            if watch.packets != packets {
                watch.packets = packets
                watch.since = now
                state.media[generation] = watch
                return nil
            }
            let silence = now - watch.since
            guard silence >= timeout else { return nil }
            state.media[generation] = nil
            return silence
        }
    }

    /// Stops watching the call's media (it is not expected to receive now); the timeout
    /// starts again from zero when it is.
    func unwatch(_ call: Call) {
        _ = state.withLock { $0.media.removeValue(forKey: call.generation) }
    }
}

/// What the media check needs of a call.
struct NativeReceiveState {
    var state: CallState
    var account: Account?
    /// The first audio stream that is active and receiving, with its received-packet count.
    var receiving: (mediaIndex: Int, packets: UInt64)?
}

extension Native {
    /// Names a connection as `TYPE local->remote`; `nil` for a datagram transport or none.
    static func describeTransport(_ transport: UnsafePointer<pjsip_transport>?) -> String? {
        guard let transport, cpj_transport_is_reliable(transport) != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: 160)
        let length = buffer.withUnsafeMutableBufferPointer { buf -> Int in
            guard let base = buf.baseAddress else { return -1 }
            return Int(cpj_transport_describe(transport, base, pj_size_t(buf.count)))
        }
        guard length > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { buf in
            String(decoding: UnsafeRawBufferPointer(buf).prefix(length), as: UTF8.self)
        }
    }

    /// The connection an INVITE-session event went over, if connection-oriented.
    static func connection(of event: UnsafePointer<pjsip_event>?) -> String? {
        guard let event, let transport = cpj_event_transport(event) else { return nil }
        return describeTransport(transport)
    }

    /// Reads the call's state, account and receiving audio stream. Engine thread.
    static func receiveState(_ slot: pjsua_call_id, call: Call) -> NativeReceiveState? {
        let raw = UnsafeMutablePointer<pjsua_call_info>.allocate(capacity: 1)
        defer { raw.deallocate() }
        guard pjsua_call_get_info(slot, raw) == cpj_success() else { return nil }
        var result = NativeReceiveState(
            state: CallState(native: raw.pointee.state), account: ownAccount(of: call, slot: raw.pointee.acc_id))
        for index in 0..<raw.pointee.media_cnt {
            guard let m = cpj_call_info_media(raw, index), m.pointee.type == PJMEDIA_TYPE_AUDIO else { continue }
            // RFC 3264 §6.1: RTP is expected only on a stream we receive on (sendrecv or
            // recvonly, pjsua's ACTIVE). Remote hold (the peer sendonly or inactive) may
            // carry music on hold or nothing; local hold (we sendonly or inactive) none.
            let direction = MediaDirection(native: m.pointee.dir)
            guard MediaStatus(native: m.pointee.status) == .active,
                direction == .sendReceive || direction == .receive
            else { continue }
            let stats = UnsafeMutablePointer<pjsua_stream_stat>.allocate(capacity: 1)
            defer { stats.deallocate() }
            guard cpj_call_get_stream_stat(slot, m.pointee.index, stats) == cpj_success() else { continue }
            result.receiving = (Int(m.pointee.index), UInt64(stats.pointee.rtcp.rx.pkt))
            break
        }
        return result
    }

    /// One media check of every live call: reports and ends those whose receiving audio
    /// stream's packet count stood still for their account's timeout. Engine thread.
    static func superviseMedia(bridge: EngineBridge, now: ContinuousClock.Instant) {
        let watch = bridge.deadPeers
        let accounts = bridge.calls.withLock { $0.callAccounts }
        for call in bridge.hub.liveCalls.keys {
            // Cheap first: a call of an account without a timeout costs no pjsua call.
            if let account = accounts[call.generation], watch.settings(of: account).mediaInactivityTimeout == nil {
                watch.unwatch(call)
                continue
            }
            guard let slot = Handles.liveSlot(call), let info = receiveState(slot, call: call) else {
                watch.unwatch(call)
                continue
            }
            guard info.state == .confirmed, let timeout = watch.settings(of: info.account).mediaInactivityTimeout,
                let receiving = info.receiving
            else {
                watch.unwatch(call)
                continue
            }
            guard
                let silence = watch.check(
                    call, mediaIndex: receiving.mediaIndex, packets: receiving.packets, timeout: timeout, now: now)
            else { continue }
            bridge.hub.emit(
                .mediaInactivity(
                    MediaInactivity(
                        call: call, mediaIndex: receiving.mediaIndex, timeout: timeout, silence: silence,
                        packetsReceived: receiving.packets)))
            end(call, slot: slot, reason: PJSUA.mediaTimeoutReason, bridge: bridge)
        }
    }

    /// Ends a call the engine gave up on: BYE (or CANCEL), and a terminal event with `reason`
    /// whether or not pjsua reports one now. Engine thread.
    static func end(_ call: Call, slot: pjsua_call_id, reason: String, bridge: EngineBridge) {
        bridge.deadPeers.setEndReason(reason, of: call)
        // pjsua reports a local hang-up's DISCONNECTED at once (the callback uses `reason`);
        // the BYE transaction goes on without the call.
        _ = pjsua_call_hangup(slot, 0, nil, nil)
        bridge.hub.synthesizeEnd(of: call, reason: reason)
    }

    /// Applies the account's policy to a call whose connection was lost. Engine thread.
    static func recoverFromTransportLoss(_ call: Call, policy: TransportLossPolicy, bridge: EngineBridge) {
        guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call),
            readCallState(slot, call: call)?.state == .confirmed
        else { return }
        switch policy {
        case .endCall:
            end(call, slot: slot, reason: PJSUA.transportLostReason, bridge: bridge)
        case .reinvite:
            bridge.deadPeers.beginRecovery(of: call)
            reinvite(call, slot: slot, bridge: bridge, deadline: .now + reinviteRetryLimit)
        }
    }

    /// How long a re-INVITE after a lost connection is retried while pjsua refuses it because
    /// the last INVITE transaction is still open (as hold and resume do).
    static let reinviteRetryLimit: Duration = .seconds(2)

    /// Sends the re-INVITE of a call whose connection was lost, retrying every 20 ms while
    /// pjsua answers `PJ_EINVALIDOP` (an INVITE transaction still open) until `deadline`;
    /// ends the call when it cannot be sent. Engine thread.
    private static func reinvite(
        _ call: Call, slot: pjsua_call_id, bridge: EngineBridge, deadline: ContinuousClock.Instant
    ) {
        let status = cpj_call_reinvite(slot)
        if status == cpj_success() { return }
        if PJSUAError.Code(rawValue: status) == .invalidOperation, ContinuousClock.now < deadline {
            Task {
                try? await Task.sleep(for: .milliseconds(20))
                bridge.executor.post {
                    guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call),
                        readCallState(slot, call: call)?.state == .confirmed
                    else { return }
                    reinvite(call, slot: slot, bridge: bridge, deadline: deadline)
                }
            }
            return
        }
        _ = bridge.deadPeers.endRecovery(of: call, recovered: false)
        end(call, slot: slot, reason: PJSUA.transportLostReason, bridge: bridge)
    }
}

// MARK: - C callbacks

/// A connection closed or failed: the confirmed calls whose last transaction went over it
/// are reported and handed to the engine thread for their account's policy. Runs on the
/// thread that noticed (pjsua's worker), inside pjsip's transport locks: no pjsua call here.
func onTransportState(
    _ transport: UnsafeMutablePointer<pjsip_transport>?, _ state: pjsip_transport_state,
    _ info: UnsafePointer<pjsip_transport_state_info>?
) {
    guard state == cpj_tp_state_disconnected(), let bridge = EngineBridge.active(),
        let connection = Native.describeTransport(transport)
    else { return }
    let calls = bridge.deadPeers.takeCalls(on: connection)
    guard !calls.isEmpty else { return }
    let reason = info.map { PJ.describe($0.pointee.status) } ?? ""
    var actions: [(Call, TransportLossPolicy)] = []
    for call in calls where !bridge.hub.hasEnded(call) {
        let account = bridge.calls.withLock { $0.callAccounts[call.generation] }
        let policy = bridge.deadPeers.settings(of: account).transportLossPolicy
        bridge.hub.emit(
            .transportLoss(TransportLoss(call: call, connection: connection, reason: reason, action: policy)))
        if policy == .reinvite {
            // Until the re-INVITE's answer (onCallTransactionState) or the call's end.
            bridge.hub.emit(.reconnection(CallReconnection(call: call, phase: .reconnecting(.transportLoss))))
        }
        actions.append((call, policy))
    }
    guard !actions.isEmpty, let transport else { return }
    // The BYE or re-INVITE must not go out over this connection, which pjsip shuts down
    // only after this callback: hold it until then (the reference keeps it readable).
    cpj_transport_retain(transport)
    let dying = DyingTransport(transport)
    let deadline = ContinuousClock.now + Native.transportShutdownWait
    let pending = actions
    bridge.executor.post { Native.afterShutdown(of: dying, bridge: bridge, deadline: deadline, actions: pending) }
}

/// A transport the engine holds a reference on until pjsip has shut it down.
struct DyingTransport: @unchecked Sendable {
    // Safety: the pointer is only passed to pjsip (which locks the transport) on the engine
    // thread, and the reference taken with it keeps the transport alive until released there.
    let pointer: UnsafeMutablePointer<pjsip_transport>
    init(_ pointer: UnsafeMutablePointer<pjsip_transport>) { self.pointer = pointer }
}

extension Native {
    /// How long the engine waits for pjsip to shut a lost connection down before acting anyway.
    static let transportShutdownWait: Duration = .seconds(1)

    /// Applies each call's policy once pjsip has shut `transport` down (checked every 5 ms,
    /// at most until `deadline`), then releases it. Engine thread.
    static func afterShutdown(
        of transport: DyingTransport, bridge: EngineBridge, deadline: ContinuousClock.Instant,
        actions: [(Call, TransportLossPolicy)]
    ) {
        guard EngineBridge.active() === bridge else { return }
        if cpj_transport_is_shut_down(transport.pointer) == 0, ContinuousClock.now < deadline {
            Task {
                try? await Task.sleep(for: .milliseconds(5))
                bridge.executor.post {
                    afterShutdown(of: transport, bridge: bridge, deadline: deadline, actions: actions)
                }
            }
            return
        }
        cpj_transport_release(transport.pointer)
        for (call, policy) in actions { recoverFromTransportLoss(call, policy: policy, bridge: bridge) }
    }
}

/// A transaction of a call changed state: notes the connection it used, and settles a
/// re-INVITE sent after a lost connection.
func onCallTransactionState(
    _ slot: pjsua_call_id, _ transaction: UnsafeMutablePointer<pjsip_transaction>?,
    _ event: UnsafeMutablePointer<pjsip_event>?
) {
    // RFC 5626 §4.4: a call's request that timed out over TCP or TLS retires its connection.
    _ = Native.replaceFlowAfterUnansweredRequest(transaction, event)
    // pjsua finds an ended dialog's call through its old slot, which a newer call may hold:
    // only the transactions of the slot's own dialog are that call's.
    let owned = transaction.map { cpj_call_owns_tsx(slot, $0) != 0 } ?? false
    TransactionOrigin.note(slot: slot, foreign: !owned)
    guard owned, let bridge = EngineBridge.active(), let transaction, let call = Handles.liveCall(slot) else { return }
    if cpj_event_is_refer_notify(transaction, event) != 0 { bridge.hub.noteTransferNotify(on: call) }
    bridge.deadPeers.observe(call, state: nil, connection: Native.connection(of: event))
    Native.noteRefreshOutcome(call, transaction, event, bridge: bridge)
    var local: pj_bool_t = 0
    let code = Int(cpj_event_reinvite_outcome(transaction, event, &local))
    guard code >= 200 else { return }
    // A hold or resume: a 491 is retried, a refusal reported.
    if cpj_tsx_is_initial_invite(transaction) == 0 { Native.reofferAnswered(call, code: code, bridge: bridge) }
    // 408, 481 or a failure pjsip made up itself (no connection, no answer): nobody is there.
    let peerGone = code == 408 || code == 481 || local != 0
    guard bridge.deadPeers.endRecovery(of: call, recovered: !peerGone) else { return }
    guard peerGone else {
        // The peer answered over the new connection: the call is back (its media update, if
        // the answer brought one, came before this transaction's end).
        bridge.hub.emit(.reconnection(CallReconnection(call: call, phase: .reconnected)))
        return
    }
    bridge.executor.post {
        guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call) else { return }
        Native.end(call, slot: slot, reason: PJSUA.transportLostReason, bridge: bridge)
    }
}

extension DeadPeerWatch.Settings {
    init(_ configuration: AccountConfiguration) {
        self.init(
            mediaInactivityTimeout: configuration.mediaInactivityTimeout,
            transportLossPolicy: configuration.transportLossPolicy)
    }
}

extension Native {
    /// A re-INVITE or UPDATE of a confirmed call that pjsip sent on its own (a session refresh,
    /// RFC 4028) got 481 or 408, or no answer: pjsip ends the call (RFC 5057 §5.1), and its
    /// terminal event says ``PJSUA/sessionRefreshFailedReason``. One the engine sent for the app
    /// (hold, resume, a network change, a lost connection, ``PJSUA/reinvite(_:includingSDP:headers:)``,
    /// ``PJSUA/update(_:includingSDP:headers:)``) keeps pjsua's reason. Runs in `on_call_tsx_state`,
    /// before the hold and resume follow-up forgets its request.
    static func noteRefreshOutcome(
        _ call: Call, _ transaction: UnsafeMutablePointer<pjsip_transaction>,
        _ event: UnsafeMutablePointer<pjsip_event>?, bridge: EngineBridge
    ) {
        var local: pj_bool_t = 0
        let code = Int(cpj_event_refresh_outcome(transaction, event, &local))
        guard code >= 200, cpj_tsx_is_initial_invite(transaction) == 0 else { return }
        let requested = bridge.calls.withLock { state in
            state.settleRequestedOffer(of: call) || state.pendingReoffers[call.generation] != nil
        }
        guard !requested, code == 481 || code == 408, bridge.deadPeers.endReason(of: call) == nil else { return }
        bridge.deadPeers.setEndReason(PJSUA.sessionRefreshFailedReason, of: call)
    }
}
