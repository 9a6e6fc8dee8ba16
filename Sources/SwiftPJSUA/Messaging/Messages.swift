/// A MESSAGE request (RFC 3428) the engine received, as ``PJSUA/messages`` delivers it.
public struct IncomingMessage: Sendable, Hashable {
    /// The account it was addressed to (pjsua's best match for its Request-URI), or `nil`
    /// when no account matched.
    public var account: Account?
    /// The call whose dialog carried it, or `nil` for a MESSAGE outside any dialog.
    public var call: Call?
    /// The sender: the From header's display-name and URI. pjsip prints From and To URIs
    /// without a port (RFC 3261 §19.1.1, table 1), so reply to ``contact`` when the sender
    /// is not reachable through a proxy by its address-of-record.
    public var from: SIPAddress
    /// The To header's URI, printed without a port as ``from`` is.
    public var to: String
    /// The sender's Contact URI, when the request had one (`nil` otherwise).
    public var contact: String?
    /// The body's media type, for example `text/plain`, without parameters (``charset``
    /// has that one; the whole header is in ``headers``).
    public var contentType: String
    /// The Content-Type's `charset` parameter in lower case, for example `utf-8`, or nil when
    /// the request named none (RFC 3428 §9: UTF-8 then).
    public var charset: String?
    /// The body, decoded as UTF-8 (invalid sequences replaced).
    public var body: String
    /// Every header of the request, in order.
    public var headers: [SIPHeader]

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - account: the account it was addressed to.
    ///   - call: the call whose dialog carried it.
    ///   - from: the sender.
    ///   - to: the To URI.
    ///   - contact: the sender's Contact URI.
    ///   - contentType: the body's media type.
    ///   - body: the body.
    ///   - headers: the request's headers.
    ///   - charset: the Content-Type's `charset`, in lower case.
    public init(
        account: Account?, call: Call? = nil, from: SIPAddress, to: String, contact: String? = nil,
        contentType: String = "text/plain", body: String, headers: [SIPHeader] = [], charset: String? = nil
    ) {
        self.charset = charset
        self.account = account
        self.call = call
        self.from = from
        self.to = to
        self.contact = contact
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }
}

/// A typing indication (RFC 3994, an `application/im-iscomposing+xml` MESSAGE) the engine
/// received.
public struct TypingIndication: Sendable, Hashable {
    /// The account it was addressed to, or `nil` when no account matched.
    public var account: Account?
    /// The call whose dialog carried it, or `nil` outside any dialog.
    public var call: Call?
    /// The sender.
    public var from: SIPAddress
    /// `true` while the sender composes (`active`), `false` when it stopped (`idle`).
    public var isTyping: Bool

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - account: the account it was addressed to.
    ///   - call: the call whose dialog carried it.
    ///   - from: the sender.
    ///   - isTyping: whether the sender composes.
    public init(account: Account?, call: Call? = nil, from: SIPAddress, isTyping: Bool) {
        self.account = account
        self.call = call
        self.from = from
        self.isTyping = isTyping
    }
}

/// What ``PJSUA/messages`` delivers. New kinds are added as new cases with struct payloads;
/// a `switch` over it should have a `default`.
public enum MessageEvent: Sendable, Hashable {
    /// A MESSAGE with content.
    case message(IncomingMessage)
    /// A typing indication.
    case typing(TypingIndication)
}

/// The outcome of a MESSAGE the engine sent: the final response the far end (or a proxy
/// on the way, or the engine's own transaction timeout) gave.
public struct MessageDelivery: Sendable, Hashable {
    /// The final status: 200–299 when accepted (202 when a server stored it for later
    /// delivery, RFC 3428 §7), 408 when nothing answered within 64 × T1, otherwise the error
    /// the far end sent.
    public var statusCode: Int
    /// The response's reason phrase.
    public var reason: String

    /// Whether the far end accepted the message (2xx). A 202 means accepted for delivery,
    /// not yet read.
    public var isAccepted: Bool { (200..<300).contains(statusCode) }

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - statusCode: the final status.
    ///   - reason: its reason phrase.
    public init(statusCode: Int, reason: String) {
        self.statusCode = statusCode
        self.reason = reason
    }
}
