// Apple only (iOS). Written against Apple's documented AVFAudio API; it cannot be compiled
// on the Linux machine this package is developed and tested on (see README, "SwiftPJSUAKit").
#if canImport(AVFoundation) && os(iOS)
    import AVFoundation

    /// The shared `AVAudioSession` set up for VoIP calls.
    ///
    /// Configure it when a call is about to start (before reporting or answering it); never
    /// activate it yourself: CallKit activates and deactivates it and says so through
    /// `provider(_:didActivate:)` and `provider(_:didDeactivate:)`, which the ``CallRouter``
    /// turns into attaching and detaching the engine's sound device. Start the engine with
    /// `MediaConfiguration(soundDevice: .systemDefault, soundDeviceActivation: .byApp)`.
    public enum VoIPAudioSession {
        /// Sets the category `.playAndRecord`, mode `.voiceChat` (echo cancellation and
        /// automatic gain), Bluetooth hands-free allowed, and asks for the engine's sample rate
        /// and 20 ms I/O buffers. Does not activate the session.
        /// Wraps `setCategory(_:mode:options:)`, `setPreferredSampleRate(_:)` and
        /// `setPreferredIOBufferDuration(_:)`.
        /// - Parameter sampleRate: the engine's clock rate in Hz (`MediaConfiguration.clockRate`).
        /// - Throws: the session's error when the category cannot be set.
        public static func configure(sampleRate: Double = 16_000) throws {
            let session = AVAudioSession.sharedInstance()
            try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
            try? session.setPreferredSampleRate(sampleRate)
            try? session.setPreferredIOBufferDuration(0.02)
        }
    }
#endif
