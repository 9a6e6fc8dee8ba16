import Foundation

/// What sipp counted for a run.
public struct SippResult: Sendable, CustomStringConvertible {
    /// sipp's exit status: 0 when every call succeeded.
    public var exitStatus: Int32
    /// `SuccessfulCall(C)` from the statistics file.
    public var successfulCalls: Int
    /// `FailedCall(C)` from the statistics file.
    public var failedCalls: Int
    /// sipp's screen output, for failure messages.
    public var output: String

    public var description: String {
        "sipp exit \(exitStatus), \(successfulCalls) successful, \(failedCalls) failed\n\(output.suffix(3000))"
    }
}

/// A sipp process on 127.0.0.1 playing one scenario.
public final class Sipp: Sendable {
    public let process: PeerProcess
    /// The local SIP port sipp listens and sends on.
    public let port: UInt16
    let statsFile: URL
    let messageFile: URL

    /// The address sipp listens and sends on: 127.0.0.1, or its ``Topology`` host's.
    public let address: String
    private let host: Topology.Host?

    /// Where to send requests to reach this sipp.
    public var uri: String { "sip:service@\(address):\(port)" }

    private init(
        process: PeerProcess, port: UInt16, host: Topology.Host?, address: String, statsFile: URL, messageFile: URL
    ) {
        self.process = process
        self.port = port
        self.host = host
        self.address = address
        self.statsFile = statsFile
        self.messageFile = messageFile
    }

    /// Starts sipp.
    /// - Parameters:
    ///   - scenario: a built-in scenario name (`uas`, `uac`), a file in `Tests/Scenarios`, or
    ///     the absolute path of a scenario file.
    ///   - remote: the `host:port` to send to (for UAC scenarios).
    ///   - calls: stop after this many calls (`-m`).
    ///   - extra: more sipp arguments (`-r`, `-l`, `-d`, `-key`…).
    ///   - host: run inside this ``Topology`` host's namespace, on its address.
    ///   - sourceAddress: the loopback address to bind and send from instead of 127.0.0.1
    ///     (127.0.0.3, say: a source that is not the registrar).
    /// Waits until sipp has bound its SIP port. FreePort's port can be taken by another
    /// process before sipp binds it (other test runs share the machine); sipp then exits at
    /// once, and another port is tried (three attempts).
    public static func start(
        scenario: String, remote: String? = nil, calls: Int = 1, extra: [String] = [],
        folder: TemporaryFolder, timeout: Duration = .seconds(60), in host: Topology.Host? = nil,
        sourceAddress: String? = nil
    ) async throws -> Sipp {
        var attempt = 0
        while true {
            attempt += 1
            let sipp = try await launch(
                scenario: scenario, remote: remote, calls: calls, extra: extra, folder: folder, timeout: timeout,
                host: host, sourceAddress: sourceAddress)
            let lostPort = sipp.process.exitStatus != nil && sipp.process.output.contains("Unable to bind")
            if attempt < 3, lostPort { continue }
            return sipp
        }
    }

    private static func launch(
        scenario: String, remote: String?, calls: Int, extra: [String], folder: TemporaryFolder, timeout: Duration,
        host: Topology.Host?, sourceAddress: String?
    ) async throws -> Sipp {
        let address = sourceAddress ?? host?.address ?? "127.0.0.1"
        let port = FreePort.udp()
        let statsFile = folder.file("sipp-\(port).csv")
        let messageFile = folder.file("sipp-\(port)-messages.log")
        var arguments: [String] = []
        if scenario.hasSuffix(".xml") {
            // A path of its own (a scenario the test wrote), or a file in Tests/Scenarios.
            arguments += ["-sf", scenario.hasPrefix("/") ? scenario : Repository.scenario(scenario)]
        } else {
            arguments += ["-sn", scenario]
        }
        if let remote { arguments.append(remote) }
        let seconds = Int(timeout.components.seconds)
        arguments +=
            [
                "-i", address, "-mi", address, "-p", String(port), "-m", String(calls), "-nostdin",
                "-trace_stat", "-stf", statsFile.path, "-fd", "1",
                "-trace_msg", "-message_file", messageFile.path,
                "-timeout", "\(seconds)s", "-timeout_error",
            ] + extra
        let process = try PeerProcess(
            "sipp-\(URL(fileURLWithPath: scenario).lastPathComponent)-\(port)", executable: "/usr/bin/sipp",
            arguments: arguments, folder: folder, launcher: host?.launcher ?? [])
        let sipp = Sipp(
            process: process, port: port, host: host, address: address, statsFile: statsFile, messageFile: messageFile)
        try await sipp.waitUntilBound()
        return sipp
    }

    /// Whether sipp's port is bound (UDP or TCP), where sipp runs.
    private func isBound() -> Bool {
        if host == nil, address != "127.0.0.1" { return Self.socketListed(port) }
        guard let host else { return FreePort.isUDPBound(port) || FreePort.isTCPBound(port) }
        if host.isUDPBound(port) { return true }
        return host.exec(["/usr/bin/ss", "-Hltn", "sport", "= :\(port)"]).output.contains(":\(port)")
    }

    /// Whether `ss` lists a UDP or TCP listener on `port`, on any address of this namespace.
    private static func socketListed(_ port: UInt16) -> Bool {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        process.arguments = ["-Hltun", "sport", "= :\(port)"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output.contains(":\(port)")
    }

    /// Readiness probe: sipp has bound its port (or already exited, e.g. a short UAC run).
    private func waitUntilBound() async throws {
        do {
            // Over TCP (`-t t1`) sipp binds a TCP port only.
            try await waitUntil("sipp to bind port \(port)", seen: { process.output }) {
                isBound() || process.exitStatus != nil
            }
        } catch {
            process.stop()
            throw error
        }
    }

    /// Waits for sipp to finish its calls and reads its counters.
    public func finish(timeout: Duration = .seconds(60)) async throws -> SippResult {
        let status = try await process.waitForExit(timeout: timeout)
        let (successful, failed) = counters()
        return SippResult(exitStatus: status, successfulCalls: successful, failedCalls: failed, output: process.output)
    }

    /// Stops sipp without waiting for its calls.
    public func stop() { process.stop() }

    /// The last line of sipp's statistics CSV: successful and failed call counts.
    func counters() -> (Int, Int) {
        guard let text = try? String(contentsOf: statsFile, encoding: .utf8) else { return (-1, -1) }
        let lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first, let last = lines.last, lines.count >= 2 else { return (-1, -1) }
        let names = header.split(separator: ";", omittingEmptySubsequences: false)
        let values = last.split(separator: ";", omittingEmptySubsequences: false)
        func value(_ name: String) -> Int {
            guard let index = names.firstIndex(where: { $0 == name }), index < values.count else { return -1 }
            return Int(values[index]) ?? -1
        }
        return (value("SuccessfulCall(C)"), value("FailedCall(C)"))
    }

    /// The SIP messages sipp sent and received, as logged by `-trace_msg`.
    public var messages: String {
        (try? String(contentsOf: messageFile, encoding: .utf8)) ?? ""
    }

    /// Call-ID header values of the INVITEs sipp sent, in order.
    public var sentInviteCallIDs: [String] {
        messageBlocks.filter { $0.direction == .sent && $0.firstLine.hasPrefix("INVITE ") }
            .compactMap { $0.header("Call-ID") }
    }

    /// Status codes of the responses sipp received, in order.
    public var receivedStatusCodes: [Int] {
        messageBlocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("SIP/2.0 ") }
            .compactMap { Int($0.firstLine.split(separator: " ")[1]) }
    }

    /// Request methods sipp received, in order.
    public var receivedRequests: [String] {
        messageBlocks.filter { $0.direction == .received && !$0.firstLine.hasPrefix("SIP/2.0") }
            .compactMap { $0.firstLine.split(separator: " ").first.map(String.init) }
    }

    /// One logged message.
    public struct LoggedMessage: Sendable {
        public enum Direction: Sendable { case sent, received }
        public var direction: Direction
        public var lines: [String]
        /// When sipp sent or received it (its log's time stamp: the wall clock, to the
        /// microsecond, in local time); `nil` when the stamp could not be read.
        public var time: Date?
        public var firstLine: String { lines.first ?? "" }
        public func header(_ name: String) -> String? {
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    /// sipp's message log, split into messages. Each starts with a line of dashes and a
    /// time stamp, then `UDP message sent (N bytes):` or `UDP message received [N] bytes :`.
    public var messageBlocks: [LoggedMessage] {
        var blocks: [LoggedMessage] = []
        var current: LoggedMessage?
        var expectingDirection = false
        var stamp: Date?
        // SIP lines end in CRLF, which Swift treats as one Character: split on newlines.
        for raw in messages.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = String(raw)
            if line.hasPrefix("--------------------") {
                if let block = current { blocks.append(block) }
                current = nil
                expectingDirection = true
                stamp = Self.time(ofStamp: line.drop { $0 == "-" }.trimmingCharacters(in: .whitespaces))
                continue
            }
            if expectingDirection {
                if line.contains("message sent") {
                    current = LoggedMessage(direction: .sent, lines: [], time: stamp)
                } else if line.contains("message received") {
                    current = LoggedMessage(direction: .received, lines: [], time: stamp)
                }
                expectingDirection = false
                continue
            }
            if current?.lines.isEmpty == true, line.isEmpty { continue }
            current?.lines.append(line)
        }
        if let block = current { blocks.append(block) }
        return blocks
    }

    /// The first message sent (`sent: true`) or received whose first line starts with
    /// `prefix` (`INVITE `, `SIP/2.0 180`, `ACK `…).
    public func firstMessage(sent: Bool, startingWith prefix: String) -> LoggedMessage? {
        messageBlocks.first { ($0.direction == .sent) == sent && $0.firstLine.hasPrefix(prefix) }
    }

    /// A time stamp of sipp's log, `2026-12-02 08:18:02.979182` (local time), as a `Date`.
    static func time(ofStamp stamp: String) -> Date? {
        let parts = stamp.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let day = parts[0].split(separator: "-").compactMap { Int($0) }
        let clock = parts[1].split(separator: ":")
        guard day.count == 3, clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]),
            let seconds = Double(clock[2])
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let components = DateComponents(
            year: day[0], month: day[1], day: day[2], hour: hour, minute: minute, second: Int(seconds))
        return calendar.date(from: components)?.addingTimeInterval(seconds - seconds.rounded(.down))
    }
}
