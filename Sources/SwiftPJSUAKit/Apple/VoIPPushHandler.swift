// Apple only. Written against Apple's documented PushKit API; it cannot be compiled on the
// Linux machine this package is developed and tested on (see README, "SwiftPJSUAKit").
#if canImport(PushKit) && canImport(CallKit)
    @preconcurrency import CallKit
    import Foundation
    @preconcurrency import PushKit
    import SwiftPJSUA

    /// The `PKPushRegistryDelegate` for VoIP pushes: parses the payload (``PushPayload``) and
    /// reports the call to CallKit before its delegate method returns, as PushKit requires on
    /// iOS 13 and later; then hands the push to the ``CallRouter`` and calls PushKit's
    /// completion handler once the router has it.
    ///
    /// Every VoIP push reports a call, even a malformed one (a placeholder, ended at once as
    /// failed): the system terminates apps that do not. So `reregister` pushes must not be sent
    /// as VoIP pushes; send them as background notifications and pass them to
    /// ``CallRouter/handlePush(_:)`` from `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    /// One arriving here anyway is honoured, behind a placeholder call ended at once.
    public final class VoIPPushHandler: NSObject, PKPushRegistryDelegate, Sendable {
        /// The push registry, asking for VoIP pushes.
        public let registry: PKPushRegistry
        private let router: CallRouter
        private let callKit: CallKitProvider
        private let onToken: @Sendable (Data?) -> Void

        /// Registers for VoIP pushes.
        /// - Parameters:
        ///   - router: the router that handles the calls.
        ///   - callKit: the CallKit provider the router reports to.
        ///   - onToken: receives the VoIP push token to send to your SIP server (`nil` when it
        ///     is invalidated).
        public init(router: CallRouter, callKit: CallKitProvider, onToken: @escaping @Sendable (Data?) -> Void) {
            registry = PKPushRegistry(queue: nil)
            self.router = router
            self.callKit = callKit
            self.onToken = onToken
            super.init()
            registry.delegate = self
            registry.desiredPushTypes = [.voIP]
        }

        /// Hands the new token to `onToken`.
        public func pushRegistry(
            _ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType
        ) {
            onToken(pushCredentials.token)
        }

        /// Tells `onToken` the token is gone.
        public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
            onToken(nil)
        }

        /// Parses the push and reports its call to CallKit before returning; calls `completion`
        /// once the router has handled the push.
        public func pushRegistry(
            _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
            completion: @escaping @Sendable () -> Void
        ) {
            guard type == .voIP else {
                completion()
                return
            }
            let parsed: PushPayload
            do {
                parsed = try PushPayload(dictionary: payload.dictionaryPayload)
            } catch {
                reportPlaceholder()
                completion()
                return
            }
            let router = router
            let callKit = callKit
            switch parsed {
            case .incomingCall(var push):
                // Decided without awaiting: a known Call-ID keeps its call's UUID.
                let id = router.claimCallUUID(for: push)
                push.serverUUID = id
                callKit.reportNewIncomingCallNow(
                    id,
                    update: CallUpdate(
                        remoteURI: push.caller.uri, displayName: push.caller.displayName,
                        hasVideo: push.hasVideo))
                let pinned = push
                Task {
                    if case .alreadyEnded(let ended) = try? await router.handlePush(.incomingCall(pinned)) {
                        callKit.reportCallEnded(ended, reason: .remoteEnded)
                    }
                    completion()
                }
            case .reRegister:
                reportPlaceholder()
                Task {
                    _ = try? await router.handlePush(parsed)
                    completion()
                }
            }
        }

        /// PushKit insists on a reported call: show one and end it at once.
        private func reportPlaceholder() {
            let id = UUID()
            callKit.reportNewIncomingCallNow(id, update: CallUpdate(remoteURI: "unknown"))
            callKit.reportCallEnded(id, reason: .failed)
        }
    }
#endif
