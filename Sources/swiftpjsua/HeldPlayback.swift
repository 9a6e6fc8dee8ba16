import Foundation
import SwiftPJSUA

/// `--play` on calls: the file plays into a call while its audio is sent, and stops while
/// we hold the call. The engine keeps a player linked across media changes, so a held
/// (`sendonly`) stream would go on sending the file; the C pjsua app instead connects its
/// player only while a stream is active or held by the peer, and a user who holds a call
/// expects the far end to stop hearing it. On resume the file starts again from its beginning.
struct HeldPlayback {
    let file: String?
    private var players: [Call: Player] = [:]

    init(file: String?) { self.file = file }

    /// A `--play` file must exist before anything is dialled or answered.
    static func requireReadable(_ file: String?) throws(UsageError) {
        guard let file else { return }
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw UsageError(message: "--play: cannot read \(file)")
        }
    }

    /// Starts or stops the file for `change.call` as its audio stream now stands.
    mutating func update(_ change: CallMediaChange, engine: PJSUA, printer: EventPrinter) async throws {
        guard let file else { return }
        let call = change.call
        let sending = change.media.contains(where: \.isFlowingAudio)
        if sending, players[call] == nil {
            players[call] = try await engine.play(file: file, into: call, loop: true)
        } else if !sending, let player = players.removeValue(forKey: call) {
            try? await engine.stop(player)
            printer.detail("stopped playing into \(call) while it is held")
        }
    }

    /// Forgets an ended call (the engine destroyed its player).
    mutating func ended(_ call: Call) { players[call] = nil }
}
