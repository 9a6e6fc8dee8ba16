import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// The TLS trust default's probe (no engine: runs in parallel).
@Suite("TLS trust default")
struct TLSTrustTests {
    @Test(
        "Each platform's bundle is found when it is the only one",
        arguments: TLSConfiguration.systemCAFileCandidates)
    func eachPlatform(path: String) {
        let trust = TLSConfiguration.probeSystemTrust(environment: [:]) { $0 == path }
        #expect(trust == .caFile(path))
        #expect(trust.caFile == path)
    }

    @Test("The order: Debian's before Fedora's before /etc/ssl/cert.pem")
    func order() throws {
        let candidates = TLSConfiguration.systemCAFileCandidates
        #expect(candidates.first == "/etc/ssl/certs/ca-certificates.crt")
        let fedora = try #require(candidates.firstIndex(of: "/etc/pki/tls/certs/ca-bundle.crt"))
        let bsd = try #require(candidates.firstIndex(of: "/etc/ssl/cert.pem"))
        #expect(fedora < bsd)
        let all = TLSConfiguration.probeSystemTrust(environment: [:]) { _ in true }
        #expect(all == .caFile("/etc/ssl/certs/ca-certificates.crt"))
        let notDebian = TLSConfiguration.probeSystemTrust(environment: [:]) {
            $0 != "/etc/ssl/certs/ca-certificates.crt"
        }
        #expect(notDebian == .caFile("/etc/pki/tls/certs/ca-bundle.crt"))
    }

    @Test("SSL_CERT_FILE comes first when readable, and is skipped when not")
    func environmentOverride() {
        let env = ["SSL_CERT_FILE": "/opt/corp/ca.pem"]
        #expect(TLSConfiguration.probeSystemTrust(environment: env) { _ in true } == .caFile("/opt/corp/ca.pem"))
        let skipped = TLSConfiguration.probeSystemTrust(environment: env) { $0 == "/etc/ssl/cert.pem" }
        #expect(skipped == .caFile("/etc/ssl/cert.pem"))
    }

    @Test("No bundle anywhere: notFound, naming every path searched in order, and no CA file")
    func missing() {
        let env = ["SSL_CERT_FILE": "/nowhere/ca.pem"]
        let trust = TLSConfiguration.probeSystemTrust(environment: env) { _ in false }
        #expect(trust == .notFound(searched: ["/nowhere/ca.pem"] + TLSConfiguration.systemCAFileCandidates))
        #expect(trust.caFile == nil)
        #expect("\(trust)".hasPrefix("no CA bundle (searched /nowhere/ca.pem, /etc/ssl/certs/ca-certificates.crt"))
    }

    @Test("On the real file system: a missing path is passed over, an existing unreadable one too")
    func realFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bundle = folder.file("bundle.pem")
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: bundle)
        let unreadable = folder.file("unreadable.pem")
        try Data().write(to: unreadable)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: unreadable.path)
        let running = getuid() == 0  // root reads anything: then only the missing path counts
        let trust = TLSConfiguration.probeSystemTrust(
            environment: [:], candidates: [folder.file("missing.pem").path, unreadable.path, bundle.path])
        #expect(trust == .caFile(running ? unreadable.path : bundle.path))
        let none = TLSConfiguration.probeSystemTrust(environment: [:], candidates: [folder.file("missing.pem").path])
        #expect(none == .notFound(searched: [folder.file("missing.pem").path]))
    }

    @Test("This Debian machine: the default finds SSL_CERT_FILE when set, else Debian's bundle")
    func thisMachine() {
        let debian = "/etc/ssl/certs/ca-certificates.crt"
        guard FileManager.default.isReadableFile(atPath: debian) else {
            Issue.record("expected a Debian host with ca-certificates installed")
            return
        }
        let override = ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap {
            FileManager.default.isReadableFile(atPath: $0) ? $0 : nil
        }
        #expect(TLSConfiguration.systemTrust == .caFile(override ?? debian))
        #expect(TLSConfiguration.probeSystemTrust(environment: [:]) == .caFile(debian))
    }
}
