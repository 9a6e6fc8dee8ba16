import Foundation
import SwiftPJSUA
import SwiftPJSUAKit

/// An engine double for app tests: no pjsua, no network, no sound device.
///
/// It conforms to `CallControlling` (the engine-level seam `PJSUA` conforms to) and to
/// `CallEngine` (the `CallRouter`'s seam). It records every operation the app asks for
/// in ``journal``, plays the far end of each call from a ``PeerScript``, and emits the
/// events the real engine would, in the same kinds and order: for a call the app places,
/// `CallState/calling`, then `CallState/early` on a ring, `CallState/connecting`, a
/// `PJSUAEvent/callMediaState(_:)` with active audio and `CallState/confirmed` on the
/// answer, and one `CallState/disconnected` with the SIP status that ended it. An
/// operation can be made to throw (``failNext(_:with:)``, ``failEvery(_:with:)``).
///
/// Script delays run on the clock given to ``init(clock:unknownCalls:carriesVideo:)``: with
/// a ``ManualClock`` they pass when the test advances it, so no test waits in real time.
///
/// Events have the real engine's buffering: each ``events`` access is a new unbounded
/// subscription, and ``events(for:)`` starts with the call's snapshot.
public final class FakeCallEngine: CallEngine, CallControlling {
    /// An operation that ``failNext(_:with:)`` and ``failEvery(_:with:)`` can make throw.
    public enum Operation: Sendable, Hashable, CaseIterable {
        /// `makeCall`.
        case makeCall
        /// `answer`.
        case answer
        /// `hangup`.
        case hangup
        /// Hold and resume.
        case hold
        /// `setMuted`.
        case mute
        /// `sendDTMF`.
        case dtmf
        /// Attaching and detaching the sound device.
        case audioDevice
        /// Registering afresh.
        case reRegister
        /// Joining and parting conference audio.
        case conference
    }

    /// What the fake does with a `Call` handle it never issued.
    public enum UnknownCalls: Sendable, Hashable {
        /// Throw `PJSUAUsageError.unknownCall`, as the real engine does.
        case reject
        /// Record the operation and succeed: for tests that hand the router events about
        /// calls they make up, instead of having the fake emit them.
        case accept
    }

    private enum Failure {
        case next(any Error & Sendable)
        case every(any Error & Sendable)
    }

    private struct FakeCall {
        var account: Account
        var role: CallRole
        var state: CallState
        var sipCallID: String
        var remote: SIPAddress
        var incoming: IncomingCall?
        var lastState: CallStateChange?
        var lastMedia: CallMediaChange?
        var held = false
    }

    private struct State {
        var calls: [Call: FakeCall] = [:]
        var ended: Set<Call> = []
        var subscribers: [UInt64: AsyncStream<PJSUAEvent>.Continuation] = [:]
        var followers: [Call: [UInt64: AsyncStream<PJSUAEvent>.Continuation]] = [:]
        var nextID: UInt64 = 0
        var nextCall: Int32 = 0
        var nextAccount: Int32 = 0
        var failures: [Operation: Failure] = [:]
        var scripts: [String: PeerScript] = [:]
        var defaultScript = PeerScript()
        var pushConfigurations: [Account: PushConfiguration] = [:]
        var makeCallHook: (@Sendable (Call) async -> Void)?
        var tasks: [Call: Task<Void, Never>] = [:]
    }

    /// Every operation asked for, in order: inspect ``RecordLog/records`` or await
    /// ``RecordLog/wait(_:timeout:until:)``.
    public let journal = RecordLog<EngineRecord>()
    /// Every event the fake emitted, in order.
    public let emitted = RecordLog<PJSUAEvent>()
    private let state = Protected(State())
    private let unknownCalls: UnknownCalls
    private let video: Bool
    /// Returns, for a call starting now, a function that sleeps until the given offset
    /// from that start on the fake's clock.
    private let startTimeline: @Sendable () -> @Sendable (Duration) async throws -> Void

    /// Creates a fake with no calls.
    /// - Parameters:
    ///   - clock: the clock script delays run on (a ``ManualClock`` in tests).
    ///   - unknownCalls: what to do with a handle the fake never issued.
    ///   - carriesVideo: what ``carriesVideo`` says.
    public init<C: Clock>(clock: C, unknownCalls: UnknownCalls = .reject, carriesVideo: Bool = false)
    where C.Duration == Duration {
        self.unknownCalls = unknownCalls
        video = carriesVideo
        startTimeline = {
            let start = clock.now
            return { offset in try await clock.sleep(until: start.advanced(by: offset), tolerance: nil) }
        }
    }

    /// Creates a fake whose script delays pass in real time (`ContinuousClock`).
    /// - Parameters:
    ///   - unknownCalls: what to do with a handle the fake never issued.
    ///   - carriesVideo: what ``carriesVideo`` says.
    public convenience init(unknownCalls: UnknownCalls = .reject, carriesVideo: Bool = false) {
        self.init(clock: ContinuousClock(), unknownCalls: unknownCalls, carriesVideo: carriesVideo)
    }

    deinit {
        for task in state.withLock({ Array($0.tasks.values) }) { task.cancel() }
    }

    /// Everything ``journal`` holds so far.
    public var records: [EngineRecord] { journal.records }

    /// What the fake answers for `CallEngine/carriesVideo`.
    public var carriesVideo: Bool { video }

    // MARK: Setting up

    /// A new account handle, for calls from it.
    /// - Returns: a handle no other account of this fake has.
    public func makeAccount() -> Account {
        state.withLock { state in
            state.nextAccount += 1
            return Account(slot: state.nextAccount - 1, generation: UInt64(2_000_000 + state.nextAccount))
        }
    }

    /// Sets what the far end does for calls placed to `uri` (exactly as the app passes it).
    /// - Parameters:
    ///   - script: the far end's steps.
    ///   - uri: the target URI; calls to other URIs follow ``setDefaultScript(_:)``.
    public func setScript(_ script: PeerScript, for uri: String) {
        state.withLock { $0.scripts[uri] = script }
    }

    /// Sets what the far end does for calls to URIs without a script of their own
    /// (``PeerScript/silent`` until set).
    /// - Parameter script: the far end's steps.
    public func setDefaultScript(_ script: PeerScript) {
        state.withLock { $0.defaultScript = script }
    }

    /// Makes the next call of `operation` throw `error`; later calls succeed.
    /// - Parameters:
    ///   - operation: the operation.
    ///   - error: what it throws (the call is still recorded in ``journal``).
    public func failNext(_ operation: Operation, with error: any Error & Sendable) {
        state.withLock { $0.failures[operation] = .next(error) }
    }

    /// Makes every call of `operation` throw `error` until ``stopFailing(_:)``.
    /// - Parameters:
    ///   - operation: the operation.
    ///   - error: what it throws.
    public func failEvery(_ operation: Operation, with error: any Error & Sendable) {
        state.withLock { $0.failures[operation] = .every(error) }
    }

    /// Lets `operation` succeed again.
    /// - Parameter operation: the operation.
    public func stopFailing(_ operation: Operation) {
        state.withLock { $0.failures[operation] = nil }
    }

    /// The account's push parameters, as if it had been added with them.
    /// - Parameters:
    ///   - push: the parameters, or `nil` for none.
    ///   - account: the account.
    public func setPushConfiguration(_ push: PushConfiguration?, of account: Account) {
        state.withLock { $0.pushConfigurations[account] = push }
    }

    /// Runs `hook` inside `makeCall`, before it returns the new call (to deliver events that
    /// beat `makeCall`'s return, as pjsua's worker threads can).
    /// - Parameter hook: what to run with the new call.
    public func onMakeCall(_ hook: @escaping @Sendable (Call) async -> Void) {
        state.withLock { $0.makeCallHook = hook }
    }

    /// An INVITE arrives from the far end: emits `PJSUAEvent/incomingCall(_:)`, then the
    /// call's `CallState/incoming` state, and plays
    /// `script` (its hang-up before the answer is a CANCEL: the call ends with 487).
    /// - Parameters:
    ///   - from: the caller.
    ///   - account: the account it is addressed to.
    ///   - script: what the caller does next.
    /// - Returns: the new call's handle.
    @discardableResult
    public func receiveCall(from: SIPAddress, to account: Account, script: PeerScript = .silent) -> Call {
        let call = mintCall()
        let incoming = IncomingCall(
            account: account, call: call, sipCallID: "fake-\(call.generation)", from: from, offeredVideo: false)
        let timeline = startTimeline()
        emit(.incomingCall(incoming)) { state in
            state.calls[call] = FakeCall(
                account: account, role: .callee, state: .incoming, sipCallID: incoming.sipCallID, remote: from,
                incoming: incoming)
            return true
        }
        emitState(call, .incoming, 0, "")
        play(script, on: call, timeline: timeline)
        return call
    }

    /// A snapshot of a live call, as `PJSUA/callInfo(_:)` gives.
    /// - Parameter call: the call.
    /// - Returns: its snapshot.
    /// - Throws: `PJSUAUsageError.unknownCall` when the call has ended or is unknown.
    public func callInfo(_ call: Call) throws(PJSUAUsageError) -> CallInfo {
        guard let fake = state.withLock({ $0.calls[call] }) else { throw .unknownCall(call) }
        return CallInfo(
            call: call, role: fake.role, account: fake.account, state: fake.state, sipCallID: fake.sipCallID,
            local: SIPAddress(uri: "sip:fake@127.0.0.1"), remote: fake.remote,
            statusCode: fake.lastState?.statusCode ?? 0, reason: fake.lastState?.reason ?? "",
            media: fake.lastMedia?.media ?? [], audioCodec: fake.lastMedia == nil ? nil : "PCMU/8000")
    }

    // MARK: CallControlling

    /// Every event from now on, in order, unbounded.
    public var events: AsyncStream<PJSUAEvent> {
        let (stream, continuation) = AsyncStream<PJSUAEvent>.makeStream()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The call's snapshot (its incoming-call event, latest state, latest media state),
    /// then its later events, finishing after its terminal state; empty for an ended call.
    public func events(for call: Call) -> AsyncStream<PJSUAEvent> {
        let (stream, continuation) = AsyncStream<PJSUAEvent>.makeStream()
        let id = state.withLock { state -> UInt64? in
            guard let fake = state.calls[call] else { return nil }
            for event in [
                fake.incoming.map(PJSUAEvent.incomingCall), fake.lastState.map(PJSUAEvent.callState),
                fake.lastMedia.map(PJSUAEvent.callMediaState),
            ].compactMap({ $0 }) {
                continuation.yield(event)
            }
            state.nextID += 1
            state.followers[call, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.followers[call]?.removeValue(forKey: id) }
        }
        return stream
    }

    /// Places a call and plays the script set for `uri`: emits `CallState/calling` first.
    /// - Throws: `PJSUAUsageError.invalidURI` for a URI that is not `sip:` or `sips:`; an
    ///   injected error.
    public func makeCall(to uri: String, from account: Account, headers: [SIPHeader]) async throws -> Call {
        journal.append(.makeCall(uri))
        try injectedFailure(.makeCall)
        guard uri.hasPrefix("sip:") || uri.hasPrefix("sips:"), uri.count > 5 else {
            throw PJSUAUsageError.invalidURI(uri)
        }
        let call = mintCall()
        let (script, hook) = state.withLock { ($0.scripts[uri] ?? $0.defaultScript, $0.makeCallHook) }
        let timeline = startTimeline()
        emitState(call, .calling, 0, "") { state in
            state.calls[call] = FakeCall(
                account: account, role: .caller, state: .null, sipCallID: "fake-\(call.generation)",
                remote: SIPAddress(uri: uri))
        }
        play(script, on: call, timeline: timeline)
        if let hook { await hook(call) }
        return call
    }

    /// Answers an incoming call: 180/183 make it `CallState/early`; 2xx gives active
    /// media, `CallState/connecting`, then `CallState/confirmed` (the real engine's order
    /// for a callee); 3xx–6xx end it.
    /// - Throws: as `PJSUA/answer(_:statusCode:headers:)`; an injected error.
    public func answer(_ call: Call, statusCode: Int, headers: [SIPHeader]) async throws {
        journal.append(.answer(call, statusCode))
        try injectedFailure(.answer)
        guard (100...699).contains(statusCode) else { throw PJSUAUsageError.invalidStatusCode(statusCode) }
        guard let fake = try live(call) else { return }
        guard fake.role == .callee, [.incoming, .early].contains(fake.state) else {
            throw PJSUAUsageError.invalidCallState(call, fake.state)
        }
        switch statusCode {
        case 100..<200:
            if statusCode > 100 { emitState(call, .early, statusCode, Self.phrase(statusCode)) }
        case 200..<300:
            connect(call, statusCode: statusCode)
        default:
            end(call, statusCode, Self.phrase(statusCode))
        }
    }

    /// Ends a call: it emits its one `CallState/disconnected` (487 for a call we placed and
    /// cancel, `statusCode` or 603 for an incoming one we refuse, 200 after the answer).
    /// - Throws: as `PJSUA/hangup(_:statusCode:headers:)`; an injected error.
    public func hangup(_ call: Call, statusCode: Int?, headers: [SIPHeader]) async throws {
        journal.append(.hangup(call, statusCode))
        try injectedFailure(.hangup)
        if let statusCode, !(300...699).contains(statusCode) {
            throw PJSUAUsageError.invalidStatusCode(statusCode)
        }
        guard let fake = try live(call) else { return }
        switch (fake.role, fake.state) {
        case (_, .confirmed), (_, .connecting): end(call, 200, "Normal call clearing")
        case (.caller, _): end(call, 487, "Request Terminated")
        case (.callee, _):
            let code = statusCode ?? 603
            end(call, code, Self.phrase(code))
        }
    }

    /// Puts a confirmed call on hold: emits a media state with `MediaStatus/localHold`.
    /// - Throws: as `PJSUA/setHold(_:)`; an injected error.
    public func setHold(_ call: Call) async throws {
        journal.append(.hold(call, true))
        try injectedFailure(.hold)
        try changeHold(call, held: true)
    }

    /// Resumes a held call: emits a media state with `MediaStatus/active`.
    /// - Throws: as `PJSUA/resume(_:)`; an injected error.
    public func resume(_ call: Call) async throws {
        journal.append(.hold(call, false))
        try injectedFailure(.hold)
        try changeHold(call, held: false)
    }

    /// Records the mute; emits nothing (the real engine emits nothing either).
    /// - Throws: `PJSUAUsageError.unknownCall`; an injected error.
    public func setMuted(_ call: Call, muted: Bool) async throws {
        journal.append(.mute(call, muted))
        try injectedFailure(.mute)
        _ = try live(call)
    }

    /// Records the digits; emits nothing (sent digits raise no event on the real engine).
    /// - Throws: as `PJSUA/sendDTMF(_:digits:method:duration:)`; an injected error.
    public func sendDTMF(_ call: Call, digits: String, method: DTMFMethod, duration: Duration) async throws {
        journal.append(.dtmf(call, digits))
        try injectedFailure(.dtmf)
        let allowed = Set("0123456789*#ABCD")
        guard !digits.isEmpty, digits.uppercased().allSatisfy(allowed.contains) else {
            throw PJSUAUsageError.invalidDTMFDigits(digits)
        }
        guard let fake = try live(call) else { return }
        guard fake.state == .confirmed else { throw PJSUAUsageError.invalidCallState(call, fake.state) }
    }

    // MARK: CallEngine

    /// Calls ``makeCall(to:from:headers:)`` with no headers.
    public func makeCall(to uri: String, from account: Account) async throws -> Call {
        try await makeCall(to: uri, from: account, headers: [])
    }

    /// Calls ``answer(_:statusCode:headers:)`` with no headers.
    public func answer(_ call: Call, statusCode: Int) async throws {
        try await answer(call, statusCode: statusCode, headers: [])
    }

    /// Calls ``hangup(_:statusCode:headers:)`` with no headers.
    public func hangup(_ call: Call, statusCode: Int?) async throws {
        try await hangup(call, statusCode: statusCode, headers: [])
    }

    /// Records the attach.
    /// - Throws: an injected error.
    public func activateAudioDevice() async throws {
        journal.append(.activateAudio)
        try injectedFailure(.audioDevice)
    }

    /// Records the detach.
    /// - Throws: an injected error.
    public func deactivateAudioDevice() async throws {
        journal.append(.deactivateAudio)
        try injectedFailure(.audioDevice)
    }

    /// Records the REGISTER.
    /// - Throws: an injected error.
    public func reRegister(_ account: Account) async throws {
        journal.append(.reRegister(account))
        try injectedFailure(.reRegister)
    }

    /// Records the REGISTER and keeps the new push parameters.
    /// - Throws: an injected error.
    public func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws {
        journal.append(.reRegisterWithPush(account, push.resourceID))
        try injectedFailure(.reRegister)
        state.withLock { $0.pushConfigurations[account] = push }
    }

    /// The push parameters set with ``setPushConfiguration(_:of:)`` or the last REGISTER.
    public func pushConfiguration(of account: Account) async -> PushConfiguration? {
        state.withLock { $0.pushConfigurations[account] }
    }

    /// Calls ``setHold(_:)`` or ``resume(_:)``.
    public func setHold(_ call: Call, onHold: Bool) async throws {
        if onHold { try await setHold(call) } else { try await resume(call) }
    }

    /// Calls ``sendDTMF(_:digits:method:duration:)`` with RFC 4733 and 160 ms digits.
    public func sendDTMF(_ call: Call, digits: String) async throws {
        try await sendDTMF(call, digits: digits, method: .rfc4733, duration: .milliseconds(160))
    }

    /// Records the conference change.
    /// - Throws: `PJSUAUsageError.unknownCall` for an ended call; an injected error.
    public func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws {
        journal.append(.conference(call, other, joined))
        try injectedFailure(.conference)
        _ = try live(call)
        _ = try live(other)
    }

    // MARK: Internals

    private func mintCall() -> Call {
        state.withLock { state in
            state.nextCall += 1
            return Call(slot: 100 + state.nextCall, generation: UInt64(1_000_000 + state.nextCall))
        }
    }

    private func injectedFailure(_ operation: Operation) throws {
        let failure = state.withLock { state -> (any Error & Sendable)? in
            switch state.failures[operation] {
            case .next(let error):
                state.failures[operation] = nil
                return error
            case .every(let error): return error
            case nil: return nil
            }
        }
        if let failure { throw failure }
    }

    /// The live call; `nil` for a handle never issued when ``UnknownCalls/accept`` says so.
    private func live(_ call: Call) throws(PJSUAUsageError) -> FakeCall? {
        let (fake, ended) = state.withLock { ($0.calls[call], $0.ended.contains(call)) }
        if let fake { return fake }
        if ended || unknownCalls == .reject { throw .unknownCall(call) }
        return nil
    }

    /// Changes state and delivers `event` under one lock, so that events keep their order
    /// and a subscription made meanwhile sees each event once. `change` returns `false` to
    /// drop the event (the call has moved on).
    private func emit(_ event: PJSUAEvent, change: (inout State) -> Bool) {
        // Finished outside the lock: finishing a stream runs its onTermination handler,
        // which takes the lock to drop the subscription.
        let (delivered, finished) = state.withLock { state -> (Bool, [AsyncStream<PJSUAEvent>.Continuation]) in
            guard change(&state) else { return (false, []) }
            for continuation in state.subscribers.values { continuation.yield(event) }
            guard let call = event.call else { return (true, []) }
            for continuation in (state.followers[call] ?? [:]).values { continuation.yield(event) }
            guard case .callState(let change) = event, change.state.isTerminal else { return (true, []) }
            return (true, Array((state.followers.removeValue(forKey: call) ?? [:]).values))
        }
        for continuation in finished { continuation.finish() }
        if delivered { emitted.append(event) }
    }

    private func emitState(
        _ call: Call, _ new: CallState, _ code: Int, _ reason: String, setUp: (inout State) -> Void = { _ in }
    ) {
        emit(
            .callState(
                CallStateChange(
                    call: call, state: new, sipCallID: "fake-\(call.generation)",
                    statusCode: code, reason: reason))
        ) { state in
            setUp(&state)
            guard var fake = state.calls[call], !fake.state.isTerminal else { return false }
            fake.state = new
            fake.lastState = CallStateChange(
                call: call, state: new, sipCallID: fake.sipCallID, statusCode: code, reason: reason)
            if new.isTerminal {
                state.calls[call] = nil
                state.ended.insert(call)
                state.tasks.removeValue(forKey: call)?.cancel()
            } else {
                state.calls[call] = fake
            }
            return true
        }
    }

    /// The order pjsua gives: a caller's media becomes active with the 2xx it receives
    /// (after CONNECTING); a callee's with the answer it sends (before CONNECTING).
    private func connect(_ call: Call, statusCode: Int) {
        let isCallee = state.withLock { $0.calls[call]?.role == .callee }
        if isCallee { emitMedia(call, held: false) }
        emitState(call, .connecting, statusCode, Self.phrase(statusCode))
        if !isCallee { emitMedia(call, held: false) }
        emitState(call, .confirmed, statusCode, Self.phrase(statusCode))
    }

    private func end(_ call: Call, _ code: Int, _ reason: String) {
        emitState(call, .disconnected, code, reason)
    }

    private func emitMedia(_ call: Call, held: Bool) {
        let media = CallMediaChange(
            call: call,
            media: [
                MediaStream(
                    index: 0, type: .audio, status: held ? .localHold : .active,
                    direction: held ? .send : .sendReceive)
            ])
        emit(.callMediaState(media)) { state in
            guard var fake = state.calls[call] else { return false }
            fake.lastMedia = media
            fake.held = held
            state.calls[call] = fake
            return true
        }
    }

    private func changeHold(_ call: Call, held: Bool) throws {
        guard let fake = try live(call) else { return }
        guard fake.state == .confirmed else { throw PJSUAUsageError.invalidCallState(call, fake.state) }
        emitMedia(call, held: held)
    }

    private func play(
        _ script: PeerScript, on call: Call, timeline: @escaping @Sendable (Duration) async throws -> Void
    ) {
        let steps = script.steps
        guard !steps.isEmpty else { return }
        let task = Task { [weak self] in
            for (offset, step) in steps {
                do { try await timeline(offset) } catch { return }
                guard let self else { return }
                self.perform(step, on: call)
            }
        }
        state.withLock { state in
            if state.calls[call] != nil { state.tasks[call] = task } else { task.cancel() }
        }
    }

    private func perform(_ step: PeerScript.Step, on call: Call) {
        guard let fake = state.withLock({ $0.calls[call] }) else { return }
        switch step {
        case .ring(let code):
            if fake.role == .caller, [.calling, .early].contains(fake.state) {
                emitState(call, .early, code, Self.phrase(code))
            }
        case .answer:
            if fake.role == .caller, [.calling, .early].contains(fake.state) { connect(call, statusCode: 200) }
        case .reject(let code):
            if fake.role == .caller, [.calling, .early].contains(fake.state) { end(call, code, Self.phrase(code)) }
        case .hangUp:
            if fake.state == .confirmed || fake.state == .connecting {
                end(call, 200, "Normal call clearing")
            } else if fake.role == .callee {
                end(call, 487, "Request Terminated")
            }
        case .sendDTMF(let digits):
            guard fake.state == .confirmed else { return }
            for digit in digits {
                emit(.dtmf(DTMFDigit(call: call, digit: digit, method: .rfc4733, duration: .milliseconds(160)))) {
                    $0.calls[call] != nil
                }
            }
        }
    }

    private static func phrase(_ code: Int) -> String {
        switch code {
        case 180: "Ringing"
        case 183: "Session Progress"
        case 200: "OK"
        case 404: "Not Found"
        case 480: "Temporarily Unavailable"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 603: "Decline"
        default: "Status \(code)"
        }
    }
}
