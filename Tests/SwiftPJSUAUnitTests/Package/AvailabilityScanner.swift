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
/// comments, string literals (but not the code of their interpolations) and regex literals
/// are blanked, then braces are followed line by line. An `@available` with versions covers
/// the next `{…}` it opens (or its own line when the declaration has no body);
/// `if #available(…) {` covers that block and not its `else`; `guard #available(…)` covers
/// the rest of the enclosing block. Each branch of an `#if` starts from the scopes open at
/// the `#if`, so a brace opened in one branch and its twin in the other count once. A type
/// declared under an `@available` above the floor is itself a newer API
/// (``declaredNewerAPIs(in:)``).
struct AvailabilityScanner {
    /// The manifest's platform floor.
    var floor: AppleVersions
    /// The APIs to look for.
    var apis: [NewerAPI]

    /// One line of code as the walk sees it.
    private struct WalkedLine {
        /// The 1-based line number.
        var number: Int
        /// The line with comments and literals blanked.
        var code: Substring
        /// What the code on this line may rely on.
        var guaranteed: AppleVersions
        /// Whether the line is compiled only off Apple platforms.
        var offApple: Bool
    }

    /// The unguarded uses in `source` (named `file` in the results).
    func scan(_ source: String, file: String) -> [UnguardedUse] {
        var findings: [UnguardedUse] = []
        walk(source) { line in
            guard !line.offApple else { return }
            for api in apis where line.code.contains(api.keyword) {
                guard line.code.range(of: api.pattern, options: .regularExpression) != nil else { continue }
                if !line.guaranteed.covers(api.needs) {
                    findings.append(UnguardedUse(file: file, line: line.number, api: api, guaranteed: line.guaranteed))
                }
            }
        }
        return findings
    }

    /// The types, protocols and type aliases `source` declares under an `@available` above
    /// the floor: using one where the floor is all that is guaranteed is an unguarded use too.
    func declaredNewerAPIs(in source: String) -> [NewerAPI] {
        var found: [NewerAPI] = []
        let declaration = #"\b(struct|class|enum|actor|protocol|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)"#
        walk(source) { line in
            guard !line.offApple, !floor.covers(line.guaranteed),
                let range = line.code.range(of: declaration, options: .regularExpression)
            else { return }
            let words = line.code[range].split(whereSeparator: \.isWhitespace)
            guard let name = words.last.map(String.init) else { return }
            found.append(NewerAPI(name: name, needs: line.guaranteed, pattern: #"\b\#(name)\b"#))
        }
        return found
    }

    /// Follows `source`'s scopes and conditions, calling `visit` for each line of code.
    private func walk(_ source: String, _ visit: (WalkedLine) -> Void) {
        let code = Self.blankingCommentsAndStrings(source)
        // One entry per open brace: what its block guarantees.
        var scopes: [AppleVersions] = [floor]
        // One entry per open `#if`: whether its current branch is compiled only off Apple
        // platforms, whether its condition was Apple-only (so that `#else` is not), the
        // scopes open at the `#if` (where each branch starts) and those the first branch
        // left open (what follows the `#endif`).
        var conditions: [(offApple: Bool, appleOnly: Bool, entry: [AppleVersions], exit: [AppleVersions]?)] = []
        var pending: AppleVersions?
        for (index, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let directive = Self.directive(trimmed) {
                switch directive {
                case .if(let condition):
                    conditions.append((Self.isOffApple(condition), Self.isAppleOnly(condition), scopes, nil))
                case .elseif(let condition):
                    if let last = conditions.last {
                        conditions[conditions.count - 1] = (
                            Self.isOffApple(condition), Self.isAppleOnly(condition), last.entry, last.exit ?? scopes
                        )
                        scopes = last.entry
                    }
                case .else:
                    if let last = conditions.last {
                        conditions[conditions.count - 1] = (last.appleOnly, false, last.entry, last.exit ?? scopes)
                        scopes = last.entry
                    }
                case .endif:
                    if let last = conditions.popLast(), let exit = last.exit { scopes = exit }
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
            visit(
                WalkedLine(
                    number: index + 1, code: line, guaranteed: lineGuarantee,
                    offApple: conditions.contains(where: \.offApple)))
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

    /// `source` with every comment, string literal and regex literal replaced by spaces
    /// (line breaks kept, so line numbers stay): single-line, multi-line and raw strings,
    /// nested block comments, `/…/` and `#/…/#` regexes. The code inside a string's
    /// interpolation (`\(…)`, `\#(…)` in a raw string) is kept, with its own literals blanked.
    static func blankingCommentsAndStrings(_ source: String) -> String {
        var blanker = Blanker(characters: Array(source))
        blanker.code(interpolation: false)
        return String(blanker.output)
    }

    /// The lexer behind ``blankingCommentsAndStrings(_:)``.
    private struct Blanker {
        let characters: [Character]
        var index = 0
        var output: [Character] = []

        init(characters: [Character]) {
            self.characters = characters
            output.reserveCapacity(characters.count)
        }

        private func starts(_ text: String, at position: Int) -> Bool {
            let marker = Array(text)
            guard position + marker.count <= characters.count else { return false }
            return Array(characters[position..<position + marker.count]) == marker
        }

        private func hashes(at position: Int) -> Int {
            var count = 0
            while position + count < characters.count, characters[position + count] == "#" { count += 1 }
            return count
        }

        private mutating func keep() {
            output.append(characters[index])
            index += 1
        }

        private mutating func blank(_ count: Int) {
            for offset in 0..<count where index + offset < characters.count {
                output.append(characters[index + offset] == "\n" ? "\n" : " ")
            }
            index = min(index + count, characters.count)
        }

        /// The last character of code kept before `index` that is not white space.
        private var previousCode: Character? { output.last { !$0.isWhitespace } }

        /// The word of code that ends just before `index` (`return`, `case`).
        private var previousWord: String {
            String(output.reversed().drop { $0 == " " }.prefix { $0.isLetter }.reversed())
        }

        /// Code, up to the `)` that closes an interpolation when `interpolation` (left unread),
        /// or to the end.
        mutating func code(interpolation: Bool) {
            var depth = 0
            while index < characters.count {
                let character = characters[index]
                if starts("//", at: index) {
                    var end = index
                    while end < characters.count, characters[end] != "\n" { end += 1 }
                    blank(end - index)
                } else if starts("/*", at: index) {
                    blockComment()
                } else if character == "\"" || (character == "#" && starts("\"", at: index + hashes(at: index))) {
                    string()
                } else if character == "#" && starts("/", at: index + hashes(at: index)) {
                    extendedRegex()
                } else if character == "/" && regexMayStart() {
                    bareRegex()
                } else if interpolation && character == "(" {
                    depth += 1
                    keep()
                } else if interpolation && character == ")" {
                    if depth == 0 { return }
                    depth -= 1
                    keep()
                } else {
                    keep()
                }
            }
        }

        private mutating func blockComment() {
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
        }

        /// A string literal from its opening delimiter: blanked but for its interpolations.
        private mutating func string() {
            let hashes = hashes(at: index)
            let multiline = starts("\"\"\"", at: index + hashes)
            let quote = multiline ? "\"\"\"" : "\""
            let closing = quote + String(repeating: "#", count: hashes)
            let escape = "\\" + String(repeating: "#", count: hashes)
            blank(hashes + quote.count)
            while index < characters.count {
                if starts(closing, at: index) {
                    blank(closing.count)
                    return
                }
                if starts(escape + "(", at: index) {
                    blank(escape.count + 1)
                    code(interpolation: true)
                    if index < characters.count { blank(1) }
                } else if starts(escape, at: index) {
                    blank(escape.count + 1)
                } else if !multiline && characters[index] == "\n" {
                    return
                } else {
                    blank(1)
                }
            }
        }

        /// Whether a `/` at `index` opens a regex literal rather than dividing: it follows
        /// an operator, an opening bracket, a comma or a keyword, is not followed by white
        /// space, and a closing `/` comes later on the line.
        private func regexMayStart() -> Bool {
            guard index + 1 < characters.count, !characters[index + 1].isWhitespace,
                !["/", "*", "="].contains(characters[index + 1])
            else { return false }
            let openers: Set<Character> = ["(", "[", "{", ",", "=", ":", ";", "!", "&", "|", "?", "<", ">", "+", "-"]
            let follows = previousCode.map { openers.contains($0) } ?? true
            guard follows || ["return", "case", "in", "try", "await"].contains(previousWord) else { return false }
            return closingSlash() != nil
        }

        /// Where the `/` closing a bare regex at `index` is, on the same line.
        private func closingSlash() -> Int? {
            var position = index + 1, inClass = false
            while position < characters.count, characters[position] != "\n" {
                switch characters[position] {
                case "\\": position += 1
                case "[": inClass = true
                case "]": inClass = false
                case "/" where !inClass: return position
                default: break
                }
                position += 1
            }
            return nil
        }

        private mutating func bareRegex() {
            guard let end = closingSlash() else { return keep() }
            blank(end + 1 - index)
        }

        /// `#/…/#`, possibly over several lines.
        private mutating func extendedRegex() {
            let hashes = hashes(at: index)
            let closing = "/" + String(repeating: "#", count: hashes)
            var end = index + hashes + 1
            while end < characters.count, !starts(closing, at: end) {
                if characters[end] == "\\" { end += 1 }
                end += 1
            }
            blank(min(end + closing.count, characters.count) - index)
        }
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
