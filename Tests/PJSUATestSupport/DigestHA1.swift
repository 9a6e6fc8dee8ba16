import Foundation
import SwiftPJSUA

/// HA1 values (RFC 7616 §3.4.2: `H(username:realm:password)` in lowercase hex) for the
/// tests' digest credentials, computed by Python's `hashlib` so that the engine's own code
/// plays no part in the expected value.
public enum DigestHA1 {
    /// The HA1 of `username`, `realm` and `password` under `algorithm`.
    public static func of(
        username: String, realm: String, password: String, algorithm: DigestAlgorithm = .md5
    ) throws -> String {
        let name = algorithm == .sha256 ? "sha256" : "md5"
        let script = "import hashlib, sys; print(hashlib.new(sys.argv[1], sys.argv[2].encode()).hexdigest())"
        guard
            let (status, output) = commandOutput(
                "/usr/bin/python3", ["-c", script, name, "\(username):\(realm):\(password)"]),
            status == 0, output.count == algorithm.hexDigits
        else { throw Unavailable(algorithm: algorithm.name) }
        return output
    }

    /// python3 could not compute the HA1.
    public struct Unavailable: Error {
        /// The algorithm asked for.
        public var algorithm: String
    }
}

extension Kamailio {
    /// The digest realm Kamailio challenges REGISTER with (the To domain, `$td`): its address.
    public var realm: String { advertisedHost ?? address }

    /// An account of the test user `user` like ``account(_:password:transport:registrar:expiry:retry:)``,
    /// but with the HA1 of `password` (the user's own unless given) for Kamailio's realm
    /// instead of the password.
    public func ha1Account(
        _ user: String, password: String? = nil, algorithm: DigestAlgorithm = .md5, retry: Duration = .seconds(300)
    ) throws -> AccountConfiguration {
        var configuration = account(user, retry: retry)
        let ha1 = try DigestHA1.of(
            username: user, realm: realm, password: password ?? Self.passwords[user] ?? "", algorithm: algorithm)
        configuration.credentials = [.digest(ha1: ha1, username: user, realm: realm, algorithm: algorithm)]
        return configuration
    }
}
