import Foundation
import SwiftPJSUA

/// Event-delivery latency for `listen --stats-file`: how long each event took from pjsua's
/// callback (`TimestampedEvent.raisedAt`) to a consumer holding it.
///
/// A fixed histogram of 1 µs buckets up to 100 ms (larger values count in the last bucket,
/// the maximum is kept exactly), so memory stays constant however many calls a run takes.
struct LatencyHistogram {
    private var buckets = [UInt32](repeating: 0, count: 100_000)
    private(set) var count = 0
    private(set) var maximum: Duration = .zero

    mutating func record(_ latency: Duration) {
        let (seconds, attoseconds) = latency.components
        let micros = max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        buckets[min(micros, buckets.count - 1)] += 1
        count += 1
        if latency > maximum { maximum = latency }
    }

    /// The smallest whole number of microseconds at or below which `fraction` of the samples lie.
    func percentile(_ fraction: Double) -> Int {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (micros, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank { return micros }
        }
        return buckets.count - 1
    }

    /// `name events=N p50_us=… p99_us=… max_us=…`, one line.
    func line(_ name: String) -> String {
        let (seconds, attoseconds) = maximum.components
        let maxMicros = Double(seconds) * 1e6 + Double(attoseconds) / 1e12
        return "\(name) events=\(count) p50_us=\(percentile(0.5)) p99_us=\(percentile(0.99)) "
            + String(format: "max_us=%.1f", maxMicros)
    }
}

extension LatencyHistogram {
    /// Subscribes now and records every event's latency on receipt until the engine shuts down.
    /// The consumer does nothing else, so this is the engine's own delivery time.
    static func measure(_ engine: PJSUA) -> Task<LatencyHistogram, Never> {
        let events = engine.timestampedEvents
        return Task {
            var histogram = LatencyHistogram()
            for await stamped in events {
                histogram.record(ContinuousClock.now - stamped.raisedAt)
            }
            return histogram
        }
    }
}
