extension PJSUA {
    // MARK: Replaces (RFC 3891)

    /// Decides how INVITEs with `Replaces` (RFC 3891) for our calls are answered. Without a
    /// handler (the default) every one is accepted: the engine answers the new call as the
    /// replaced call was answered (200 for a confirmed call) and ends the replaced call.
    /// pjsip itself answers a `Replaces` that matches no call 481, and one for a call
    /// already ended 603, without asking; so does the engine for a call the app has hung up
    /// whose BYE is still unanswered (RFC 3891 §3: that dialog has terminated).
    ///
    /// An accepted replacement is reported as ``PJSUAEvent/incomingCall(_:)`` with
    /// ``IncomingCall/replaces`` naming the replaced call, its ``CallState/incoming`` event,
    /// then ``PJSUAEvent/callReplaced(_:)``, before the replaced call's
    /// ``CallState/disconnected``. A refused one gets the handler's status code, and no
    /// event: the replaced call stays as it was.
    ///
    /// The handler runs on a pjsua thread while pjsua waits for the answer: it must return
    /// quickly and must not call into the engine. Wraps `on_call_replace_request2`.
    /// - Parameter handler: returns ``ReplaceDecision/accept`` or
    ///   ``ReplaceDecision/reject(statusCode:)`` (400–699); `nil` accepts all.
    /// - Throws: ``PJSUAUsageError`` when the engine is not running (the handler lasts until
    ///   shutdown).
    public func setReplaceRequestHandler(_ handler: (@Sendable (ReplaceRequest) -> ReplaceDecision)?) throws {
        let runtime = try runtime()
        runtime.bridge.calls.withLock { $0.replaceHandler = handler }
    }
}
