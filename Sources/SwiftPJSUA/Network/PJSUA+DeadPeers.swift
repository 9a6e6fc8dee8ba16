extension PJSUA {
    /// The reason of the ``CallState/disconnected`` event of a call the engine ended because
    /// its audio received no RTP for the account's ``AccountConfiguration/mediaInactivityTimeout``
    /// (after a ``PJSUAEvent/mediaInactivity(_:)`` event).
    public static let mediaTimeoutReason = "media timeout: no RTP received"

    /// The reason of the ``CallState/disconnected`` event of a call the engine ended because
    /// the connection under it was lost (after a ``PJSUAEvent/transportLoss(_:)`` event):
    /// at once with ``TransportLossPolicy/endCall``, or when the re-INVITE of
    /// ``TransportLossPolicy/reinvite`` found no peer.
    public static let transportLostReason = "SIP connection lost"

    /// How often the engine compares each watched stream's received-packet count with the
    /// last one: an inactivity timeout is reported between `timeout` and `timeout` plus two
    /// of these after the last packet.
    public static let mediaInactivityCheckInterval: Duration = lostCallSweepInterval

    /// The shortest and longest ``AccountConfiguration/mediaInactivityTimeout``.
    public static let mediaInactivityTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3600)

    /// A media-inactivity timeout must be `nil` or within ``mediaInactivityTimeoutRange``.
    static func validateMediaInactivityTimeout(_ timeout: Duration?) throws(PJSUAUsageError) {
        guard let timeout else { return }
        let range = mediaInactivityTimeoutRange
        guard range.contains(timeout) else {
            throw .invalidConfiguration(
                "mediaInactivityTimeout must be nil (off) or \(range.lowerBound)...\(range.upperBound), got \(timeout)")
        }
    }
}
