/// A SIP header as a name and a value, for example `X-Tenant: blue`.
public struct SIPHeader: Sendable, Hashable {
    /// The header name, without the colon.
    public var name: String
    /// The header value, as it appears after the colon.
    public var value: String

    /// Creates a header; neither part may contain CR or LF.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Digest credentials for a realm (RFC 3261 §22, RFC 2617).
public struct Credential: Sendable, Hashable, CustomStringConvertible {
    /// The secret: the password itself, or the precomputed HA1 `MD5(username:realm:password)`.
    public enum Secret: Sendable, Hashable {
        /// The password itself.
        case password(String)
        /// The precomputed HA1, as 32 lowercase hex digits.
        case ha1(String)
    }

    /// The realm these credentials answer, or `*` for any realm.
    public var realm: String
    /// The username in the digest.
    public var username: String
    /// The password or HA1. Never logged or printed.
    public var secret: Secret

    /// Creates credentials for `realm` (`*` answers any realm).
    public init(realm: String = "*", username: String, secret: Secret) {
        self.realm = realm
        self.username = username
        self.secret = secret
    }

    /// Credentials with a plain password for any realm.
    public static func password(_ password: String, username: String, realm: String = "*") -> Credential {
        Credential(realm: realm, username: username, secret: .password(password))
    }

    /// Leaves the secret out.
    public var description: String { "Credential(realm: \(realm), username: \(username), secret: <redacted>)" }
}

/// An account: a SIP identity, optionally registered with a registrar.
public struct AccountConfiguration: Sendable, Hashable {
    /// The identity (the From of our requests), a SIP URI or name-addr, for example
    /// `sip:alice@example.com` or `"Alice" <sip:alice@example.com>`.
    public var identity: String
    /// The registrar's URI, for example `sip:example.com`; `nil` for no registration.
    public var registrar: String?
    /// Credentials to answer digest challenges with.
    public var credentials: [Credential]
    /// Proxies every request of this account is routed through (`Route` set), in order;
    /// at most 8.
    public var outboundProxies: [String]
    /// The transport to use; `nil` lets pjsua pick by the destination.
    public var transport: Transport?
    /// The registration lifetime asked for (`Expires`), at least one second.
    public var registrationExpiry: Duration
    /// How long to wait before registering again after a failed registration.
    public var retryInterval: Duration
    /// Send REGISTER as soon as the account is added.
    public var registersOnAdd: Bool
    /// Extra parameters for the Contact URI, starting with `;`, for example `;ob`.
    public var contactParameters: String
    /// Extra headers for REGISTER requests.
    public var registerHeaders: [SIPHeader]
    /// Make this the account for requests no other account matches.
    public var isDefault: Bool

    /// Creates an account configuration; only the identity is required.
    public init(
        identity: String,
        registrar: String? = nil,
        credentials: [Credential] = [],
        outboundProxies: [String] = [],
        transport: Transport? = nil,
        registrationExpiry: Duration = .seconds(300),
        retryInterval: Duration = .seconds(300),
        registersOnAdd: Bool = true,
        contactParameters: String = "",
        registerHeaders: [SIPHeader] = [],
        isDefault: Bool = false
    ) {
        self.identity = identity
        self.registrar = registrar
        self.credentials = credentials
        self.outboundProxies = outboundProxies
        self.transport = transport
        self.registrationExpiry = registrationExpiry
        self.retryInterval = retryInterval
        self.registersOnAdd = registersOnAdd
        self.contactParameters = contactParameters
        self.registerHeaders = registerHeaders
        self.isDefault = isDefault
    }
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
}
