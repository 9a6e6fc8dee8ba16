import Foundation
import SwiftPJSUA

/// baresip 1.0 (Debian's `baresip-core`) as a real peer on 127.0.0.1: one local account,
/// `bob`, that answers by itself, a 600 Hz sine (`ausine`) as its microphone, and `sndfile`
/// dumping what it decodes to a WAV file in its folder.
public struct Baresip: Sendable {
    public static let executable = "/usr/bin/baresip"
    /// The frequency of baresip's microphone, in Hz.
    public static let toneFrequency = 600.0

    public let process: PeerProcess
    /// baresip's SIP port on 127.0.0.1.
    public let port: UInt16
    /// Where its configuration and its decode dump are.
    public let folder: TemporaryFolder

    /// The account's address.
    public var uri: String { "sip:bob@127.0.0.1:\(port)" }

    /// Writes a configuration into `folder` and starts baresip on it, once it is ready.
    /// - Parameters:
    ///   - codecs: the codec modules, loaded first and in this order (the one loaded first is
    ///     offered and preferred first).
    ///   - modules: more modules, loaded after the sine, the audio bridge and `sndfile`.
    ///   - rtpPorts: the first port of a window of 1000 for RTP.
    ///   - accountParameters: more parameters of the account line (`;mediaenc=srtp-mand`).
    ///   - commands: menu commands run at start (`/dial sip:…`).
    ///   - contacts: lines of its `contacts` file (`"Name" <sip:…>`); the first is the current
    ///     contact, which `/message TEXT` (the `contact` module, loaded when there are
    ///     contacts) sends to.
    ///   - sipTrace: print every SIP message sent and received (`-s`): what baresip saw on
    ///     the wire, in its output. (baresip 1.0 shows a received MESSAGE only to a UI module
    ///     with an output handler, which a headless peer has not.)
    public static func start(
        folder: TemporaryFolder, codecs: [String], modules: [String] = [], rtpPorts: UInt16,
        accountParameters: String = "",
        commands: [String] = [], contacts: [String] = [], sipTrace: Bool = false
    ) async throws -> Baresip {
        let port = FreePort.udp()
        let contactModule = contacts.isEmpty ? [] : ["contact"]
        let moduleLines =
            (codecs + ["ausine", "aubridge", "sndfile"] + modules + ["account"] + contactModule + ["menu"])
            .map { "module \($0).so" }
        let config =
            [
                "poll_method epoll", "sip_listen 127.0.0.1:\(port)", "audio_source ausine,\(Int(toneFrequency))",
                "audio_player aubridge,nowhere", "audio_alert aubridge,nowhere",
                "rtp_ports \(rtpPorts)-\(rtpPorts + 999)", "module_path /usr/lib/baresip/modules",
            ] + moduleLines + ["snd_path \(folder.url.path)", ""]
        try config.joined(separator: "\n").write(to: folder.file("config"), atomically: true, encoding: .utf8)
        try "<sip:bob@127.0.0.1:\(port)>;regint=0;answermode=auto\(accountParameters)\n"
            .write(to: folder.file("accounts"), atomically: true, encoding: .utf8)
        if !contacts.isEmpty {
            try (contacts.joined(separator: "\n") + "\n").write(
                to: folder.file("contacts"), atomically: true, encoding: .utf8)
        }
        let process = try PeerProcess(
            "baresip", executable: executable,
            arguments: (sipTrace ? ["-s"] : []) + ["-f", folder.url.path] + commands.flatMap { ["-e", $0] },
            folder: folder, lifetimeSeconds: 60)
        try await process.waitForOutput(containing: "baresip is ready.")
        return Baresip(process: process, port: port, folder: folder)
    }

    /// What baresip decoded from the call, as `sndfile` dumped it.
    public func decodedAudio() throws -> WAVAudio {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
            $0.hasSuffix("-dec.wav")
        }
        guard let file = files.first else { throw TimedOut(what: "a decode dump in \(folder.url.path)", seen: files) }
        return try WAVAudio(contentsOf: folder.file(file))
    }
}
