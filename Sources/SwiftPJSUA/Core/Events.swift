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

    /// Creates the payload; the engine makes one when a player's file ends.
    public init(player: Player) {
        self.player = player
    }
}

/// The payload of ``PJSUAEvent/registrationState(_:)``: how a REGISTER transaction ended.
public struct RegistrationChange: Sendable, Hashable {
    /// The account that registered, unregistered or failed to.
    public var account: Account
    /// Registered (with the granted lifetime), unregistered, or failed.
    public var outcome: RegistrationOutcome
    /// The final SIP status (100–699), or the code pjsip reports when no response came
    /// (408 on timeout, 502/503 on transport and TLS failures).
    public var statusCode: Int
    /// The reason phrase, or pjsip's description of the failure when no response came (for
    /// example a TLS certificate verification error).
    public var reason: String
    /// The registration lifetime the registrar granted (zero when not registered).
    public var expiration: Duration

    /// Whether the account is registered after this transaction.
    public var isRegistered: Bool { outcome.isRegistered }

    /// Creates the payload; the engine fills it from `on_reg_state2`.
    public init(account: Account, outcome: RegistrationOutcome, statusCode: Int, reason: String, expiration: Duration) {
        self.account = account
        self.outcome = outcome
        self.statusCode = statusCode
        self.reason = reason
        self.expiration = expiration
    }
}

/// The payload of ``PJSUAEvent/incomingCall(_:)``: a new call from an INVITE we received.
public struct IncomingCall: Sendable, Hashable {
    /// The account the INVITE was addressed to.
    public var account: Account
    /// The new call (its state is ``CallState/incoming``).
    public var call: Call
    /// The INVITE's Call-ID header, exactly as received.
    public var sipCallID: String
    /// The From header's display-name (unescaped) and URI.
    public var from: SIPAddress
    /// The offer contained a video stream.
    public var offeredVideo: Bool
    /// Every header of the INVITE in order, as name/value pairs (X- headers,
    /// P-Asserted-Identity…); look one up with `headers.value(of:)`.
    public var headers: [SIPHeader]
    /// The call this one replaces, when the INVITE carried a `Replaces` header for it (RFC
    /// 3891); `nil` for an ordinary INVITE. The engine answers a replacement itself with
    /// 200 (the replaced call is confirmed, or one we placed that is still ringing), so
    /// CONNECTING and CONFIRMED follow without ``PJSUA/answer(_:statusCode:headers:)`` (which
    /// throws ``PJSUAUsageError/invalidCallState(_:_:)`` for it); the app can still end it
    /// with ``PJSUA/hangup(_:statusCode:headers:)``, or refuse it beforehand with
    /// ``PJSUA/setReplaceRequestHandler(_:)``. Its ``account`` is the replaced call's.
    public var replaces: Call?

    /// Creates the payload; the engine fills it from `on_incoming_call` (or
    /// `on_call_replaced`, with `replaces`).
    public init(
        account: Account, call: Call, sipCallID: String, from: SIPAddress, offeredVideo: Bool, headers: [SIPHeader] = [],
        replaces: Call? = nil
    ) {
        self.account = account
        self.call = call
        self.sipCallID = sipCallID
        self.from = from
        self.offeredVideo = offeredVideo
        self.headers = headers
        self.replaces = replaces
    }
}

/// The payload of ``PJSUAEvent/callState(_:)``: the INVITE session's new state.
public struct CallStateChange: Sendable, Hashable {
    /// The call.
    public var call: Call
    /// Its new state.
    public var state: CallState
    /// The call's Call-ID header.
    public var sipCallID: String
    /// The last SIP status code (100–699), or 0 before any response.
    public var lastStatus: Int
    /// The reason phrase of that status, or the engine's reason for an end it caused (for
    /// example ``PJSUA/mediaTimeoutReason``).
    public var reason: String

    /// Creates the payload; the engine fills it from `on_call_state`.
    public init(call: Call, state: CallState, sipCallID: String, lastStatus: Int, reason: String) {
        self.call = call
        self.state = state
        self.sipCallID = sipCallID
        self.lastStatus = lastStatus
        self.reason = reason
    }
}

/// The payload of ``PJSUAEvent/callMediaState(_:)``: the call's media streams after a change.
public struct CallMediaChange: Sendable, Hashable {
    /// The call.
    public var call: Call
    /// Every media stream of the call, in SDP order.
    public var media: [MediaStream]

    /// Creates the payload; the engine fills it from `on_call_media_state`.
    public init(call: Call, media: [MediaStream]) {
        self.call = call
        self.media = media
    }
}

/// The payload of ``PJSUAEvent/dtmf(_:)``: one DTMF digit received.
public struct DTMFDigit: Sendable, Hashable {
    /// The call it arrived on.
    public var call: Call
    /// `0`–`9`, `*`, `#` or `A`–`D`.
    public var digit: Character
    /// RFC 4733 telephone-event or SIP INFO.
    public var method: DTMFMethod
    /// How long the digit lasted, as the sender reported it; `nil` when unknown.
    public var duration: Duration?

    /// Creates the payload; the engine fills it from `on_dtmf_event`.
    public init(call: Call, digit: Character, method: DTMFMethod, duration: Duration?) {
        self.call = call
        self.digit = digit
        self.method = method
        self.duration = duration
    }
}

/// The payload of ``PJSUAEvent/transferStatus(_:)``: progress of a transfer we asked for
/// (RFC 3515).
public struct TransferProgress: Sendable, Hashable {
    /// The call we sent the REFER on.
    public var call: Call
    /// 100–699. pjsua reports a REFER accepted with 202 as `100 Accepted`, and a REFER
    /// rejected with its error response (for example 403, final); then the transfer
    /// target's status as the far end reports it in NOTIFY sipfrag bodies (100 Trying …
    /// 200 OK).
    public var statusCode: Int
    /// The reason phrase of ``statusCode``.
    public var reason: String
    /// No more progress follows: the REFER's error response, the first final status
    /// (200–699) a NOTIFY reports or the end of its subscription, 408 with
    /// ``PJSUA/transferTimeoutReason`` when no NOTIFY came within 64 × T1 of the REFER
    /// (RFC 6665 §4.1.2.4), or 487 with ``PJSUA/transferCallEndedReason`` when the call ended
    /// first (delivered just before its terminal event). Each REFER gets exactly one. A final
    /// code below 300 means the transfer succeeded (the call stays up until hung up); from
    /// 300 up it failed, or its outcome is unknown, and the call stays as it was.
    public var isFinal: Bool

    /// Creates the payload; the engine fills it from `on_call_transfer_status`.
    public init(call: Call, statusCode: Int, reason: String, isFinal: Bool) {
        self.call = call
        self.statusCode = statusCode
        self.reason = reason
        self.isFinal = isFinal
    }
}

/// The payload of ``PJSUAEvent/transferRequest(_:)``: a REFER we received and how it was
/// answered (RFC 3515).
public struct TransferRequestAnswer: Sendable, Hashable {
    /// The call the REFER arrived on.
    public var call: Call
    /// The Refer-To URI (it may carry a `Replaces` parameter for an attended transfer).
    public var target: String
    /// 202 when accepted (the engine then calls ``target`` as a new call), or the error
    /// code the transfer handler rejected it with.
    public var statusCode: Int

    /// Whether the REFER was accepted.
    public var isAccepted: Bool { statusCode / 100 == 2 }

    /// Creates the payload; the engine fills it from `on_call_transfer_request2`.
    public init(call: Call, target: String, statusCode: Int) {
        self.call = call
        self.target = target
        self.statusCode = statusCode
    }
}

/// The payload of ``PJSUAEvent/callReplaced(_:)``: a call replaced by another (RFC 3891).
public struct CallReplacement: Sendable, Hashable {
    /// The replaced call; it ends next.
    public var call: Call
    /// The new call that takes its place (reported by ``PJSUAEvent/incomingCall(_:)`` with
    /// ``IncomingCall/replaces`` set to ``call``).
    public var replacement: Call

    /// Creates the payload; the engine fills it from `on_call_replaced`.
    public init(call: Call, replacement: Call) {
        self.call = call
        self.replacement = replacement
    }
}
