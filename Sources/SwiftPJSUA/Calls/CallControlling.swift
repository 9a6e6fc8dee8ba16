/// The call operations an app uses most, and the engine's events: the seam an app's own
/// call logic (UI state, call history, CallKit glue) can be written against, so that its
/// tests run on a fake (`FakeCallEngine` in the `SwiftPJSUAKitTesting` product) while the
/// app runs on ``PJSUA``.
///
/// ``PJSUA`` conforms with its own methods; every requirement behaves, and throws, as the
/// method of ``PJSUA`` it names. A conforming fake follows the same contract: a call's
/// states move forward only (``CallState/calling`` or ``CallState/incoming``, then
/// ``CallState/early``, ``CallState/connecting``, ``CallState/confirmed``), each call has
/// exactly one ``CallState/disconnected`` event, an operation on a handle whose call has
/// ended throws ``PJSUAUsageError/unknownCall(_:)``, and ``events(for:)`` starts with the
/// events that describe the call now.
public protocol CallControlling: Sendable {
    /// Every event from the moment of this access on, in order, none dropped. See
    /// ``PJSUA/events``.
    var events: AsyncStream<PJSUAEvent> { get }

    /// The events of one call: a snapshot of it first, then every later event, finishing
    /// after its terminal state event. See ``PJSUA/events(for:)``.
    /// - Parameter call: a call handle; a stale one gives a stream that finishes at once.
    /// - Returns: an unbounded stream.
    func events(for call: Call) -> AsyncStream<PJSUAEvent>

    /// Places a call. See ``PJSUA/makeCall(to:from:headers:)``.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - headers: extra headers for the INVITE (`[]` for none).
    /// - Returns: the call's handle.
    /// - Throws: ``PJSUAUsageError`` (an invalid URI or header, an unknown account) or
    ///   ``PJSUAError``, as ``PJSUA/makeCall(to:from:headers:)``.
    func makeCall(to uri: String, from account: Account, headers: [SIPHeader]) async throws -> Call

    /// Answers an incoming call with a provisional or final response. See
    /// ``PJSUA/answer(_:statusCode:headers:)``.
    /// - Parameters:
    ///   - call: an unanswered incoming call.
    ///   - statusCode: the SIP status, 100–699.
    ///   - headers: extra headers for the response (`[]` for none).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)`` for an ended call,
    ///   ``PJSUAUsageError/invalidCallState(_:_:)`` for one that is not an unanswered incoming
    ///   call, ``PJSUAUsageError/invalidStatusCode(_:)``, or ``PJSUAError``.
    func answer(_ call: Call, statusCode: Int, headers: [SIPHeader]) async throws

    /// Ends a call. See ``PJSUA/hangup(_:statusCode:headers:)``.
    /// - Parameters:
    ///   - call: the call to end.
    ///   - statusCode: the final response for an unanswered incoming call (300–699), or `nil`.
    ///   - headers: extra headers (`[]` for none).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)`` for an ended call,
    ///   ``PJSUAUsageError/invalidStatusCode(_:)``.
    func hangup(_ call: Call, statusCode: Int?, headers: [SIPHeader]) async throws

    /// Puts a confirmed call on hold. See ``PJSUA/setHold(_:)``.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``, ``PJSUAUsageError/invalidCallState(_:_:)``
    ///   when the call is not confirmed, or ``PJSUAError``.
    func setHold(_ call: Call) async throws

    /// Takes a call off hold. See ``PJSUA/resume(_:)``.
    /// - Throws: as ``setHold(_:)``.
    func resume(_ call: Call) async throws

    /// Mutes or unmutes what a call transmits. See ``PJSUA/setMuted(_:muted:)``.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    func setMuted(_ call: Call, muted: Bool) async throws

    /// Sends DTMF digits on a confirmed call. See ``PJSUA/sendDTMF(_:digits:method:duration:)``.
    /// - Parameters:
    ///   - call: a confirmed call.
    ///   - digits: `0`–`9`, `*`, `#`, `A`–`D`.
    ///   - method: RFC 4733 or SIP INFO.
    ///   - duration: each digit's length, 1 ms–10 s.
    /// - Throws: ``PJSUAUsageError/invalidDTMFDigits(_:)``, ``PJSUAUsageError/unknownCall(_:)``,
    ///   ``PJSUAUsageError/invalidCallState(_:_:)`` when the call is not confirmed, or ``PJSUAError``.
    func sendDTMF(_ call: Call, digits: String, method: DTMFMethod, duration: Duration) async throws
}

extension PJSUA: CallControlling {}
