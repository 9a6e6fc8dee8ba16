/// A REFER received on one of our calls (`on_call_transfer_request2`): the far end asks us
/// to call `target`.
public struct TransferRequest: Sendable, Hashable {
    /// The call the REFER arrived on.
    public var call: Call
    /// The Refer-To URI (it may carry a `Replaces` parameter for an attended transfer).
    public var target: String

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - call: the call the REFER arrived in.
    ///   - target: the Refer-To URI.
    public init(call: Call, target: String) {
        self.call = call
        self.target = target
    }
}

/// What the engine answers to an incoming REFER.
public enum TransferDecision: Sendable, Hashable {
    /// Answer 202 Accepted and call the target; progress goes back to the referrer in NOTIFYs.
    case accept
    /// Answer with a final error response (400–699, for example 403 or 603).
    case reject(statusCode: Int)
}

/// The payload of ``PJSUAEvent/transferStatus(_:)``: progress of a transfer we asked for
/// (RFC 3515).
public struct TransferProgress: Sendable, Hashable {
    /// The call we sent the REFER on.
    public var call: Call
    /// 100–699. pjsua reports a REFER accepted with 202 as `100 Accepted`, and a REFER
    /// rejected with its error response (for example 403, final); then the transfer
    /// target's status as the far end reports it in NOTIFY sipfrag bodies (100 Trying …
    /// 200 OK).
    public var statusCode: Int
    /// The reason phrase of ``statusCode``.
    public var reason: String
    /// No more progress follows: the REFER's error response, the first final status
    /// (200–699) a NOTIFY reports or the end of its subscription, 408 with
    /// ``PJSUA/transferTimeoutReason`` when no NOTIFY came within 64 × T1 of the REFER
    /// (RFC 6665 §4.1.2.4), or 487 with ``PJSUA/transferCallEndedReason`` when the call ended
    /// first (delivered just before its terminal event). Each REFER gets exactly one. A final
    /// code below 300 means the transfer succeeded (the call stays up until hung up); from
    /// 300 up it failed, or its outcome is unknown, and the call stays as it was.
    public var isFinal: Bool

    /// Creates the payload; the engine fills it from `on_call_transfer_status`.
    public init(call: Call, statusCode: Int, reason: String, isFinal: Bool) {
        self.call = call
        self.statusCode = statusCode
        self.reason = reason
        self.isFinal = isFinal
    }
}

/// The payload of ``PJSUAEvent/transferRequest(_:)``: a REFER we received and how it was
/// answered (RFC 3515).
public struct TransferRequestAnswer: Sendable, Hashable {
    /// The call the REFER arrived on.
    public var call: Call
    /// The Refer-To URI (it may carry a `Replaces` parameter for an attended transfer).
    public var target: String
    /// 202 when accepted (the engine then calls ``target`` as a new call), or the error
    /// code the transfer handler rejected it with.
    public var statusCode: Int

    /// Whether the REFER was accepted.
    public var isAccepted: Bool { statusCode / 100 == 2 }

    /// Creates the payload; the engine fills it from `on_call_transfer_request2`.
    public init(call: Call, target: String, statusCode: Int) {
        self.call = call
        self.target = target
        self.statusCode = statusCode
    }
}

/// The far end of a call's dialog, as an attended transfer's Refer-To names it.
struct ReplacesTarget: Sendable, Hashable {
    /// The remote Contact URI, as pjsip prints a Request-URI.
    var contact: String
    var callID: String
    /// Our tag in the dialog, and the far end's.
    var localTag: String
    var remoteTag: String

    /// `<contact?Require=replaces&Replaces=...>`: the Replaces value `callid;to-tag=remote;
    /// from-tag=local` from the far end's view, which is how the INVITE it receives must
    /// name the dialog (RFC 3891 §3), with every character outside a header value's
    /// `hnv-unreserved` and `unreserved` sets percent-escaped (RFC 3261 §25.1).
    var referTo: String {
        let replaces = "\(callID);to-tag=\(remoteTag);from-tag=\(localTag)"
        let separator = contact.contains("?") ? "&" : "?"
        return "<\(contact)\(separator)Require=replaces&Replaces=\(Self.escapedHeaderValue(replaces))>"
    }

    /// `text` with every byte outside `hnv-unreserved` / `unreserved` as `%XX`.
    static func escapedHeaderValue(_ text: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()[]/?:+$".utf8)
        var result = ""
        for byte in text.utf8 {
            if allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
