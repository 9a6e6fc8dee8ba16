import CPJSUAShim

extension Native {
    // MARK: Statistics

    static func streamStatistics(_ slot: pjsua_call_id, mediaIndex: Int) throws(PJSUAError) -> StreamStatistics {
        let raw = UnsafeMutablePointer<pjsua_stream_stat>.allocate(capacity: 1)
        defer { raw.deallocate() }
        // A negative or huge index names no stream: the same answer as an absent one.
        guard let index = UInt32(exactly: mediaIndex) else {
            throw PJ.error(cpj_status_enotfound(), "pjsua_call_get_stream_stat")
        }
        try PJ.check(cpj_call_get_stream_stat(slot, index, raw), "pjsua_call_get_stream_stat")
        let rtcp = raw.pointee.rtcp
        return StreamStatistics(
            packetsSent: UInt64(rtcp.tx.pkt), bytesSent: UInt64(rtcp.tx.bytes),
            packetsReceived: UInt64(rtcp.rx.pkt), bytesReceived: UInt64(rtcp.rx.bytes),
            packetsLost: UInt64(rtcp.rx.loss),
            jitter: .microseconds(Int64(rtcp.rx.jitter.last)),
            roundTripTime: .microseconds(Int64(rtcp.rtt.last)),
            jitterBufferDelay: .milliseconds(Int64(raw.pointee.jbuf.avg_delay)))
    }
}
