import Foundation
import SwiftPJSUA

/// Routes between the engine and the system's call UI: one logical call per push/INVITE
/// pair, user actions applied to the right engine call, and the sound device attached only
/// while the system's audio session is active.
///
/// Platform-neutral: it talks to a ``CallProvider`` (CallKit on iOS, a recording double in
/// tests) and to a ``CallEngine`` (``PJSUAEngine`` over the real engine).
///
/// Feed it the engine's events with ``run(events:)``, pushes with ``handlePush(_:)``, user
/// actions with ``perform(_:)`` and the audio session's signals with
/// ``audioSessionDidActivate()`` and ``audioSessionDidDeactivate()``.
///
/// What it guarantees:
/// - Each logical call is reported with ``CallProvider/reportNewIncomingCall(_:update:)``
///   once, whichever of push and INVITE comes first (see ``CallRegistry`` for the matching).
/// - Start and answer are fulfilled as Apple's CallKit flow has it, without waiting for
///   the far end: a start action once the INVITE is out (`makeCall` returned; failed when
///   placing throws), an answer once the 200 is sent (applied when the INVITE arrives if the
///   user answered before it). CallKit activates the audio session after the fulfilment, so
///   ringback and early media reach the sound device while the call rings, and a long ring
///   never times an action out. The outgoing call's progress follows as reports:
///   ``CallProvider/reportOutgoingCallStartedConnecting(_:)`` at the first provisional
///   response (180/183), ``CallProvider/reportOutgoingCallConnected(_:)`` at CONFIRMED, and a
///   call that fails after its action was fulfilled is reported ended with its reason
///   (``CallProvider/reportCallEnded(_:reason:)``). Hold is fulfilled when the media state
///   shows it.
/// - CallKit is told what the engine can do: ``CallUpdate/hasVideo`` only when the engine
///   carries video (``CallEngine/carriesVideo``, `false` today) and the call offers it.
/// - A VoIP push token given to ``updatePushToken(_:)`` reaches the REGISTER of every bound
///   account that has push parameters, once per change, also of accounts bound or added
///   by a cold start after the token came.
/// - A push whose INVITE does not come within ``pushTimeToLive`` (on the injected clock) is
///   reported ended as ``CallEndReason/unanswered``.
/// - A call replaced by an INVITE with `Replaces` (RFC 3891; `IncomingCall.replaces`)
///   keeps its UUID: the new call carries on as the same logical call, the provider gets a
///   ``CallProvider/reportCallUpdated(_:update:)`` with the new far end, and neither a new
///   incoming call nor the replaced call's end is reported.
/// - A call that reconnects (`PJSUAEvent.reconnection`) keeps its UUID:
///   the provider gets ``CallProvider/reportCallReconnecting(_:)`` and then
///   ``CallProvider/reportCallReconnected(_:)`` (or
///   ``CallProvider/reportCallReconnectionFailed(_:)``), never a new call or an end for it;
///   a call that ends while reconnecting is reported ended as any other.
/// - The sound device is attached by ``audioSessionDidActivate()`` and detached by
///   ``audioSessionDidDeactivate()`` and by nothing else: answering or dialling never opens
///   the microphone. Start the engine with `soundDeviceActivation: .byApp`.
public actor CallRouter {
    /// What a push led to.
    public enum PushOutcome: Sendable, Hashable {
        /// A new call was reported to the provider.
        case reportedNewCall(UUID)
        /// The call was already known (its INVITE or an earlier push came first); nothing new
        /// was reported. On iOS the PushKit adapter still satisfies PushKit's rule.
        case alreadyReported(UUID)
        /// The provider refused the call (Do Not Disturb, a blocked caller); its INVITE is
        /// declined with 486 when it comes.
        case rejectedBySystem(UUID)
        /// The call already ended (its INVITE came first and was cancelled or answered
        /// elsewhere within ``pushTimeToLive``): a late push. Nothing was reported; on iOS the
        /// PushKit adapter reports the call ended at once, as PushKit obliges it to report one.
        case alreadyEnded(UUID)
        /// The account was asked to register again.
        case reRegistered(Account)
        /// A VoIP push nothing could read (see ``VoIPPushReceipt/Content/unreadable(_:)``):
        /// a placeholder call with this UUID was reported and ended at once as failed.
        case unreadable(UUID)
    }

    /// What the router knows of a Call-ID, readable without awaiting the actor (PushKit
    /// needs a UUID synchronously, before its delegate method returns).
    private struct Claim {
        var id: UUID
        /// For an ended call: whether its ``pushTimeToLive`` has passed (then it is forgotten).
        var forgotten: (@Sendable () -> Bool)?
        var ended: Bool { forgotten != nil }
    }

    /// The router's per-call bookkeeping, beside the registry entry.
    private struct Track {
        enum Report { case reporting, reported }
        var report: Report
        /// The call ended while the provider was still being told of it: report this after.
        var endedWhileReporting: CallEndReason?
        /// The INVITE, when it comes, is declined with this status (the user declined, or
        /// the system refused, before it arrived); nothing more is reported.
        var declineStatus: Int?
        /// An answer action waiting for its INVITE, or for the engine's 200 to go out.
        var pendingAnswer: UUID?
        /// The 200 was sent: a second answer action does not apply.
        var answered = false
        var pendingEnd: UUID?
        var pendingHold: (action: UUID, onHold: Bool)?
        var reportedConnecting = false
        /// The call this one's audio is joined with.
        var groupedWith: UUID?
        var expiry: Task<Void, Never>?
    }

    private let engine: any CallEngine
    private let provider: any CallProvider
    private let clock: any Clock<Duration>
    /// How long a push waits for its INVITE before the call is reported ended as unanswered.
    public let pushTimeToLive: Duration
    /// The INVITE header in which the server may put the call's UUID (the same UUID as in
    /// the push's `uuid`), or `nil` to ignore headers.
    public let callUUIDHeader: String?
    /// Reads VoIP pushes in the server's payload shape (``PushPayload/schemaV1Parser`` by default).
    public nonisolated let pushParser: IncomingCallPushParser
    /// Maps start actions' handles to URIs (``HandleMapping/standard`` by default).
    public let handleMapping: HandleMapping

    private var registry = CallRegistry()
    /// Call-ID → UUID of live calls, of pushes claimed by ``claimCallUUID(for:)`` and, for
    /// ``pushTimeToLive`` after they end, of ended calls (so a late push is not a new call).
    private let claims = Protected<[String: Claim]>([:])
    private var tracks: [UUID: Track] = [:]
    private var hints: [Account: String] = [:]
    private var boundAccounts: [Account] = []
    /// The latest push-token work (``updatePushToken(_:)``, ``bind(_:pushHint:)``): the next waits for it.
    private var pushWork: Task<Void, Never>?
    /// The VoIP push token the router holds, as the push resource ID (`pn-prid`) it puts in
    /// the REGISTER of push accounts (lowercase hexadecimal for PushKit's bytes); `nil`
    /// before ``updatePushToken(_:)`` gave one, or after it was invalidated.
    public private(set) var pushToken: String?
    /// Calls being placed: their first events may arrive before `makeCall` returns.
    private var startsInFlight = 0
    private var earlyEvents: [PJSUAEvent] = []
    /// Whether the system's audio session is active (and so the sound device attached).
    public private(set) var isAudioSessionActive = false

    /// Whether calls may be shown with video: the engine's ``CallEngine/carriesVideo``. An
    /// offer or push with video is shown as audio while the engine answers audio only.
    private nonisolated var carriesVideo: Bool { engine.carriesVideo }

    /// Creates a router.
    /// - Parameters:
    ///   - engine: the engine (``PJSUAEngine`` for the real one).
    ///   - provider: the call UI.
    ///   - clock: the clock that times push expiry; inject a manual clock in tests.
    ///   - pushTimeToLive: how long a push waits for its INVITE (30 s by default).
    ///   - callUUIDHeader: the INVITE header carrying the server's UUID for the call
    ///     (`X-Call-UUID` by default), so a push without a Call-ID matches its INVITE exactly;
    ///     `nil` ignores headers.
    ///   - pushParser: reads VoIP pushes (``receiveVoIPPush(_:)``) in your server's payload
    ///     shape; tried first, schema version 1 after it. ``PushPayload/schemaV1Parser`` by default.
    ///   - handleMapping: turns start actions' handles (``CallAction/Kind/dial(_:account:hasVideo:)``)
    ///     into URIs; ``HandleMapping/standard`` by default.
    ///
    /// A `provider` that is also a ``CallActionSource`` (the CallKit adapter is) starts
    /// delivering its user actions to this router here, in the initializer: there is no
    /// separate step to forget.
    public init(
        engine: any CallEngine, provider: any CallProvider, clock: any Clock<Duration> = ContinuousClock(),
        pushTimeToLive: Duration = .seconds(30), callUUIDHeader: String? = "X-Call-UUID",
        pushParser: @escaping IncomingCallPushParser = PushPayload.schemaV1Parser,
        handleMapping: HandleMapping = .standard
    ) {
        self.engine = engine
        self.provider = provider
        self.clock = clock
        self.pushTimeToLive = pushTimeToLive
        self.callUUIDHeader = callUUIDHeader
        self.pushParser = pushParser
        self.handleMapping = handleMapping
        if let source = provider as? any CallActionSource { source.deliverActions(to: self) }
    }

    /// The calls known now, oldest first.
    public var calls: [CallRegistry.Entry] { registry.all }

    /// Binds an account to the hint pushes use to name it (for example its address of record).
    ///
    /// INVITEs on the account reconcile with pushes that carry this hint and no Call-ID;
    /// `reregister` pushes with this hint re-register it. The first bound account places
    /// calls whose start action names none. An account with push parameters
    /// (`AccountConfiguration.push`) takes the router's push token (``updatePushToken(_:)``):
    /// when the router holds one its parameters do not carry yet, a REGISTER with it is
    /// sent before this returns.
    /// - Parameters:
    ///   - account: the engine's account.
    ///   - pushHint: the hint, compared exactly.
    public func bind(_ account: Account, pushHint: String) async {
        hints[account] = pushHint
        if !boundAccounts.contains(account) { boundAccounts.append(account) }
        guard pushToken != nil else { return }
        _ = await serializingPushWork { await self.applyPushToken(to: [account]) }
    }

    // MARK: Push token

    /// Hands a new VoIP push token to the REGISTER of every bound account that has push
    /// parameters (RFC 8599): PushKit's `pushRegistry(_:didUpdate:for:)`, which
    /// `VoIPPushHandler` forwards here itself.
    ///
    /// The token's bytes become the `pn-prid` as lowercase hexadecimal text (as
    /// `PushConfiguration.apns(teamID:bundleID:token:pushType:scope:)` writes them); the
    /// account's other parameters (`pn-provider`, `pn-param`, the scope) stay as configured.
    /// Each account whose parameters carry another `pn-prid` is re-registered with
    /// `PJSUA.reRegister(_:updatingPush:)` (``CallEngine/reRegister(_:updatingPush:)``), which
    /// replaces the registrar's binding; one already carrying it is left alone. A token
    /// equal to the last one sends nothing. A token that comes before an account is bound
    /// is kept: ``bind(_:pushHint:)`` applies it, and a cold start
    /// (``PJSUAEngine/ColdStart``) adds its accounts with it. Updates are applied one at a
    /// time, in the order they were made.
    ///
    /// `nil` (PushKit invalidated the token) forgets the token and sends nothing: the
    /// registrar keeps the binding it has until a new token replaces it.
    /// - Parameter token: the token's bytes (`PKPushCredentials.token`), or `nil`.
    /// - Returns: the accounts a REGISTER with the new token was sent for. An account the
    ///   engine could not re-register (gone, no registrar) is left out.
    @discardableResult
    public func updatePushToken(_ token: Data?) async -> [Account] {
        await updatePushToken(resourceID: token?.hexadecimal)
    }

    /// Like ``updatePushToken(_:)``, with the push resource ID as text, for providers whose
    /// token is not bytes (an FCM registration token) or a token kept as text.
    /// - Parameter resourceID: the new `pn-prid`, or `nil` to forget the token.
    /// - Returns: the accounts a REGISTER with it was sent for.
    @discardableResult
    public func updatePushToken(resourceID: String?) async -> [Account] {
        guard resourceID != pushToken else { return [] }
        pushToken = resourceID
        guard resourceID != nil else { return [] }
        return await serializingPushWork { await self.applyPushToken(to: self.boundAccounts) }
    }

    /// Runs push-token work after the work before it, so two updates never interleave at
    /// their awaits (which would send a REGISTER twice, or an older token last).
    private func serializingPushWork(_ work: @escaping @Sendable () async -> [Account]) async -> [Account] {
        let previous = pushWork
        let task = Task {
            await previous?.value
            return await work()
        }
        pushWork = Task { _ = await task.value }
        return await task.value
    }

    /// Re-registers each account whose push parameters carry another token than the router's.
    private func applyPushToken(to accounts: [Account]) async -> [Account] {
        var updated: [Account] = []
        for account in accounts {
            guard let token = pushToken, boundAccounts.contains(account) else { continue }
            guard var push = await engine.pushConfiguration(of: account), push.resourceID != token else { continue }
            // A newer token came meanwhile: its own work, queued after this, applies it.
            guard pushToken == token else { continue }
            push.resourceID = token
            do {
                try await engine.reRegister(account, updatingPush: push)
                updated.append(account)
            } catch {
                // Gone or without a registrar: nothing to carry the token.
            }
        }
        return updated
    }

    /// The UUID a call push will get, decided now and without awaiting the router.
    ///
    /// For PushKit's rule that the call is reported to CallKit before the delegate method
    /// returns: the adapter claims the UUID, reports it to CallKit synchronously, then hands
    /// the push to ``handlePush(_:)`` with ``IncomingCallPush/serverUUID`` set to it. A push
    /// whose Call-ID is already known (its INVITE came first, or the call just ended) gets
    /// that call's UUID, so CallKit never shows it twice; otherwise the UUID follows
    /// ``CallIdentity`` and the Call-ID is reserved for it, so an INVITE that overtakes the
    /// push joins it.
    /// - Parameter push: the parsed push.
    /// - Returns: the call's UUID.
    public nonisolated func claimCallUUID(for push: IncomingCallPush) -> UUID {
        guard let callID = push.sipCallID else { return CallIdentity.uuid(serverUUID: push.serverUUID) }
        return claims.withLock { claims in
            if let claim = claims[callID], claim.forgotten?() != true { return claim.id }
            let id = CallIdentity.uuid(serverUUID: push.serverUUID, sipCallID: callID)
            claims[callID] = Claim(id: id)
            return id
        }
    }

    /// The UUID the router gives a Call-ID now: a claimed or live one, else ``CallIdentity``'s.
    private func claimedID(for callID: String) -> UUID? {
        claims.withLock { claims in
            guard let claim = claims[callID], !claim.ended else { return nil }
            return claim.id
        }
    }

    /// The UUID of a call with this Call-ID that ended less than ``pushTimeToLive`` ago.
    private func endedID(for callID: String) -> UUID? {
        claims.withLock { claims in
            guard let claim = claims[callID], let forgotten = claim.forgotten else { return nil }
            if forgotten() {
                claims[callID] = nil
                return nil
            }
            return claim.id
        }
    }

    private func noteLive(_ entry: CallRegistry.Entry) {
        guard let callID = entry.sipCallID, !entry.isOutgoing else { return }
        claims.withLock { $0[callID] = Claim(id: entry.id) }
    }

    /// Marks the entry's Call-ID ended; it is forgotten once the push TTL has passed on the
    /// clock, and ended Call-IDs already past it are pruned now.
    private func noteEnded(_ entry: CallRegistry.Entry) {
        guard let callID = entry.sipCallID, !entry.isOutgoing else { return }
        let forgotten = clock.hasPassed(pushTimeToLive)
        claims.withLock { claims in
            claims = claims.filter { $0.value.forgotten?() != true }
            claims[callID] = Claim(id: entry.id, forgotten: forgotten)
        }
    }

    // MARK: Engine events

    /// Handles the engine's events until the stream finishes (the engine shut down) or the
    /// task running it is cancelled.
    /// - Parameter events: a subscription made before the first call, such as `PJSUA.events`.
    public func run(events: AsyncStream<PJSUAEvent>) async {
        for await event in events { await handle(event) }
    }

    /// Handles one engine event; ``run(events:)`` calls this for each.
    /// - Parameter event: the event.
    public func handle(_ event: PJSUAEvent) async {
        switch event {
        case .incomingCall(let incoming):
            if let replaced = incoming.replaces, handleReplacement(incoming, replacing: replaced) { return }
            let serverUUID = callUUIDHeader.flatMap { incoming.headers.value(of: $0) }.flatMap {
                UUID(uuidString: $0.trimmingCharacters(in: .whitespaces))
            }
            await handleInvite(
                account: incoming.account, call: incoming.call, sipCallID: incoming.sipCallID, from: incoming.from,
                hasVideo: incoming.offeredVideo && carriesVideo, serverUUID: serverUUID)
        case .callState, .callMediaState, .reconnection:
            handleCallEvent(event)
        default:
            // Registration, DTMF, transfer and media-port events need no CallKit report.
            break
        }
    }

    private func handleInvite(
        account: Account, call: Call, sipCallID: String, from: SIPAddress, hasVideo: Bool, serverUUID: UUID?
    ) async {
        let arrival = registry.recordInvite(
            call: call, account: account, accountHint: hints[account], sipCallID: sipCallID, from: from,
            hasVideo: hasVideo, serverUUID: serverUUID, newID: claimedID(for: sipCallID))
        let entry = arrival.entry
        noteLive(entry)
        guard !arrival.isNew, var track = tracks[entry.id] else {
            // A new call (or, defensively, an entry the router holds no state for).
            tracks[entry.id] = Track(report: .reporting)
            try? await engine.answer(call, statusCode: 180)
            await report(entry)
            return
        }
        track.expiry?.cancel()
        track.expiry = nil
        tracks[entry.id] = track
        if let status = track.declineStatus {
            registry.remove(entry.id)
            noteEnded(entry)
            if track.report == .reported { tracks[entry.id] = nil }
            try? await engine.hangup(call, statusCode: status)
            return
        }
        if track.report == .reported, arrival.updateChanged {
            provider.reportCallUpdated(entry.id, update: entry.update)
        }
        if let answer = track.pendingAnswer {
            await applyAnswer(answer, to: call, of: entry.id)
        } else {
            try? await engine.answer(call, statusCode: 180)
        }
    }

    /// A call replacing one the router knows (RFC 3891): the engine has already answered it
    /// as the old call was answered, and ends the old call. The old call's UUID carries on
    /// with the new call, the provider hears only of the new far end (an update, not a new
    /// ringing call), and the old call's end is not reported. `false` when the replaced call
    /// is unknown: then it is a new call like any other.
    private func handleReplacement(_ incoming: IncomingCall, replacing old: Call) -> Bool {
        guard let before = registry.entry(for: old),
            let arrival = registry.recordReplacement(
                of: old, by: incoming.call, sipCallID: incoming.sipCallID, from: incoming.from,
                hasVideo: incoming.offeredVideo && carriesVideo)
        else { return false }
        // The old Call-ID ends (a late push for it is no new call); the new one is live.
        noteEnded(before)
        noteLive(arrival.entry)
        if arrival.updateChanged, tracks[arrival.entry.id]?.report == .reported {
            provider.reportCallUpdated(arrival.entry.id, update: arrival.entry.update)
        }
        return true
    }

    /// Tells the provider of a new call and settles what happened meanwhile.
    private func report(_ entry: CallRegistry.Entry) async {
        do {
            try await provider.reportNewIncomingCall(entry.id, update: entry.update)
        } catch {
            guard var track = tracks[entry.id] else { return }
            track.report = .reported
            track.declineStatus = 486
            if let answer = track.pendingAnswer {
                track.pendingAnswer = nil
                provider.fail(answer, error: .callEnded)
            }
            tracks[entry.id] = track
            if track.endedWhileReporting != nil {
                tracks[entry.id] = nil
            } else if let current = registry[entry.id], let call = current.call {
                registry.remove(entry.id)
                noteEnded(current)
                tracks[entry.id] = nil
                try? await engine.hangup(call, statusCode: 486)
            }
            return
        }
        guard var track = tracks[entry.id] else { return }
        track.report = .reported
        if let reason = track.endedWhileReporting {
            tracks[entry.id] = nil
            provider.reportCallEnded(entry.id, reason: reason)
        } else if registry[entry.id] == nil {
            tracks[entry.id] = nil  // Declined and gone while the report was under way.
        } else {
            tracks[entry.id] = track
            // The INVITE may have overtaken the report with a display-name the push lacked.
            if let now = registry[entry.id]?.update, now != entry.update {
                provider.reportCallUpdated(entry.id, update: now)
            }
        }
    }

    private func handleCallEvent(_ event: PJSUAEvent) {
        guard let call = event.call else { return }
        guard let entry = registry.entry(for: call), var track = tracks[entry.id] else {
            if startsInFlight > 0 { earlyEvents.append(event) }
            return
        }
        switch event {
        case .callState(let change):
            registry.noteCallID(change.sipCallID, of: entry.id)
            switch change.state {
            case .early, .connecting:
                if entry.isOutgoing, !track.reportedConnecting {
                    track.reportedConnecting = true
                    provider.reportOutgoingCallStartedConnecting(entry.id)
                }
                tracks[entry.id] = track
            case .confirmed:
                if entry.isOutgoing { provider.reportOutgoingCallConnected(entry.id) }
            case .disconnected:
                ended(entry, track, sipStatus: change.statusCode, reason: change.reason)
            case .null, .calling, .incoming:
                break
            }
        case .callMediaState(let change):
            if let (action, onHold) = track.pendingHold {
                let audio = change.media.filter { $0.type == .audio }
                let held = audio.contains { $0.status == .localHold }
                if held == onHold, !audio.isEmpty {
                    track.pendingHold = nil
                    tracks[entry.id] = track
                    provider.fulfill(action)
                }
            }
        case .reconnection(let reconnection):
            // The same call, the same UUID: no new call and no end is reported.
            switch reconnection.phase {
            case .reconnecting: provider.reportCallReconnecting(entry.id)
            case .reconnected: provider.reportCallReconnected(entry.id)
            case .failed: provider.reportCallReconnectionFailed(entry.id)
            }
        default:
            break
        }
    }

    /// The call's INVITE session ended.
    private func ended(_ entry: CallRegistry.Entry, _ track: Track, sipStatus: Int, reason sipReason: String = "") {
        var track = track
        noteEnded(registry.remove(entry.id) ?? entry)
        track.expiry?.cancel()
        for action in [track.pendingAnswer, track.pendingHold?.action].compactMap({ $0 }) {
            provider.fail(action, error: .callEnded)
        }
        if let other = track.groupedWith { tracks[other]?.groupedWith = nil }
        if let end = track.pendingEnd {
            tracks[entry.id] = nil
            provider.fulfill(end)
            return
        }
        if track.declineStatus != nil {
            tracks[entry.id] = nil
            return
        }
        let reason = CallEndReason(sipStatus: sipStatus, reason: sipReason, isOutgoing: entry.isOutgoing)
        if track.report == .reporting {
            track.endedWhileReporting = reason
            track.pendingAnswer = nil
            track.pendingHold = nil
            tracks[entry.id] = track
        } else {
            tracks[entry.id] = nil
            provider.reportCallEnded(entry.id, reason: reason)
        }
    }

    // MARK: Pushes

    /// Handles a parsed VoIP push.
    ///
    /// A `call` push is recorded in the registry and, if its call is new, reported to the
    /// provider (PushKit requires the report before its completion handler runs); then the
    /// engine is made reachable for the INVITE with
    /// ``CallEngine/prepareForPushedCall(accountHint:boundAccount:)``: started if it is not
    /// (``PJSUAEngine/ColdStart``) and the hinted account registered afresh, this method
    /// returning once the registrar has answered 2xx — from then on the INVITE can come. The
    /// accounts it registered are bound to their hints. A `reregister` push re-registers the
    /// account bound to its hint.
    /// - Parameter payload: the parsed push.
    /// - Returns: what the push led to.
    /// - Throws: ``CallRouterError/unknownAccountHint(_:)`` when a `reregister` push names no
    ///   bound account; ``CallRouterError/reRegistrationFailed(_:)`` when the engine refuses.
    ///   ``CallRouterError/coldStartFailed(_:)`` when the engine could not be started or the
    ///   account not registered for a new call: the call, reported already, is then reported
    ///   ended as ``CallEndReason/failed`` unless its INVITE has come meanwhile.
    public func handlePush(_ payload: PushPayload) async throws(CallRouterError) -> PushOutcome {
        switch payload {
        case .reRegister(let hint):
            guard let account = boundAccounts.first(where: { hints[$0] == hint }) else {
                throw .unknownAccountHint(hint)
            }
            do {
                try await engine.reRegister(account)
            } catch {
                throw .reRegistrationFailed(String(describing: error))
            }
            return .reRegistered(account)
        case .incomingCall(let pushed):
            if let callID = pushed.sipCallID {
                if let ended = endedID(for: callID) { return .alreadyEnded(ended) }
            }
            var push = pushed
            push.hasVideo = push.hasVideo && carriesVideo
            let arrival = registry.recordPush(push)
            let entry = arrival.entry
            noteLive(entry)
            if !arrival.isNew {
                if let track = tracks[entry.id], track.declineStatus == 486 { return .rejectedBySystem(entry.id) }
                if arrival.updateChanged, tracks[entry.id]?.report == .reported {
                    provider.reportCallUpdated(entry.id, update: entry.update)
                }
                return .alreadyReported(entry.id)
            } else {
                var track = Track(report: .reporting)
                track.expiry = expiryTask(for: entry.id)
                tracks[entry.id] = track
                await report(entry)
                if let track = tracks[entry.id], track.declineStatus == 486 { return .rejectedBySystem(entry.id) }
                try await makeReachable(for: push, id: entry.id)
                return .reportedNewCall(entry.id)
            }
        }
    }

    /// Starts and registers the engine for a pushed call (cold start), binding what it registered.
    private func makeReachable(for push: IncomingCallPush, id: UUID) async throws(CallRouterError) {
        let bound = push.accountHint.flatMap { hint in boundAccounts.first { hints[$0] == hint } }
        let ready: [String: Account]
        do {
            ready = try await engine.prepareForPushedCall(
                accountHint: push.accountHint, boundAccount: bound, pushToken: pushToken)
        } catch {
            // Nothing can reach us: end the call now rather than at the end of its TTL, unless
            // its INVITE came meanwhile (then the call goes on).
            if registry[id]?.call == nil { expire(id, reason: .failed) }
            throw .coldStartFailed(String(describing: error))
        }
        for (hint, account) in ready.sorted(by: { $0.key < $1.key }) where hints[account] != hint {
            // A token that came while the engine was being prepared is applied here.
            await bind(account, pushHint: hint)
        }
    }

    // MARK: VoIP pushes (PushKit)

    /// Reads a VoIP push's payload and decides, synchronously, what to report to CallKit
    /// before PushKit's delegate method returns (PushKit on iOS 13 and later terminates an app
    /// that does not report a call for every VoIP push).
    ///
    /// ``pushParser`` is tried first, then schema version 1 (``PushPayload``):
    /// - a call push gets its UUID from ``claimCallUUID(for:)`` (a known Call-ID keeps its
    ///   call's UUID) and shows its caller;
    /// - a `reregister` push, and a payload neither reads, get a placeholder: a new UUID
    ///   showing ``VoIPPushReceipt/placeholderURI``, which ``handleVoIPPush(_:)`` ends at once.
    ///
    /// Report `receipt.callUUID` with `receipt.update` to CallKit now, then pass the receipt
    /// to ``handleVoIPPush(_:)``. Runs on the caller's thread without awaiting the router.
    /// - Parameter dictionary: `PKPushPayload.dictionaryPayload`.
    /// - Returns: the receipt.
    public nonisolated func receiveVoIPPush(_ dictionary: [AnyHashable: Any]) -> VoIPPushReceipt {
        let content: VoIPPushReceipt.Content
        if let push = pushParser(dictionary) {
            content = .call(push)
        } else {
            do {
                switch try PushPayload(dictionary: dictionary) {
                case .incomingCall(let push): content = .call(push)
                case .reRegister(let hint): content = .reRegister(accountHint: hint)
                }
            } catch {
                content = .unreadable(error.description)
            }
        }
        guard case .call(var push) = content else {
            return VoIPPushReceipt(
                callUUID: UUID(), update: CallUpdate(remoteURI: VoIPPushReceipt.placeholderURI), content: content)
        }
        let id = claimCallUUID(for: push)
        push.serverUUID = id
        return VoIPPushReceipt(
            callUUID: id,
            update: CallUpdate(
                remoteURI: push.caller.uri, displayName: push.caller.displayName,
                hasVideo: push.hasVideo && carriesVideo),
            content: .call(push))
    }

    /// Handles a VoIP push read by ``receiveVoIPPush(_:)``, after its call was reported to
    /// CallKit; call PushKit's completion handler when this returns.
    ///
    /// - A call: ``handlePush(_:)`` (report, cold start, registration). A late push for a
    ///   call that already ended (``PushOutcome/alreadyEnded(_:)``) is reported and ended at
    ///   once as ``CallEndReason/remoteEnded``, as PushKit obliges.
    /// - A placeholder (`reregister` or unreadable): reported and ended at once as
    ///   ``CallEndReason/failed``; a `reregister` push then re-registers its account.
    /// - Parameter receipt: the receipt.
    /// - Returns: what the push led to: ``PushOutcome/unreadable(_:)`` for an unreadable push.
    /// - Throws: as ``handlePush(_:)``.
    public func handleVoIPPush(_ receipt: VoIPPushReceipt) async throws(CallRouterError) -> PushOutcome {
        switch receipt.content {
        case .call(let push):
            let outcome = try await handlePush(.incomingCall(push))
            if case .alreadyEnded(let id) = outcome {
                try? await provider.reportNewIncomingCall(id, update: receipt.update)
                provider.reportCallEnded(id, reason: .remoteEnded)
            }
            return outcome
        case .reRegister(let hint):
            await reportPlaceholder(receipt)
            return try await handlePush(.reRegister(accountHint: hint))
        case .unreadable:
            await reportPlaceholder(receipt)
            return .unreadable(receipt.callUUID)
        }
    }

    /// PushKit insists on a reported call: show one and end it at once.
    private func reportPlaceholder(_ receipt: VoIPPushReceipt) async {
        try? await provider.reportNewIncomingCall(receipt.callUUID, update: receipt.update)
        provider.reportCallEnded(receipt.callUUID, reason: .failed)
    }

    private func expiryTask(for id: UUID) -> Task<Void, Never> {
        let clock = clock
        let ttl = pushTimeToLive
        return Task { [weak self] in
            do {
                try await clock.sleep(for: ttl)
            } catch {
                return
            }
            await self?.expire(id)
        }
    }

    /// A push's time to live ran out (or the engine could not be made reachable): if its
    /// INVITE never came, the call ends, `reason` (unanswered by default).
    private func expire(_ id: UUID, reason: CallEndReason = .unanswered) {
        guard let entry = registry.expire(id), var track = tracks[id] else { return }
        noteEnded(entry)
        if track.declineStatus != nil {
            tracks[id] = nil
            return
        }
        if let answer = track.pendingAnswer {
            track.pendingAnswer = nil
            provider.fail(answer, error: .callEnded)
        }
        if track.report == .reporting {
            track.endedWhileReporting = reason
            tracks[id] = track
        } else {
            tracks[id] = nil
            provider.reportCallEnded(id, reason: reason)
        }
    }

    // MARK: User actions

    /// Performs a user action; the outcome reaches the provider as
    /// ``CallProvider/fulfill(_:)`` or ``CallProvider/fail(_:error:)``, now or later: start
    /// once `makeCall` has sent the INVITE, answer once the 200 is sent (when the INVITE
    /// arrives, for an answer given before it), end when the call has ended, hold when the
    /// media state shows it, the others at once.
    /// - Parameter action: the action.
    public func perform(_ action: CallAction) async {
        if case .start(let uri, let account, let video) = action.kind {
            await start(action, uri: uri, account: account, hasVideo: video)
            return
        }
        if case .dial(let handle, let account, let video) = action.kind {
            guard let account = account ?? boundAccounts.first else {
                provider.fail(action.id, error: .noAccount)
                return
            }
            let identity = await engine.identity(of: account)
            guard let uri = handleMapping.uri(for: handle, accountIdentity: identity) else {
                provider.fail(action.id, error: .invalidHandle(handle.value))
                return
            }
            await start(action, uri: uri, account: account, hasVideo: video)
            return
        }
        guard let entry = registry[action.callUUID], var track = tracks[action.callUUID] else {
            if action.kind == .end {
                provider.fulfill(action.id)  // Already gone: what the user wanted.
            } else {
                provider.fail(action.id, error: .unknownCall(action.callUUID))
            }
            return
        }
        switch action.kind {
        case .start, .dial:
            break
        case .answer:
            guard !entry.isOutgoing, track.pendingAnswer == nil, !track.answered, track.declineStatus == nil else {
                provider.fail(action.id, error: .invalidState)
                return
            }
            track.pendingAnswer = action.id
            tracks[entry.id] = track
            if let call = entry.call { await applyAnswer(action.id, to: call, of: entry.id) }
        case .end:
            if let call = entry.call {
                track.pendingEnd = action.id
                tracks[entry.id] = track
                do {
                    try await engine.hangup(call, statusCode: nil)
                } catch PJSUAUsageError.unknownCall {
                    // It ended meanwhile; its terminal event fulfils the action.
                } catch {
                    tracks[entry.id]?.pendingEnd = nil
                    provider.fail(action.id, error: .engine(String(describing: error)))
                }
            } else {
                // Declined before the INVITE came: decline it with 603 when it does.
                track.declineStatus = 603
                if let answer = track.pendingAnswer {
                    track.pendingAnswer = nil
                    provider.fail(answer, error: .callEnded)
                }
                tracks[entry.id] = track
                provider.fulfill(action.id)
            }
        case .hold(let onHold):
            guard let call = entry.call, track.pendingHold == nil else {
                provider.fail(action.id, error: .invalidState)
                return
            }
            track.pendingHold = (action.id, onHold)
            tracks[entry.id] = track
            do {
                try await engine.setHold(call, onHold: onHold)
            } catch {
                tracks[entry.id]?.pendingHold = nil
                provider.fail(action.id, error: Self.actionError(error))
            }
        case .mute(let muted):
            await immediate(action, entry) { engine, call in try await engine.setMuted(call, muted: muted) }
        case .playDTMF(let digits):
            guard !digits.isEmpty, digits.allSatisfy({ "0123456789*#ABCDabcd".contains($0) }) else {
                provider.fail(action.id, error: .invalidState)
                return
            }
            await immediate(action, entry) { engine, call in try await engine.sendDTMF(call, digits: digits) }
        case .group(let otherID):
            let previous = track.groupedWith
            let targetID = otherID ?? previous
            guard let targetID, let other = registry[targetID]?.call else {
                if otherID == nil {
                    provider.fulfill(action.id)
                } else {
                    provider.fail(action.id, error: .unknownCall(otherID ?? action.callUUID))
                }
                return
            }
            await immediate(action, entry) { engine, call in
                try await engine.setConferenced(call, with: other, joined: otherID != nil)
            }
            if otherID != nil, registry[entry.id] != nil {
                tracks[entry.id]?.groupedWith = targetID
                tracks[targetID]?.groupedWith = entry.id
            } else if otherID == nil {
                tracks[entry.id]?.groupedWith = nil
                tracks[targetID]?.groupedWith = nil
            }
        }
    }

    /// Runs an engine operation on the entry's call and fulfils or fails the action at once.
    private func immediate(
        _ action: CallAction, _ entry: CallRegistry.Entry,
        _ operation: @Sendable (any CallEngine, Call) async throws -> Void
    ) async {
        guard let call = entry.call else {
            provider.fail(action.id, error: .invalidState)
            return
        }
        do {
            try await operation(engine, call)
            provider.fulfill(action.id)
        } catch {
            provider.fail(action.id, error: Self.actionError(error))
        }
    }

    private static func actionError(_ error: any Error) -> CallActionError {
        if let error = error as? CallActionError { return error }
        if case PJSUAUsageError.unknownCall = error { return .callEnded }
        return .engine(String(describing: error))
    }

    /// Sends 200 for a pending answer and fulfils it once the 200 is out, as CallKit's flow
    /// has it (the ACK and CONFIRMED follow; a call that fails after is reported ended).
    private func applyAnswer(_ action: UUID, to call: Call, of id: UUID) async {
        do {
            try await engine.answer(call, statusCode: 200)
        } catch {
            guard tracks[id]?.pendingAnswer == action else { return }
            tracks[id]?.pendingAnswer = nil
            provider.fail(action, error: Self.actionError(error))
            return
        }
        // The call may have ended, or been declined, while the 200 went out: then the
        // action was settled there.
        guard tracks[id]?.pendingAnswer == action else { return }
        tracks[id]?.pendingAnswer = nil
        tracks[id]?.answered = true
        provider.fulfill(action)
    }

    private func start(_ action: CallAction, uri: String, account: Account?, hasVideo: Bool) async {
        guard registry[action.callUUID] == nil, tracks[action.callUUID] == nil else {
            provider.fail(action.id, error: .invalidState)
            return
        }
        guard let account = account ?? boundAccounts.first else {
            provider.fail(action.id, error: .noAccount)
            return
        }
        startsInFlight += 1
        let call: Call
        do {
            call = try await engine.makeCall(to: uri, from: account)
        } catch {
            startsInFlight -= 1
            if startsInFlight == 0 { earlyEvents.removeAll() }
            provider.fail(action.id, error: Self.actionError(error))
            return
        }
        startsInFlight -= 1
        registry.recordOutgoing(
            id: action.callUUID, call: call, account: account, remote: SIPAddress(parsing: uri),
            hasVideo: hasVideo && carriesVideo)
        tracks[action.callUUID] = Track(report: .reported)
        // The INVITE is out: CallKit's start action is done (it then activates the audio
        // session, so ringback and early media are heard); the call's progress follows as
        // reports, and its failure, if it fails, as an end.
        provider.fulfill(action.id)
        // Replay, in order and without suspending, the events that beat makeCall's return.
        let early = earlyEvents.filter { $0.call == call }
        earlyEvents.removeAll { $0.call == call || startsInFlight == 0 }
        for event in early { handleCallEvent(event) }
    }

    // MARK: Audio session

    /// The system activated the audio session (CallKit: `provider(_:didActivate:)`): attach
    /// the sound device. The only place the router attaches it.
    /// - Throws: the engine's error when the device cannot be opened.
    public func audioSessionDidActivate() async throws {
        isAudioSessionActive = true
        try await engine.activateAudioDevice()
    }

    /// The system deactivated the audio session (CallKit: `provider(_:didDeactivate:)`):
    /// detach the sound device.
    /// - Throws: the engine's error.
    public func audioSessionDidDeactivate() async throws {
        isAudioSessionActive = false
        try await engine.deactivateAudioDevice()
    }
}

/// Why the router could not handle a push.
public enum CallRouterError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// A `reregister` push named a hint no account is bound to.
    case unknownAccountHint(String)
    /// The engine refused to re-register; the text is its error.
    case reRegistrationFailed(String)
    /// A call push could not make the engine reachable: it did not start or the account did
    /// not register; the text is the engine's error.
    case coldStartFailed(String)

    /// What went wrong, in one line.
    public var description: String {
        switch self {
        case .unknownAccountHint(let hint): "no account is bound to the push's account hint \(hint)"
        case .reRegistrationFailed(let text): "re-registering after the push failed: \(text)"
        case .coldStartFailed(let text): "starting or registering the engine for a pushed call failed: \(text)"
        }
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

extension Clock where Duration == Swift.Duration {
    /// A test of whether `duration` has passed on this clock since now.
    fileprivate func hasPassed(_ duration: Duration) -> @Sendable () -> Bool {
        let deadline = now.advanced(by: duration)
        return { self.now >= deadline }
    }
}
