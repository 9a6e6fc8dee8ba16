/// A SIP name-address: an optional display-name and a URI, as in From, To and Contact.
public struct SIPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The display-name, unquoted and unescaped; `nil` when the header had none.
    public var displayName: String?
    /// The URI, for example `sip:alice@example.com`.
    public var uri: String

    /// Creates an address from a display-name (unescaped) and a URI.
    public init(displayName: String? = nil, uri: String) {
        self.displayName = displayName
        self.uri = uri
    }

    /// Parses a name-addr or addr-spec as pjsip prints it:
    /// `"Display \"Name\"" <sip:user@host>`, `Display <sip:user@host>` or `sip:user@host`.
    /// The display-name is unquoted and its quoted-pairs (RFC 3261 §25.1) unescaped.
    public init(parsing text: String) {
        // Runs in every call callback: characters are split out only for a quoted display-name.
        var rest = text.trimmingWhitespace()
        var display: String?
        if rest.first == "\"" {
            let chars = Array(rest)
            var name = ""
            var index = 1
            while index < chars.count, chars[index] != "\"" {
                if chars[index] == "\\", index + 1 < chars.count {
                    index += 1
                }
                name.append(chars[index])
                index += 1
            }
            display = name
            index += 1
            rest = String(chars[min(index, chars.count)...])
        }
        if let open = rest.firstIndex(of: "<"), let close = rest.lastIndex(of: ">"), open < close {
            let token = rest[..<open].trimmingWhitespace()
            if display == nil, !token.isEmpty { display = token }
            uri = String(rest[rest.index(after: open)..<close])
        } else {
            uri = rest.trimmingWhitespace()
        }
        displayName = display
    }

    /// The name-addr form of RFC 3261 §25.1: `"Alice" <sip:alice@example.com>` (the display
    /// name quoted and escaped), or `<sip:alice@example.com>` without one.
    public var description: String {
        guard let displayName else { return "<\(uri)>" }
        let escaped = displayName.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
        return "\"\(escaped)\" <\(uri)>"
    }
}

extension SIPAddress {
    /// `uri` with `;transport=<value>` added to the URI when it has no `transport`
    /// parameter and is a `sip:` URI (a `sips:` URI already means TLS). Works on a bare URI
    /// and on a name-addr (`"Name" <sip:…>`).
    static func addingTransport(_ value: String, to uri: String) -> String {
        let start = uri.range(of: "<").map(\.upperBound) ?? uri.startIndex
        let end = uri[start...].range(of: ">")?.lowerBound ?? uri.endIndex
        let inner = uri[start..<end]
        guard inner.lowercased().hasPrefix("sip:"), !inner.lowercased().contains(";transport=") else { return uri }
        // URI parameters come before any `?headers` part.
        let insertion = inner.firstIndex(of: "?") ?? end
        return String(uri[..<insertion]) + ";transport=\(value)" + String(uri[insertion...])
    }
}

extension StringProtocol {
    /// Whether the text holds CR, LF or another control character, which would let a value
    /// break out of its SIP header line.
    var containsLineBreakOrControl: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    func trimmingWhitespace() -> String {
        // Bounds first, then one copy of the slice (not a scalar-by-scalar rebuild).
        let scalars = Substring(self).unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }

    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for ch in self {
            if ch == target { out += replacement } else { out.append(ch) }
        }
        return out
    }
}
