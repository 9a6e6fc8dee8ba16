/// The INVITE session state of a call (RFC 3261 dialog states as pjsip names them).
public enum CallState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Before an INVITE is sent or received.
    case null
    /// An INVITE was sent; no provisional response yet.
    case calling
    /// An INVITE was received and not yet answered.
    case incoming
    /// A provisional response (1xx with a To tag) was sent or received: an early dialog.
    case early
    /// A 2xx was sent or received; waiting for the ACK.
    case connecting
    /// The session is established (ACK sent or received).
    case confirmed
    /// The session ended. This is a call's one terminal state.
    case disconnected

    /// The case name, for logs: `confirmed`, `disconnected`.
    public var description: String { rawValue }

    /// Whether this is the terminal state.
    public var isTerminal: Bool { self == .disconnected }
}

/// Which side of the call this user agent is.
public enum CallRole: String, Sendable, Hashable {
    /// We sent the INVITE (UAC).
    case caller
    /// We received the INVITE (UAS).
    case callee
}

/// The state of one media stream of a call (`pjsua_call_media_status`).
public enum MediaStatus: String, Sendable, Hashable, CaseIterable {
    /// No media yet, or the stream was removed or is not used (`PJSUA_CALL_MEDIA_NONE`).
    case unused
    /// Flowing both ways as negotiated.
    case active
    /// We put the stream on hold.
    case localHold
    /// The far end put the stream on hold.
    case remoteHold
    /// Media could not be set up.
    case error
}

/// The direction a media stream carries audio (`pjmedia_dir`).
public enum MediaDirection: String, Sendable, Hashable, CaseIterable {
    /// Neither way (SDP `a=inactive`, RFC 3264 §5.1).
    case inactive
    /// We send only (`sendonly`).
    case send
    /// We receive only (`recvonly`).
    case receive
    /// Both ways (`sendrecv`).
    case sendReceive
}

/// The kind of a media stream in the SDP.
public enum MediaType: String, Sendable, Hashable {
    /// An audio stream.
    case audio
    /// A video stream.
    case video
    /// Any other media (application, text).
    case other
}

/// A snapshot of one media stream (one SDP `m=` line) of a call.
public struct MediaStream: Sendable, Hashable {
    /// The index of the `m=` line in the SDP, from 0.
    public var index: Int
    /// Audio, video or something else.
    public var type: MediaType
    /// Whether the stream is active or on hold.
    public var status: MediaStatus
    /// Which way audio flows.
    public var direction: MediaDirection
    /// The stream's SRTP session (suite and keying); `nil` for plain RTP, including optional
    /// SRTP that fell back to it. See ``SRTPConfiguration``.
    public var srtp: SRTPSession?

    /// Creates a snapshot; the engine makes these from `pjsua_call_media_info` (and
    /// `pjsua_call_get_med_transport_info` for ``srtp``).
    public init(
        index: Int, type: MediaType, status: MediaStatus, direction: MediaDirection, srtp: SRTPSession? = nil
    ) {
        self.index = index
        self.type = type
        self.status = status
        self.direction = direction
        self.srtp = srtp
    }
}

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

/// A snapshot of a call, converted from `pjsua_call_info` when it was taken.
public struct CallInfo: Sendable, Hashable {
    /// The call this snapshot describes.
    public var call: Call
    /// Whether we placed or received the call.
    public var role: CallRole
    /// The account the call belongs to; `nil` once that account has been removed.
    public var account: Account?
    /// The INVITE session state.
    public var state: CallState
    /// The SIP Call-ID header value, exactly as sent or received.
    public var sipCallID: String
    /// Our address (From for calls we place, To for calls we receive).
    public var local: SIPAddress
    /// The far end's address.
    public var remote: SIPAddress
    /// The far end's Contact URI, empty until known.
    public var remoteContact: String
    /// The last SIP status code seen on the INVITE session (100–699), 0 before any.
    public var lastStatusCode: Int
    /// The reason phrase that came with ``lastStatusCode``.
    public var lastReason: String
    /// Time since the call was confirmed (zero before).
    public var connectDuration: Duration
    /// Time since the call was created.
    public var totalDuration: Duration
    /// The call's media streams, in SDP order.
    public var media: [MediaStream]
    /// The negotiated audio codec, for example `opus/48000` or `PCMU/8000`; `nil` without audio.
    public var audioCodec: String?
}

/// RTP and RTCP counters of one audio stream (`pjsua_call_get_stream_stat`).
public struct StreamStatistics: Sendable, Hashable {
    /// RTP packets sent.
    public var packetsSent: UInt64
    /// RTP payload bytes sent.
    public var bytesSent: UInt64
    /// RTP packets received.
    public var packetsReceived: UInt64
    /// RTP payload bytes received.
    public var bytesReceived: UInt64
    /// Packets lost on the receive side, as counted from sequence numbers.
    public var packetsLost: UInt64
    /// Current receive jitter.
    public var jitter: Duration
    /// The last round-trip time measured by RTCP; zero before the first report.
    public var roundTripTime: Duration
    /// How long received audio waits in the jitter buffer on average (`pjmedia_jb_state.avg_delay`).
    public var jitterBufferDelay: Duration
}

/// How DTMF digits travel (`pjsua_dtmf_method`).
public enum DTMFMethod: String, Sendable, Hashable, CaseIterable {
    /// RFC 4733 telephone-event packets in the RTP stream (pjsua's "RFC 2833").
    case rfc4733
    /// SIP INFO requests with an `application/dtmf-relay` body (`Signal=` and `Duration=`).
    case sipInfo
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

/// A REFER received on one of our calls (`on_call_transfer_request2`): the far end asks us
/// to call `target`.
public struct TransferRequest: Sendable, Hashable {
    /// The call the REFER arrived on.
    public var call: Call
    /// The Refer-To URI (it may carry a `Replaces` parameter for an attended transfer).
    public var target: String
}

/// What the engine answers to an incoming REFER.
public enum TransferDecision: Sendable, Hashable {
    /// Answer 202 Accepted and call the target; progress goes back to the referrer in NOTIFYs.
    case accept
    /// Answer with a final error response (400–699, for example 403 or 603).
    case reject(statusCode: Int)
}

/// An INVITE with a `Replaces` header (RFC 3891) for one of our calls, as the replace
/// request handler sees it before the engine answers.
public struct ReplaceRequest: Sendable, Hashable {
    /// The call the INVITE asks to replace (confirmed, or early).
    public var call: Call
    /// The new INVITE's Call-ID.
    public var sipCallID: String
    /// The new INVITE's From header: who takes the call over.
    public var from: SIPAddress
    /// Every header of the new INVITE in order (the `Replaces` header among them).
    public var headers: [SIPHeader]

    /// Creates a request; the engine makes one for each INVITE with `Replaces`.
    public init(call: Call, sipCallID: String, from: SIPAddress, headers: [SIPHeader] = []) {
        self.call = call
        self.sipCallID = sipCallID
        self.from = from
        self.headers = headers
    }
}

/// What the engine does with an INVITE with `Replaces` for one of our calls.
public enum ReplaceDecision: Sendable, Hashable {
    /// Take the new call in place of the old one: answer it as the old call was answered
    /// and end the old call.
    case accept
    /// Answer the new INVITE with a final error response (400–699, for example 603 or 486;
    /// a code outside that range is clamped into it);
    /// the old call stays as it was.
    case reject(statusCode: Int)
}

/// One codec the media endpoint offers (`pjsua_codec_info`).
public struct CodecInfo: Sendable, Hashable {
    /// pjmedia's codec id, `name/clock-rate/channels`, for example `PCMU/8000/1` or `opus/48000/2`.
    public var id: String
    /// The priority, 0–255: higher is offered first; 0 means disabled (never offered).
    public var priority: Int

    /// Creates a codec entry.
    public init(id: String, priority: Int) {
        self.id = id
        self.priority = priority
    }

    /// Whether the codec is offered in SDP.
    public var isEnabled: Bool { priority > 0 }
}
