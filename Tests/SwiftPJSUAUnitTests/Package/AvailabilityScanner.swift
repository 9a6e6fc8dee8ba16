import Foundation

/// An OS version pair: what an API needs, or what a scope of code guarantees.
struct AppleVersions: Hashable, CustomStringConvertible {
    /// The iOS major version.
    var iOS: Int
    /// The macOS major version.
    var macOS: Int

    /// Whether code that may run at `self` can use an API that needs `needed`.
    func covers(_ needed: AppleVersions) -> Bool { iOS >= needed.iOS && macOS >= needed.macOS }

    /// The higher of each pair.
    func raised(to other: AppleVersions) -> AppleVersions {
        AppleVersions(iOS: max(iOS, other.iOS), macOS: max(macOS, other.macOS))
    }

    /// `iOS 18, macOS 15`.
    var description: String { "iOS \(iOS), macOS \(macOS)" }

    /// The versions named by the arguments of an `@available(…)` or `#available(…)`
    /// (`iOS 18.0, macOS 15, *`), platforms it does not name at `floor`; `nil` for an
    /// attribute that states no version (`*, deprecated`, `iOS, unavailable`).
    static func named(in arguments: String, floor: AppleVersions) -> AppleVersions? {
        func major(_ platform: String) -> Int? {
            guard let range = arguments.range(of: #"\b\#(platform)\s+(\d+)"#, options: .regularExpression) else {
                return nil
            }
            return Int(arguments[range].split(whereSeparator: \.isWhitespace).last ?? "")
        }
        let iOS = major("iOS"), macOS = major("macOS")
        guard iOS != nil || macOS != nil else { return nil }
        return AppleVersions(iOS: iOS ?? floor.iOS, macOS: macOS ?? floor.macOS)
    }
}

/// An API newer than the package's platform floor, and how to recognise its use in source.
struct NewerAPI: Hashable, CustomStringConvertible {
    /// The API, e.g. `Synchronization.Atomic`.
    var name: String
    /// What it needs.
    var needs: AppleVersions
    /// A regular expression matching its use in code with comments and strings blanked.
    var pattern: String

    /// Text every match contains (the name's last part), to skip lines cheaply.
    var keyword: String { String(name.split(separator: ".").last ?? "") }

    var description: String { "\(name) (\(needs))" }
}

/// A use of a ``NewerAPI`` that no availability check covers.
struct UnguardedUse: Hashable, CustomStringConvertible {
    /// The file, relative to the repository.
    var file: String
    /// The 1-based line.
    var line: Int
    /// The API used.
    var api: NewerAPI
    /// What the code around it guarantees.
    var guaranteed: AppleVersions

    var description: String {
        "\(file):\(line): \(api.name) needs \(api.needs), the code runs from \(guaranteed)"
    }
}

/// Finds uses of newer APIs in Swift source that neither an `@available` declaration, an
/// `if #available`/`guard #available`, nor a non-Apple `#if` (`#if os(Linux)`) covers.
///
/// A light scanner rather than the compiler, which cannot check Apple availability on Linux:
/// comments and string literals are blanked, then braces are followed line by line. An
/// `@available` with versions covers the next `{…}` it opens (or its own line when the
/// declaration has no body); `if #available(…) {` covers that block and not its `else`;
/// `guard #available(…)` covers the rest of the enclosing block.
struct AvailabilityScanner {
    /// The manifest's platform floor.
    var floor: AppleVersions
    /// The APIs to look for.
    var apis: [NewerAPI]

    /// The unguarded uses in `source` (named `file` in the results).
    func scan(_ source: String, file: String) -> [UnguardedUse] {
        let code = Self.blankingCommentsAndStrings(source)
        var findings: [UnguardedUse] = []
        // One entry per open brace: what its block guarantees.
        var scopes: [AppleVersions] = [floor]
        // One entry per open `#if`: whether its current branch is compiled only off Apple
        // platforms, and whether its condition was Apple-only (so that `#else` is not).
        var conditions: [(offApple: Bool, appleOnly: Bool)] = []
        var pending: AppleVersions?
        for (index, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let directive = Self.directive(trimmed) {
                switch directive {
                case .if(let condition):
                    conditions.append((Self.isOffApple(condition), Self.isAppleOnly(condition)))
                case .elseif(let condition):
                    if !conditions.isEmpty {
                        conditions[conditions.count - 1] = (Self.isOffApple(condition), Self.isAppleOnly(condition))
                    }
                case .else:
                    if let last = conditions.last { conditions[conditions.count - 1] = (last.appleOnly, false) }
                case .endif:
                    _ = conditions.popLast()
                }
                continue
            }
            var guaranteed = scopes.last ?? floor
            if let attribute = Self.arguments(of: "@available", in: trimmed),
                let versions = AppleVersions.named(in: attribute, floor: floor)
            {
                pending = (pending ?? guaranteed).raised(to: versions)
            }
            let check = Self.arguments(of: "#available", in: trimmed).flatMap {
                AppleVersions.named(in: $0, floor: floor)
            }
            if let check, trimmed.hasPrefix("guard ") {
                scopes[scopes.count - 1] = guaranteed.raised(to: check)
                guaranteed = scopes[scopes.count - 1]
            } else if let check {
                pending = (pending ?? guaranteed).raised(to: check)
            }
            let lineGuarantee = pending.map { guaranteed.raised(to: $0) } ?? guaranteed
            if !conditions.contains(where: \.offApple) {
                for api in apis where line.contains(api.keyword) {
                    guard line.range(of: api.pattern, options: .regularExpression) != nil else { continue }
                    if !lineGuarantee.covers(api.needs) {
                        findings.append(UnguardedUse(file: file, line: index + 1, api: api, guaranteed: lineGuarantee))
                    }
                }
            }
            for character in line {
                if character == "{" {
                    scopes.append(pending.map { (scopes.last ?? floor).raised(to: $0) } ?? scopes.last ?? floor)
                    pending = nil
                } else if character == "}", scopes.count > 1 {
                    scopes.removeLast()
                }
            }
            // An attribute line, or a declaration continuing on the next line, keeps the
            // attribute pending; a line of code that ends otherwise was what it covered.
            let attributesOnly = trimmed.range(of: #"^(@\w+(\([^)]*\))?\s*)+$"#, options: .regularExpression) != nil
            if pending != nil, !trimmed.isEmpty, !attributesOnly, !trimmed.hasSuffix(","), !trimmed.hasSuffix("("),
                !trimmed.hasSuffix("->")
            {
                pending = nil
            }
        }
        return findings
    }

    private enum Directive {
        case `if`(String), elseif(String), `else`, endif
    }

    private static func directive(_ line: String) -> Directive? {
        if line.hasPrefix("#if ") { return .if(String(line.dropFirst(4))) }
        if line.hasPrefix("#elseif ") { return .elseif(String(line.dropFirst(8))) }
        if line == "#else" || line.hasPrefix("#else ") { return .else }
        if line == "#endif" || line.hasPrefix("#endif ") { return .endif }
        return nil
    }

    private static let offApple = #"os\((Linux|Android|Windows|WASI|FreeBSD|OpenBSD)\)"#
    private static let apple = #"os\((iOS|macOS|tvOS|watchOS|visionOS)\)"#

    /// `os(Linux)`, `os(Linux) || os(Android)`: conditions true on no Apple platform.
    private static func isOffApple(_ condition: String) -> Bool {
        condition.range(
            of: #"^\s*\#(offApple)(\s*\|\|\s*\#(offApple))*\s*$"#,
            options: .regularExpression) != nil
    }

    /// `canImport(Darwin)`, `os(iOS) || os(macOS)`: conditions true on Apple platforms only.
    private static func isAppleOnly(_ condition: String) -> Bool {
        condition.range(
            of: #"^\s*(canImport\(Darwin\)|\#(apple)(\s*\|\|\s*\#(apple))*)\s*$"#,
            options: .regularExpression) != nil
    }

    /// The text between the parentheses after `marker` on `line`.
    private static func arguments(of marker: String, in line: String) -> String? {
        guard let start = line.range(of: marker + "(") else { return nil }
        guard let end = line[start.upperBound...].firstIndex(of: ")") else { return String(line[start.upperBound...]) }
        return String(line[start.upperBound..<end])
    }

    /// `source` with every comment and string literal replaced by spaces (line breaks kept,
    /// so line numbers stay): single-line, multi-line and raw strings, nested block comments.
    static func blankingCommentsAndStrings(_ source: String) -> String {
        let characters = Array(source)
        var output: [Character] = []
        output.reserveCapacity(characters.count)
        var index = 0
        func blank(_ count: Int) {
            for offset in 0..<count where index + offset < characters.count {
                output.append(characters[index + offset] == "\n" ? "\n" : " ")
            }
            index += count
        }
        func starts(_ text: String, at position: Int) -> Bool {
            let marker = Array(text)
            guard position + marker.count <= characters.count else { return false }
            return Array(characters[position..<position + marker.count]) == marker
        }
        while index < characters.count {
            if starts("//", at: index) {
                var end = index
                while end < characters.count, characters[end] != "\n" { end += 1 }
                blank(end - index)
            } else if starts("/*", at: index) {
                var depth = 0, end = index
                repeat {
                    if starts("/*", at: end) {
                        depth += 1
                        end += 2
                    } else if starts("*/", at: end) {
                        depth -= 1
                        end += 2
                    } else {
                        end += 1
                    }
                } while depth > 0 && end < characters.count
                blank(end - index)
            } else if characters[index] == "\"" || (characters[index] == "#" && starts("#\"", at: index)) {
                var hashes = 0
                while index + hashes < characters.count, characters[index + hashes] == "#" { hashes += 1 }
                let multiline = starts("\"\"\"", at: index + hashes)
                let quote = multiline ? "\"\"\"" : "\""
                let closing = quote + String(repeating: "#", count: hashes)
                var end = index + hashes + quote.count
                while end < characters.count, !starts(closing, at: end) {
                    if characters[end] == "\\" && hashes == 0 { end += 1 }
                    if !multiline && characters[end] == "\n" { break }
                    end += 1
                }
                blank(min(end + closing.count, characters.count) - index)
            } else {
                output.append(characters[index])
                index += 1
            }
        }
        return String(output)
    }
}

/// The newer APIs the scan looks for, read from the toolchain's own module interfaces.
///
/// The Swift toolchain for Linux ships `.swiftinterface` files for the standard library,
/// `_Concurrency`, `Synchronization` and `Observation` that keep the Apple availability of
/// every declaration (`@available(macOS 15.0, iOS 18.0, …)`), so the table is the
/// toolchain's, not one written here: every top-level type, protocol, type alias and
/// function all of whose declarations need more than the floor; plus the members in
/// ``memberUses`` whose names identify them without type information.
enum ToolchainAvailability {
    /// Members worth finding, as (type, member, pattern of a use); their versions are looked up
    /// in the interfaces, and a member that is not found there fails the test.
    static let memberUses: [(type: String, member: String, pattern: String)] = [
        ("Task", "immediate", #"\bTask\s*(<[^>]*>)?\s*\.immediate\b"#),
        ("Task", "immediateDetached", #"\.immediateDetached\b"#),
        ("TaskGroup", "addImmediateTask", #"\.addImmediateTask\b"#),
        ("TaskGroup", "addImmediateTaskUnlessCancelled", #"\.addImmediateTaskUnlessCancelled\b"#),
        ("RangeReplaceableCollection", "removeSubranges", #"\.removeSubranges\("#),
        ("MutableCollection", "moveSubranges", #"\.moveSubranges\("#),
        ("String", "utf8Span", #"\.utf8Span\b"#),
    ]

    /// The interfaces read.
    static let modules = ["Swift", "_Concurrency", "Synchronization", "Observation"]

    /// One declaration of an interface.
    struct Declaration {
        var owner: String?
        var kind: String
        var name: String
        var needs: AppleVersions?
    }

    /// The directory of the toolchain's Linux module interfaces (`…/lib/swift/linux`).
    static func interfaceDirectory() throws -> URL {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "-print-target-info"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Info: Decodable {
            struct Paths: Decodable { var runtimeResourcePath: String }
            var paths: Paths
        }
        let info = try JSONDecoder().decode(Info.self, from: data)
        return URL(fileURLWithPath: info.paths.runtimeResourcePath).appendingPathComponent("linux")
    }

    /// Every public declaration of `module`'s interface, with the versions of its `@available`.
    static func declarations(of module: String, in directory: URL, floor: AppleVersions) throws -> [Declaration] {
        let file = directory.appendingPathComponent("\(module).swiftmodule/x86_64-unknown-linux-gnu.swiftinterface")
        let text = try String(contentsOf: file, encoding: .utf8)
        let declaration = try Regex(
            #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+"#
                + #"(?:(?:static|final|indirect|nonisolated|mutating|consuming|borrowing)\s+)*"#
                + #"(struct|class|enum|protocol|typealias|actor|func|macro|var|let|init)\s*([A-Za-z_][A-Za-z0-9_]*)?"#
        )
        let owner = try Regex(
            #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:extension|public\s+(?:final\s+)?(?:struct|class|enum|protocol|actor))"#
                + #"\s+(?:[A-Za-z_]+\.)?([A-Za-z_][A-Za-z0-9_]*)"#
        )
        var result: [Declaration] = []
        var currentOwner: String?
        var attributes: [String] = []
        for line in text.split(separator: "\n") {
            let topLevel = !line.hasPrefix(" ")
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("@available") {
                attributes.append(trimmed)
                continue
            }
            if let match = trimmed.firstMatch(of: declaration) {
                let kind = match.output[1].substring.map(String.init) ?? ""
                let name = match.output[2].substring.map(String.init) ?? kind
                let needs = attributes.compactMap { AppleVersions.named(in: $0, floor: floor) }.last
                result.append(Declaration(owner: topLevel ? nil : currentOwner, kind: kind, name: name, needs: needs))
            }
            if topLevel, let match = trimmed.firstMatch(of: owner) {
                currentOwner = match.output[1].substring.map(String.init)
            }
            if !trimmed.isEmpty && !trimmed.hasPrefix("@") { attributes = [] }
        }
        return result
    }

    /// The newer APIs of the toolchain, for code whose floor is `floor`.
    static func newerAPIs(floor: AppleVersions) throws -> [NewerAPI] {
        let directory = try interfaceDirectory()
        var apis: [NewerAPI] = []
        var members: [String: [AppleVersions?]] = [:]
        for module in modules {
            let declarations = try declarations(of: module, in: directory, floor: floor)
            var topLevel: [String: [AppleVersions?]] = [:]
            for declaration in declarations where !declaration.name.hasPrefix("_") {
                if let owner = declaration.owner {
                    members["\(owner).\(declaration.name)", default: []].append(declaration.needs)
                } else if !["var", "let", "init", "subscript"].contains(declaration.kind) {
                    topLevel[declaration.name, default: []].append(declaration.needs)
                }
            }
            for (name, versions) in topLevel {
                let needs = versions.compactMap { $0 }
                guard needs.count == versions.count, let lowest = needs.min(by: { $0.iOS < $1.iOS }),
                    !floor.covers(lowest)
                else { continue }
                apis.append(NewerAPI(name: "\(module).\(name)", needs: lowest, pattern: #"\b\#(name)\b"#))
            }
        }
        for use in memberUses {
            let versions = members["\(use.type).\(use.member)"] ?? []
            let needs = versions.compactMap { $0 }
            guard !needs.isEmpty, needs.count == versions.count, let lowest = needs.min(by: { $0.iOS < $1.iOS }),
                !floor.covers(lowest)
            else {
                throw MissingMember(name: "\(use.type).\(use.member)")
            }
            apis.append(NewerAPI(name: "\(use.type).\(use.member)", needs: lowest, pattern: use.pattern))
        }
        return apis.sorted { $0.name < $1.name }
    }

    /// A member of ``memberUses`` the interfaces do not declare (or declare at the floor).
    struct MissingMember: Error, CustomStringConvertible {
        var name: String
        var description: String { "\(name) is not a newer API in the toolchain's interfaces" }
    }
}
