import Cluster
import EMV3DS
import Foundation
import Journal
import JSON
import Messaging
import Net
import Runs
import Scenarios
import Yams

/// `/admin/runs`: test runs of a suite against the party under test, and their reports.
struct RunRoutes {
    let runs: RunRegistry
    let journal: Journal
    let scenarios: ScenarioSource
    /// `report.css` of the page templates folder: the HTML report puts it inline; nil when it is missing.
    let reportStyle: String?
    /// Called as a run starts: the roles' judging of what came before it begins anew (the DS's PReq checks).
    let runStarting: @Sendable () -> Void
    /// `server.publicURL`: where a report's links point; else the address the report was asked at.
    let publicURL: String?
    /// In a cluster: runs at other instances, and transactions under way there (nil: one instance).
    var cluster: ClusterRuns?

    static let reportStyleFile = "report.css"

    static func reportStyle(folder: String) -> String? {
        try? String(contentsOfFile: folder + "/" + reportStyleFile, encoding: .utf8)
    }

    /// The largest run request: a suite lists at most a few hundred scenario names.
    static let maxBodyBytes = 64 * 1024

    func register(on router: inout Router) {
        router.post("/admin/runs") { request, _ async throws in try await start(request) }
        router.get("/admin/runs") { request, _ async in
            var listings: [JSONValue] = []
            for run in runs.all { listings.append(await graded(run).listing) }
            // Through the balancer: the runs of every instance, newest first (an instance asked by another lists its own).
            if let cluster, request.headers[Cluster.forwardedHeader] == nil {
                listings += await cluster.listingsElsewhere(excluding: Set(listings.compactMap { $0["id"]?.stringValue })) { await graded($0).listing }
                listings.sort { ($0["createdAt"]?.stringValue ?? "") > ($1["createdAt"]?.stringValue ?? "") }
            }
            return .json(.object([("runs", .array(listings))]))
        }
        // A run's routes belong to its home, the instance that holds it (in a cluster).
        let home = TransactionRoute(role: RunRegistry.role, key: .pathParameter("id")) { [runs] in runs.holds($0) }
        router.get("/admin/runs/{id}", tag: home) { request, context async throws in
            let statuses = try Self.caseStatuses(request.queryItems["cases"])
            return .json(try await graded(context).json(casesOf: statuses))
        }
        router.post("/admin/runs/{id}/finish", tag: home) { _, context async throws in
            let id = try context.parameter("id")
            guard await held(id), let run = runs.finish(id) else { throw HTTPError(.notFound, "no run \(id)") }
            // The others stop asking for it.
            await cluster?.announce(run)
            return .json(await graded(run).json)
        }
        router.post("/admin/runs/{id}/retry", tag: home) { request, context async throws in try await retry(request, context) }
        router.get("/admin/runs/{id}/{report}", tag: home) { request, context async throws in
            let name = try context.parameter("report")
            guard ["report.xml", "report.json", "report.html"].contains(name) else {
                throw HTTPError(.notFound, "no report \(name): report.xml (JUnit), report.json or report.html")
            }
            let graded = try await graded(context)
            let messages = await evidence(graded)
            let report = graded.report(messages: messages, inspector: inspectorURL(request, context))
            switch name {
            case "report.xml": return .document(JUnitReport.render(graded, report: report), type: "application/xml; charset=utf-8")
            case "report.html":
                guard let reportStyle else {
                    throw HTTPError(.notFound, "the report's \(Self.reportStyleFile) is not in the page templates folder (accessControlServer.pageTemplates, config/templates by default)")
                }
                return .document(HTMLReport.render(report, style: reportStyle), type: "text/html; charset=utf-8")
            default: return .json(report)
            }
        }
    }

    /// The messages of the transactions a report carries whole (``GradedRun/evidenceTransactions``), from memory or the
    /// store, in order until ``GradedRun/evidenceBudgetBytes``: a run of a hundred failed challenges stays a file a CI
    /// job keeps, and the transactions past it are a link away.
    private func evidence(_ graded: GradedRun) async -> [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        var spent = 0
        for id in graded.evidenceTransactions {
            guard let messages = await journal.json(id)?["messages"] else { continue }
            spent += JSONWriter.write(messages).count
            guard spent <= GradedRun.evidenceBudgetBytes else { break }
            found[id] = messages
        }
        return found
    }

    /// The inspector's absolute URL for a report: at `server.publicURL`, else at the address the report was asked at.
    private func inspectorURL(_ request: HTTPRequest, _ context: RequestContext) -> String {
        let base = publicURL ?? request.headers["Host"].map { (context.isSecure ? "https://" : "http://") + $0 } ?? ""
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/inspector"
    }

    /// The statuses `?cases=` names, comma-separated (`running`, `failed`...); nil without it: every case.
    static func caseStatuses(_ value: String?) throws(HTTPError) -> Set<CaseVerdict.Status>? {
        guard let value else { return nil }
        var statuses: Set<CaseVerdict.Status> = []
        for name in value.split(separator: ",", omittingEmptySubsequences: false) {
            guard let status = CaseVerdict.Status(rawValue: String(name)) else {
                let known = CaseVerdict.Status.allCases.map(\.rawValue).joined(separator: ", ")
                let word = name.isEmpty ? "an empty item" : "\"\(name)\""
                throw HTTPError(.badRequest, "cases=\(value): \(word) is not a case status (\(known), comma-separated)")
            }
            statuses.insert(status)
        }
        return statuses
    }

    private func graded(_ context: RequestContext) async throws -> GradedRun {
        let id = try context.parameter("id")
        guard await held(id), let run = runs.run(id) else { throw HTTPError(.notFound, "no run \(id) (GET /admin/runs lists them)") }
        return await graded(run)
    }

    /// `run` graded from its transactions' records, wherever they are.
    private func graded(_ run: TestRun) async -> GradedRun {
        guard let cluster else { return await GradedRun.graded(run, journal: journal) }
        return GradedRun(run, journal: journal, stored: await cluster.outlines(run.cases.flatMap(\.graded) + run.refusedOutsideCases))
    }

    /// Whether this instance holds run `id`: in a cluster, a run the store names this instance the home of is taken up first.
    private func held(_ id: String) async -> Bool {
        guard let cluster else { return runs.holds(id) }
        return await cluster.held(id)
    }

    /// `{"suite": "sdk-app" | "3ds-server" | {name, party, scenarios, versions, channels}, "name": "…"}`,
    /// as JSON, or YAML (`Content-Type: application/yaml`) for a suite file as it is.
    func start(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.body.count <= Self.maxBodyBytes else {
            throw HTTPError(.payloadTooLarge, "a run request is at most \(Self.maxBodyBytes) bytes, this one \(request.body.count)")
        }
        let body: JSONValue
        switch request.headers.mediaType {
        case "application/json":
            body = try request.jsonBody()
        case "application/yaml", "application/x-yaml", "text/yaml":
            body = try Self.yamlSuiteRequest(request.body)
        default:
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json (or application/yaml for a suite file)")
        }
        var suite: Suite
        switch body["suite"] {
        case .string(let name)?:
            guard let builtIn = Suite.builtIn.first(where: { $0.name == name }) else {
                throw HTTPError(.badRequest, "no built-in suite \(name): \(Suite.builtIn.map(\.name).joined(separator: ", ")), or give the suite as an object")
            }
            suite = builtIn
        case let object?:
            do { suite = try Suite(json: object) } catch { throw HTTPError(.badRequest, error.description) }
        case nil:
            throw HTTPError(.badRequest, "give suite: \(Suite.builtIn.map(\.name).joined(separator: " or ")), or a suite object")
        }
        // A subset of the suite's cases, beside a built-in suite's name (or in a suite object).
        if case .array(let items)? = body["only"] {
            let names = items.compactMap(\.stringValue)
            guard names.count == items.count, !names.isEmpty else { throw HTTPError(.badRequest, "only must be a non-empty list of case ids or scenario names") }
            suite.only = names
        } else if body["only"] != nil {
            throw HTTPError(.badRequest, "only must be a non-empty list of case ids or scenario names")
        }
        var name: String?
        switch body["name"] ?? request.queryItems["name"].map(JSONValue.string) {
        case nil: break
        case .string(let text)? where !text.isEmpty && text.count <= 200: name = text
        default: throw HTTPError(.badRequest, "name must be a string of 1-200 characters")
        }
        var timing = TestRun.Timing.default
        timing.idle = try Self.seconds(body, "idleSeconds") ?? timing.idle
        timing.caseDeadline = try Self.seconds(body, "caseDeadlineSeconds") ?? timing.caseDeadline
        let run: TestRun
        do { run = try runs.start(suite, name: name, catalog: scenarios.catalog, timing: timing) } catch { throw HTTPError(.badRequest, error.description) }
        runStarting()
        // The other instances know it before its id is given: a transaction that reaches one of them is attached to it.
        await cluster?.announce(run)
        return .json(GradedRun(run, journal: journal).json, status: .created)
    }

    /// A whole number of seconds within ``TestRun/Timing/limits``, as a JSON number or a string (YAML).
    static func seconds(_ body: JSONValue, _ key: String) throws -> TimeInterval? {
        guard let value = body[key] else { return nil }
        let limits = TestRun.Timing.limits
        guard let text = value.numberText ?? value.stringValue, let seconds = Int(text), limits.contains(TimeInterval(seconds)) else {
            throw HTTPError(.badRequest, "\(key) must be a whole number of seconds from \(Int(limits.lowerBound)) to \(Int(limits.upperBound))")
        }
        return TimeInterval(seconds)
    }

    /// `{"cases": ["challenge-text/2.2.0/app", …]}`, or no body: every failed case. Each starts a
    /// new attempt (the retry's verdict counts); a finished run opens again.
    func retry(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let id = try context.parameter("id")
        guard await held(id), let run = runs.run(id) else { throw HTTPError(.notFound, "no run \(id) (GET /admin/runs lists them)") }
        var caseIDs: [String]
        if request.body.isEmpty {
            caseIDs = await graded(run).cases.filter { $0.status == .failed }.map(\.runCase.id)
            guard !caseIDs.isEmpty else { throw HTTPError(.conflict, "run \(id) has no failed case to retry: name the cases ({\"cases\": [\"scenario/version/channel\"]})") }
        } else {
            guard request.body.count <= Self.maxBodyBytes else { throw HTTPError(.payloadTooLarge, "a retry request is at most \(Self.maxBodyBytes) bytes") }
            guard case .array(let items)? = try request.jsonBody()["cases"] else {
                throw HTTPError(.badRequest, "give cases: a list of case ids (scenario/version/channel), or no body for every failed case")
            }
            caseIDs = items.compactMap(\.stringValue)
            guard caseIDs.count == items.count, !caseIDs.isEmpty else { throw HTTPError(.badRequest, "cases must be a non-empty list of case ids") }
        }
        let retried: TestRun?
        do { retried = try runs.retry(id, cases: caseIDs) } catch { throw HTTPError(.badRequest, error.description) }
        guard let retried else { throw HTTPError(.notFound, "no run \(id)") }
        // Open again: the other instances attach to it again.
        await cluster?.announce(retried)
        return .json(await graded(retried).json)
    }

    /// A YAML suite file (`name`, `party`, `scenarios`, …, optionally under `suite:` beside `name:`) as the JSON request.
    static func yamlSuiteRequest(_ bytes: [UInt8]) throws -> JSONValue {
        let node: Any?
        do { node = try Yams.load(yaml: String(decoding: bytes, as: UTF8.self)) } catch { throw HTTPError(.badRequest, "body is not YAML: \(error)") }
        guard let mapping = node as? [String: Any] else { throw HTTPError(.badRequest, "a suite file is a YAML mapping") }
        func json(_ value: Any) -> JSONValue {
            switch value {
            case let text as String: .string(text)
            case let list as [Any]: .array(list.map(json))
            case let map as [String: Any]: .object(map.keys.sorted().map { ($0, json(map[$0] ?? "")) })
            case let number as Int: .string(String(number))
            case let number as Double: .string(String(number))
            default: .string("\(value)")
            }
        }
        if mapping["suite"] != nil { return json(mapping) }
        return .object([("suite", json(mapping))])
    }
}

extension GradedRun {
    /// A run's line in `GET /admin/runs`.
    var listing: JSONValue {
        .object(omittingAbsent: [("id", .string(run.id)), ("name", .string(run.name)), ("suite", .string(run.suite.name)),
                                 ("party", .string(run.suite.party.rawValue)), ("state", .string(run.state.rawValue)),
                                 ("createdAt", run.json["createdAt"]), ("finishedAt", run.json["finishedAt"]), ("summary", summary)])
    }
}

extension HTTPResponse {
    static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: .json, body: JSONWriter.write(value))
    }

    static func document(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": type], body: Array(text.utf8))
    }
}
