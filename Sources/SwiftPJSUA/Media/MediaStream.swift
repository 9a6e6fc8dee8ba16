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

/// The payload of ``PJSUAEvent/callMediaState(_:)``: the call's media streams after a change.
public struct CallMediaChange: Sendable, Hashable {
    /// The call.
    public var call: Call
    /// Every media stream of the call, in SDP order.
    public var media: [MediaStream]

    /// Creates the payload; the engine fills it from `on_call_media_state`.
    public init(call: Call, media: [MediaStream]) {
        self.call = call
        self.media = media
    }
}
