import Foundation

/// A usage error: printed with the usage text, exit status 64 (EX_USAGE).
struct UsageError: Error {
    let message: String
}

/// Parsed `--name value` options and positional arguments.
struct Options {
    private(set) var values: [String: String] = [:]
    /// Every value of each valued option, in order, for options that may repeat (`--header`).
    private(set) var repeated: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// Parses `arguments` against the options that take a value and the bare flags allowed.
    init(_ arguments: [String], valued: Set<String>, flags allowedFlags: Set<String> = []) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                var inline: String?
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valued.contains(name) {
                    if let inline {
                        values[name] = inline
                    } else {
                        guard index + 1 < arguments.count else { throw UsageError(message: "--\(name) needs a value") }
                        index += 1
                        values[name] = arguments[index]
                    }
                    repeated[name, default: []].append(values[name] ?? "")
                } else if allowedFlags.contains(name), inline == nil {
                    flags.insert(name)
                } else {
                    throw UsageError(message: "unknown option --\(name)")
                }
            } else {
                positionals.append(argument)
            }
            index += 1
        }
    }

    func string(_ name: String) -> String? { values[name] }

    /// All values given for an option that may repeat, in order.
    func strings(_ name: String) -> [String] { repeated[name] ?? [] }

    func int(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func seconds(_ name: String) throws(UsageError) -> Duration? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value >= 0, value < 86_400 else {
            throw UsageError(message: "--\(name) must be a number of seconds")
        }
        return .milliseconds(Int64(value * 1000))
    }
}
