import SwiftPJSUA

/// `--nameserver ADDR[:PORT]` (repeatable, or comma-separated): pjsip's own DNS resolver,
/// with SRV lookups and failover between SRV targets, instead of the system's `getaddrinfo`.
enum DNSOptions {
    static let names: Set<String> = ["nameserver"]

    /// The nameservers given, in order; none when the option is absent.
    static func nameservers(_ options: Options) throws(UsageError) -> [Nameserver] {
        let texts = options.strings("nameserver").flatMap { $0.split(separator: ",").map(String.init) }
        guard texts.count <= DNSConfiguration.maximumNameservers else {
            throw UsageError(message: "--nameserver: at most \(DNSConfiguration.maximumNameservers) nameservers")
        }
        do {
            return try texts.map { text throws(PJSUAUsageError) in try Nameserver(text) }
        } catch {
            throw UsageError(message: "--nameserver: \(error.description)")
        }
    }
}
