import Foundation
import PJSUATestSupport
import Testing

/// No API newer than the manifest's platform floor outside an availability check: the
/// compiler checks that only when it builds for Apple platforms, which no machine of this
/// project does, so these tests check it on Linux (``AvailabilityScanner``).
@Suite("Availability at the platform floor")
struct AvailabilityTests {
    /// The folders scanned: every library and the command-line tool.
    static let scannedFolders = ["Sources/SwiftPJSUA", "Sources/SwiftPJSUAKit", "Sources/swiftpjsua"]

    /// The Apple-only frameworks the sources use, each symbol with the iOS and macOS
    /// versions that introduced it (Apple's documentation; `macOS: nil` where the symbol
    /// is iOS-only, which the sources guard with `#if os(iOS)` or `canImport`).
    static let appleSymbols: [String: (iOS: Int, macOS: Int?)] = [
        // CallKit: iOS 10; CXProviderConfiguration's init() (the only one used) iOS 14.
        "CXAction": (10, nil), "CXAnswerCallAction": (10, nil), "CXCallAction": (10, nil),
        "CXCallEndedReason": (10, nil), "CXCallUpdate": (10, nil), "CXEndCallAction": (10, nil),
        "CXErrorCodeIncomingCallError": (10, nil), "CXHandle": (10, nil), "CXPlayDTMFCallAction": (10, nil),
        "CXProvider": (10, nil), "CXProviderConfiguration": (14, nil), "CXProviderDelegate": (10, nil),
        "CXSetGroupCallAction": (10, nil), "CXSetHeldCallAction": (10, nil), "CXSetMutedCallAction": (10, nil),
        "CXStartCallAction": (10, nil),
        // PushKit: iOS 8 (VoIP pushes).
        "PKPushCredentials": (8, nil), "PKPushPayload": (8, nil), "PKPushRegistry": (8, nil),
        "PKPushRegistryDelegate": (8, nil), "PKPushType": (8, nil),
        // AVFAudio's audio session: iOS 3.
        "AVAudioSession": (3, nil),
        // Network: iOS 12, macOS 10.14.
        "NWPath": (12, 10), "NWPathMonitor": (12, 10),
        // os: Logger iOS 14, macOS 11; OSLogType iOS 10, macOS 10.12.
        "Logger": (14, 11), "OSLogType": (10, 10),
    ]

    /// The manifest's floor, read from `platforms:` in Package.swift.
    static func floor() throws -> AppleVersions {
        let manifest = try String(contentsOf: Repository.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        func version(_ platform: String) throws -> Int {
            let match = try #require(manifest.firstMatch(of: try Regex(#"\.\#(platform)\(\.v(\d+)\)"#)))
            return try #require(Int(match.output[1].substring ?? ""))
        }
        return AppleVersions(iOS: try version("iOS"), macOS: try version("macOS"))
    }

    /// Every Swift file of ``scannedFolders``, as (path relative to the repository, text).
    static func sources() throws -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for folder in scannedFolders {
            let root = Repository.root.appendingPathComponent(folder)
            let enumerator = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            for case let url as URL in enumerator where url.pathExtension == "swift" {
                let relative = folder + url.path.dropFirst(root.path.count)
                files.append((relative, try String(contentsOf: url, encoding: .utf8)))
            }
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The scanner with the toolchain's newer APIs and the Apple symbols newer than the floor.
    static func scanner() throws -> AvailabilityScanner {
        let floor = try floor()
        var apis = try ToolchainAvailability.newerAPIs(floor: floor)
        for (symbol, introduced) in appleSymbols {
            let needs = AppleVersions(iOS: introduced.iOS, macOS: introduced.macOS ?? floor.macOS)
            if !floor.covers(needs) { apis.append(NewerAPI(name: symbol, needs: needs, pattern: #"\b\#(symbol)\b"#)) }
        }
        var scanner = AvailabilityScanner(floor: floor, apis: apis)
        // The package's own declarations above the floor count as newer APIs too.
        for file in try sources() { scanner.apis += scanner.declaredNewerAPIs(in: file.text) }
        return scanner
    }

    @Test("The floor is iOS 17 and macOS 14, the first with custom actor executors")
    func floorIsTheExecutorsOne() throws {
        // SerialExecutor-backed actors (`unownedExecutor`) need iOS 17 / macOS 14: the
        // engine's design sets the floor, and nothing above it is used unguarded.
        #expect(try Self.floor() == AppleVersions(iOS: 17, macOS: 14))
    }

    @Test("The toolchain's interfaces give Atomic and Mutex at iOS 18 / macOS 15, and the member table resolves")
    func tableComesFromTheToolchain() throws {
        let apis = try ToolchainAvailability.newerAPIs(floor: try Self.floor())
        let byName = Dictionary(apis.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["Synchronization.Atomic"]?.needs == AppleVersions(iOS: 18, macOS: 15))
        #expect(byName["Synchronization.Mutex"]?.needs == AppleVersions(iOS: 18, macOS: 15))
        #expect(byName["_Concurrency.withTaskExecutorPreference"]?.needs == AppleVersions(iOS: 18, macOS: 15))
        #expect(byName["Task.immediate"]?.needs == AppleVersions(iOS: 26, macOS: 26))
        // Types the floor has are not in the table.
        #expect(byName["Swift.Duration"] == nil && byName["_Concurrency.AsyncStream"] == nil)
        #expect(apis.count > 15, "\(apis)")
    }

    @Test("No library or CLI source uses an API above the floor outside an availability check")
    func sourcesStayAtTheFloor() throws {
        let scanner = try Self.scanner()
        var findings: [UnguardedUse] = []
        let files = try Self.sources()
        for file in files { findings += scanner.scan(file.text, file: file.path) }
        #expect(findings.isEmpty, "\(findings.map(\.description).joined(separator: "\n"))")
        #expect(files.count > 100, "scanned \(files.count) files")
    }

    @Test("Every Apple-framework symbol the sources use has its introduced version in the table")
    func appleSymbolsAreKnown() throws {
        let symbol = try Regex(#"\b(CX|PK|NW)[A-Z][A-Za-z]+\b|\bAVAudio[A-Z][A-Za-z]+\b|\bOSLog[A-Za-z]*\b|\bLogger\b"#)
        var unknown: Set<String> = []
        for file in try Self.sources() {
            let code = AvailabilityScanner.blankingCommentsAndStrings(file.text)
            for match in code.matches(of: symbol) where Self.appleSymbols[String(code[match.range])] == nil {
                unknown.insert("\(code[match.range]) in \(file.path)")
            }
        }
        #expect(unknown.isEmpty, "add their versions to appleSymbols: \(unknown.sorted())")
    }

    @Test("A planted Atomic in library code is found; the same under a check, in #if os(Linux) or in a comment is not")
    func plantedUsesAreFound() throws {
        let scanner = try Self.scanner()
        let planted = """
            import Synchronization

            let counter = Atomic<Int>(0)
            final class Box: Sendable {
                let flag = Mutex<Bool>(false)
                func run() {
                    if #available(iOS 18, macOS 15, *) {
                        let inner = Atomic<Int>(1)
                        _ = inner
                    } else {
                        let fallback = Mutex<Int>(2)
                    }
                }
            }
            """
        let found = scanner.scan(planted, file: "Planted.swift")
        #expect(found.map(\.line) == [3, 5, 11], "\(found)")
        #expect(found.map(\.api.name) == ["Synchronization.Atomic", "Synchronization.Mutex", "Synchronization.Mutex"])

        let guarded = """
            @available(iOS 18.0, macOS 15.0, *)
            struct Counter {
                let value = Atomic<Int>(0)
            }
            @available(iOS 18, macOS 15, *) let shared = Atomic<Int>(0)
            func later() {
                guard #available(iOS 18, macOS 15, *) else { return }
                let value = Mutex<Int>(0)
            }
            #if os(Linux)
                let linuxOnly = Atomic<Int>(0)
            #else
                let elsewhere = 0
            #endif
            // Atomic<Int> in a comment, and "Mutex<Int>" in a string
            let text = "Atomic<Int>"
            let multi = \"""
                Mutex
                \"""
            """
        #expect(scanner.scan(guarded, file: "Guarded.swift").isEmpty)

        // Guarded for iOS only is not enough for an API macOS lacks too.
        let halfGuarded = """
            @available(iOS 18, *)
            struct Counter {
                let value = Atomic<Int>(0)
            }
            #if canImport(Darwin)
            #else
                let offApple = Atomic<Int>(0)
            #endif
            """
        #expect(scanner.scan(halfGuarded, file: "Half.swift").map(\.line) == [3])
    }

    @Test("Each #if branch starts from the braces open at the #if, so twin openings count once")
    func branchesOfAnIfShareTheirEntryScope() throws {
        let scanner = try Self.scanner()
        let branches = """
            @available(iOS 18, macOS 15, *)
            struct Newer {
            #if os(iOS)
                func run() {
            #else
                func run() {
            #endif
                    let inner = Atomic<Int>(0)
                }
                let member = Mutex<Int>(0)
            }
            let outside = Atomic<Int>(1)
            """
        // Counted naively, the second `{` leaves `member` one level too deep and `outside`
        // inside `Newer`: neither would be found.
        #expect(scanner.scan(branches, file: "Branches.swift").map(\.line) == [12])
    }

    @Test("Interpolated code is scanned; quotes and braces inside interpolations and regexes do not derail")
    func interpolationsAndRegexLiterals() throws {
        let scanner = try Self.scanner()
        let source = """
            let label = "count: \\(Atomic<Int>(0).load(ordering: .relaxed))"
            let nested = "\\(name("}")) and \\(other(")"))"
            let raw = #"\\#(Mutex<Int>(0)) and \\(Atomic) stays text"#
            let pattern = /[{"]+/
            let extended = #/
                { " Atomic
                /#
            let ratio = total / 2
            if #available(iOS 18, macOS 15, *) {
                let fine = Atomic<Int>(0)
            }
            let after = Mutex<Int>(1)
            """
        let found = scanner.scan(source, file: "Literals.swift")
        #expect(found.map(\.line) == [1, 3, 12], "\(found)")
        #expect(found.map(\.api.name) == ["Synchronization.Atomic", "Synchronization.Mutex", "Synchronization.Mutex"])
        let blanked = AvailabilityScanner.blankingCommentsAndStrings(source)
        #expect(blanked.split(separator: "\n", omittingEmptySubsequences: false).count == 12)
        #expect(!blanked.contains("stays text") && !blanked.contains("\"") && blanked.contains("total / 2"))
    }

    @Test("A type the package declares above the floor is a newer API where the floor is all that is guaranteed")
    func declaredNewerTypesAreFollowed() throws {
        var scanner = try Self.scanner()
        let declaring = """
            @available(iOS 18, macOS 15, *)
            final class RingCounter {
                let count = Atomic<Int>(0)
            }
            #if os(Linux)
                @available(iOS 18, macOS 15, *) struct LinuxOnly {}
            #endif
            struct Plain {}
            """
        let declared = scanner.declaredNewerAPIs(in: declaring)
        #expect(declared.map(\.name) == ["RingCounter"])
        #expect(declared.first?.needs == AppleVersions(iOS: 18, macOS: 15))
        scanner.apis += declared
        let using = """
            let counter = RingCounter()
            func later() {
                if #available(iOS 18, macOS 15, *) { _ = RingCounter() }
            }
            let plain = Plain()
            """
        #expect(scanner.scan(using, file: "Using.swift").map(\.line) == [1])
    }
}
