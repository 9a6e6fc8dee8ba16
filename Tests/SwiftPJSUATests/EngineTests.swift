import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Every test that runs pjsua. pjsua is one per process, so they run one at a time: each
/// folder of this target extends this suite with the tests of one capability (Core,
/// Accounts, Calls, Media, NAT, Network), of the Kit and of the command-line tool.
@Suite("Engine against real peers", .serialized)
struct EngineTests {}
