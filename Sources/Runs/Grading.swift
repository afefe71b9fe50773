public import EMV3DS
public import Foundation
public import Journal
public import JSON

/// A case's verdict, from the journal entries of its transactions.
public struct CaseVerdict: Sendable {
    public enum Status: String, Sendable, CaseIterable {
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
    /// What a case under way waits for, and until when (its deadline): what `run --wait` and `--finish` name.
    public var waitingFor: [String] = []
    public var deadline: Date?

    /// The problems, then each failed check with what was seen: once each, though every transaction of the case (one per
    /// SDK style of a `simulate` run) failed it alike.
    public var failures: [String] {
        Self.once(problems + failedChecks.map { "\($0.check.rawValue): \($0.detail ?? $0.check.text)" })
    }

    public var warnings: [String] {
        Self.once(checks.filter { $0.result.verdict == .warning }.map { "\($0.result.check.rawValue): \($0.result.detail ?? $0.result.check.text)" })
    }

    /// The failed checks, each check and detail once.
    public var failedChecks: [CheckResult] {
        var seen = Set<String>()
        return checks.map(\.result).filter { $0.verdict == .fail && seen.insert("\($0.check.rawValue) \($0.detail ?? "")").inserted }
    }

    /// `lines` without the repeats, in order.
    static func once(_ lines: [String]) -> [String] {
        var seen = Set<String>()
        return lines.filter { seen.insert($0).inserted }
    }

    public var json: JSONValue {
        let checkList: [JSONValue] = checks.map { check in
            var json = check.result.json
            json.set("dsTransID", .string(check.dsTransID))
            return json
        }
        var members = runCase.json.objectMembers ?? []
        members.removeAll { ["transactions", "lastAttachedAtMs", "attemptStart"].contains($0.key) }
        members.append(("status", .string(status.rawValue)))
        if status == .running {
            members.append(("waitingFor", .array(waitingFor.map(JSONValue.string))))
            if let deadline { members.append(("deadlineAt", .string(UTCTime.iso8601(deadline)))) }
        }
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
    /// The party's messages a role refused outside the cases (``TestRun/refusedOutsideCases``): each one's `dsTransID`
    /// (its journal entry), the message, when, and the failed checks.
    public let refusedOutsideCases: [JSONValue]

    public func count(_ status: CaseVerdict.Status) -> Int { cases.count { $0.status == status } }

    /// Grades each case of `run` from the journal as it stands at `now`: its entries in memory, and `stored`,
    /// those read from the store (``graded(_:journal:now:)`` reads them).
    public init(_ run: TestRun, journal: Journal, now: Date = Date(), stored: [String: Journal.Outline] = [:]) {
        self.run = run
        let refused = run.refusedOutsideCases.compactMap { id in (journal.outline(id) ?? stored[id]).map { Self.refusal(id, $0) } }
        refusedOutsideCases = refused
        let unattempted = Self.notAttempted(refused)
        cases = run.cases.map { runCase in
            // A case is settled when the run is, or when its deadline has passed: what was due and has not come fails.
            let deadline = runCase.lastAttachedAt.map { $0.addingTimeInterval(run.timing.caseDeadline) }
            let pastDeadline = deadline.map { now >= $0 } ?? false
            return Self.grade(runCase, party: run.suite.party, finished: run.state == .finished, pastDeadline: pastDeadline, deadline: deadline,
                              notAttempted: unattempted, outline: { journal.outline($0) ?? stored[$0] })
        }
    }

    /// A refused message outside the cases, as the run shows it.
    static func refusal(_ dsTransID: String, _ outline: Journal.Outline) -> JSONValue {
        let failures = outline.checks.filter { $0.verdict == .fail }.map { "\($0.check.rawValue): \($0.detail ?? $0.check.text)" }
        return .object(omittingAbsent: [
            ("dsTransID", .string(dsTransID)), ("message", outline.summary["refused"]), ("startedAt", outline.summary["startedAt"]),
            ("endedBecause", outline.summary["endedBecause"]), ("failures", .array(failures.map(JSONValue.string))),
        ])
    }

    /// Why a case was not attempted, with the refused messages that may say why.
    static func notAttempted(_ refused: [JSONValue]) -> String {
        let reason = "not attempted: no transaction for this scenario, version and channel while the run was open"
        guard let newest = refused.last else { return reason }
        let what = "\(newest["message"]?.stringValue ?? "message") (\(newest["endedBecause"]?.stringValue ?? "refused"); "
            + "\(newest["failures"]?.arrayValue?.compactMap(\.stringValue).joined(separator: "; ") ?? ""))"
        return reason + "; the harness refused \(refused.count == 1 ? "a message" : "\(refused.count) messages") of the party outside the cases "
            + "(refusedOutsideCases), the latest a \(what)"
    }

    /// `run` graded, its transactions that have left memory read from the store first (awaited, not waited for).
    public static func graded(_ run: TestRun, journal: Journal, now: Date = Date()) async -> GradedRun {
        GradedRun(run, journal: journal, now: now, stored: await journal.storedOutlines(run.cases.flatMap(\.graded) + run.refusedOutsideCases))
    }

    static func grade(_ runCase: RunCase, party: ConformanceCheck.Party, finished: Bool, pastDeadline: Bool, deadline: Date? = nil,
                      notAttempted: String = notAttempted([]), outline: (String) -> Journal.Outline?) -> CaseVerdict {
        var checks: [(String, CheckResult)] = []
        var problems: [String] = []
        var summaries: [JSONValue] = []
        var waiting: [String] = []
        let attempt = runCase.graded
        let settled = finished || pastDeadline
        // When what was due had to have come, in the failures' words.
        let when = finished ? "when the run finished" : "by the case's deadline"
        if attempt.isEmpty, finished { problems.append(notAttempted) }
        if runCase.overflow > 0 {
            problems.append("\(runCase.overflow) more transactions were not attached: an attempt takes at most \(RunCase.maxTransactionsPerAttempt)")
        }
        // A 3RI AReq follows a challenge up only where the attempt has the challenge (a 3RI alone is not this case's).
        let hasChallenge = runCase.decoupledFallback
            && attempt.contains { outline($0)?.summary["deviceChannel"]?.stringValue == runCase.channel.deviceChannel }
        for dsTransID in attempt {
            guard let entry = outline(dsTransID) else {
                // A run hears of a transaction as its entry opens, a moment before the journal holds it (in a cluster, before
                // the store has it): until the case settles, a record not found yet is one still coming.
                if settled { problems.append("transaction \(dsTransID): its record is neither in memory nor in the store") } else { waiting.append("the record of transaction \(dsTransID)") }
                continue
            }
            // A transaction tagged for this case must be of its scenario, version and channel; the 3RI AReq of a decoupled
            // fallback (2.3.1) belongs to the challenge it follows up (known by the case: the ACS grades it a moment later).
            let seen = (entry.summary["scenario"]?.stringValue, entry.summary["messageVersion"]?.stringValue, entry.summary["deviceChannel"]?.stringValue)
            let followsUp = hasChallenge && seen.2 == DeviceChannel.threeRI.rawValue
            if seen != (runCase.scenario, runCase.version, followsUp ? seen.2 : runCase.channel.deviceChannel) {
                problems.append("transaction \(dsTransID) is of scenario \(seen.0 ?? "none"), version \(seen.1 ?? "none"), deviceChannel \(seen.2 ?? "none"), "
                                + "not this case's: use the case's card \(runCase.card ?? runCase.pan) in \(runCase.version) (\(runCase.channel.rawValue))")
            }
            let results = entry.checks
            checks += results.map { (dsTransID, $0) }
            let ended = entry.ended
            // The 3DS Server's Erro about a spoilt ARes comes after the entry ended: the case waits for it.
            if let codes = runCase.threeDSServerErro, !results.contains(where: { $0.check == .aresErro }) {
                if settled {
                    checks.append((dsTransID, .fail(.aresErro, "no Erro received about the ARes the scenario spoilt "
                        + "(\(when)): expected errorCode \(codes.joined(separator: " or "))")))
                } else {
                    waiting.append("the 3DS Server's Erro \(codes.joined(separator: " or ")) about the ARes of transaction \(dsTransID)")
                }
            }
            // A challenge whose end is judged (an SDK that rightly stopped) is settled, though the ACS still waits.
            if !ended, !results.contains(where: { $0.check == .challengeEnd }) {
                waiting.append("transaction \(dsTransID) to end" + (runCase.flow == "challenge" ? " (its challenge)" : runCase.awaitsResults ? " (its RReq and RRes)" : ""))
            }
            // A challenge that falls back (2.3.1) awaits its 3RI AReq, whose check the ACS records on the challenge too.
            if runCase.decoupledFallback, !followsUp, !results.contains(where: { $0.check == .decoupledFallback }) {
                if settled {
                    checks.append((dsTransID, .fail(.decoupledFallback, "no 3RI AReq (threeRIInd 19) naming the challenge followed its RReq D \(when)")))
                } else {
                    waiting.append("the 3RI AReq (threeRIInd 19) that follows up the RReq D of transaction \(dsTransID)")
                }
            }
            // What is due but never came is a failure once the run is finished or the case's deadline passed.
            if settled, !ended {
                if runCase.flow == "challenge", !results.contains(where: { $0.check == .challengeEnd }) {
                    // After a runtime error an SDK sends nothing more: silence is its right answer.
                    checks.append((dsTransID, runCase.sdkReport == "runtimeError"
                        ? .pass(.challengeEnd, "no CReq since the runtime error the scenario causes")
                        : .fail(.challengeEnd, "the challenge had not ended \(when)")))
                }
                if let codes = runCase.resultsErro, !results.contains(where: { $0.check == .rreqErro }) {
                    checks.append((dsTransID, .fail(.rreqErro, "no RReq reached the 3DS Server \(when) (the challenge or decoupled authentication did not end): "
                        + "the spoilt RReq it must answer with Erro \(codes.joined(separator: " or ")) was never sent")))
                }
                // The RReq comes after the scenario's delay; an RRes the DS never saw leaves nothing to pass.
                if runCase.awaitsResults, runCase.resultsErro == nil, !results.contains(where: { $0.check == .rresValid }) {
                    checks.append((dsTransID, .fail(.rresValid, "the decoupled authentication had not ended \(when): no RRes to its RReq reached the DS "
                        + "(the ACS sends the RReq after the scenario's delay; answer it within directoryServer.acsTimeoutMs)")))
                }
            }
            // The SDK's Erro about a spoilt final CRes comes after the entry ended: the case waits for it too.
            if let due = runCase.sdkErro, !results.contains(where: { $0.check == .sdkErro }) {
                if settled { checks.append((dsTransID, .fail(.sdkErro, "Erro \(due) not received \(when)"))) }
                else if ended { waiting.append("the SDK's Erro \(due) about the final CRes of transaction \(dsTransID)") }
            }
            summaries.append(entry.summary)
        }
        // A PRes case is graded by the 3DS Server's Erro about each PRes of its own (an entry with no card): the Erro due,
        // or none about a change it must take. An AReq on the case's card is none of its.
        if runCase.preparation {
            for dsTransID in attempt {
                guard let entry = outline(dsTransID) else { continue }
                guard (entry.summary["acctNumber"]?.stringValue ?? "").isEmpty else {
                    problems.append("transaction \(dsTransID) is an AReq on the case's card: a PRes case is the PRes to a PReq, armed by "
                                    + "POST /admin/ds/pres-faults {\"scenario\": \"\(runCase.scenario)\"}")
                    continue
                }
                guard !entry.checks.contains(where: { $0.check == .presErro }) else { continue }
                if let codes = runCase.preparationErro {
                    if settled {
                        checks.append((dsTransID, .fail(.presErro, "no Erro received about the PRes the case spoilt \(when): "
                            + "expected errorCode \(codes.joined(separator: " or ")), posted to the DS's PReq URL")))
                    } else {
                        waiting.append("the 3DS Server's Erro \(codes.joined(separator: " or ")) about the PRes of transaction \(dsTransID)")
                    }
                } else if settled {
                    checks.append((dsTransID, .pass(.presErro, "no Erro about the DS's answer to the PReq, which the 3DS Server takes "
                                                                 + "(or, an Erro itself, leaves unanswered)")))
                } else {
                    waiting.append("the case's deadline or the run's end: no Erro is due about the PRes of transaction \(dsTransID), and none may come")
                }
            }
        }
        // Only the party under test fails its cases: another party's failure (the app's backend writing a
        // local purchaseDate in an SDK run, a team's test SDK in a 3DS Server run) is shown as a warning.
        checks = checks.map { dsTransID, result in
            guard result.verdict == .fail, result.check.party != party else { return (dsTransID, result) }
            return (dsTransID, CheckResult(result.check, .warning, "not the party under test (\(party.rawValue)), so not failing the case: \(result.detail ?? "")"))
        }
        checks.sort { $0.1.verdict.severity > $1.1.verdict.severity }
        let failed = !problems.isEmpty || checks.contains { $0.1.verdict == .fail }
        let status: CaseVerdict.Status = if failed { .failed }
            else if attempt.isEmpty { .pending }
            else if !waiting.isEmpty && !settled { .running }
            else { .passed }
        var verdict = CaseVerdict(runCase: runCase, status: status, checks: checks.map { (dsTransID: $0.0, result: $0.1) }, problems: problems,
                                  transactions: summaries)
        verdict.waitingFor = waiting
        verdict.deadline = deadline
        return verdict
    }

    public var json: JSONValue { json(casesOf: nil) }

    /// The run with the cases of `statuses` only (nil: every case); the summary counts every case. What a client that
    /// follows a run asks for while it waits: the cases under way, not every case's checks (about 12 KB a case).
    public func json(casesOf statuses: Set<CaseVerdict.Status>?) -> JSONValue {
        var members = run.json.objectMembers ?? []
        members.removeAll { ["cases", "createdAtMs", "finishedAtMs", "lastActivityAtMs"].contains($0.key) }
        members.removeAll { $0.key == "refusedOutsideCases" }
        members.append(("summary", summary))
        if !refusedOutsideCases.isEmpty { members.append(("refusedOutsideCases", .array(refusedOutsideCases))) }
        let shown = statuses.map { statuses in cases.filter { statuses.contains($0.status) } } ?? cases
        // A list of some cases says so: saved, it would read as the whole run.
        if let statuses {
            let named = CaseVerdict.Status.allCases.filter(statuses.contains).map { JSONValue.string($0.rawValue) }
            members.append(("casesShown", .array(named)))
        }
        members.append(("cases", .array(shown.map(\.json))))
        return .object(members)
    }

    /// The transactions whose messages a report carries: those of the failed cases' attempts, and the refused messages
    /// outside the cases. A report kept as a CI artifact is then evidence on its own.
    /// The most message bytes a report carries; the transactions past it keep their link (`messagesOmitted` says so).
    public static let evidenceBudgetBytes = 1024 * 1024

    public var evidenceTransactions: [String] {
        cases.filter { $0.status == .failed }.flatMap(\.runCase.graded) + run.refusedOutsideCases
    }

    /// The run as its reports show it: ``json``, each transaction summary with a link to the inspector at `inspector`
    /// (an absolute URL), and those of ``evidenceTransactions`` with their `messages` (from, to, type, at, message).
    public func report(messages: [String: JSONValue], inspector: String) -> JSONValue {
        let evidence = Set(evidenceTransactions)
        func annotated(_ transaction: JSONValue) -> JSONValue {
            guard let id = transaction["dsTransID"]?.stringValue else { return transaction }
            var transaction = transaction
            transaction.set("inspectorURL", .string(Self.inspectorLink(id, at: inspector)))
            if let shown = messages[id] { transaction.set("messages", shown) } else if evidence.contains(id) { transaction.set("messagesOmitted", .bool(true)) }
            return transaction
        }
        var report = json
        report.set("inspectorURL", .string(inspector))
        let omitted = evidence.count { messages[$0] == nil }
        if omitted > 0 { report.set("messagesOmitted", .number(String(omitted))) }
        if let refused = report["refusedOutsideCases"]?.arrayValue { report.set("refusedOutsideCases", .array(refused.map(annotated))) }
        if let cases = report["cases"]?.arrayValue {
            report.set("cases", .array(cases.map { item in
                var item = item
                if let transactions = item["transactions"]?.arrayValue { item.set("transactions", .array(transactions.map(annotated))) }
                return item
            }))
        }
        return report
    }

    /// The inspector's view of a transaction: `inspector` and the percent-encoded id in the fragment.
    public static func inspectorLink(_ dsTransID: String, at inspector: String) -> String {
        inspector + "#/transactions/" + (dsTransID.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? "")
    }

    public var summary: JSONValue {
        .object([("cases", .number(String(cases.count))), ("passed", .number(String(count(.passed)))),
                 ("failed", .number(String(count(.failed)))), ("running", .number(String(count(.running)))),
                 ("pending", .number(String(count(.pending))))])
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters.
    static let urlUnreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
}
