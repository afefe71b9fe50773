import Synchronization

/// The negative cases over a list of scenarios, generated once per distinct list in a process. Their generation probes
/// every element of every message against the field tables, a tenth of a second in a debug build; every harness a
/// process starts, every team's catalog and every reload reads the same few lists again.
enum NegativeCaseMemo {
    /// The lists seen last, newest last: a handful of scenario files is all a process reads.
    private static let recent = Mutex<[(scenarios: [Scenario], negative: [Scenario])]>([])
    private static let capacity = 4

    /// The cases `generate` makes over `scenarios`, from an earlier call with an equal list when there was one.
    static func negative(over scenarios: [Scenario], generate: ([Scenario]) -> [Scenario]) -> [Scenario] {
        if let known = recent.withLock({ entries in entries.last { $0.scenarios == scenarios }?.negative }) { return known }
        let negative = generate(scenarios)
        recent.withLock { entries in
            entries.append((scenarios, negative))
            if entries.count > capacity { entries.removeFirst() }
        }
        return negative
    }
}
