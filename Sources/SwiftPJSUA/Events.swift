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
    /// - `headers`: every header of the INVITE in order, as name/value pairs (X- headers,
    ///   P-Asserted-Identity…); look one up with `headers.value(of:)`.
    case incomingCall(
        account: Account, call: Call, sipCallID: String, from: SIPAddress, offeredVideo: Bool, headers: [SIPHeader])

    /// The call's INVITE session changed state (`on_call_state`). A call reports
    /// ``CallState/disconnected`` exactly once, as its last state event.
    /// - `lastStatus`: the last SIP status code (100–699), or 0 before any response.
    /// - `reason`: the reason phrase of that status.
    case callState(call: Call, state: CallState, sipCallID: String, lastStatus: Int, reason: String)

    /// The call's media changed (`on_call_media_state`): negotiated, held, resumed or removed.
    /// By the time this is delivered the engine has already connected each active or
    /// remote-hold audio stream to the conference bridge.
    case callMediaState(call: Call, media: [MediaStream])

    /// A DTMF digit arrived (`on_dtmf_event`), reported once when it ends, whichever way
    /// it came.
    /// - `digit`: `0`–`9`, `*`, `#` or `A`–`D`.
    /// - `method`: RFC 4733 telephone-event or SIP INFO.
    /// - `duration`: how long the digit lasted, as the sender reported it; `nil` when unknown.
    case dtmf(call: Call, digit: Character, method: DTMFMethod, duration: Duration?)

    /// Progress of a transfer we asked for (`on_call_transfer_status`): first the REFER's
    /// fate, then the status line of each NOTIFY's `message/sipfrag` body.
    /// - `statusCode`: 100–699. pjsua reports a REFER accepted with 202 as `100 Accepted`, and
    ///   a REFER rejected with its error response (for example 403, final); then the
    ///   transfer target's status as the far end reports it (100 Trying … 200 OK).
    /// - `isFinal`: no more progress follows. A final code below 300 means the transfer
    ///   succeeded; a final code from 300 up means it failed and the call stays as it was.
    case transferStatus(call: Call, statusCode: Int, reason: String, isFinal: Bool)

    /// A REFER arrived on `call` (`on_call_transfer_request2`) and was answered `statusCode`:
    /// 202 when accepted (the engine then calls `target` as a new call), an error code when
    /// the transfer handler rejected it.
    case transferRequest(call: Call, target: String, statusCode: Int)

    /// A player made with `loop: false` played its file to the end (pjmedia's end-of-file
    /// callback): once per player, never for a looping one, and not after its call ended.
    /// The player stays attached (sending nothing) until its call ends or it is stopped.
    case playbackFinished(PlaybackFinished)

    /// A confirmed call's audio received no RTP for the account's
    /// ``AccountConfiguration/mediaInactivityTimeout`` while it should have (the stream
    /// active and receiving, not on hold either way). The engine has sent BYE; the call's
    /// ``CallState/disconnected`` event, with the reason ``PJSUA/mediaTimeoutReason``,
    /// follows right after.
    case mediaInactivity(MediaInactivity)

    /// The TCP or TLS connection under a confirmed call closed or failed
    /// (`on_transport_state`), and the engine applies the account's
    /// ``AccountConfiguration/transportLossPolicy``: with ``TransportLossPolicy/endCall`` the
    /// call's ``CallState/disconnected`` event, with the reason ``PJSUA/transportLostReason``,
    /// follows right after; with ``TransportLossPolicy/reinvite`` a re-INVITE goes out.
    case transportLoss(TransportLoss)

    /// The call this event is about, if any.
    public var call: Call? {
        switch self {
        case .registrationState: nil
        case .incomingCall(_, let call, _, _, _, _): call
        case .callState(let call, _, _, _, _): call
        case .callMediaState(let call, _): call
        case .dtmf(let call, _, _, _): call
        case .transferStatus(let call, _, _, _): call
        case .transferRequest(let call, _, _): call
        case .playbackFinished(let finished): finished.call
        case .mediaInactivity(let payload): payload.call
        case .transportLoss(let payload): payload.call
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

/// The payload of ``PJSUAEvent/playbackFinished(_:)``.
public struct PlaybackFinished: Sendable, Hashable {
    /// The player that reached the end of its file.
    public var player: Player
    /// The call it plays into.
    public var call: Call { player.call }

    public init(player: Player) {
        self.player = player
    }
}
