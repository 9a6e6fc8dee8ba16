extension PJSUA {
    /// The reason of the ``CallState/disconnected`` event of a call the engine ended because
    /// the peer's ACK did not carry the answer to the offer the engine's 200 made (the
    /// INVITE had no SDP): RFC 3261 §13.2.1 leaves no session then. The engine sends BYE with
    /// `Reason: SIP;cause=488;text="no answer in ACK"` (RFC 3326) right after the call's
    /// ``CallState/confirmed`` event.
    public static let missingAnswerReason = "no answer in ACK: no session (RFC 3261 §13.2.1)"

    /// How many re-INVITEs ``setHold(_:)`` or ``resume(_:)`` send in all while the far end
    /// answers 491 Request Pending, before ``PJSUAEvent/reinviteFailed(_:)`` reports it.
    public static let reinviteGlareAttempts = 3
}
