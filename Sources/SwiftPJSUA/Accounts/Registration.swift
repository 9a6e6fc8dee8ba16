/// Reasons the engine puts in a failed ``RegistrationOutcome`` (and in
/// ``AccountInfo/reason``) when the status code alone would hide what happened. Any other
/// failure carries the registrar's reason phrase, or pjsip's text when no response came.
extension RegistrationOutcome {
    /// The registrar kept rejecting the digest as stale (a new nonce, or `stale=true`, in
    /// every 401/407) until pjsip's retry limit (`PJSIP_MAX_STALE_COUNT`, 3 retries) ran out.
    /// The status code is the last challenge's (401 or 407); a wrong password, by contrast,
    /// is rejected at once with the registrar's own phrase ("Unauthorized").
    public static let staleNonceLimitReason = "Stale nonce limit reached"

    /// The unregistration sent by ``PJSUA/shutdown(deadline:)`` had no final response when
    /// the engine stopped: the binding may still be in force at the registrar until it
    /// expires. The status code is the one pjsip gives the abandoned transaction (503).
    public static let unregistrationCutShortReason = "Unregistration cut short by shutdown"
}
