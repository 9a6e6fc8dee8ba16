/// A command of the tool that runs an engine (`demo`, `listen`, `call`, `register`).
///
/// Each command declares the options it takes beside its code and parses them, with its
/// positional arguments, into its own properties: a bad argument is a usage error before
/// anything starts.
protocol Command {
    /// The options that take a value (`--name value` or `--name=value`), without the `--`.
    static var valuedOptions: Set<String> { get }
    /// The bare flags (`--name`), without the `--`.
    static var flagOptions: Set<String> { get }
    /// What the tool exits with when a signal ended the command: 0 for a command meant to
    /// run until stopped, 130 for one that was interrupted.
    static var interruptedStatus: Int32 { get }

    /// Reads the command's settings from parsed arguments.
    /// - Throws: ``UsageError`` for a missing, malformed or conflicting argument.
    init(_ options: Options) throws(UsageError)

    /// Runs the command to its end.
    /// - Returns: the exit status.
    func run() async throws -> Int32
}

extension Command {
    /// Parses the arguments that follow the command's name.
    /// - Throws: ``UsageError`` for an option the command does not take, or a bad argument.
    static func parse(_ arguments: [String]) throws(UsageError) -> Self {
        try Self(Options(arguments, valued: valuedOptions, flags: flagOptions))
    }
}
