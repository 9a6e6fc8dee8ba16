import Foundation

/// A UDP relay on loopback that delays every datagram between media endpoints
/// (`Tests/Peers/udp_delay_relay.py`): the stand-in for a long network path.
///
/// The engine binds RTP on 127.0.0.1 (``MediaConfiguration/rtpAddress``) and advertises
/// ``address`` (``MediaConfiguration/rtpPublicAddress``) in SDP; the relay binds every port of
/// the engine's RTP range on ``address``. What a leg sends to the far leg's advertised port P
/// from its own port Q arrives at 127.0.0.1:P one ``delay`` later, sent from the relay's port
/// Q, the far leg's view of the sender's advertised address. RTP and RTCP, both directions.
public final class UDPDelayRelay: Sendable {
    /// The address the relay listens on, to advertise in SDP.
    public let address: String
    /// The delay added to each datagram, one way.
    public let delay: Duration
    private let process: PeerProcess

    private init(address: String, delay: Duration, process: PeerProcess) {
        self.address = address
        self.delay = delay
        self.process = process
    }

    /// Starts the relay on `address` for every port of `ports` (the engine's RTP range)
    /// and waits until all are bound. It is stopped with `folder`'s processes, or by ``stop()``.
    /// - Throws: ``TimedOut`` when it has not bound its ports within 10 s (one in use, say).
    public static func start(
        folder: TemporaryFolder, ports: ClosedRange<UInt16>, delay: Duration, address: String = "127.0.0.2",
        name: String = "udp-delay-relay"
    ) async throws -> UDPDelayRelay {
        let script = Repository.root.appendingPathComponent("Tests/Peers/udp_delay_relay.py").path
        let process = try PeerProcess(
            name, executable: "/usr/bin/python3",
            arguments: [
                "-u", script, "--listen", address, "--target", "127.0.0.1",
                "--ports", "\(ports.lowerBound)-\(ports.upperBound)",
                "--delay-ms",
                String(Double(delay.components.seconds) * 1000 + Double(delay.components.attoseconds) / 1e15),
            ],
            folder: folder)
        do {
            try await process.waitForOutput(containing: "listening ", timeout: .seconds(10))
        } catch {
            process.stop()
            throw error
        }
        return UDPDelayRelay(address: address, delay: delay, process: process)
    }

    /// Stops the relay; it prints what it relayed (``output``).
    public func stop() { process.stop() }

    /// What the relay printed: `listening …`, a `flow <from>-><to>` line for the first
    /// datagram of each pair of ports, and `relayed <n> dropped <n>` once stopped.
    public var output: String { process.output }

    /// The pairs of ports (sender's, receiver's) that datagrams were relayed between so far.
    public var flows: [(from: UInt16, to: UInt16)] {
        output.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.hasPrefix("flow ") else { return nil }
            let ports = line.dropFirst("flow ".count).split(separator: "->").compactMap { UInt16($0) }
            return ports.count == 2 ? (ports[0], ports[1]) : nil
        }
    }
}
