import CPJSUAShim

/// What the engine and pjsua's media callbacks share while the engine runs, behind one lock
/// (``EngineBridge/media``).
struct MediaState: Sendable {
    /// The conference-bridge links kept for each call.
    var plan = MediaPlan()
    /// Our ports on the conference bridge (frame ports, tone generators), so that shutdown
    /// can take off (and end the readers of) those whose removal was still queued.
    var livePorts: [ObjectIdentifier: any BridgePort] = [:]
    /// The sound-device frame stream's tap, while one runs (at most one).
    var soundDeviceTap: FramePort?
    /// Outgoing calls that hear local ringback now, and the generator they share.
    var ringback = Ringback()
    /// The keying each call slot's streams negotiated, as last read in a media callback,
    /// with the generation of the call it was read for (a reused slot's entry is stale).
    var negotiatedKeying: [pjsua_call_id: NegotiatedKeying] = [:]
}
