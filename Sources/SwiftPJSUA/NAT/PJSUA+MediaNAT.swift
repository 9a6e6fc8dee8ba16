extension PJSUA {
    /// The most STUN servers ``STUNConfiguration/servers`` may list (the size of
    /// `pjsua_config.stun_srv`, 8).
    public static var maxSTUNServers: Int { Native.maxSTUNServers }

    /// The media transport of one of a call's streams: the addresses in use and, with ICE,
    /// the session's state and the candidate pairs it nominated (a relayed local candidate
    /// means the audio goes through the TURN server). ICE finishes after the SDP exchange:
    /// the pairs appear once checks have succeeded (``ICEState/completed``), usually within
    /// a few round trips of ``CallState/confirmed``. Runs on the engine's thread. Wraps
    /// `pjsua_call_get_med_transport_info`.
    /// - Parameters:
    ///   - call: a call with media.
    ///   - mediaIndex: the stream's index in the SDP (0 for the usual single audio).
    /// - Returns: the transport's addresses and ICE state.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the call has no
    ///   such stream or its media is not set up.
    public func mediaTransport(of call: Call, mediaIndex: Int = 0) throws -> MediaTransportInfo {
        let slot = try liveSlot(call)
        return try Native.mediaTransport(slot, mediaIndex: mediaIndex)
    }
}
