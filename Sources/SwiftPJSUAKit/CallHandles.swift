import Foundation
import SwiftPJSUA

/// Whom a start action calls, as the system's call UI names it (CallKit: `CXHandle`): a
/// number from Contacts or Siri, an address, or whatever the app put in a generic handle.
public struct CallHandle: Sendable, Hashable {
    /// The kind of value (CallKit: `CXHandle.HandleType`).
    public enum Kind: Sendable, Hashable {
        /// Anything else, often a SIP URI or a user name.
        case generic
        /// A telephone number, possibly with spaces, dashes, dots or parentheses.
        case phoneNumber
        /// An email address, called as the SIP URI `sip:<address>`.
        case emailAddress
    }

    /// The kind.
    public var kind: Kind
    /// The value as the UI gave it.
    public var value: String

    /// Creates a handle.
    /// - Parameters:
    ///   - kind: the kind.
    ///   - value: the value.
    public init(_ kind: Kind, _ value: String) {
        self.kind = kind
        self.value = value
    }
}

extension CallHandle {
    /// The handle that shows a far end's URI in the call UI (CallKit: the `CXHandle` of
    /// `CXCallUpdate.remoteHandle`), so that Contacts can name the caller and Recents can
    /// call back through ``HandleMapping``.
    ///
    /// - ``Kind/phoneNumber``: a `tel:` URI, or a `sip:`/`sips:` URI whose user part is a
    ///   number: digits with an optional leading `+` (E.164 or a local number) and the visual
    ///   separators ``HandleMapping/standard`` knows (`space - . ( )`, percent-encoded or
    ///   not). The value is the number without separators: `sip:+1-555-010-9999@example.com;user=phone`
    ///   shows `+15550109999`.
    /// - ``Kind/emailAddress``: a `sip:` URI that is exactly `user@domain`, the domain a host
    ///   name (not an IP address) with no port, parameters or headers:
    ///   `sip:alice@example.com` shows `alice@example.com`, which ``HandleMapping/standard``
    ///   calls as the same URI.
    /// - ``Kind/generic`` otherwise (an IP address, a port, a `transport` parameter, `sips:`,
    ///   a service code such as `*31#`), with the URI itself as the value, which
    ///   ``HandleMapping/standard`` calls as it is.
    /// - Parameter remoteURI: the far end's URI (a From or To URI, without display-name).
    public init(remoteURI: String) {
        let uri = remoteURI.trimmingCharacters(in: .whitespaces)
        guard let colon = uri.firstIndex(of: ":") else {
            self.init(.generic, uri)
            return
        }
        let scheme = uri[..<colon].lowercased()
        let rest = uri[uri.index(after: colon)...]
        switch scheme {
        case "tel":
            let number = rest.prefix { $0 != ";" }
            if let digits = HandleMapping.phoneNumber(Self.percentDecoded(number)) {
                self.init(.phoneNumber, digits)
                return
            }
        case "sip", "sips":
            guard let at = rest.firstIndex(of: "@") else { break }
            // The user part, less a password and user parameters (`;isub=`).
            let user = rest[..<at].prefix { $0 != ":" && $0 != ";" }
            if let digits = HandleMapping.phoneNumber(Self.percentDecoded(user)) {
                self.init(.phoneNumber, digits)
                return
            }
            let host = rest[rest.index(after: at)...]
            if scheme == "sip", Self.isEmailUser(rest[..<at]), Self.isEmailDomain(host) {
                self.init(.emailAddress, "\(rest[..<at])@\(host)")
                return
            }
        default:
            break
        }
        self.init(.generic, uri)
    }

    /// `%XX` escapes decoded as UTF-8 (with replacement); text without them as it is.
    private static func percentDecoded(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let value = UInt8(String(decoding: utf8[index + 1...index + 2], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A user part that reads as the local part of an email address: unreserved characters only.
    private static func isEmailUser(_ user: Substring) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'+")
        return !user.isEmpty && user.allSatisfy(allowed.contains) && user.first != "." && user.last != "."
    }

    /// A bare host name with a dot: no port, parameters or headers, not an IP address.
    private static func isEmailDomain(_ host: Substring) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy(allowed.contains) }) else {
            return false
        }
        // An IPv4 address is all digits; a top-level domain never is.
        return !(labels.last?.allSatisfy(\.isNumber) ?? true)
    }
}

extension CallUpdate {
    /// How the call UI shows ``remoteURI``: a phone number, an email-like address or the
    /// URI itself (see ``CallHandle/init(remoteURI:)``). The CallKit adapter reports it as
    /// the `CXHandle` of `remoteHandle`.
    public var remoteHandle: CallHandle { CallHandle(remoteURI: remoteURI) }
}

/// Turns a start action's ``CallHandle`` into the URI the engine calls.
///
/// ``standard`` is the default of ``CallRouter``; give another with
/// `CallRouter(…, handleMapping:)`, for example ``telURIs`` for a server that routes `tel:`
/// URIs, or your own closure for a dial plan (a trunk prefix, a `;phone-context`).
public struct HandleMapping: Sendable {
    /// The mapping: the handle and the calling account's identity (its address-of-record,
    /// for example `sip:bob@example.com`, or `nil` when unknown) to a `sip:`, `sips:` or
    /// `tel:` URI, or `nil` when the handle cannot be called (the start action then fails
    /// with ``CallActionError/invalidHandle(_:)``).
    public typealias Map = @Sendable (_ handle: CallHandle, _ accountIdentity: String?) -> String?

    private let map: Map

    /// Creates a mapping from a closure.
    /// - Parameter map: the mapping.
    public init(_ map: @escaping Map) { self.map = map }

    /// The URI for `handle`, called from the account whose identity is `accountIdentity`.
    /// - Parameters:
    ///   - handle: the start action's handle.
    ///   - accountIdentity: the calling account's identity, if known.
    /// - Returns: the URI, or `nil` when the handle cannot be called.
    public func uri(for handle: CallHandle, accountIdentity: String?) -> String? {
        map(handle, accountIdentity)
    }

    /// The default mapping:
    ///
    /// - Already a `sip:`, `sips:` or `tel:` URI (a handle of any kind): itself.
    /// - A phone number, or a generic value of only digits, `+` and visual separators:
    ///   `sip:<number>@<account's host[:port]>;user=phone` (RFC 3261 §19.1.6), or
    ///   `tel:<number>` (RFC 3966) when the account's identity is unknown.
    /// - An email address, or a generic value with `@`: `sip:<value>`.
    /// - Any other generic value (a user name): `sip:<value>@<account's host[:port]>`.
    ///
    /// A number keeps its leading `+` and loses the visual separators `space - . ( )`
    /// (RFC 3966 §5.1.1): `+1 (555) 010-9999` becomes `+15550109999`. A number with
    /// anything else (letters, `*`, `#`) is not mapped: give your own mapping for service
    /// codes.
    public static let standard = HandleMapping { handle, identity in
        if let uri = verbatimURI(handle.value) { return uri }
        let domain = identity.flatMap(hostPort(ofIdentity:))
        switch handle.kind {
        case .phoneNumber:
            guard let number = phoneNumber(handle.value) else { return nil }
            return domain.map { "sip:\(number)@\($0);user=phone" } ?? "tel:\(number)"
        case .emailAddress:
            return address(handle.value)
        case .generic:
            if let number = phoneNumber(handle.value) {
                return domain.map { "sip:\(number)@\($0);user=phone" } ?? "tel:\(number)"
            }
            if handle.value.contains("@") { return address(handle.value) }
            guard let domain, let user = userPart(handle.value) else { return nil }
            return "sip:\(user)@\(domain)"
        }
    }

    /// Like ``standard``, but phone numbers always become `tel:` URIs (RFC 3966), for
    /// servers that route them: `+1 555 010 9999` becomes `tel:+15550109999`.
    public static let telURIs = HandleMapping { handle, identity in
        if handle.kind == .phoneNumber || (handle.kind == .generic && verbatimURI(handle.value) == nil) {
            if let number = phoneNumber(handle.value) { return "tel:\(number)" }
        }
        return standard.uri(for: handle, accountIdentity: identity)
    }

    /// `value` when it is already a URI this engine calls.
    static func verbatimURI(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let scheme = trimmed.prefix { $0 != ":" }.lowercased()
        guard ["sip", "sips", "tel"].contains(scheme), trimmed.count > scheme.count + 1,
            !trimmed.containsControlCharacter, !trimmed.contains(" ")
        else { return nil }
        return trimmed
    }

    /// The global or local number in `value` (digits with an optional leading `+`), visual
    /// separators removed; `nil` when anything else is in it or no digit is.
    static func phoneNumber(_ value: String) -> String? {
        var number = ""
        for (index, character) in value.trimmingCharacters(in: .whitespaces).enumerated() {
            if character.isASCII, character.isNumber {
                number.append(character)
            } else if character == "+", index == 0 {
                number.append(character)
            } else if " -.()\u{00A0}".contains(character) {
                continue
            } else {
                return nil
            }
        }
        return number.contains(where: \.isNumber) ? number : nil
    }

    /// `sip:<address>` for `user@host`, when it holds no spaces, controls or URI delimiters.
    private static func address(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.split(separator: "@", omittingEmptySubsequences: false).count == 2,
            !trimmed.hasPrefix("@"), !trimmed.hasSuffix("@"),
            !trimmed.contains(where: { " <>;?\"".contains($0) }), !trimmed.containsControlCharacter
        else { return nil }
        return "sip:\(trimmed)"
    }

    /// A user name safe in a SIP URI's user part (unreserved characters only).
    private static func userPart(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()")
        guard !trimmed.isEmpty, trimmed.allSatisfy(allowed.contains) else { return nil }
        return trimmed
    }

    /// The host and port of an identity such as `sip:bob@example.com:5061;transport=tcp` or
    /// `"Bob" <sips:bob@example.com>`: `example.com:5061`, `example.com`.
    static func hostPort(ofIdentity identity: String) -> String? {
        var uri = Substring(SIPAddress(parsing: identity).uri)
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[..<colon].lowercased()
        guard scheme == "sip" || scheme == "sips" else { return nil }
        uri = uri[uri.index(after: colon)...]
        if let at = uri.lastIndex(of: "@") { uri = uri[uri.index(after: at)...] }
        let host = uri.prefix { $0 != ";" && $0 != "?" && $0 != ">" }
        return host.isEmpty ? nil : String(host)
    }
}
