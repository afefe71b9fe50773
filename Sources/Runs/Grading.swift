public import EMV3DS
public import Journal
public import JSON

/// A case's verdict, from the journal entries of its transactions.
public struct CaseVerdict: Sendable {
    public enum Status: String, Sendable {
        /// No transaction yet, the run open.
        case pending
        /// A transaction is under way, nothing failed so far.
        case running
        case passed
        case failed
    }

    public let runCase: RunCase
    public let status: Status
    /// Each check of each transaction, failures first.
    public let checks: [(dsTransID: String, result: CheckResult)]
    /// Why the case failed besides its checks: not attempted, a record lost.
    public let problems: [String]
    /// The journal summaries of the attached transactions.
    public let transactions: [JSONValue]

    public var failures: [String] {
        problems + checks.filter { $0.result.verdict == .fail }.map { "\($0.result.check.rawValue): \($0.result.detail ?? $0.result.check.text)" }
    }

    public var warnings: [String] {
        checks.filter { $0.result.verdict == .warning }.map { "\($0.result.check.rawValue): \($0.result.detail ?? $0.result.check.text)" }
    }

    public var json: JSONValue {
        let checkList: [JSONValue] = checks.map { check in
            var json = check.result.json
            json.set("dsTransID", .string(check.dsTransID))
            return json
        }
        var members = runCase.json.objectMembers ?? []
        members.removeAll { $0.key == "transactions" }
        members.append(("status", .string(status.rawValue)))
        if !problems.isEmpty { members.append(("problems", .array(problems.map(JSONValue.string)))) }
        members.append(("checks", .array(checkList)))
        members.append(("transactions", .array(transactions)))
        return .object(members)
    }
}

/// A run with every case graded: what `GET /admin/runs/{id}` and the reports show.
public struct GradedRun: Sendable {
    public let run: TestRun
    public let cases: [CaseVerdict]

    public func count(_ status: CaseVerdict.Status) -> Int { cases.count { $0.status == status } }

    /// Grades each case of `run` from the journal.
    public init(_ run: TestRun, journal: Journal) {
        self.run = run
        cases = run.cases.map { Self.grade($0, finished: run.state == .finished, journal: journal) }
    }

    static func grade(_ runCase: RunCase, finished: Bool, journal: Journal) -> CaseVerdict {
        var checks: [(String, CheckResult)] = []
        var problems: [String] = []
        var summaries: [JSONValue] = []
        var open = false
        if runCase.transactions.isEmpty, finished { problems.append("not attempted: no transaction for this scenario, version and channel while the run was open") }
        for dsTransID in runCase.transactions {
            guard let entry = journal.outline(dsTransID) else {
                problems.append("transaction \(dsTransID): its record is no longer kept")
                continue
            }
            let results = entry.checks
            checks += results.map { (dsTransID, $0) }
            let ended = entry.ended
            // A challenge whose end is judged (an SDK that rightly stopped) is settled, though the ACS still waits.
            if !ended, !results.contains(where: { $0.check == .challengeEnd }) { open = true }
            // What is due but never came is a failure once the run is finished.
            if finished, !ended {
                if runCase.flow == "challenge", !results.contains(where: { $0.check == .challengeEnd }) {
                    // After a runtime error an SDK sends nothing more: silence is its right answer.
                    checks.append((dsTransID, runCase.sdkReport == "runtimeError"
                        ? .pass(.challengeEnd, "no CReq since the runtime error the scenario causes")
                        : .fail(.challengeEnd, "the challenge had not ended when the run finished")))
                }
                if let due = runCase.sdkErro, !results.contains(where: { $0.check == .sdkErro }) {
                    checks.append((dsTransID, .fail(.sdkErro, "Erro \(due) not received by the end of the run")))
                }
            }
            summaries.append(entry.summary)
        }
        checks.sort { $0.1.verdict.severity > $1.1.verdict.severity }
        let failed = !problems.isEmpty || checks.contains { $0.1.verdict == .fail }
        let status: CaseVerdict.Status = if failed { .failed }
            else if runCase.transactions.isEmpty { .pending }
            else if open && !finished { .running }
            else { .passed }
        return CaseVerdict(runCase: runCase, status: status, checks: checks.map { (dsTransID: $0.0, result: $0.1) }, problems: problems,
                           transactions: summaries)
    }

    public var json: JSONValue {
        var members = run.json.objectMembers ?? []
        members.removeAll { $0.key == "cases" || $0.key == "createdAtMs" || $0.key == "finishedAtMs" }
        members.append(("summary", summary))
        members.append(("cases", .array(cases.map(\.json))))
        return .object(members)
    }

    public var summary: JSONValue {
        .object([("cases", .number(String(cases.count))), ("passed", .number(String(count(.passed)))),
                 ("failed", .number(String(count(.failed)))), ("running", .number(String(count(.running)))),
                 ("pending", .number(String(count(.pending))))])
    }
}
