import Foundation

/// How a REGISTER transaction ended.
public enum RegistrationOutcome: Sendable, Hashable {
    /// The registrar accepted the binding for `expiration` (2xx to a refreshing REGISTER).
    case registered(expiration: Duration)
    /// The binding was removed (2xx to an unregistering REGISTER).
    case unregistered
    /// The REGISTER failed: a final status of 300–699, or a code pjsip reports when no
    /// response came (408 on timeout, 502/503 on transport and TLS failures). The reason is
    /// the registrar's phrase, pjsip's text when no response came, or one of the engine's
    /// documented reasons (``staleNonceLimitReason``, ``unregistrationCutShortReason``).
    case failed(statusCode: Int, reason: String)

    /// Whether the account is registered after this outcome.
    public var isRegistered: Bool {
        if case .registered = self { return true }
        return false
    }
}

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

/// A registration awaited with ``PJSUA/register(_:deadline:)`` or
/// ``PJSUA/addAccount(_:awaitingRegistration:)`` did not succeed.
public struct RegistrationFailedError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The account; it stays added (and pjsua retries) until removed.
    public var account: Account
    /// The registrar's final SIP status (for example 401 or 403 for rejected credentials),
    /// the code pjsip reports when no response came (408, 502, 503), 408 when
    /// ``isDeadlineExceeded``, or 0 when the engine shut down while waiting.
    public var statusCode: Int
    /// The reason phrase, or what happened instead of a response.
    public var reason: String
    /// No final answer came before the wait's deadline.
    public var isDeadlineExceeded: Bool

    /// Creates the error; the engine fills it from the registration event or the deadline.
    public init(account: Account, statusCode: Int, reason: String, isDeadlineExceeded: Bool) {
        self.account = account
        self.statusCode = statusCode
        self.reason = reason
        self.isDeadlineExceeded = isDeadlineExceeded
    }

    /// `registration of <account> failed: <statusCode> <reason>`.
    public var description: String {
        "registration of \(account) failed: \(statusCode)" + (reason.isEmpty ? "" : " \(reason)")
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// A snapshot of an account (`pjsua_acc_info`).
public struct AccountInfo: Sendable, Hashable {
    /// The account.
    public var account: Account
    /// The identity URI.
    public var identity: String
    /// Whether the account is the default one.
    public var isDefault: Bool
    /// Whether the account registers with a registrar.
    public var hasRegistration: Bool
    /// Whether a registration is in force now.
    public var isRegistered: Bool
    /// The last REGISTER status code (100–699), 0 before any.
    public var statusCode: Int
    /// The reason phrase of ``statusCode``.
    public var reason: String
    /// Time left on the registration; zero when not registered.
    public var expiresIn: Duration
    /// The account's presence online status (`pjsua_acc_info.online_status`).
    public var isOnline: Bool

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - account: its handle.
    ///   - identity: its SIP URI.
    ///   - isDefault: whether it is the default account.
    ///   - hasRegistration: whether it registers.
    ///   - isRegistered: whether a registration is in force.
    ///   - statusCode: the last REGISTER status.
    ///   - reason: its reason phrase.
    ///   - expiresIn: the time left on the registration.
    ///   - isOnline: the presence status it publishes.
    public init(
        account: Account, identity: String, isDefault: Bool, hasRegistration: Bool, isRegistered: Bool, statusCode: Int,
        reason: String, expiresIn: Duration, isOnline: Bool
    ) {
        self.account = account
        self.identity = identity
        self.isDefault = isDefault
        self.hasRegistration = hasRegistration
        self.isRegistered = isRegistered
        self.statusCode = statusCode
        self.reason = reason
        self.expiresIn = expiresIn
        self.isOnline = isOnline
    }
}
