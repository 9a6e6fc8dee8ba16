import Foundation
import SwiftPJSUA

/// Paths inside this repository.
public enum Repository {
    /// The repository's root folder.
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// A sipp scenario kept in `Tests/Scenarios`.
    public static func scenario(_ name: String) -> String {
        root.appendingPathComponent("Tests/Scenarios/\(name)").path
    }

    /// The `swiftpjsua` tool built next to the tests: `SWIFTPJSUA_TOOL` when set, else the
    /// one in the folder of the running test binary (whatever `--scratch-path` and
    /// configuration built it), else `.build/debug` or `.build/release`.
    public static var tool: URL { executable("swiftpjsua", override: "SWIFTPJSUA_TOOL") }

    /// A product of this package built beside the test bundle (a tool or an example), or
    /// the path in the environment variable `override` when set.
    public static func executable(_ name: String, override: String? = nil) -> URL {
        var candidates: [URL] = []
        if let override, let explicit = ProcessInfo.processInfo.environment[override], !explicit.isEmpty {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name))
        }
        // Apple's xctest runs a bundle: the tool sits beside the .xctest folder.
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        candidates += ["debug", "release"].map { root.appendingPathComponent(".build/\($0)/\(name)") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
}

/// Runs a short command to its end and returns its exit status and its output (standard
/// output, and standard error too when `withStandardError`), trimmed; `nil` when it cannot
/// be started. For quick look-ups (pkg-config, a harness's check mode), not for peers.
public func commandOutput(
    _ executable: String, _ arguments: [String], withStandardError: Bool = false
) -> (status: Int32, output: String)? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = withStandardError ? pipe : FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// Local ports for peers.
public enum FreePort {
    /// A UDP port on 127.0.0.1 that nothing is bound to right now (the kernel's choice for
    /// port 0). Another process could take it before the peer binds; tests on one machine
    /// with ports from the ephemeral range rarely collide.
    public static func udp() -> UInt16 {
        (try? bindIPv4(0, type: SOCK_DGRAM).get()) ?? 0
    }

    /// A port on 127.0.0.1 that is free for both UDP and TCP right now (for a peer that
    /// listens on both with one number).
    public static func tcpAndUDP() -> UInt16 {
        for _ in 0..<50 {
            let port = udp()
            if port != 0, case .success = bindIPv4(port, type: SOCK_STREAM) { return port }
        }
        return udp()
    }

    /// A UDP port on [::1] that nothing is bound to right now.
    public static func udp6() -> UInt16 {
        let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        return bound ? UInt16(bigEndian: address.sin6_port) : 0
    }

    /// Whether a UDP port on 127.0.0.1 is bound by some process.
    public static func isUDPBound(_ port: UInt16) -> Bool {
        if case .failure(let error) = bindIPv4(port, type: SOCK_DGRAM) { return error.code == EADDRINUSE }
        return false
    }

    /// Whether a TCP port on 127.0.0.1 is bound by some process (a listener, for instance).
    public static func isTCPBound(_ port: UInt16) -> Bool {
        if case .failure(let error) = bindIPv4(port, type: SOCK_STREAM) { return error.code == EADDRINUSE }
        return false
    }

    struct BindError: Error {
        let code: Int32
    }

    /// Binds a socket of `type` to 127.0.0.1:`port` (0: the kernel picks), closes it again
    /// and returns the port it was bound to, or the `errno` of the failure.
    static func bindIPv4(_ port: UInt16, type: __socket_type) -> Result<UInt16, BindError> {
        let fd = socket(AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { return .failure(BindError(code: errno)) }
        defer { close(fd) }
        return bind(fd, port)
    }

    /// A TCP socket listening on 127.0.0.1:`port`, as another SIP stack on the port would
    /// hold it, until it is closed; nil when the port cannot be had.
    public static func listenTCP(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard case .success = bind(fd, port), listen(fd, 4) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Binds `fd` to 127.0.0.1:`port` (0: the kernel picks): the port bound to, or the `errno`.
    private static func bind(_ fd: Int32, _ port: UInt16) -> Result<UInt16, BindError> {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        return bound ? .success(UInt16(bigEndian: address.sin_port)) : .failure(BindError(code: errno))
    }
}

/// Binds UDP sockets on every interface at each port of `ports` that is free, so that
/// pjsua cannot; ports another process holds are held already. Closed by `close()`.
public final class HeldPorts: Sendable {
    private let sockets: [Int32]

    public init(_ ports: ClosedRange<UInt16>) {
        var sockets: [Int32] = []
        for port in ports {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { continue }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = in_addr(s_addr: INADDR_ANY)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { sockets.append(fd) } else { Glibc.close(fd) }
        }
        self.sockets = sockets
    }

    public func close() { for fd in sockets { Glibc.close(fd) } }
}

/// A child process (a SIP peer) with its output captured to files.
public final class PeerProcess: Sendable {
    public let name: String
    public let outputFile: URL
    private let process: Process
    private let exit = ExitStatus()
    private let exited = AsyncStream<Int32>.makeStream()

    /// Launches `executable` with `arguments` in its own process group, writing its output
    /// into `folder`; ``TemporaryFolder/remove()`` stops it (if it still runs) before the
    /// folder goes.
    /// - Parameter launcher: a command prefix that runs `executable`, e.g.
    ///   `ip netns exec NAMESPACE` (``Topology/Host/launcher``); it must exec the command
    ///   in the same process so that ``stop()`` reaches it.
    public init(
        _ name: String, executable: String, arguments: [String], folder: TemporaryFolder, lifetimeSeconds: Int = 300,
        environment: [String: String] = [:], launcher: [String] = []
    ) throws {
        self.name = name
        outputFile = folder.file("\(name).out")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: outputFile)
        let process = Process()
        // timeout puts itself in a new process group (it calls setpgid) whose id is its pid,
        // so stop() reaches the peer and its children; it also bounds the peer's life if the
        // test process dies without stopping it. (setsid forked when its caller already led
        // a group, leaving stop() signalling an exited pid while the peer ran on.)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", String(lifetimeSeconds)] + launcher + [executable] + arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let (_, continuation) = (exited.stream, exited.continuation)
        let exitBox = exit
        process.terminationHandler = { process in
            exitBox.set(process.terminationStatus)
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        self.process = process
        try process.run()
        folder.own(self)
    }

    public var pid: Int32 { process.processIdentifier }

    /// The exit status, once the process has exited.
    public var exitStatus: Int32? { exit.value }

    /// Waits for the process to exit by itself.
    /// - Throws: ``TimedOut`` (after stopping the process) when it runs past `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        if let status = exitStatus { return status }
        let stream = exited.stream
        let status: Int32? = await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await status in stream { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // the deadline, raced against the exit
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let status = status ?? exitStatus { return status }
        stop()
        throw TimedOut(what: "\(name) to exit", seen: [output])
    }

    /// Ends the process group (SIGTERM, then SIGKILL if it lingers).
    public func stop() {
        guard exitStatus == nil, process.isRunning else { return }
        let group = -process.processIdentifier
        // Just after launch, timeout may not have made its group yet: signal it alone then
        // (it has not started the peer before it leads the group).
        if kill(group, SIGTERM) != 0 { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning, kill(group, SIGKILL) != 0 { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Waits until the process has printed `text` (checking its output every 20 ms).
    /// - Throws: ``TimedOut`` when it exits or `timeout` passes first.
    public func waitForOutput(containing text: String, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("\(name) to print \"\(text)\"", timeout: timeout, seen: { output }) {
            if output.contains(text) { return true }
            guard exitStatus == nil else {
                throw TimedOut(what: "\(name) to print \"\(text)\" (it exited)", seen: [output])
            }
            return false
        }
    }

    /// Waits until a `swiftpjsua listen` process can take calls: it prints its `listening on`
    /// line once its account exists, after its transport is bound.
    /// - Throws: ``TimedOut`` when it exits or `timeout` passes first.
    public func waitUntilListening(timeout: Duration = .seconds(10)) async throws {
        try await waitForOutput(containing: "listening on", timeout: timeout)
    }

    /// Everything the process printed so far.
    public var output: String {
        (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
    }

    deinit { stop() }
}

/// A process's exit status, set once by the termination handler.
final class ExitStatus: Sendable {
    private let status = Protected<Int32?>(nil)
    func set(_ value: Int32) { status.withLock { $0 = value } }
    var value: Int32? { status.withLock { $0 } }
}
