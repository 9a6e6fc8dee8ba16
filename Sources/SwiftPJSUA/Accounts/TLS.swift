import Foundation

/// TLS settings of a TLS transport. ``PJSUA/start(_:)`` throws
/// ``PJSUAUsageError/invalidConfiguration(_:)`` when a file named here cannot be read.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM file of the certificate authorities trusted to sign peers' certificates; `nil`
    /// uses ``systemTrust``: the platform's bundle found by probing
    /// ``systemCAFileCandidates`` (Debian's, Fedora's, `/etc/ssl/cert.pem`…), the system
    /// trust store on iOS, and no authorities when none exists (see ``SystemTrust``).
    public var caFile: String?
    /// PEM certificate presented to peers (needed to accept incoming TLS connections).
    public var certificateFile: String?
    /// PEM private key of ``certificateFile``.
    public var privateKeyFile: String?
    /// Verify the server's certificate chain and name when connecting; on by default. A
    /// failed check fails the request with a TLS error instead of sending it.
    public var verifiesServer: Bool
    /// Ask connecting clients for a certificate and verify it.
    public var verifiesClient: Bool

    /// Creates TLS settings: the system's trusted authorities, server verification on.
    public init(
        caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil,
        verifiesServer: Bool = true, verifiesClient: Bool = false
    ) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.verifiesServer = verifiesServer
        self.verifiesClient = verifiesClient
    }

    /// Debian's CA bundle path, the default before the trust default probed the platform.
    @available(*, deprecated, message: "the default now probes the platform: use systemTrust or systemCAFileCandidates")
    public static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
}

extension TLSConfiguration {
    /// The first file named here (CA list, certificate, private key) that is missing or not
    /// readable: pjsip reads them only when a connection is set up, so a wrong path would
    /// surface much later as a bare TLS failure of some request.
    var firstUnreadableFile: String? {
        [caFile, certificateFile, privateKeyFile].compactMap { $0 }.first {
            !FileManager.default.isReadableFile(atPath: $0)
        }
    }
}

extension TLSConfiguration {
    /// Where the certificate authorities trusted by default come from, when
    /// ``TLSConfiguration/caFile`` is `nil`.
    public enum SystemTrust: Sendable, Hashable, CustomStringConvertible {
        /// The PEM bundle at this path: the first readable one of ``systemCAFileCandidates``
        /// (or of `SSL_CERT_FILE`), given to pjsip as its CA list.
        case caFile(String)
        /// Apple platforms other than macOS (iOS, tvOS, watchOS, visionOS), which have no CA
        /// file an app can read: no CA list is given to pjsip. A pjsip built with Apple's TLS
        /// backend (`PJ_SSL_SOCK_IMP_APPLE`) then verifies servers against the system's trust
        /// store; one built with OpenSSL has no authorities at all and every server fails
        /// verification, so give it ``TLSConfiguration/caFile`` (a PEM in the app bundle).
        case platformTrustStore
        /// No bundle at any of the paths searched, in order: no CA list is given to pjsip.
        /// With OpenSSL, pjsip then trusts no authority, so with
        /// ``TLSConfiguration/verifiesServer`` on (the default) every TLS connection fails
        /// its certificate check (the request fails with a TLS error; nothing is sent
        /// unverified). Install the distribution's CA package or set ``TLSConfiguration/caFile``.
        case notFound(searched: [String])

        /// The CA file to give pjsip, if any.
        public var caFile: String? {
            if case .caFile(let path) = self { path } else { nil }
        }

        /// A one-line description, for logs.
        public var description: String {
            switch self {
            case .caFile(let path): "CA bundle \(path)"
            case .platformTrustStore: "the platform's trust store (no CA file)"
            case .notFound(let searched): "no CA bundle (searched \(searched.joined(separator: ", ")))"
            }
        }
    }

    /// The CA bundles probed, in order, when ``TLSConfiguration/caFile`` is `nil` (after
    /// the `SSL_CERT_FILE` environment variable, which OpenSSL also honours):
    ///
    /// | Path | Where |
    /// |------|-------|
    /// | `/etc/ssl/certs/ca-certificates.crt` | Debian, Ubuntu, Arch, Gentoo; Alpine with `ca-certificates` |
    /// | `/etc/pki/tls/certs/ca-bundle.crt` | Fedora, RHEL, CentOS, Amazon Linux |
    /// | `/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem` | Fedora, RHEL 7+ (the line above's target) |
    /// | `/etc/ssl/ca-bundle.pem` | openSUSE, SLES |
    /// | `/etc/ssl/cert.pem` | macOS, Alpine, FreeBSD, OpenBSD, NetBSD |
    /// | `/usr/local/share/certs/ca-root-nss.crt` | FreeBSD's `ca_root_nss` port |
    /// | `/opt/homebrew/etc/ca-certificates/cert.pem` | Homebrew on Apple silicon (`ca-certificates` formula) |
    /// | `/usr/local/etc/ca-certificates/cert.pem` | Homebrew on Intel Macs |
    public static let systemCAFileCandidates = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
        "/usr/local/share/certs/ca-root-nss.crt",
        "/opt/homebrew/etc/ca-certificates/cert.pem",
        "/usr/local/etc/ca-certificates/cert.pem",
    ]

    /// The default trust on this system now: on iOS, tvOS, watchOS and visionOS
    /// ``SystemTrust/platformTrustStore``; elsewhere ``probeSystemTrust(environment:candidates:isReadable:)``
    /// with the process's environment. ``PJSUA/start(_:)`` reads it once per TLS transport
    /// whose ``TLSConfiguration/caFile`` is `nil`.
    public static var systemTrust: SystemTrust {
        #if canImport(Darwin) && !os(macOS)
            .platformTrustStore
        #else
            probeSystemTrust()
        #endif
    }

    /// Finds the CA bundle: `SSL_CERT_FILE` when it names a readable file, else the first
    /// readable path of `candidates`.
    /// - Parameters:
    ///   - environment: the environment to read `SSL_CERT_FILE` from (the process's by default).
    ///   - candidates: the paths to try, in order (``systemCAFileCandidates`` by default).
    ///   - isReadable: whether a path is a readable file (`FileManager.isReadableFile(atPath:)`
    ///     by default).
    /// - Returns: ``SystemTrust/caFile(_:)``, or ``SystemTrust/notFound(searched:)`` listing
    ///   every path tried.
    public static func probeSystemTrust(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        candidates: [String] = systemCAFileCandidates,
        isReadable: (String) -> Bool = { FileManager.default.isReadableFile(atPath: $0) }
    ) -> SystemTrust {
        var searched: [String] = []
        if let override = environment["SSL_CERT_FILE"], !override.isEmpty { searched.append(override) }
        searched += candidates
        for path in searched where isReadable(path) { return .caFile(path) }
        return .notFound(searched: searched)
    }
}
