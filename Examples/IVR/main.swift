// swiftpjsua-ivr: a small voice menu on SwiftPJSUA, as a starting point for IVRs and
// voice bots. It answers every call, plays a prompt once, then acts on the caller's
// DTMF digits:
//   1  echo: the caller hears themself (through the audio frame API)
//   2  record: the caller's audio goes to a WAV file (frames in, written by the bot)
//   0  transfer: a blind transfer (REFER) to --transfer-to
//   #  hang up
// A digit pressed while the prompt plays cuts it short.
//
//   swiftpjsua-ivr --port 5080 --prompt menu.wav [--transfer-to sip:desk@pbx] [--record-dir DIR]
//   swiftpjsua-ivr --port 5080 --say "Press 1 for echo" (needs espeak-ng to make the prompt)
import Foundation
import SwiftPJSUA

struct IVROptions {
    var port: UInt16 = 5080
    var bind = "127.0.0.1"
    var prompt: String?
    var say: String?
    var transferTo: String?
    var recordDirectory = FileManager.default.temporaryDirectory.path

    static let usage = """
        usage: swiftpjsua-ivr (--prompt FILE.wav | --say TEXT) [--port N] [--bind ADDRESS]
                              [--transfer-to SIP-URI] [--record-dir DIR]
          --prompt       the menu prompt, a 16-bit PCM WAV file
          --say          the menu prompt as text, spoken with espeak-ng
          --port         UDP port to listen on (default 5080; 0 picks a free one)
          --bind         address to bind (default 127.0.0.1)
          --transfer-to  where digit 0 transfers the caller (REFER); 1 echoes, # hangs up
          --record-dir   where digit 2 saves the caller's recording (default: the temp folder)
        """

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw IVRError("\(name) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--port":
                guard let port = UInt16(try value(argument)) else { throw IVRError("--port must be 0–65535") }
                self.port = port
            case "--bind": bind = try value(argument)
            case "--prompt": prompt = try value(argument)
            case "--say": say = try value(argument)
            case "--transfer-to": transferTo = try value(argument)
            case "--record-dir": recordDirectory = try value(argument)
            case "--help", "-h", "help":
                print(Self.usage)
                exit(0)
            default: throw IVRError("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        guard prompt != nil || say != nil else { throw IVRError("give --prompt F.wav or --say TEXT") }
    }
}

struct IVRError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Makes a WAV prompt from text with espeak-ng.
func synthesize(_ text: String) throws -> String {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("swiftpjsua-ivr-\(getpid()).wav").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["espeak-ng", "-w", file, text]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw IVRError("espeak-ng failed (is it installed?)") }
    return file
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// One caller's session: prompt, then digits.
func serve(_ call: Call, engine: PJSUA, options: IVROptions, prompt: String) async {
    let events = engine.events(for: call)
    var prompting: Player?
    var echoing: Task<Void, Never>?
    var recording: Task<Void, Never>?
    do {
        try await engine.answer(call)
        for await event in events {
            switch event {
            case .callMediaState(let mediaChange)
            where prompting == nil && mediaChange.media.contains(where: { $0.type == .audio && $0.status == .active }):
                prompting = try await engine.play(file: prompt, into: call)
                say("\(call): prompt")
            case .playbackFinished(let finished) where finished.player == prompting:
                say("\(call): prompt done")
            case .dtmf(let received):
                let digit = received.digit
                say("\(call): digit \(digit)")
                if let player = prompting { try? await engine.stop(player) }
                switch digit {
                case "1" where echoing == nil:
                    let frames = try await engine.audioFrames(from: call)
                    let writer = try await engine.audioFrameWriter(into: call, buffer: .milliseconds(60))
                    echoing = Task {
                        for await frame in frames {
                            do { try await writer.write(frame.samples) } catch { break }
                        }
                    }
                    say("\(call): echo")
                case "2" where recording == nil:
                    let frames = try await engine.audioFrames(from: call)
                    let file = URL(fileURLWithPath: options.recordDirectory)
                        .appendingPathComponent("ivr-\(call.slot)-\(call.generation).wav")
                    recording = Task {
                        var samples: [Int16] = []
                        for await frame in frames { samples += frame.samples }
                        try? WAVAudio(sampleRate: frames.format.sampleRate, samples: samples).write(to: file)
                    }
                    say("\(call): recording to \(file.path)")
                case "0":
                    if let target = options.transferTo {
                        try await engine.transfer(call, to: target)
                        say("\(call): transfer to \(target)")
                    }
                case "#":
                    try await engine.hangup(call)
                default:
                    break
                }
            case .transferStatus(let progress) where progress.isFinal:
                let code = progress.statusCode
                say("\(call): transfer \(code < 300 ? "done" : "failed") (\(code))")
                if code < 300 { try? await engine.hangup(call) }
            default:
                break
            }
        }
    } catch {
        say("\(call): \(error)")
        try? await engine.hangup(call)
    }
    _ = echoing
    await recording?.value
    say("\(call): ended")
}

let options: IVROptions
do {
    options = try IVROptions(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("swiftpjsua-ivr: \(error)\n".utf8))
    exit(64)
}
if let file = options.prompt, !FileManager.default.isReadableFile(atPath: file) {
    FileHandle.standardError.write(Data("swiftpjsua-ivr: cannot read the prompt \(file)\n".utf8))
    exit(64)
}
let engine = PJSUA()
let events = engine.events
let prompt: String
// An error thrown at top level traps: say what failed and exit instead.
do {
    prompt = try options.prompt ?? synthesize(options.say ?? "")
    try await engine.start(
        Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: options.bind, port: options.port)],
            media: MediaConfiguration(soundDevice: .null)))
    _ = try await engine.addLocalAccount()
    if let transport = try await engine.transports().first {
        say("ivr listening on \(transport.host):\(transport.port)")
    }
} catch {
    FileHandle.standardError.write(Data("swiftpjsua-ivr: \(error)\n".utf8))
    await engine.shutdown()
    exit(1)
}
// SIGTERM (a service manager) and SIGINT (Ctrl-C) both end the calls with BYE and exit.
let signals = [SIGTERM, SIGINT].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number)
    source.setEventHandler { Task { await engine.shutdown() } }
    source.resume()
    return source
}
await withDiscardingTaskGroup { group in
    for await event in events {
        if case .incomingCall(let incoming) = event {
            let call = incoming.call
            let from = incoming.from
            say("\(call): incoming from \(from.uri)")
            group.addTask { await serve(call, engine: engine, options: options, prompt: prompt) }
        }
    }
}
