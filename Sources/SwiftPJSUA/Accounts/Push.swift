/// RFC 8599 push-notification parameters for the Contact URI, so that the registrar (or a
/// proxy it works with) can wake the app with a push before forwarding a request to it.
///
/// The parameters are appended to the Contact URI as `;pn-provider=…;pn-param=…;pn-prid=…`.
public struct PushConfiguration: Sendable, Hashable {
    /// Where the parameters go.
    public enum Scope: Sendable, Hashable {
        /// Only the Contact of REGISTER requests (the usual case: the registrar stores it
        /// with the binding).
        case registerOnly
        /// The Contact of every request and response the account sends (INVITE, SUBSCRIBE…).
        case allRequests
    }

    /// `pn-provider`: the push service, for example `apns` or `fcm`.
    public var provider: String
    /// `pn-param`: provider-specific parameter; for APNs `<Team ID>.<bundle ID>.voip`.
    public var parameter: String?
    /// `pn-prid`: the push resource ID, the device token the provider addresses.
    public var resourceID: String
    /// Where the parameters are added.
    public var scope: Scope

    /// Creates push parameters from their RFC 8599 parts.
    public init(provider: String, parameter: String? = nil, resourceID: String, scope: Scope = .registerOnly) {
        self.provider = provider
        self.parameter = parameter
        self.resourceID = resourceID
        self.scope = scope
    }

    /// Apple Push Notification service parameters (RFC 8599 §9): `pn-provider=apns`,
    /// `pn-param=<teamID>.<bundleID>.<pushType>` (the APNs topic, prefixed with the team ID),
    /// `pn-prid=<token>`.
    /// - Parameters:
    ///   - teamID: the developer team ID, for example `ABCDE12345`.
    ///   - bundleID: the app's bundle ID, for example `com.example.phone`.
    ///   - token: the device token as hexadecimal text (PushKit's for VoIP pushes).
    ///   - pushType: the suffix of the APNs topic: `voip` (the default) for PushKit VoIP
    ///     pushes; empty for a topic that is the bundle ID alone, with no suffix.
    ///   - scope: which Contacts carry the parameters: REGISTER's alone
    ///     (``Scope/registerOnly``, the default) or every request's.
    public static func apns(
        teamID: String, bundleID: String, token: String, pushType: String = "voip", scope: Scope = .registerOnly
    ) -> PushConfiguration {
        let topic = pushType.isEmpty ? bundleID : "\(bundleID).\(pushType)"
        return PushConfiguration(provider: "apns", parameter: "\(teamID).\(topic)", resourceID: token, scope: scope)
    }

    /// The URI parameters, each percent-encoded where RFC 3261's `paramchar` requires it,
    /// for example `;pn-provider=apns;pn-param=T.app.voip;pn-prid=00ff`.
    public var uriParameters: String {
        var text = ";pn-provider=\(Self.escape(provider))"
        if let parameter { text += ";pn-param=\(Self.escape(parameter))" }
        text += ";pn-prid=\(Self.escape(resourceID))"
        return text
    }

    /// Percent-encodes everything but RFC 3261's unreserved characters and param-unreserved
    /// characters that are safe in a URI parameter value.
    private static func escape(_ value: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()[]/:&+$")
        var out = ""
        for byte in value.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 0x80, allowed.contains(scalar) {
                out.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += hex.count == 1 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return out
    }
}
