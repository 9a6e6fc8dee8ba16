extension PJSUA {
    // MARK: Mute

    /// Mutes or unmutes what a call transmits: while muted the far end hears silence (RTP
    /// keeps flowing, so NATs and the far end's media timers stay happy). Covers the sound
    /// device, players and conference partners alike, and lasts across re-INVITEs.
    /// Wraps `pjsua_conf_adjust_tx_level` (level 0 or 1) on the call's conference slot.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func setMuted(_ call: Call, muted: Bool) throws(PJSUAUsageError) {
        let runtime = try runtime()
        _ = try liveSlot(call)
        Native.setMuted(bridge: runtime.bridge, call: call, muted)
    }
}
