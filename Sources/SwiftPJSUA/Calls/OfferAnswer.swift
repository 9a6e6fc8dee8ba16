/// What a re-INVITE the app asked for was meant to do.
public enum ReinvitePurpose: String, Sendable, Hashable, CaseIterable {
    /// ``PJSUA/setHold(_:)``: offer `a=sendonly` (or `a=inactive`).
    case hold
    /// ``PJSUA/resume(_:)``: offer `a=sendrecv`.
    case resume
    /// A network change (``PJSUA/handleNetworkChange(_:)``): the re-INVITE with a new
    /// Contact, Via and media transports that moves a confirmed call to the new address.
    /// Also retried when it could not even be sent because another INVITE was still open.
    case networkChange
}

/// The payload of ``PJSUAEvent/reinviteFailed(_:)``: a hold or resume the far end refused.
///
/// A 491 Request Pending means the far end's own re-INVITE crossed ours (glare, RFC 3261
/// §14.1): the engine sends the same offer again after a random wait, 2.1–4 s on a call we
/// placed (we chose its Call-ID) and 0–2 s on a call we answered, up to
/// ``PJSUA/reinviteGlareAttempts`` tries in all. Any other final status is not retried.
public struct ReinviteFailure: Sendable, Hashable {
    /// The call, still up.
    public var call: Call
    /// What the re-INVITE was for.
    public var purpose: ReinvitePurpose
    /// The final SIP status (300–699) of the last try, for example 491.
    public var statusCode: Int
    /// How many re-INVITEs were sent for this hold or resume, 1 or more.
    public var attempts: Int

    /// Creates the payload; the engine fills it from the re-INVITE's final response.
    public init(call: Call, purpose: ReinvitePurpose, statusCode: Int, attempts: Int) {
        self.call = call
        self.purpose = purpose
        self.statusCode = statusCode
        self.attempts = attempts
    }
}
