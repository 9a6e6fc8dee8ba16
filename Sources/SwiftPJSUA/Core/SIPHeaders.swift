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

extension SIPHeader {
    /// Parses `Name: value` as a received header prints; `nil` when there is no colon or the
    /// name is empty. Whitespace around the name and value is trimmed.
    public init?(parsing line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmingWhitespace()
        guard !name.isEmpty else { return nil }
        self.init(name: name, value: line[line.index(after: colon)...].trimmingWhitespace())
    }
}

extension Array where Element == SIPHeader {
    /// The value of the first header called `name` (case-insensitive), if any.
    public func value(of name: String) -> String? {
        first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
