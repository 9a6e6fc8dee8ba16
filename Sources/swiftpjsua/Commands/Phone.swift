import Foundation
import SwiftPJSUA

/// `swiftpjsua phone`: an interactive softphone. Reads one command per line from standard
/// input (a person at a terminal, or a script piped in), prints one line per event, and
/// takes incoming MESSAGEs and message-waiting summaries.
struct Phone: Command {
    static let valuedOptions = EngineOptions.valued.union(AccountOptions.names).union(AccountOptions.callPolicyNames)
        .union(["port"])
    static let flagOptions = EngineOptions.flags
    static let interruptedStatus: Int32 = 0

    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        guard options.positionals.isEmpty else { throw UsageError(message: "phone takes no URI") }
        let port = try options.int("port", in: 0...65535) ?? 0
        engineOptions = try EngineOptions(options, port: UInt16(port))
    }

    /// The screen `?` prints.
    static let help = """
        commands (CALL is a number from `l`; without one, the selected call):
          d URI            dial URI; the new call is selected
          a [CODE] [CALL]  answer (200 by default; 180 rings, 183 early media, 4xx-6xx reject)
          h [CALL]         hang up                     ha   hang up every call
          H [CALL]         hold                        v [CALL]  resume
          # DIGITS         send DTMF (RFC 4733) on the selected call
          x URI            blind transfer (REFER) of the selected call to URI
          X CALL           attended transfer: replace CALL by the selected call's peer
          r [CALL]         re-INVITE (with SDP)        u [CALL]  UPDATE (without SDP)
          m URI TEXT       send a MESSAGE, print its final status
          l                list calls                  s CALL    select a call
          w WHAT [S]       wait up to S seconds (default 10) for WHAT on the selected call:
                           incoming (any call), confirmed, disconnected, transferred
          sleep S          pause S seconds (in scripts)
          ?                this help                   q    hang up, shut down and quit
        incoming MESSAGEs are taken (200) and printed; end of input quits like q.
        """

    func run() async throws -> Int32 {
        let printer = EventPrinter()
        let session = EngineSession()
        let engine = session.engine
        return try await session.run(engineOptions, printer: printer, interruptedStatus: Self.interruptedStatus) {
            account, _ in
            let book = CallBook()
            let messages = MessagePrinter.start(engine, printer: printer)
            defer { messages.cancel() }
            // The console reads lines until `q` or the end of input, or until the engine shuts
            // down (SIGINT, SIGTERM): the event stream then ends, which ends the input too.
            let (input, feed) = AsyncStream<String?>.makeStream()
            let events = session.events
            let eventTask = Task {
                for await event in events {
                    book.record(event)
                    printer.event(event, names: book.names)
                }
                feed.yield(nil)
            }
            defer { eventTask.cancel() }
            StandardInputLines.start(into: feed)
            if let transport = try await engine.transports().first {
                printer.line("phone on \(transport.type.rawValue) \(transport.host):\(transport.port); ? for help")
            }
            let console = Console(engine: engine, account: account, book: book, printer: printer)
            for await line in input {
                guard let line, await console.handle(line) != .quit else { break }
            }
            await engine.hangupAll()
            await engine.shutdown()
            printer.line("shut down")
            return 0
        }
    }
}

/// What the phone knows of its calls: their numbers (in order seen), last states, the
/// selected one, and finished transfers. Written by the event task, read by the console.
final class CallBook: Sendable {
    private struct State {
        var calls: [Call] = []
        var states: [Call: CallState] = [:]
        var selected: Call?
        var transferred: Set<Call> = []
        var incomingCount = 0
    }

    private let state = Protected(State())

    func record(_ event: PJSUAEvent) {
        state.withLock { state in
            switch event {
            case .incomingCall(let incoming):
                state.incomingCount += 1
                Self.add(incoming.call, to: &state)
                state.selected = incoming.call
            case .callState(let change):
                Self.add(change.call, to: &state)
                state.states[change.call] = change.state
            case .transferStatus(let progress) where progress.isFinal && (200..<300).contains(progress.statusCode):
                state.transferred.insert(progress.call)
            default:
                break
            }
        }
    }

    private static func add(_ call: Call, to state: inout State) {
        if !state.calls.contains(call) { state.calls.append(call) }
    }

    /// Selects `call`, adding it when new (a call just dialled).
    func select(_ call: Call) {
        state.withLock { state in
            Self.add(call, to: &state)
            state.selected = call
        }
    }

    /// `#1`, `#2`… by the order calls were seen.
    var names: [Call: String] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.calls.enumerated().map { ($1, "#\($0 + 1)") })
        }
    }

    var selected: Call? { state.withLock { $0.selected } }
    var incomingCount: Int { state.withLock { $0.incomingCount } }

    func call(number: Int) -> Call? {
        state.withLock { state in number >= 1 && number <= state.calls.count ? state.calls[number - 1] : nil }
    }

    func state(of call: Call) -> CallState? { state.withLock { $0.states[call] } }
    func wasTransferred(_ call: Call) -> Bool { state.withLock { $0.transferred.contains(call) } }

    /// One line per call: number, selection mark, handle, state.
    var listing: [String] {
        state.withLock { state in
            state.calls.enumerated().map { index, call in
                let mark = call == state.selected ? "*" : " "
                return "\(mark)#\(index + 1) \(call) \(state.states[call].map { "\($0)" } ?? "new")"
            }
        }
    }
}

/// Runs the phone's commands, one line at a time.
struct Console {
    enum Outcome { case next, quit }

    let engine: PJSUA
    let account: Account
    let book: CallBook
    let printer: EventPrinter

    func handle(_ rawLine: String) async -> Outcome {
        let line = rawLine.trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty, !line.hasPrefix(";") else { return .next }
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let command = words[0]
        let arguments = Array(words.dropFirst())
        do {
            return try await run(command, arguments, rest: Self.rest(of: line, after: 1))
        } catch let error as ConsoleError {
            printer.line("error: \(error.message)")
        } catch {
            printer.line("error: \(error)")
        }
        return .next
    }

    struct ConsoleError: Error {
        let message: String
    }

    /// The text after the first `count` words, as typed.
    private static func rest(of line: String, after count: Int) -> String {
        var remainder = Substring(line)
        for _ in 0..<count {
            remainder = remainder.drop { $0 != " " }.drop { $0 == " " }
        }
        return String(remainder)
    }

    private func run(_ command: String, _ arguments: [String], rest: String) async throws -> Outcome {
        switch command {
        case "?", "help":
            for line in Phone.help.split(separator: "\n", omittingEmptySubsequences: false) { out(String(line)) }
        case "q", "quit":
            return .quit
        case "d", "dial":
            guard let uri = arguments.first else { throw ConsoleError(message: "d needs a URI") }
            let call = try await engine.makeCall(to: uri, from: account)
            book.select(call)
            printer.line("dialing \(book.names[call] ?? "") (\(call)) \(uri)")
        case "a", "answer":
            let code =
                try arguments.first.map { text -> Int in
                    guard let code = Int(text), (100...699).contains(code) else {
                        throw ConsoleError(message: "a takes a status code 100-699")
                    }
                    return code
                } ?? 200
            try await engine.answer(try call(arguments.dropFirst().first), statusCode: code)
        case "h", "hangup":
            try await engine.hangup(try call(arguments.first))
        case "ha":
            await engine.hangupAll()
        case "H", "hold":
            try await engine.setHold(try call(arguments.first))
            printer.line("held \(name(try call(arguments.first)))")
        case "v", "resume":
            try await engine.resume(try call(arguments.first))
            printer.line("resumed \(name(try call(arguments.first)))")
        case "#", "dtmf":
            guard let digits = arguments.first else { throw ConsoleError(message: "# needs digits") }
            try await engine.sendDTMF(try call(nil), digits: digits)
            printer.line("sent dtmf \(digits)")
        case "x", "transfer":
            guard let uri = arguments.first else { throw ConsoleError(message: "x needs a URI") }
            try await engine.transfer(try call(nil), to: uri)
            printer.line("transferring \(name(try call(nil))) to \(uri)")
        case "X":
            guard let other = arguments.first else { throw ConsoleError(message: "X needs a call number") }
            try await engine.transfer(try call(nil), replacing: try call(other))
        case "r", "reinvite":
            try await engine.reinvite(try call(arguments.first))
            printer.line("re-INVITE sent on \(name(try call(arguments.first)))")
        case "u", "update":
            try await engine.update(try call(arguments.first), includingSDP: false)
            printer.line("UPDATE sent on \(name(try call(arguments.first)))")
        case "m", "message":
            let text = Self.rest(of: rest, after: 1)
            guard let uri = arguments.first, !text.isEmpty else {
                throw ConsoleError(message: "m needs a URI and text")
            }
            let delivery = try await engine.sendMessage(text, to: uri, from: account)
            let verdict = delivery.isAccepted ? "delivered" : "refused"
            printer.line("message \(verdict) \(delivery.statusCode) \(delivery.reason)")
        case "l", "calls":
            let listing = book.listing
            if listing.isEmpty { printer.line("no calls") }
            for line in listing { printer.line(line) }
        case "s", "select":
            let selected = try call(arguments.first)
            book.select(selected)
            printer.line("selected \(name(selected))")
        case "w", "wait":
            try await wait(arguments)
        case "sleep":
            guard let text = arguments.first, let seconds = Double(text), seconds >= 0, seconds <= 600 else {
                throw ConsoleError(message: "sleep takes 0-600 seconds")
            }
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
        default:
            throw ConsoleError(message: "unknown command \(command) (? for help)")
        }
        return .next
    }

    private func name(_ call: Call) -> String { book.names[call] ?? "\(call)" }

    /// The call a number names, or the selected call without one.
    private func call(_ number: String?) throws -> Call {
        if let number {
            guard let index = Int(number.trimmingCharacters(in: CharacterSet(charactersIn: "#"))),
                let call = book.call(number: index)
            else { throw ConsoleError(message: "no call \(number) (l lists them)") }
            return call
        }
        guard let selected = book.selected else { throw ConsoleError(message: "no call selected") }
        return selected
    }

    private func wait(_ arguments: [String]) async throws {
        guard let what = arguments.first else { throw ConsoleError(message: "w needs what to wait for") }
        let limit =
            try arguments.dropFirst().first.map { text -> Double in
                guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                    throw ConsoleError(message: "w takes up to 600 seconds")
                }
                return seconds
            } ?? 10
        let incomingBefore = book.incomingCount
        let condition: () -> Bool
        switch what {
        case "incoming":
            condition = {
                book.incomingCount > incomingBefore || book.selected.map { book.state(of: $0) == .incoming } == true
            }
        case "confirmed", "disconnected":
            let selected = try call(nil)
            let wanted: CallState = what == "confirmed" ? .confirmed : .disconnected
            condition = { book.state(of: selected) == wanted }
        case "transferred":
            let selected = try call(nil)
            condition = { book.wasTransferred(selected) }
        default:
            throw ConsoleError(message: "w waits for incoming, confirmed, disconnected or transferred")
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(limit * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ConsoleError(message: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        printer.line("ok \(what)")
    }
}

/// Standard input, a line at a time, read on a thread of its own (reading blocks).
enum StandardInputLines {
    /// Reads standard input on a thread of its own, yielding each line and `nil` at its end.
    static func start(into feed: AsyncStream<String?>.Continuation) {
        let thread = Thread {
            while let line = readLine(strippingNewline: true) { feed.yield(line) }
            feed.yield(nil)
        }
        thread.name = "stdin"
        thread.start()
    }
}
