/// An event from the engine.
///
/// Events are copied out of pjsua's callbacks into these values at the moment the callback
/// runs, so every payload is a self-contained snapshot: a consumer that handles it late never
/// needs to ask pjsua about a call or account that may be gone.
public enum PJSUAEvent: Sendable, Hashable {
    /// A REGISTER transaction finished (`on_reg_state2`).
    case registrationState(RegistrationChange)

    /// A new INVITE arrived and created a call (`on_incoming_call`). The call's
    /// ``CallState/incoming`` state event follows right after.
    ///
    /// An INVITE with a `Replaces` header (RFC 3891) for one of our calls is reported here
    /// too (`on_call_replaced`), with ``IncomingCall/replaces`` naming that call; the engine
    /// answers it itself (see ``PJSUA/setReplaceRequestHandler(_:)``), and
    /// ``callReplaced(_:)`` follows.
    case incomingCall(IncomingCall)

    /// The call's INVITE session changed state (`on_call_state`). A call reports
    /// ``CallState/disconnected`` exactly once, as its last state event.
    case callState(CallStateChange)

    /// The call's media changed (`on_call_media_state`): negotiated, held, resumed or removed.
    /// By the time this is delivered the engine has already connected each active or
    /// remote-hold audio stream to the conference bridge.
    case callMediaState(CallMediaChange)

    /// A DTMF digit arrived (`on_dtmf_event`), reported once when it ends, whichever way
    /// it came.
    case dtmf(DTMFDigit)

    /// Progress of a transfer we asked for (`on_call_transfer_status`): first the REFER's
    /// fate, then the status line of each NOTIFY's `message/sipfrag` body. Exactly one final
    /// event per REFER, before its call's terminal event (see ``TransferProgress/isFinal``).
    case transferStatus(TransferProgress)

    /// A REFER arrived on a call (`on_call_transfer_request2`) and was answered.
    case transferRequest(TransferRequestAnswer)

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

    /// A call is being replaced by a new call from an INVITE with `Replaces` (RFC 3891,
    /// `on_call_replaced`). Comes after the new call's ``incomingCall(_:)`` and
    /// ``CallState/incoming`` events and before the replaced call's
    /// ``CallState/disconnected`` event (the engine ends it with BYE, or CANCEL for a call
    /// we placed that was still ringing). ``call`` is the replaced call.
    case callReplaced(CallReplacement)

    /// A re-INVITE that ``PJSUA/setHold(_:)`` or ``PJSUA/resume(_:)`` sent was refused and the
    /// engine gave up on it: 491 Request Pending (re-INVITE glare, RFC 3261 §14.1) to
    /// ``ReinviteFailure/attempts`` tries in a row, or any other 3xx–6xx at once. The call
    /// stays up with the media it had; no ``callMediaState(_:)`` follows for it.
    case reinviteFailed(ReinviteFailure)

    /// A step of a network change the engine is handling (``PJSUA/handleNetworkChange(_:)``,
    /// or ``Configuration/networkChangeHandling`` set to automatic): listeners restarted,
    /// registrations renewed, calls refreshed or ended, and finally
    /// ``NetworkChangeProgress/Step/completed``. ``call`` is the call of a call step.
    case networkChange(NetworkChangeProgress)

    /// A confirmed call started reconnecting (after a network change's re-INVITE went out,
    /// or after its connection was lost and the engine re-INVITEs), or such an episode
    /// reached its outcome: reconnected, or given up with the call still up. A call that
    /// ends while reconnecting reports only its ``CallState/disconnected`` event, with the
    /// reason it has anyway. See ``CallReconnection`` for the order guarantees.
    case reconnection(CallReconnection)

    /// The call this event is about, if any.
    public var call: Call? {
        switch self {
        case .registrationState: nil
        case .incomingCall(let incoming): incoming.call
        case .callState(let change): change.call
        case .callMediaState(let change): change.call
        case .dtmf(let digit): digit.call
        case .transferStatus(let progress): progress.call
        case .transferRequest(let answer): answer.call
        case .playbackFinished(let finished): finished.call
        case .mediaInactivity(let payload): payload.call
        case .transportLoss(let payload): payload.call
        case .callReplaced(let replacement): replacement.call
        case .reinviteFailed(let failure): failure.call
        case .networkChange(let progress): progress.call
        case .reconnection(let reconnection): reconnection.call
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

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - event: the event.
    ///   - raisedAt: when the callback raised it.
    public init(event: PJSUAEvent, raisedAt: ContinuousClock.Instant) {
        self.event = event
        self.raisedAt = raisedAt
    }
}
