// Apple only, and compiled only by Xcode: written against Apple's documented PushKit API, it
// cannot be compiled on the Linux machine this package is developed and tested on (see the
// CallKit integration article, "What is verified where"). What it forwards to,
// ``CallRouter/receiveVoIPPush(_:)`` and ``CallRouter/handleVoIPPush(_:)``, is
// platform-neutral and tested on Linux.
#if canImport(PushKit) && canImport(CallKit)
    @preconcurrency import CallKit
    import Foundation
    @preconcurrency import PushKit
    import SwiftPJSUA

    /// The `PKPushRegistryDelegate` for VoIP pushes: reads the payload with the router's
    /// parser (``CallRouter/receiveVoIPPush(_:)``: your ``IncomingCallPushParser``, then
    /// ``PushPayload`` schema version 1) and reports the call to CallKit before its delegate
    /// method returns, as PushKit requires on iOS 13 and later; then hands the push to the
    /// router (``CallRouter/handleVoIPPush(_:)``: cold start, registration) and calls PushKit's
    /// completion handler once the router is done with it.
    ///
    /// The VoIP push token goes to the router as PushKit hands it over
    /// (``CallRouter/updatePushToken(_:)``, in PushKit's order): every bound account with push
    /// parameters registers again with the new `pn-prid`, once per change, and a token that
    /// comes before the account is kept for it. `onToken` is for anything else the app does
    /// with the token (a push gateway of its own); it may be left out.
    ///
    /// Every VoIP push reports a call, even one nothing can read (a placeholder, ended at once
    /// as failed): the system terminates apps that do not. So `reregister` pushes should not be
    /// sent as VoIP pushes; send them as background notifications and pass them to
    /// ``CallRouter/handlePush(_:)`` from
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`. One arriving here
    /// anyway is honoured, behind a placeholder call ended at once.
    ///
    /// Xcode only: not compiled on Linux.
    ///
    /// <!-- snippet-if: canImport(PushKit) -->
    /// <!-- snippet-setup:
    /// import CallKit
    /// let engine = PJSUA()
    /// let callKit = CallKitProvider(configuration: CXProviderConfiguration())
    /// let router = CallRouter(engine: PJSUAEngine(engine), provider: callKit)
    /// -->
    /// ```swift
    /// // Keep it for the app's lifetime: PushKit holds its delegate weakly.
    /// let pushes = VoIPPushHandler(router: router, callKit: callKit)
    /// ```
    // Safety: every stored property is a `let` set in `init`. `router`, `callKit`, `tokens`
    // and `onToken` are Sendable. The `PKPushRegistry` is not marked Sendable by the SDK; this
    // object sets its `delegate` and `desiredPushTypes` once, in `init`, before PushKit can
    // call back, and touches it nowhere else (the property is there for the app to read).
    public final class VoIPPushHandler: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
        /// The push registry, asking for VoIP pushes.
        public let registry: PKPushRegistry
        private let router: CallRouter
        private let callKit: CallKitProvider
        private let onToken: @Sendable (Data?) -> Void
        /// Tokens for the router, in PushKit's order.
        private let tokens = AsyncStream<Data?>.makeStream()

        /// Registers for VoIP pushes.
        /// - Parameters:
        ///   - router: the router that handles the calls (its `pushParser` reads the payloads).
        ///   - callKit: the CallKit provider the router reports to.
        ///   - queue: the queue PushKit calls the delegate on (`nil`: the main queue).
        ///   - onToken: also receives the VoIP push token's bytes (`nil` when it is
        ///     invalidated), after they were handed to the router, for anything else the app
        ///     sends them to; nothing by default.
        ///     ``PushConfiguration/apns(teamID:bundleID:token:pushType:scope:)-(_,_,Data,_,_)``
        ///     takes them as they are.
        public init(
            router: CallRouter, callKit: CallKitProvider, queue: DispatchQueue? = nil,
            onToken: @escaping @Sendable (Data?) -> Void = { _ in }
        ) {
            registry = PKPushRegistry(queue: queue)
            self.router = router
            self.callKit = callKit
            self.onToken = onToken
            super.init()
            let stream = tokens.stream
            Task {
                for await token in stream { await router.updatePushToken(token) }
            }
            registry.delegate = self
            registry.desiredPushTypes = [.voIP]
        }

        /// Hands the new token to the router (``CallRouter/updatePushToken(_:)``), then to `onToken`.
        @objc(pushRegistry:didUpdatePushCredentials:forType:)
        public func pushRegistry(
            _ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType
        ) {
            guard type == .voIP else { return }
            tokens.continuation.yield(pushCredentials.token)
            onToken(pushCredentials.token)
        }

        /// Tells the router and `onToken` the token is gone (the router forgets it).
        @objc(pushRegistry:didInvalidatePushTokenForType:)
        public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
            guard type == .voIP else { return }
            tokens.continuation.yield(nil)
            onToken(nil)
        }

        /// Reads the push and reports its call (or a placeholder) to CallKit before returning;
        /// calls `completion` once the router has handled the push (after the cold start and
        /// registration of a call push).
        ///
        /// `completion` is declared `@escaping () -> Void`, as in the SDKs before Xcode 16;
        /// the current SDK declares it `@escaping @Sendable () -> Void`. A non-Sendable
        /// parameter witnesses both (a Sendable closure converts to a non-Sendable one), where
        /// an `@Sendable` parameter would be only a near-miss of the older requirement, never
        /// called by PushKit. The Objective-C selector is spelled out as well, so PushKit
        /// finds the method by the selector it sends even if Swift's requirement matching
        /// were to disagree.
        @objc(pushRegistry:didReceiveIncomingPushWithPayload:forType:withCompletionHandler:)
        public func pushRegistry(
            _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
            completion: @escaping () -> Void
        ) {
            guard type == .voIP else {
                completion()
                return
            }
            let receipt = router.receiveVoIPPush(payload.dictionaryPayload)
            callKit.reportNewIncomingCallNow(receipt.callUUID, update: receipt.update)
            let router = router
            let done = PushCompletion(completion)
            Task {
                _ = try? await router.handleVoIPPush(receipt)
                done.run()
            }
        }
    }

    /// PushKit's completion handler, carried to the task that calls it.
    // Safety: PushKit's completion handler may be called from any thread (the current SDK
    // declares it `@Sendable`); it is called exactly once, by the task that owns this value.
    private struct PushCompletion: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
#endif
