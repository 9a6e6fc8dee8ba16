extension PJSUA {
    // MARK: Conference

    /// Joins the calls' audio locally: each call hears every other (a 3-way call with two).
    /// The links are kept and re-applied whenever a call's media changes (a re-INVITE
    /// that changes port or codec) until ``leaveConference(_:)`` or the call ends.
    /// Wraps `pjsua_conf_connect`.
    /// - Parameter calls: two or more live calls.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func joinConference(_ calls: [Call]) throws {
        let runtime = try runtime()
        for call in calls { _ = try liveSlot(call) }
        Native.join(bridge: runtime.bridge, calls: calls)
    }

    /// Takes a call out of every conference link. Wraps `pjsua_conf_disconnect`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func leaveConference(_ call: Call) throws {
        let runtime = try runtime()
        _ = try liveSlot(call)
        Native.leave(bridge: runtime.bridge, call: call)
    }
}
