import Foundation
import SwiftPJSUA

/// The call-feature flags `call` and `listen` share: extra headers, DTMF to send, a blind
/// transfer and a hold, each applied to a call once it is confirmed.
struct CallFeatures: Sendable {
    static let optionNames: Set<String> = ["header", "dtmf", "transfer-to", "hold-after"]
    static let flagNames: Set<String> = ["stats"]

    var headers: [SIPHeader] = []
    var dtmf: String?
    var transferTo: String?
    var holdAfter: Duration?
    /// `--stats`: a `stats` line per call every second, and a line per quality warning.
    var stats = false

    init(_ options: Options) throws(UsageError) {
        for line in options.strings("header") {
            guard let header = SIPHeader(parsing: line) else {
                throw UsageError(message: "--header needs 'Name: value', got \(line)")
            }
            headers.append(header)
        }
        dtmf = options.string("dtmf")
        // Checked here so that a typo is a usage error before any call, not a failure
        // printed after the call connected.
        if let dtmf, dtmf.isEmpty || !dtmf.uppercased().allSatisfy(Set("0123456789*#ABCD").contains) {
            throw UsageError(message: "--dtmf takes digits 0-9 * # A-D, got \(dtmf)")
        }
        transferTo = options.string("transfer-to")
        holdAfter = try options.seconds("hold-after")
        stats = options.flags.contains("stats")
    }

    /// Sends the DTMF, starts the transfer and schedules the hold for a confirmed call.
    func start(on call: Call, engine: PJSUA, printer: EventPrinter) {
        if stats { Self.printQuality(of: call, engine: engine, printer: printer) }
        guard dtmf != nil || transferTo != nil || holdAfter != nil else { return }
        Task {
            do {
                if let dtmf {
                    try await engine.sendDTMF(call, digits: dtmf)
                    printer.line("sending dtmf \(dtmf) on \(call)")
                }
                if let transferTo {
                    try await engine.transfer(call, to: transferTo)
                    printer.line("transferring \(call) to \(transferTo)")
                }
                if let holdAfter {
                    try await Task.sleep(for: holdAfter)
                    try await engine.setHold(call)
                    printer.line("holding \(call)")
                }
            } catch {
                printer.line("call feature on \(call) failed: \(error)")
            }
        }
    }

    /// As transferor: once the far end reports the transfer succeeded (a final 2xx status from
    /// its NOTIFY), hangs up the call it was transferred from, as transferors do in RFC 5589's
    /// basic transfer and the C pjsua app does; a failed transfer leaves the call up. Returns whether it hung up.
    @discardableResult
    func finishTransfer(_ progress: TransferProgress, engine: PJSUA, printer: EventPrinter) async -> Bool {
        guard transferTo != nil, progress.isFinal, (200..<300).contains(progress.statusCode) else { return false }
        printer.line("transfer of \(progress.call) succeeded: hanging up")
        try? await engine.hangup(progress.call)
        return true
    }

    /// Prints `stats call=… key=value…` once a second until the call ends, and
    /// `quality warning raised|cleared NAME on CALL` as the monitor decides (`--stats`).
    static func printQuality(of call: Call, engine: PJSUA, printer: EventPrinter) {
        guard let reports = try? engine.callQuality(of: call) else { return }
        Task {
            for await report in reports {
                printer.line(statsLine(report, call: call))
                for warning in report.raised { printer.line("quality warning raised \(warning) on \(call)") }
                for warning in report.cleared { printer.line("quality warning cleared \(warning) on \(call)") }
            }
        }
    }

    /// One report as `key=value` fields: percentages, milliseconds, MOS, levels 0-255.
    static func statsLine(_ report: CallQualityReport, call: Call) -> String {
        func ms(_ duration: Duration) -> String {
            let parts = duration.components
            return String(format: "%.1f", Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15)
        }
        func percent(_ rate: Double) -> String { String(format: "%.2f", rate * 100) }
        let stats = report.statistics
        var fields = [
            "call=\(call)", "codec=\(stats.codec)",
            "rx-packets=\(stats.receive.packets)", "rx-lost=\(stats.receive.lost)",
            "rx-loss=\(percent(stats.receive.lossRate))", "rx-recent-loss=\(percent(report.recentLossRate))",
            "rx-jitter-ms=\(ms(stats.receive.jitter.last))", "jb-ms=\(ms(stats.jitterBuffer.averageDelay))",
            "jb-prefetch=\(stats.jitterBuffer.prefetchFrames)", "jb-prefetch-ms=\(ms(stats.jitterBuffer.prefetch))",
            "rtt-ms=\(ms(stats.roundTrip.last))",
            "mos=\(String(format: "%.2f", report.receive.mos))",
            "rating=\(String(format: "%.2f", report.receive.rating))",
            "call-mos=\(String(format: "%.2f", QualityEstimate(stats, direction: .receive).mos))",
            "tx-packets=\(stats.farEnd.packets)", "far-reports=\(stats.farEnd.reports)",
            "far-lost=\(stats.farEnd.lost)", "far-loss=\(percent(stats.farEnd.lossRate))",
            "far-jitter-ms=\(ms(stats.farEnd.jitter.last))",
        ]
        if let farEnd = report.farEnd { fields.append("far-mos=\(String(format: "%.2f", farEnd.mos))") }
        if let level = stats.audioLevel {
            fields.append("sent-level=\(level.sent)")
            fields.append("received-level=\(level.received)")
        }
        let warnings = report.activeWarnings.sorted().map(\.rawValue).joined(separator: ",")
        fields.append("warnings=\(warnings.isEmpty ? "none" : warnings)")
        return "stats " + fields.joined(separator: " ")
    }
}
