/// A message-waiting indication (RFC 3842): the `application/simple-message-summary` body
/// of a NOTIFY, as ``PJSUA/messageSummaries`` delivers it.
public struct MessageSummary: Sendable, Hashable {
    /// The counts of one message class (RFC 3842 §5.2, `Voice-Message: 2/8 (0/2)`).
    public struct Counts: Sendable, Hashable {
        /// The class as the body names it, lowercased: `voice-message`, `fax-message`,
        /// `pager-message`, `multimedia-message`, `text-message` or `none` (RFC 3458).
        public var messageClass: String
        /// New (unheard) messages.
        public var new: Int
        /// Old (heard, kept) messages.
        public var old: Int
        /// New urgent messages, when the body gives them (`nil` otherwise).
        public var urgentNew: Int?
        /// Old urgent messages, when the body gives them (`nil` otherwise).
        public var urgentOld: Int?

        /// Creates the counts of one class.
        public init(messageClass: String, new: Int, old: Int, urgentNew: Int? = nil, urgentOld: Int? = nil) {
            self.messageClass = messageClass
            self.new = new
            self.old = old
            self.urgentNew = urgentNew
            self.urgentOld = urgentOld
        }
    }

    /// The account it was for: the one whose subscription it came on, or for an unsolicited
    /// NOTIFY pjsua's best match for its Request-URI (`nil` when none matched).
    public var account: Account?
    /// `true` when it came on the account's own subscription
    /// (``AccountConfiguration/subscribesToMessageWaiting``), `false` for an unsolicited
    /// NOTIFY (RFC 3842 §3.2, sent by a server without a subscription).
    public var isSolicited: Bool
    /// `Messages-Waiting: yes` (`true`) or `no`; `false` when the body lacks the line.
    public var messagesWaiting: Bool
    /// The mailbox the summary is about (`Message-Account`), when given.
    public var messageAccount: String?
    /// The counts per message class, in the body's order.
    public var counts: [Counts]
    /// The body as it arrived, for what the fields above leave out (optional headers).
    public var body: String

    /// The `voice-message` counts, when the body gives them.
    public var voice: Counts? { counts.first { $0.messageClass == "voice-message" } }

    /// Creates a summary.
    public init(
        account: Account?, isSolicited: Bool, messagesWaiting: Bool, messageAccount: String? = nil,
        counts: [Counts] = [], body: String = ""
    ) {
        self.account = account
        self.isSolicited = isSolicited
        self.messagesWaiting = messagesWaiting
        self.messageAccount = messageAccount
        self.counts = counts
        self.body = body
    }

    /// Reads an `application/simple-message-summary` body (RFC 3842 §5.2). Lines it does not
    /// know are left to ``body``; a count line that does not parse is skipped.
    public init(parsing body: String, account: Account?, isSolicited: Bool) {
        var waiting = false
        var mailbox: String?
        var counts: [Counts] = []
        for rawLine in body.split(whereSeparator: \.isNewline) {
            guard let colon = rawLine.firstIndex(of: ":") else { continue }
            let name = rawLine[..<colon].trimmingWhitespace().lowercased()
            let value = rawLine[rawLine.index(after: colon)...].trimmingWhitespace()
            switch name {
            case "messages-waiting": waiting = value.lowercased() == "yes"
            case "message-account": mailbox = value.isEmpty ? nil : value
            case "voice-message", "fax-message", "pager-message", "multimedia-message", "text-message", "none":
                if let parsed = Self.counts(value, messageClass: name) { counts.append(parsed) }
            default: continue
            }
        }
        self.init(
            account: account, isSolicited: isSolicited, messagesWaiting: waiting, messageAccount: mailbox,
            counts: counts, body: body)
    }

    /// `new/old` with an optional ` (urgentnew/urgentold)`.
    private static func counts(_ value: String, messageClass: String) -> Counts? {
        func pair(_ text: Substring) -> (Int, Int)? {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let first = Int(parts[0].trimmingWhitespace()),
                let second = Int(parts[1].trimmingWhitespace()), first >= 0, second >= 0
            else { return nil }
            return (first, second)
        }
        let main: Substring
        var urgent: (Int, Int)?
        if let open = value.firstIndex(of: "(") {
            guard let close = value.lastIndex(of: ")"), open < close,
                let parsed = pair(value[value.index(after: open)..<close])
            else { return nil }
            urgent = parsed
            main = value[..<open]
        } else {
            main = Substring(value)
        }
        guard let (new, old) = pair(main) else { return nil }
        return Counts(messageClass: messageClass, new: new, old: old, urgentNew: urgent?.0, urgentOld: urgent?.1)
    }
}
