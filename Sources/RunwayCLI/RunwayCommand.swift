import ArgumentParser

/// `runway`: the demo and the tools around Runway.
@main
struct RunwayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runway",
        abstract: "Runway: the networking and storage layer of a Swift app.",
        subcommands: [DemoCommand.self, ServeCommand.self, BenchCommand.self, StorageCommand.self, LinksCommand.self, TransferCommand.self, OplogCommand.self, OutboxCommand.self, NetworkCommand.self, NamesCommand.self]
    )
}
