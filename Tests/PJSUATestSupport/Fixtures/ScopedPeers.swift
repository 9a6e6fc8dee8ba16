import Foundation
import Testing

/// Runs `body` with sipp playing `scenario` (see ``Sipp/start(scenario:remote:calls:extra:folder:timeout:in:)``)
/// in a temporary folder of its own, and stops sipp and removes the folder when `body`
/// returns or throws.
public func withSipp<R>(
    scenario: String, remote: String? = nil, calls: Int = 1, extra: [String] = [], timeout: Duration = .seconds(60),
    _ body: (Sipp) async throws -> R
) async throws -> R {
    try await withTemporaryFolder { folder in
        let sipp = try await Sipp.start(
            scenario: scenario, remote: remote, calls: calls, extra: extra, folder: folder, timeout: timeout)
        return try await body(sipp)
    }
}

/// Runs `body` with a Kamailio on 127.0.0.1 (see ``Kamailio/start(folder:port:tls:ipv6:name:in:natHelper:)``)
/// in a temporary folder of its own, and stops it and removes the folder when `body`
/// returns or throws.
public func withKamailio<R>(ipv6: Bool = false, _ body: (Kamailio) async throws -> R) async throws -> R {
    try await withTemporaryFolder { folder in
        try await body(try await Kamailio.start(folder: folder, ipv6: ipv6))
    }
}

extension Sipp {
    /// Waits for sipp to finish its calls and expects `successfulCalls` of them to have
    /// succeeded (and, with `exitStatus`, that exit status).
    @discardableResult
    public func expectFinished(
        successfulCalls: Int = 1, exitStatus: Int32? = nil, timeout: Duration = .seconds(60),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> SippResult {
        let result = try await finish(timeout: timeout)
        #expect(result.successfulCalls == successfulCalls, "\(result)", sourceLocation: sourceLocation)
        if let exitStatus { #expect(result.exitStatus == exitStatus, "\(result)", sourceLocation: sourceLocation) }
        return result
    }

    /// The first message sipp received whose start line begins with `prefix` (a method, or
    /// `SIP/2.0 183`).
    public func received(_ prefix: String) -> LoggedMessage? {
        messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix(prefix) }
    }
}

extension PeerProcess {
    /// The `swiftpjsua` tool (``Repository/tool``) run with `arguments`, writing into
    /// `folder`; a `listen` returns once it can take calls (its `listening on` line).
    public static func swiftpjsua(
        _ name: String, _ arguments: [String], folder: TemporaryFolder, environment: [String: String] = [:],
        lifetimeSeconds: Int = 300
    ) async throws -> PeerProcess {
        let tool = try PeerProcess(
            name, executable: Repository.tool.path, arguments: arguments, folder: folder,
            lifetimeSeconds: lifetimeSeconds, environment: environment)
        if arguments.first == "listen" { try await tool.waitUntilListening() }
        return tool
    }
}
