import Foundation
import PJSUATestSupport
import Testing

/// Package.swift declares a different graph on Apple hosts (CPJSUAShim over a C target CPJSIP
/// over the pinned PJSIP xcframework) than here (CPJSUAShim over a pkg-config system library
/// CPJSIP). Nobody builds the Apple graph on this machine, so these tests evaluate the manifest
/// in each configuration with `swift package dump-package` and check what it declares: a typo
/// in the Apple branch fails `make test` instead of an iOS engineer's first build.
@Suite("Package manifest")
struct ManifestTests {
    /// The artifact the Apple configuration must pin: the swift-pjsip 0.2.1 release asset
    /// (PJSIP 2.17.0), as that package's own manifest names it.
    static let artifactURL =
        "https://github.com/laconicman/swift-pjsip/releases/download/0.2.1/PJSIP.xcframework-2.17.0-288de6142.zip"
    static let artifactChecksum = "36f49d1abc62010184439e8d56a45c292307ed5321bff47a983cd1390c282dda"

    @Test("the Apple configuration builds CPJSUAShim over a C target CPJSIP over the pinned xcframework")
    func appleConfiguration() throws {
        let manifest = try Manifest.evaluate(route: "xcframework")
        let binary = try #require(manifest.target("PJSIP"))
        #expect(binary["type"] as? String == "binary")
        #expect(binary["url"] as? String == Self.artifactURL)
        #expect(binary["checksum"] as? String == Self.artifactChecksum)
        #expect(binary["path"] == nil, "the pinned artifact is fetched by URL, not a local path")

        let cpjsip = try #require(manifest.target("CPJSIP"))
        #expect(cpjsip["type"] as? String == "regular")
        #expect(cpjsip["path"] as? String == "Sources/CPJSIPBinary")
        #expect(manifest.dependencies(of: "CPJSIP") == ["PJSIP"])
        #expect(manifest.settings(of: "CPJSIP", kind: "define").contains("PJ_AUTOCONF=1"))
        let frameworks = Set(manifest.settings(of: "CPJSIP", kind: "linkedFramework"))
        for needed in ["AVFoundation", "AudioToolbox", "CoreAudio", "Network", "Security"] {
            #expect(frameworks.contains(needed), "CPJSIP must link \(needed) for the static PJSIP library")
        }
        #expect(manifest.settings(of: "CPJSIP", kind: "linkedLibrary").contains("c++"))
        #expect(!manifest.targets.contains { $0["type"] as? String == "system" }, "no pkg-config module on Apple")
        // The shim names the xcframework too, not only through CPJSIP, for its include paths.
        #expect(manifest.dependencies(of: "CPJSUAShim") == ["CPJSIP", "PJSIP"])

        // The C target's public header lists pjproject's headers, the same as the system
        // library's, and nothing of the shim's.
        let header = try Self.source("Sources/CPJSIPBinary/include/CPJSIP.h")
        #expect(Self.includes(in: header) == Self.includes(in: try Self.source("Sources/CPJSIP/CPJSIP.h")))
        #expect(!header.contains("cpj_") && !header.contains("shim"))

        try Self.expectCommonGraph(manifest)
        let platforms = manifest.platforms
        #expect(platforms["ios"] == "17.0")
        #expect(platforms["macos"] == "14.0")
    }

    @Test("the Linux configuration builds CPJSUAShim over the pkg-config module and downloads nothing")
    func linuxConfiguration() throws {
        let manifest = try Manifest.evaluate(route: nil)
        let cpjsip = try #require(manifest.target("CPJSIP"))
        #expect(cpjsip["type"] as? String == "system")
        #expect(cpjsip["pkgConfig"] as? String == "libpjproject")
        #expect(cpjsip["path"] as? String == "Sources/CPJSIP")
        #expect(manifest.target("PJSIP") == nil)
        #expect(!manifest.targets.contains { $0["url"] != nil }, "nothing to download on Linux")
        #expect(manifest.dependencies(of: "CPJSUAShim") == ["CPJSIP"])
        // The module is pjproject's public headers, through a header of its own.
        #expect(try Self.source("Sources/CPJSIP/module.modulemap").contains("header \"CPJSIP.h\""))
        #expect(Self.includes(in: try Self.source("Sources/CPJSIP/CPJSIP.h")).contains("<pjsua-lib/pjsua.h>"))
        try Self.expectCommonGraph(manifest)
    }

    @Test("an xcframework of the team's own replaces the pinned one")
    func localXCFramework() throws {
        // By path, relative to the package root, for command-line builds.
        let named = try Manifest.evaluate(route: "Vendor/PJSIP.xcframework")
        let binary = try #require(named.target("PJSIP"))
        #expect(binary["path"] as? String == "Vendor/PJSIP.xcframework")
        #expect(binary["url"] == nil)
        #expect(named.dependencies(of: "CPJSIP") == ["PJSIP"])
        #expect(named.dependencies(of: "CPJSUAShim") == ["CPJSIP", "PJSIP"])

        // By presence at the root of a local checkout, which is how Xcode users override it.
        let checkout = try TemporaryFolder("swiftpjsua-manifest")
        defer { checkout.remove() }
        try FileManager.default.copyItem(
            at: Repository.root.appendingPathComponent("Package.swift"), to: checkout.file("Package.swift"))
        try FileManager.default.createDirectory(
            at: checkout.file("PJSIP.xcframework"), withIntermediateDirectories: true)
        let found = try Manifest.evaluate(route: nil, packageRoot: checkout.url)
        #expect(found.target("PJSIP")?["path"] as? String == "PJSIP.xcframework")
        #expect(found.target("CPJSIP")?["type"] as? String == "regular")
    }

    @Test("the README's installation section names the artifact the manifest pins")
    func readmeNamesTheArtifact() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(Self.artifactChecksum))
        #expect(readme.contains("swift-pjsip/releases/download/0.2.1/"))
    }

    @Test("the shim's headers hold declarations: each under 300 lines, no inline code, no pjsua internals")
    func shimHeaders() throws {
        let folder = Repository.root.appendingPathComponent("Sources/CPJSUAShim/include")
        let names = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .map(\.lastPathComponent).sorted()
        #expect(names.contains("CPJSUAShim.h"), "the umbrella header SwiftPM builds the module from")
        let umbrella = try Self.source("Sources/CPJSUAShim/include/CPJSUAShim.h")
        // CPJSIP's header on either route, so that clang imports it as that module.
        #expect(umbrella.contains("#include <CPJSIP.h>"))
        #expect(umbrella.contains("#include \"../../CPJSIP/CPJSIP.h\""))
        for name in names {
            #expect(name.hasSuffix(".h"), "only headers in include/: \(name)")
            let header = try Self.source("Sources/CPJSUAShim/include/\(name)")
            #expect(header.split(separator: "\n", omittingEmptySubsequences: false).count - 1 < 300, "\(name)")
            let code = header.replacing(#/\/\*[\s\S]*?\*\//#, with: "")
            #expect(!code.contains("inline") && !code.contains(") {"), "\(name): declarations and types only")
            #expect(!code.contains("pjsua_internal") && !code.contains("pjsua_var"), "\(name)")
            // A capability's header is reached through the umbrella, so one import sees it all.
            if name != "CPJSUAShim.h" { #expect(umbrella.contains("#include \"\(name)\""), "\(name)") }
        }
    }

    /// What both configurations declare alike: products, the engine's one C dependency, and
    /// the C target with the define pjproject's headers need (SwiftPM drops pkg-config's -D).
    static func expectCommonGraph(_ manifest: Manifest) throws {
        #expect(manifest.products["SwiftPJSUA"] == ["SwiftPJSUA"])
        #expect(manifest.products["SwiftPJSUAKit"] == ["SwiftPJSUAKit"])
        #expect(manifest.products["swiftpjsua"] == ["swiftpjsua"])
        #expect(manifest.dependencies(of: "SwiftPJSUA") == ["CPJSUAShim"])
        #expect(manifest.dependencies(of: "SwiftPJSUAKit") == ["SwiftPJSUA"])
        let shim = try #require(manifest.target("CPJSUAShim"))
        #expect(shim["type"] as? String == "regular")
        #expect(shim["path"] as? String == nil, "Sources/CPJSUAShim, the default path")
        #expect(manifest.settings(of: "CPJSUAShim", kind: "define").contains("PJ_AUTOCONF=1"))
    }

    /// A file of the repository, as text.
    static func source(_ path: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The `#include` lines of a C header, in order.
    static func includes(in header: String) -> [String] {
        header.split(separator: "\n").compactMap { line in
            line.hasPrefix("#include ") ? String(line.dropFirst("#include ".count)) : nil
        }
    }
}

/// The JSON `swift package dump-package` prints, with the few look-ups the tests need.
struct Manifest {
    let json: [String: Any]

    /// Evaluates Package.swift in `packageRoot` (the repository by default) with
    /// `SWIFT_PJSUA_PJSIP` set to `route`, or unset when `nil`. A scratch folder of its own
    /// keeps it clear of the build that runs these tests.
    static func evaluate(route: String?, packageRoot: URL = Repository.root) throws -> Manifest {
        let scratch = try TemporaryFolder("swiftpjsua-dump")
        defer { scratch.remove() }
        var arguments = route.map { ["SWIFT_PJSUA_PJSIP=\($0)"] } ?? ["-u", "SWIFT_PJSUA_PJSIP"]
        arguments += [
            "swift", "package", "--package-path", packageRoot.path, "--scratch-path", scratch.url.path,
            "dump-package",
        ]
        let result = try #require(commandOutput("/usr/bin/env", arguments), "swift could not be started")
        try #require(result.status == 0, "dump-package failed: \(result.output)")
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
        return Manifest(json: try #require(object as? [String: Any]))
    }

    var targets: [[String: Any]] { json["targets"] as? [[String: Any]] ?? [] }

    func target(_ name: String) -> [String: Any]? { targets.first { $0["name"] as? String == name } }

    /// The names of the targets `name` depends on (by name or as a target).
    func dependencies(of name: String) -> [String] {
        let entries = target(name)?["dependencies"] as? [[String: Any]] ?? []
        return entries.compactMap { entry in
            ((entry["byName"] ?? entry["target"]) as? [Any])?.first as? String
        }
    }

    /// The values of one kind of build setting (`define`, `linkedFramework`, ...) of a target.
    func settings(of name: String, kind: String) -> [String] {
        let settings = target(name)?["settings"] as? [[String: Any]] ?? []
        return settings.compactMap { (($0["kind"] as? [String: Any])?[kind] as? [String: Any])?["_0"] as? String }
    }

    /// Product name to its target names.
    var products: [String: [String]] {
        let list = json["products"] as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { product in
                (product["name"] as? String).map { ($0, product["targets"] as? [String] ?? []) }
            })
    }

    /// Platform name to its minimum version.
    var platforms: [String: String] {
        let list = json["platforms"] as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { entry in
                guard let name = entry["platformName"] as? String, let version = entry["version"] as? String
                else { return nil }
                return (name, version)
            })
    }
}
