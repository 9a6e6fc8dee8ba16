import CPJSUAShim

extension Native {
    // MARK: Statistics

    static func streamStatistics(_ slot: pjsua_call_id, mediaIndex: Int) throws(PJSUAError) -> StreamStatistics {
        let raw = UnsafeMutablePointer<cpj_stream_snapshot>.allocate(capacity: 1)
        defer { raw.deallocate() }
        // A negative or huge index names no stream: the same answer as an absent one.
        guard let index = UInt32(exactly: mediaIndex) else {
            throw PJ.error(cpj_status_enotfound(), "pjsua_call_get_stream_stat")
        }
        try PJ.check(cpj_call_stream_snapshot(slot, index, raw), "pjsua_call_get_stream_stat")
        let snapshot = raw.pointee
        let rtcp = snapshot.stat.rtcp
        let jb = snapshot.stat.jbuf
        let elapsed = Duration.milliseconds(Int64(clamping: snapshot.elapsed_msec))
        // The far end's report counts what it expected up to the moment it was made; pjmedia
        // keeps only our running count, so scale that back to the report's arrival.
        let sent = UInt64(rtcp.tx.pkt)
        var expectedByFarEnd: UInt64 = 0
        if rtcp.tx.update_cnt > 0, snapshot.elapsed_msec > 0 {
            let atReport = snapshot.elapsed_msec - min(snapshot.elapsed_msec, snapshot.since_far_end_report_msec)
            expectedByFarEnd = UInt64((Double(sent) * Double(atReport) / Double(snapshot.elapsed_msec)).rounded())
            expectedByFarEnd = max(expectedByFarEnd, UInt64(rtcp.tx.loss))
        }
        let codec = withUnsafeBytes(of: snapshot.codec) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let receive = StreamDirectionStatistics(
            packets: UInt64(rtcp.rx.pkt), bytes: UInt64(rtcp.rx.bytes), lost: UInt64(rtcp.rx.loss),
            discarded: UInt64(rtcp.rx.discard), reordered: UInt64(rtcp.rx.reorder), duplicated: UInt64(rtcp.rx.dup),
            burstLoss: snapshot.burst_loss_rx != 0, randomLoss: snapshot.random_loss_rx != 0,
            jitter: DurationStatistics(microseconds: rtcp.rx.jitter), reports: Int(rtcp.rx.update_cnt))
        let farEnd = StreamDirectionStatistics(
            packets: sent, bytes: UInt64(rtcp.tx.bytes), lost: UInt64(rtcp.tx.loss),
            expected: expectedByFarEnd,
            burstLoss: snapshot.burst_loss_tx != 0, randomLoss: snapshot.random_loss_tx != 0,
            jitter: DurationStatistics(microseconds: rtcp.tx.jitter), reports: Int(rtcp.tx.update_cnt))
        return StreamStatistics(
            receive: receive, farEnd: farEnd, roundTrip: DurationStatistics(microseconds: rtcp.rtt),
            jitterBuffer: JitterBufferStatistics(
                averageDelay: .milliseconds(Int64(jb.avg_delay)), minimumDelay: .milliseconds(Int64(jb.min_delay)),
                maximumDelay: .milliseconds(Int64(jb.max_delay)), delayDeviation: .milliseconds(Int64(jb.dev_delay)),
                prefetchFrames: Int(jb.prefetch), lostFrames: UInt64(jb.lost), discardedFrames: UInt64(jb.discard),
                emptyEvents: UInt64(jb.empty),
                frameDuration: .microseconds(Int64(snapshot.frame_time_usec))),
            audioLevel: snapshot.has_levels != 0
                ? AudioLevel(sent: Int(snapshot.sent_level), received: Int(snapshot.received_level)) : nil,
            codec: codec.isEmpty ? "" : "\(codec)/\(snapshot.clock_rate)",
            packetTime: snapshot.packet_time_msec > 0
                ? .milliseconds(Int64(snapshot.packet_time_msec)) : .milliseconds(20),
            elapsed: elapsed)
    }
}

extension DurationStatistics {
    /// pjmedia's running statistics of a series kept in microseconds.
    init(microseconds stat: pj_math_stat) {
        guard stat.n > 0 else {
            self.init()
            return
        }
        self.init(
            samples: Int(stat.n), minimum: .microseconds(Int64(stat.min)), mean: .microseconds(Int64(stat.mean)),
            maximum: .microseconds(Int64(stat.max)), last: .microseconds(Int64(stat.last)))
    }
}
