// swift-tools-version:6.0
//
// swift-pjsua: an async Swift wrapper over PJSIP's high-level C API (pjsua).
//
// The engine imports one C module, `CPJSUAShim` (Sources/CPJSUAShim: the C it needs around
// pjsua), a C target over `CPJSIP` (pjproject's public headers). Where `CPJSIP` finds
// pjproject is chosen here, by the host that evaluates this manifest, with no environment
// variable needed:
//
// - Linux (and any non-Apple host): a system-library module over `pkg-config libpjproject`
//   (pjproject 2.12 to 2.17). `scripts/provision.sh` builds and installs pjproject 2.17 when
//   none is found. Resolves and builds offline: nothing is downloaded.
// - Apple hosts (Xcode, `swift build` on a Mac): a thin C target over a prebuilt PJSIP
//   xcframework, pinned below by URL and SHA-256 checksum (PJSIP 2.17.0, iOS device and
//   simulator slices, arm64). SwiftPM downloads it once and verifies the checksum.
//
// Overrides (see README, "Installation"):
// - a `PJSIP.xcframework` folder at the package root (a local checkout of this package,
//   added to Xcode with "Add Local...") is used instead of the pinned one: this is how a team
//   ships its own build, for example one with a macOS slice;
// - `SWIFT_PJSUA_PJSIP` (command-line builds only: Xcode does not pass shell variables to
//   package resolution) forces one route: `pkg-config` (macOS with Homebrew's pjproject),
//   `xcframework` (the pinned artifact, also on Linux: the manifest test evaluates the Apple
//   configuration that way), or the path of an xcframework relative to the package root.
import Foundation
import PackageDescription

/// The prebuilt PJSIP the Apple configuration links: the `swift-pjsip` 0.2.1 release asset,
/// PJSIP 2.17.0 built for iOS 15+ (arm64 device and simulator), TLS through Apple's
/// Network/Security frameworks, no OpenSSL, no opus/speex/GSM. Bump URL and checksum together.
let pinnedPJSIPURL =
    "https://github.com/laconicman/swift-pjsip/releases/download/0.2.1/PJSIP.xcframework-2.17.0-288de6142.zip"
let pinnedPJSIPChecksum = "36f49d1abc62010184439e8d56a45c292307ed5321bff47a983cd1390c282dda"

/// Where pjproject comes from, as chosen by the host, the package folder and the override.
enum PJSIPRoute {
    case pkgConfig
    case pinnedXCFramework
    case localXCFramework(path: String)
}

func chosenRoute() -> PJSIPRoute {
    let override = ProcessInfo.processInfo.environment["SWIFT_PJSUA_PJSIP"] ?? ""
    switch override {
    case "pkg-config": return .pkgConfig
    case "xcframework": return .pinnedXCFramework
    case "": break
    default: return .localXCFramework(path: override)
    }
    let local = "PJSIP.xcframework"
    if FileManager.default.fileExists(atPath: Context.packageDirectory + "/" + local) {
        return .localXCFramework(path: local)
    }
    #if os(macOS)
        return .pinnedXCFramework
    #else
        return .pkgConfig
    #endif
}

/// The system frameworks the xcframework's static library refers to. A binary target cannot
/// carry linker settings, so the C target over it does, and every app linking SwiftPJSUA
/// gets them. libc++ because the archive also holds pjsua2's C++ objects.
let appleLinkage: [LinkerSetting] =
    [
        "AVFoundation", "AudioToolbox", "CoreAudio", "CoreMedia", "CoreVideo", "VideoToolbox",
        "MetalKit", "Network", "Security",
    ].map { .linkedFramework($0, .when(platforms: [.iOS, .macOS])) }
    + [.linkedLibrary("c++", .when(platforms: [.iOS, .macOS]))]

/// `CPJSIP` over an xcframework: Sources/CPJSIPBinary lists the same pjproject headers as
/// the system library's Sources/CPJSIP/CPJSIP.h.
func binaryCPJSIP(_ binary: Target) -> [Target] {
    [
        binary,
        .target(
            name: "CPJSIP",
            dependencies: ["PJSIP"],
            path: "Sources/CPJSIPBinary",
            cSettings: [.define("PJ_AUTOCONF", to: "1")],
            linkerSettings: appleLinkage
        ),
    ]
}

let cTargets: [Target]
/// What `CPJSUAShim` builds on. SwiftPM hands a C target the include paths of every target
/// below it, binary ones too; naming the xcframework as well does not rest on that.
let shimDependencies: [Target.Dependency]
switch chosenRoute() {
case .pkgConfig:
    cTargets = [
        .systemLibrary(
            name: "CPJSIP",
            path: "Sources/CPJSIP",
            pkgConfig: "libpjproject",
            // Debian and Ubuntu package no pjproject: scripts/provision.sh builds one there.
            providers: [.brew(["pjproject"]), .yum(["pjproject-devel"])]
        )
    ]
    shimDependencies = ["CPJSIP"]
case .pinnedXCFramework:
    cTargets = binaryCPJSIP(.binaryTarget(name: "PJSIP", url: pinnedPJSIPURL, checksum: pinnedPJSIPChecksum))
    shimDependencies = ["CPJSIP", "PJSIP"]
case .localXCFramework(let path):
    cTargets = binaryCPJSIP(.binaryTarget(name: "PJSIP", path: path))
    shimDependencies = ["CPJSIP", "PJSIP"]
}

let package = Package(
    name: "swift-pjsua",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SwiftPJSUA", targets: ["SwiftPJSUA"]),
        .library(name: "SwiftPJSUAKit", targets: ["SwiftPJSUAKit"]),
        // Doubles for testing app code without pjsua: a fake engine, a recording provider, a manual clock.
        .library(name: "SwiftPJSUAKitTesting", targets: ["SwiftPJSUAKitTesting"]),
        .executable(name: "swiftpjsua", targets: ["swiftpjsua"]),
    ],
    targets: cTargets + [
        // The C around pjsua, by capability (pjsip modules, frame rings, version differences):
        // one header of declarations, .c files that SwiftPM compiles. pjproject's pkg-config
        // -D flags do not reach a C target (SwiftPM filters them), so the define is here.
        .target(
            name: "CPJSUAShim", dependencies: shimDependencies,
            cSettings: [.define("PJ_AUTOCONF", to: "1")]),
        .target(name: "SwiftPJSUA", dependencies: ["CPJSUAShim"]),
        .target(name: "SwiftPJSUAKit", dependencies: ["SwiftPJSUA"]),
        // The doubles an app's tests link: no XCTest, no Testing, no peers, no pjsua started.
        .target(name: "SwiftPJSUAKitTesting", dependencies: ["SwiftPJSUA", "SwiftPJSUAKit"]),
        // Catches SIGINT/SIGTERM for the tool from before main (see its header).
        .target(name: "CSignalGuard", path: "Sources/CSignalGuard"),
        .executableTarget(name: "swiftpjsua", dependencies: ["SwiftPJSUA", "CSignalGuard"]),
        // A voice menu (IVR) on the engine: prompt, DTMF, echo, record, transfer.
        .executableTarget(name: "swiftpjsua-ivr", dependencies: ["SwiftPJSUA"], path: "Examples/IVR"),
        // Launchers for real SIP peers (sipp, kamailio, a second swiftpjsua
        // process). Not a product: used by the tests only.
        .target(name: "PJSUATestSupport", dependencies: ["SwiftPJSUA"], path: "Tests/PJSUATestSupport"),
        // The shipped doubles re-exported, and a CallEngine that records and forwards to
        // the real engine (for the Kit's tests against real peers).
        .target(
            name: "KitTestSupport",
            dependencies: ["SwiftPJSUAKit", "SwiftPJSUA", "SwiftPJSUAKitTesting", "PJSUATestSupport"],
            path: "Tests/KitTestSupport"),
        // A program written against the earlier iOS-only swift-pjsua's API, in a module of
        // its own as an app would be; SwiftPJSUATests runs it (Compatibility/EarlierAPI+ProgramTests.swift).
        .target(
            name: "EarlierAPICompat", dependencies: ["SwiftPJSUA", "SwiftPJSUAKit"], path: "Tests/EarlierAPICompat"),
        // Every test that starts pjsua or a real peer, in folders by capability: the engine's
        // (and the Kit's and the CLI's) run in the serialized EngineTests suite, because pjsua
        // is one per process and all test targets run in one process.
        .testTarget(
            name: "SwiftPJSUATests",
            dependencies: [
                "SwiftPJSUA", "PJSUATestSupport", "SwiftPJSUAKit", "KitTestSupport", "SwiftPJSUAKitTesting",
                "EarlierAPICompat",
            ]),
        // The fast tests: values, parsers, mappings, the Kit against fakes, the manifest.
        // Nothing here starts pjsua or a peer, so these run in parallel in seconds
        // (`swift test --filter SwiftPJSUAUnitTests`).
        .testTarget(
            name: "SwiftPJSUAUnitTests",
            dependencies: [
                "SwiftPJSUA", "SwiftPJSUAKit", "PJSUATestSupport", "KitTestSupport", "SwiftPJSUAKitTesting",
                "EarlierAPICompat",
            ]),
        // Every ```swift block of the README and the DocC articles, compiled and never run:
        // `make` writes them into Snippets.generated.swift (scripts/doc-snippets.py).
        .testTarget(name: "DocSnippetTests", dependencies: ["SwiftPJSUA", "SwiftPJSUAKit", "SwiftPJSUAKitTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
