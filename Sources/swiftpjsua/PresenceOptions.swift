import SwiftPJSUA

/// `listen`'s presence options: `--buddy URI` and `--blf URI` (each may repeat),
/// `--presence-status online|busy|away|offline[:NOTE]`, `--busy-in-calls`. Watchers are an
/// account option (`--watchers`).
struct PresenceOptions {
    static let valued: Set<String> = ["buddy", "blf", "presence-status"]
    static let flags: Set<String> = ["busy-in-calls"]

    var buddies: [String]
    var busyLamps: [String]
    var status: PresenceStatus?
    var busyInCalls: Bool

    init(_ options: Options) throws(UsageError) {
        buddies = options.strings("buddy")
        busyLamps = options.strings("blf")
        busyInCalls = options.flags.contains("busy-in-calls")
        status = try options.string("presence-status").map(Self.parseStatus)
    }

    var isEmpty: Bool { buddies.isEmpty && busyLamps.isEmpty && status == nil && !busyInCalls }

    /// `busy`, `away:In a meeting`…
    static func parseStatus(_ text: String) throws(UsageError) -> PresenceStatus {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let note = parts.count > 1 ? String(parts[1]) : ""
        switch parts[0] {
        case "online": return PresenceStatus(.online, note: note)
        case "busy": return PresenceStatus(.busy, note: note)
        case "away": return PresenceStatus(.away, note: note)
        case "offline": return PresenceStatus(.offline, note: note)
        default:
            throw UsageError(message: "--presence-status must be online, busy, away or offline[:NOTE], not \(text)")
        }
    }

    /// Sets the status, adds the buddies and prints their events as lines until cancelled:
    /// `presence URI SUBSCRIPTION AVAILABILITY "NOTE"` and `dialog URI SUBSCRIPTION STATE`.
    func start(_ engine: PJSUA, account: Account, printer: EventPrinter) async -> Task<Void, Never>? {
        guard !isEmpty else { return nil }
        let events = engine.buddyEvents
        let reader = Task {
            for await event in events {
                switch event {
                case .presence(let change):
                    printer.line(
                        "presence \(change.uri) \(change.subscription) \(change.status.availability) "
                            + "\"\(change.status.note)\"")
                case .dialogs(let change):
                    printer.line("dialog \(change.uri) \(change.subscription) \(change.state?.rawValue ?? "none")")
                @unknown default:
                    break
                }
            }
        }
        do {
            if let status { try await engine.setPresence(status, for: account) }
            let chosen = PJSUA.supportsBuddyAccounts ? account : nil
            for uri in buddies { _ = try await engine.addBuddy(uri, account: chosen) }
            for uri in busyLamps {
                _ = try await engine.addBuddy(uri, subscribesToPresence: false, watchesDialogs: true, account: chosen)
            }
        } catch {
            printer.line("presence failed: \(error)")
        }
        return reader
    }

    /// With `--busy-in-calls`: busy while any call is confirmed, the configured status otherwise.
    func callsChanged(confirmed: Int, engine: PJSUA, account: Account, printer: EventPrinter) async {
        guard busyInCalls else { return }
        let idle = status ?? PresenceStatus(.online)
        let next = confirmed > 0 ? PresenceStatus(.busy, note: "In a call") : idle
        do { try await engine.setPresence(next, for: account) } catch { printer.line("presence failed: \(error)") }
    }
}
