import Foundation
import SwiftPJSUA

/// `swiftpjsua message URI --text T`: sends one MESSAGE (RFC 3428) and prints its final
/// status; exit 0 for a 2xx.
struct SendMessage: Command {
    static let valuedOptions = EngineOptions.valued.union(AccountOptions.names)
        .union(["port", "text", "content-type"])
    static let flagOptions = EngineOptions.flags
    static let interruptedStatus: Int32 = 130

    let uri: String
    let text: String
    let contentType: String
    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        guard options.positionals.count == 1, let uri = options.positionals.first else {
            throw UsageError(message: "message needs exactly one URI")
        }
        guard let text = options.string("text") else { throw UsageError(message: "message needs --text") }
        self.uri = uri
        self.text = text
        contentType = options.string("content-type") ?? "text/plain"
        let port = try options.int("port", in: 0...65535) ?? 0
        engineOptions = try EngineOptions(options, port: UInt16(port))
    }

    func run() async throws -> Int32 {
        let printer = EventPrinter()
        let session = EngineSession()
        let engine = session.engine
        return try await session.run(engineOptions, printer: printer, interruptedStatus: Self.interruptedStatus) {
            account, _ in
            let delivery: MessageDelivery
            do {
                delivery = try await engine.sendMessage(text, to: uri, from: account, contentType: contentType)
            } catch let error as PJSUAUsageError where error != .shutDown {
                await engine.shutdown()
                throw UsageError(message: error.description)
            }
            printer.line(
                "message \(delivery.isAccepted ? "delivered" : "refused") \(delivery.statusCode) \(delivery.reason)")
            await engine.shutdown()
            return delivery.isAccepted ? 0 : 1
        }
    }
}

/// `listen --messages`: takes incoming MESSAGEs (answering them 200; without the flag they
/// get 480) and unsolicited message summaries (200; 481 without the flag), and prints a
/// line for each, and for each typing indication.
enum MessagePrinter {
    /// Reads ``PJSUA/messages`` and ``PJSUA/messageSummaries`` until cancelled. Subscribed
    /// before it returns, so a request that arrives after this call is taken.
    static func start(_ engine: PJSUA, printer: EventPrinter) -> Task<Void, Never> {
        let messages = engine.messages
        let summaries = engine.messageSummaries
        let summaryReader = Task {
            for await summary in summaries {
                let counts = summary.counts.map { "\($0.messageClass)=\($0.new)/\($0.old)" }.joined(separator: " ")
                let waiting = summary.messagesWaiting ? "yes" : "no"
                let kind = summary.isSolicited ? "subscribed" : "unsolicited"
                printer.line("message-waiting \(waiting) \(kind) \(counts)")
            }
        }
        return Task {
            defer { summaryReader.cancel() }
            for await event in messages {
                switch event {
                case .message(let message):
                    let call = message.call.map { " in \($0)" } ?? ""
                    // The body on one line: line breaks escaped, as `\n`.
                    let body = message.body.replacingOccurrences(of: "\r\n", with: "\n")
                        .replacingOccurrences(of: "\n", with: "\\n")
                    printer.line("message from \(message.from.uri)\(call) \(message.contentType): \(body)")
                case .typing(let indication):
                    printer.line("typing from \(indication.from.uri) \(indication.isTyping ? "active" : "idle")")
                }
            }
        }
    }
}
