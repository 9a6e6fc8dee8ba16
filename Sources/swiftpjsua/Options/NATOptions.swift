import SwiftPJSUA

/// The signalling NAT options of every command: `--public-address ADDR` (the transport's
/// advertised address, for 1:1 NAT), `--keep-alive S|off`, `--contact-rewrite
/// on|always|off`, `--sdp-nat-rewrite on|off` (for accounts with a registrar) and the flag
/// `--nat64` (the account is behind NAT64 on an IPv6-only network).
struct NATOptions {
    static let names: Set<String> = ["public-address", "keep-alive", "contact-rewrite", "sdp-nat-rewrite"]
    static let flags: Set<String> = ["nat64"]

    var publicAddress: String?
    var signaling = NATSignaling()
    var nat64 = NAT64Mode.disabled

    init(_ options: Options) throws(UsageError) {
        if options.flags.contains("nat64") { nat64 = .enabled }
        publicAddress = options.string("public-address")
        if let address = publicAddress, address.isEmpty || address.contains(where: \.isWhitespace) {
            throw UsageError(message: "--public-address must be an address or host name")
        }
        switch options.string("keep-alive") {
        case nil: break
        case "off", "0": signaling.keepAliveInterval = .zero
        case let text?:
            guard let seconds = Int(text), seconds >= 2, seconds <= 86_400 else {
                throw UsageError(message: "--keep-alive must be off or 2...86400 seconds, not \(text)")
            }
            signaling.keepAliveInterval = .seconds(seconds)
        }
        switch options.string("contact-rewrite") ?? "on" {
        case "on": signaling.contactRewrite = ContactRewrite()
        case "always": signaling.contactRewrite = ContactRewrite(scope: .always)
        case "off":
            signaling.contactRewrite = nil
            signaling.rewritesVia = false
        case let other: throw UsageError(message: "--contact-rewrite must be on, always or off, not \(other)")
        }
        switch options.string("sdp-nat-rewrite") ?? "off" {
        case "on": signaling.rewritesSDPAddress = true
        case "off": signaling.rewritesSDPAddress = false
        case let other: throw UsageError(message: "--sdp-nat-rewrite must be on or off, not \(other)")
        }
    }
}
