import Foundation
import SwiftPJSUA

/// A fresh temporary folder for one test's files and peers, removed by ``remove()``: the
/// peers launched into it (every ``PeerProcess`` writes its output here) are stopped first.
public struct TemporaryFolder: Sendable {
    public let url: URL
    private let processes = OwnedProcesses()

    public init(_ prefix: String = "swiftpjsua-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Stops every peer launched into this folder that still runs, then deletes the folder.
    public func remove() {
        stopProcesses()
        try? FileManager.default.removeItem(at: url)
    }

    /// Stops every peer launched into this folder that still runs (its files stay).
    public func stopProcesses() {
        for process in processes.taken() { process.stop() }
    }

    /// Writes a sine tone as a WAV file named `name` and returns its URL: by default the
    /// 1 kHz tone the engine tests play and look for, 3 s long (play it looping for longer).
    /// - Parameters:
    ///   - frequency: in Hz.
    ///   - sampleRate: in Hz.
    ///   - amplitude: peak level, 0–1 of full scale.
    @discardableResult
    public func toneFile(
        _ name: String = "tone.wav", frequency: Double = 1000, duration: Duration = .seconds(3),
        sampleRate: Int = 16000, amplitude: Double = 0.5
    ) throws -> URL {
        let file = self.file(name)
        try WAVAudio.tone(frequency: frequency, duration: duration, sampleRate: sampleRate, amplitude: amplitude)
            .write(to: file)
        return file
    }

    /// Keeps `process` to stop it when the folder is removed.
    func own(_ process: PeerProcess) { processes.add(process) }
}

/// Runs `body` with a fresh ``TemporaryFolder`` and removes it (stopping the peers launched
/// into it) when `body` returns or throws.
public func withTemporaryFolder<R>(
    _ prefix: String = "swiftpjsua-test", _ body: (TemporaryFolder) async throws -> R
) async throws -> R {
    let folder = try TemporaryFolder(prefix)
    do {
        let result = try await body(folder)
        folder.remove()
        return result
    } catch {
        folder.remove()
        throw error
    }
}

/// The peers launched into one folder, in launch order.
final class OwnedProcesses: Sendable {
    private let processes = Protected<[PeerProcess]>([])

    func add(_ process: PeerProcess) { processes.withLock { $0.append(process) } }

    /// Every process added so far, newest first (stopped in the reverse of their start, as
    /// `defer`s would); the list is emptied.
    func taken() -> [PeerProcess] {
        processes.withLock { list in
            defer { list = [] }
            return list.reversed()
        }
    }
}
