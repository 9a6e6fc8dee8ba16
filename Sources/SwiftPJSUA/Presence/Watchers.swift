/// Who may watch an account's presence: which presence SUBSCRIBE requests (RFC 3856) the
/// engine accepts for the account.
///
/// pjsua by itself accepts every SUBSCRIBE to the `presence` package and sends the
/// account's online status to whoever asked: any peer that can reach the engine learns when
/// the user is online. The engine instead accepts only watchers the policy admits and
/// answers the others `403 Forbidden` (RFC 3856 §6.6: the subscription is not authorized),
/// sending them no NOTIFY and so no presence. Each new subscription, accepted or not, is
/// reported on ``PJSUA/watcherRequests``, so an app can ask its user and add the watcher
/// to ``allowedWatchers`` (a watcher retries; the next SUBSCRIBE is then accepted).
public struct WatcherPolicy: Sendable, Hashable {
    /// Watchers accepted, as SIP or SIPS URIs of their address-of-record (`sip:bob@example.com`).
    /// A watcher matches when the user and host of its From URI equal an entry's (the host
    /// compared case-insensitively, an IPv6 reference such as `[2001:db8::1]` as a whole, the
    /// scheme, port and parameters ignored).
    public var allowedWatchers: [String]
    /// Whether every other watcher is accepted too: pjsua's own behaviour. `false` by default.
    public var acceptsEveryone: Bool

    /// Creates a policy.
    /// - Parameters:
    ///   - allowedWatchers: address-of-record URIs accepted.
    ///   - acceptsEveryone: accept every watcher.
    public init(allowedWatchers: [String] = [], acceptsEveryone: Bool = false) {
        self.allowedWatchers = allowedWatchers
        self.acceptsEveryone = acceptsEveryone
    }

    /// No watcher accepted: the default.
    public static let nobody = WatcherPolicy()
    /// Every watcher accepted, as pjsua does by itself.
    public static let everyone = WatcherPolicy(acceptsEveryone: true)

    /// Whether the watcher whose From URI is `uri` is accepted.
    public func admits(_ uri: String) -> Bool {
        if acceptsEveryone { return true }
        guard let watcher = Self.userAndHost(uri) else { return false }
        return allowedWatchers.contains { Self.userAndHost($0) == watcher }
    }

    /// `user@host` of a `sip:`/`sips:` URI, the host lowercased; `nil` without a user part.
    static func userAndHost(_ uri: String) -> String? {
        var rest = Substring(uri.trimmingWhitespace())
        if rest.first == "<", rest.last == ">" { rest = rest.dropFirst().dropLast() }
        let lowered = rest.lowercased()
        if lowered.hasPrefix("sips:") {
            rest = rest.dropFirst(5)
        } else if lowered.hasPrefix("sip:") {
            rest = rest.dropFirst(4)
        } else {
            return nil
        }
        guard let at = rest.lastIndex(of: "@") else { return nil }
        let user = rest[..<at]
        let hostPart = rest[rest.index(after: at)...]
        // An IPv6 reference (`[2001:db8::1]`) is the host up to its `]`, colons and all.
        let host: Substring
        if hostPart.first == "[" {
            guard let close = hostPart.firstIndex(of: "]") else { return nil }
            host = hostPart[...close]
        } else {
            host = hostPart.prefix { $0 != ":" && $0 != ";" && $0 != ">" && $0 != "?" }
        }
        guard !user.isEmpty, !host.isEmpty else { return nil }
        return "\(user)@\(host.lowercased())"
    }
}

/// A presence SUBSCRIBE that started a new subscription to one of the accounts, and how the
/// engine answered it (``WatcherPolicy``).
public struct WatcherRequest: Sendable, Hashable {
    /// The account watched.
    public var account: Account?
    /// The watcher: the SUBSCRIBE's From display-name and URI.
    public var watcher: SIPAddress
    /// Whether it was accepted (`200`, with a NOTIFY of the account's status) or refused (`403`).
    public var isAccepted: Bool

    /// Creates the payload; the engine fills it from `on_incoming_subscribe`.
    public init(account: Account?, watcher: SIPAddress, isAccepted: Bool) {
        self.account = account
        self.watcher = watcher
        self.isAccepted = isAccepted
    }
}

extension PJSUA {
    // MARK: Presence watchers (RFC 3856)

    /// Each presence SUBSCRIBE that started a subscription to an account, with the answer
    /// the account's ``AccountConfiguration/watchers`` policy gave it, from the moment of this
    /// access on, in order. Refreshes of an accepted subscription are not reported. Each
    /// access is a new unbounded subscription; reading is not needed for the policy to
    /// apply. Wraps pjsua's `on_incoming_subscribe` callback. Safe from any thread.
    public nonisolated var watcherRequests: AsyncStream<WatcherRequest> { ConsentStreams.watchers.subscribe() }
}
