/// An event from the engine.
///
/// Events are copied out of pjsua's callbacks into these values at the moment the callback
/// runs, so every payload is a self-contained snapshot: a consumer that handles it late never
/// needs to ask pjsua about a call or account that may be gone.
public enum PJSUAEvent: Sendable, Hashable {
    /// A REGISTER transaction finished (`on_reg_state2`).
    /// - `outcome`: registered (with the granted lifetime), unregistered, or failed.
    /// - `statusCode`: the final SIP status (100–699), or the code pjsip reports when no
    ///   response came (408 on timeout, 502/503 on transport and TLS failures).
    /// - `reason`: the reason phrase, or pjsip's description of the failure when no response
    ///   came (for example a TLS certificate verification error).
    /// - `expiration`: the registration lifetime the registrar granted (zero when not registered).
    case registrationState(
        account: Account, outcome: RegistrationOutcome, statusCode: Int, reason: String, expiration: Duration)

    /// A new INVITE arrived and created a call (`on_incoming_call`).
    /// - `sipCallID`: the INVITE's Call-ID header, exactly as received.
    /// - `from`: the From header's display-name (unescaped) and URI.
    /// - `offeredVideo`: the offer contained a video stream.
    case incomingCall(account: Account, call: Call, sipCallID: String, from: SIPAddress, offeredVideo: Bool)

    /// The call's INVITE session changed state (`on_call_state`). A call reports
    /// ``CallState/disconnected`` exactly once, as its last state event.
    /// - `lastStatus`: the last SIP status code (100–699), or 0 before any response.
    /// - `reason`: the reason phrase of that status.
    case callState(call: Call, state: CallState, sipCallID: String, lastStatus: Int, reason: String)

    /// The call's media changed (`on_call_media_state`): negotiated, held, resumed or removed.
    /// By the time this is delivered the engine has already connected each active or
    /// remote-hold audio stream to the conference bridge.
    case callMediaState(call: Call, media: [MediaStream])

    /// The call this event is about, if any.
    public var call: Call? {
        switch self {
        case .registrationState: nil
        case .incomingCall(_, let call, _, _, _): call
        case .callState(let call, _, _, _, _): call
        case .callMediaState(let call, _): call
        }
    }
}

/// An event with the instant the engine received it from pjsua's callback, for measuring
/// how long events take to reach a consumer.
public struct TimestampedEvent: Sendable {
    /// The event.
    public let event: PJSUAEvent
    /// When the callback handed the event to the engine's fan-out (`ContinuousClock`).
    public let raisedAt: ContinuousClock.Instant
}
