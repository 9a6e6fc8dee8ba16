// Apple only, and compiled only by Xcode: written against Apple's documented CallKit API, it
// cannot be compiled on the Linux machine this package is developed and tested on (see the
// CallKit integration article, "What is verified where"). The logic it forwards to,
// ``CallRouter``, is platform-neutral and tested on Linux.
#if canImport(CallKit)
    import AVFoundation
    @preconcurrency import CallKit
    import Foundation
    import SwiftPJSUA

    /// CallKit for the ``CallRouter``: a ``CallProvider`` over a `CXProvider`, and the
    /// `CXProviderDelegate` that forwards the system's call actions and audio-session signals
    /// to the router, in the order CallKit delivers them.
    ///
    /// It is a ``CallActionSource``: the router's initializer wires it, so creating the router
    /// is the only step. Start actions are forwarded as ``CallAction/Kind/dial(_:account:hasVideo:)``
    /// with the `CXHandle`'s type, so the router's ``HandleMapping`` turns a phone number from
    /// Contacts or Siri into a URI.
    ///
    /// Reconnection (``CallProvider/reportCallReconnecting(_:)`` and the reports after it)
    /// keeps the protocol's defaults, which do nothing: CallKit has no reconnecting state,
    /// and the call stays connected in the system UI under its UUID. An app that shows
    /// "Reconnecting…" wraps this provider or follows the engine's events.
    ///
    /// Xcode only: not compiled on Linux.
    ///
    /// <!-- snippet-if: canImport(CallKit) -->
    /// <!-- snippet-setup:
    /// import CallKit
    /// let engine = PJSUA()
    /// -->
    /// ```swift
    /// let callKit = CallKitProvider(configuration: CXProviderConfiguration())
    /// let router = CallRouter(engine: PJSUAEngine(engine), provider: callKit)  // wired here
    /// Task { await router.run(events: engine.events) }
    /// ```
    // Safety: every stored property is a `let` set in `init`. `reports`, `inputs` and
    // `delivering` are Sendable. The `CXProvider` is not marked Sendable by the SDK; it is used
    // only through its reporting methods, `pendingTransactions` and the actions' `fulfill()` /
    // `fail()`, which CallKit documents for use from any queue (it hops to its own), and its
    // delegate is set once, in `init`, before any other thread sees the object.
    public final class CallKitProvider: NSObject, CallActionSource, CXProviderDelegate, @unchecked Sendable {
        /// The CallKit provider. One per app.
        public let provider: CXProvider

        /// What the delegate hands to the router, in CallKit's order.
        private enum Input: Sendable {
            case action(CallAction)
            case audioActivated
            case audioDeactivated
            case reset
        }

        /// Reports made synchronously for PushKit, joined by the router's report of the call.
        private let reports = IncomingCallReports()
        private let inputs = AsyncStream<Input>.makeStream()
        /// Whether ``deliverActions(to:)`` has run: the stream has one consumer.
        private let delivering = Protected(false)

        /// Creates the provider and becomes its delegate (callbacks on the main queue).
        /// - Parameter configuration: the app's CallKit configuration (name, icon, ringtone,
        ///   `supportsVideo`, `maximumCallGroups`, `includesCallsInRecents`…).
        public init(configuration: CXProviderConfiguration) {
            provider = CXProvider(configuration: configuration)
            super.init()
            provider.setDelegate(self, queue: nil)
        }

        /// Starts forwarding CallKit's actions and audio signals to `router`, in CallKit's
        /// order; actions that came before wait in a buffer. Called by the router's
        /// initializer; a second call does nothing.
        /// - Parameter router: the router whose provider this is.
        public func deliverActions(to router: CallRouter) {
            let first = delivering.withLock { started in
                defer { started = true }
                return !started
            }
            guard first else { return }
            let stream = inputs.stream
            Task {
                for await input in stream {
                    switch input {
                    case .action(let action): await router.perform(action)
                    case .audioActivated: try? await router.audioSessionDidActivate()
                    case .audioDeactivated: try? await router.audioSessionDidDeactivate()
                    case .reset:
                        for call in await router.calls {
                            await router.perform(CallAction(callUUID: call.id, kind: .end))
                        }
                    }
                }
            }
        }

        /// The router's initializer now does this (see ``deliverActions(to:)``).
        /// - Parameter router: the router whose provider this is.
        @available(*, deprecated, message: "CallRouter(engine:provider:) wires its CallKitProvider; nothing to attach")
        public func attach(_ router: CallRouter) {
            deliverActions(to: router)
        }

        // MARK: Reporting to the system (CallProvider)

        /// Reports a call to CallKit now, from synchronous code; PushKit requires this before
        /// its delegate method returns. A later ``reportNewIncomingCall(_:update:)`` for the same
        /// UUID (the router's) waits for this report's outcome instead of reporting again.
        /// Wraps `reportNewIncomingCall(with:update:completion:)`.
        /// - Parameters:
        ///   - call: the call's UUID.
        ///   - update: what to show.
        public func reportNewIncomingCallNow(_ call: UUID, update: CallUpdate) {
            reports.reportStarted(call)
            let reports = reports
            provider.reportNewIncomingCall(with: call, update: Self.cxUpdate(update)) { error in
                // Already shown (its INVITE was reported first): the push is satisfied, not refused.
                reports.reportFinished(call, error: Self.isAlreadyShown(error) ? nil : error)
            }
        }

        /// Wraps `reportNewIncomingCall(with:update:completion:)`, or joins a report
        /// ``reportNewIncomingCallNow(_:update:)`` already made for this UUID.
        /// - Throws: CallKit's error when the system refuses the call.
        public func reportNewIncomingCall(_ call: UUID, update: CallUpdate) async throws {
            if try await reports.join(call) { return }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                provider.reportNewIncomingCall(with: call, update: Self.cxUpdate(update)) { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            }
        }

        /// Wraps `reportCall(with:updated:)`.
        public func reportCallUpdated(_ call: UUID, update: CallUpdate) {
            provider.reportCall(with: call, updated: Self.cxUpdate(update))
        }

        /// Wraps `reportOutgoingCall(with:startedConnectingAt:)`.
        public func reportOutgoingCallStartedConnecting(_ call: UUID) {
            provider.reportOutgoingCall(with: call, startedConnectingAt: nil)
        }

        /// Wraps `reportOutgoingCall(with:connectedAt:)`.
        public func reportOutgoingCallConnected(_ call: UUID) {
            provider.reportOutgoingCall(with: call, connectedAt: nil)
        }

        /// Wraps `reportCall(with:endedAt:reason:)`.
        public func reportCallEnded(_ call: UUID, reason: CallEndReason) {
            reports.forget(call)
            provider.reportCall(with: call, endedAt: nil, reason: Self.cxReason(reason))
        }

        /// Calls `fulfill()` on the pending `CXAction` (found in `pendingTransactions`).
        public func fulfill(_ action: UUID) {
            pendingAction(action)?.fulfill()
        }

        /// Calls `fail()` on the pending `CXAction` (found in `pendingTransactions`).
        public func fail(_ action: UUID, error: CallActionError) {
            pendingAction(action)?.fail()
        }

        /// The action CallKit is still waiting on, by its UUID. CallKit keeps them, so this
        /// adapter holds no state of its own.
        private func pendingAction(_ id: UUID) -> CXAction? {
            provider.pendingTransactions.lazy.flatMap(\.actions).first { $0.uuid == id }
        }

        // MARK: The system's actions (CXProviderDelegate)

        /// CallKit reset: every call is ended.
        public func providerDidReset(_ provider: CXProvider) {
            inputs.continuation.yield(.reset)
        }

        /// Forwards a start action (`.dial` with the handle and its type, from the first bound
        /// account): the router's ``HandleMapping`` makes the URI. Fulfilled once the INVITE
        /// is out; CallKit then activates the audio session, so ringback and early media are
        /// heard while the call rings, and the call's progress follows as
        /// `reportOutgoingCall(with:startedConnectingAt:)` and `…connectedAt:`.
        public func provider(_ provider: CXProvider, perform action: CXStartCallAction) {
            forward(action, .dial(Self.callHandle(action.handle), account: nil, hasVideo: action.isVideo))
        }

        /// Forwards an answer action; fulfilled once the 200 is sent (CallKit then activates
        /// the audio session), not when the far end's ACK comes.
        public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
            forward(action, .answer)
        }

        /// Forwards an end action; fulfilled when the call has ended.
        public func provider(_ provider: CXProvider, perform action: CXEndCallAction) {
            forward(action, .end)
        }

        /// Forwards a hold action; fulfilled when the media state shows it.
        public func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) {
            forward(action, .hold(action.isOnHold))
        }

        /// Forwards a mute action.
        public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) {
            forward(action, .mute(action.isMuted))
        }

        /// Forwards a DTMF action (sent as RFC 4733 events).
        public func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction) {
            forward(action, .playDTMF(action.digits))
        }

        /// Forwards a group action (a local conference, or leaving it).
        public func provider(_ provider: CXProvider, perform action: CXSetGroupCallAction) {
            forward(action, .group(with: action.callUUIDToGroupWith))
        }

        /// The system activated the audio session: the router attaches the sound device.
        public func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) {
            inputs.continuation.yield(.audioActivated)
        }

        /// The system deactivated the audio session: the router detaches the sound device.
        public func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) {
            inputs.continuation.yield(.audioDeactivated)
        }

        private func forward(_ action: CXCallAction, _ kind: CallAction.Kind) {
            inputs.continuation.yield(.action(CallAction(id: action.uuid, callUUID: action.callUUID, kind: kind)))
        }

        // MARK: Conversions

        static func callHandle(_ handle: CXHandle) -> CallHandle {
            switch handle.type {
            case .phoneNumber: CallHandle(.phoneNumber, handle.value)
            case .emailAddress: CallHandle(.emailAddress, handle.value)
            case .generic: CallHandle(.generic, handle.value)
            @unknown default: CallHandle(.generic, handle.value)
            }
        }

        static func cxUpdate(_ update: CallUpdate) -> CXCallUpdate {
            let cx = CXCallUpdate()
            let handle = update.remoteHandle
            cx.remoteHandle = CXHandle(type: cxHandleType(handle.kind), value: handle.value)
            cx.localizedCallerName = update.displayName
            // The router sets it only when the engine carries video (CallEngine.carriesVideo).
            cx.hasVideo = update.hasVideo
            cx.supportsHolding = true
            cx.supportsDTMF = true
            cx.supportsGrouping = true
            cx.supportsUngrouping = true
            return cx
        }

        static func cxHandleType(_ kind: CallHandle.Kind) -> CXHandle.HandleType {
            switch kind {
            case .phoneNumber: .phoneNumber
            case .emailAddress: .emailAddress
            case .generic: .generic
            }
        }

        static func cxReason(_ reason: CallEndReason) -> CXCallEndedReason {
            switch reason {
            case .failed: .failed
            case .remoteEnded: .remoteEnded
            case .unanswered: .unanswered
            case .answeredElsewhere: .answeredElsewhere
            case .declinedElsewhere: .declinedElsewhere
            }
        }

        private static func isAlreadyShown(_ error: (any Error)?) -> Bool {
            guard let error = error as? CXErrorCodeIncomingCallError else { return false }
            return error.code == .callUUIDAlreadyExists
        }
    }
#endif
