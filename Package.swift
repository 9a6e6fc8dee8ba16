// swift-tools-version:6.0
//
// swift-pjsua: an async Swift wrapper over PJSIP's high-level C API (pjsua).
//
// Linux (and any system with pjproject's pkg-config file): `CPJSIP` is a system
// library module over `pkg-config libpjproject` (pjproject 2.12 to 2.17);
// `scripts/provision.sh` builds and installs pjproject 2.17 when none is found.
//
// Apple platforms: iOS apps use a prebuilt PJSIP xcframework. Point
// `SWIFT_PJSUA_PJSIP_XCFRAMEWORK` at it (an absolute path) and `CPJSIP` becomes a
// thin C target over that binary target instead (see README, "Apple platforms").
import Foundation
import PackageDescription

let xcframework = ProcessInfo.processInfo.environment["SWIFT_PJSUA_PJSIP_XCFRAMEWORK"]

var cTargets: [Target]
if let xcframework, !xcframework.isEmpty {
    cTargets = [
        .binaryTarget(name: "PJSIP", path: xcframework),
        .target(
            name: "CPJSIP",
            dependencies: ["PJSIP"],
            path: "Sources/CPJSIPBinary",
            cSettings: [.define("PJ_AUTOCONF", to: "1")]
        ),
    ]
} else {
    cTargets = [
        .systemLibrary(
            name: "CPJSIP",
            path: "Sources/CPJSIP",
            pkgConfig: "libpjproject",
            // Debian and Ubuntu package no pjproject: scripts/provision.sh builds one there.
            providers: [.brew(["pjproject"]), .yum(["pjproject-devel"])]
        )
    ]
}

let package = Package(
    name: "swift-pjsua",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SwiftPJSUA", targets: ["SwiftPJSUA"]),
        .library(name: "SwiftPJSUAKit", targets: ["SwiftPJSUAKit"]),
        .executable(name: "swiftpjsua", targets: ["swiftpjsua"]),
    ],
    targets: cTargets + [
        .target(name: "SwiftPJSUA", dependencies: ["CPJSIP"]),
        .target(name: "SwiftPJSUAKit", dependencies: ["SwiftPJSUA"]),
        // Catches SIGINT/SIGTERM for the tool from before main (see its header).
        .target(name: "CSignalGuard", path: "Sources/CSignalGuard"),
        .executableTarget(name: "swiftpjsua", dependencies: ["SwiftPJSUA", "CSignalGuard"]),
        // A voice menu (IVR) on the engine: prompt, DTMF, echo, record, transfer.
        .executableTarget(name: "swiftpjsua-ivr", dependencies: ["SwiftPJSUA"], path: "Examples/IVR"),
        // Launchers for real SIP peers (sipp, kamailio, a second swiftpjsua
        // process). Not a product: used by the tests only.
        .target(name: "PJSUATestSupport", dependencies: ["SwiftPJSUA"], path: "Tests/PJSUATestSupport"),
        // Doubles for the Kit's seams: a recording CallProvider (where CallKit sits on
        // iOS), a recording CallEngine and a manual clock.
        .target(
            name: "KitTestSupport", dependencies: ["SwiftPJSUAKit", "SwiftPJSUA", "PJSUATestSupport"],
            path: "Tests/KitTestSupport"),
        // A program written against the earlier iOS-only swift-pjsua's API, in a module of
        // its own as an app would be; SwiftPJSUATests runs it (EarlierAPICompatTests.swift).
        .target(
            name: "EarlierAPICompat", dependencies: ["SwiftPJSUA", "SwiftPJSUAKit"], path: "Tests/EarlierAPICompat"),
        // The Kit's engine tests live here, in the serialized EngineTests suite: pjsua is one
        // per process and both test targets run in one process (see KitOrderingTests.swift).
        .testTarget(
            name: "SwiftPJSUATests",
            dependencies: ["SwiftPJSUA", "PJSUATestSupport", "SwiftPJSUAKit", "KitTestSupport", "EarlierAPICompat"]),
        .testTarget(
            name: "SwiftPJSUAKitTests",
            dependencies: ["SwiftPJSUAKit", "SwiftPJSUA", "PJSUATestSupport", "KitTestSupport"]),
        // Every ```swift block of the README and the DocC articles, compiled and never run:
        // `make` writes them into Snippets.generated.swift (scripts/doc-snippets.py).
        .testTarget(name: "DocSnippetTests", dependencies: ["SwiftPJSUA", "SwiftPJSUAKit"]),
    ],
    swiftLanguageModes: [.v6]
)
