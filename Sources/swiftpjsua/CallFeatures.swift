import Foundation
import SwiftPJSUA

/// The call-feature flags `call` and `listen` share: extra headers, DTMF to send, a blind
/// transfer and a hold, each applied to a call once it is confirmed.
struct CallFeatures: Sendable {
    static let optionNames: Set<String> = ["header", "dtmf", "transfer-to", "hold-after"]

    var headers: [SIPHeader] = []
    var dtmf: String?
    var transferTo: String?
    var holdAfter: Duration?

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
    }

    /// Sends the DTMF, starts the transfer and schedules the hold for a confirmed call.
    func start(on call: Call, engine: PJSUA, printer: EventPrinter) {
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
}
