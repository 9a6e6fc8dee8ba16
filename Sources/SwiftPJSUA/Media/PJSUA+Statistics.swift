extension PJSUA {
    // MARK: Quality

    /// RTP/RTCP counters of one of a call's media streams. Wraps `pjsua_call_get_stream_stat`.
    /// - Parameters:
    ///   - call: a call with media.
    ///   - mediaIndex: the stream's index in the SDP (0 for the usual single audio).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the stream has no
    ///   statistics (no such index, or media not set up).
    public func streamStatistics(_ call: Call, mediaIndex: Int = 0) throws -> StreamStatistics {
        let slot = try liveSlot(call)
        return try Native.streamStatistics(slot, mediaIndex: mediaIndex)
    }

    /// Periodic RTP/RTCP statistics of a call's first audio stream, ending with the call.
    ///
    /// Yields a ``StreamStatistics`` snapshot every `interval` while the call has media and
    /// finishes right after the call's terminal event (or at once for an ended call). Keeps
    /// only the newest snapshot for a slow consumer. Wraps `pjsua_call_get_stream_stat`.
    /// - Parameters:
    ///   - call: the call to sample.
    ///   - interval: the sampling period, at least 10 ms.
    public nonisolated func streamStatistics(of call: Call, every interval: Duration = .seconds(1)) -> AsyncStream<
        StreamStatistics
    > {
        let events = events(for: call)
        let period = max(interval, .milliseconds(10))
        let (stream, continuation) = AsyncStream.makeStream(
            of: StreamStatistics.self, bufferingPolicy: .bufferingNewest(1))
        let sampler = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                // Ends the sampling when the call's event stream ends.
                group.addTask { for await _ in events {} }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: period)
                        guard let engine = self, !Task.isCancelled else { return }
                        do {
                            continuation.yield(try await engine.streamStatistics(call))
                        } catch PJSUAUsageError.unknownCall {
                            return
                        } catch {
                            // No media yet (or held without a stream): try again next period.
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in sampler.cancel() }
        return stream
    }
}

extension PJSUA {
    /// A call's quality once per `interval`: its statistics, MOS estimates for both directions
    /// and quality warnings raised and cleared, ending with the call.
    ///
    /// Samples the call's first audio stream like ``streamStatistics(of:every:)`` and runs a
    /// ``QualityMonitor`` over the samples. Keeps every report (one per period) for a slow
    /// consumer, so no raised or cleared warning is lost; finishes right after the call's
    /// terminal event. Wraps `pjsua_call_get_stream_stat`, `pjsua_call_get_stream_info` and
    /// `pjsua_conf_get_signal_level`.
    /// - Parameters:
    ///   - call: the call to follow.
    ///   - interval: the sampling period, at least 10 ms; the policy's sample counts are in
    ///     these periods (its defaults assume 1 s).
    ///   - policy: when warnings are raised and cleared.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` when `policy` is out of range.
    public nonisolated func callQuality(
        of call: Call, every interval: Duration = .seconds(1), policy: QualityPolicy = QualityPolicy()
    ) throws(PJSUAUsageError) -> AsyncStream<CallQualityReport> {
        var monitor = try QualityMonitor(policy: policy)
        let samples = streamStatistics(of: call, every: interval)
        let (stream, continuation) = AsyncStream.makeStream(of: CallQualityReport.self)
        let task = Task {
            for await sample in samples {
                continuation.yield(monitor.update(sample))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
