import EMV3DS
import Journal
import JSON
import Net
import Store

/// `/inspector`: the transaction inspector's page, and the journal it reads: the list, one
/// transaction whole, and the live feed of changes (server-sent events).
struct InspectorRoutes {
    let journal: Journal
    let page: InspectorPage

    /// How long a live reader's request waits for a change before it is answered empty.
    static let longPoll = Duration.seconds(10)

    func register(on router: inout Router) {
        let page = page
        router.get("/inspector") { _, _ in
            guard let html = page.html else { throw HTTPError(.notFound, page.missing ?? "the inspector's page is missing") }
            return HTTPResponse(headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"], body: html)
        }
        router.get("/inspector/transactions") { request, _ async throws in
            let query = request.queryItems
            let limit = try Self.limit(query["limit"])
            let filter = Journal.Filter(pan: query["pan"].nonEmpty, scenario: query["scenario"].nonEmpty, status: query["status"].nonEmpty,
                                        run: query["run"].nonEmpty)
            let cursor = journal.sequence
            return .json(.object([("transactions", .array(await journal.list(limit: limit, filter: filter))), ("cursor", .number(String(cursor)))]))
        }
        router.get("/inspector/transactions/{id}") { _, context async throws in
            let id = try context.parameter("id")
            guard let entry = await journal.json(id) else { throw HTTPError(.notFound, "no transaction \(id) in the journal (its dsTransID)") }
            return .json(entry)
        }
        router.get("/inspector/events") { request, _ async throws in try await events(request) }
    }

    /// One batch of changes after the reader's cursor (EventSource's `Last-Event-ID`, else
    /// `?cursor=`), waiting up to ``longPoll`` for one; the reader reconnects for the next.
    private func events(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let text = request.headers["Last-Event-ID"] ?? request.queryItems["cursor"], let cursor = UInt64(text) else {
            throw HTTPError(.badRequest, "give ?cursor= (from GET /inspector/transactions) or Last-Event-ID")
        }
        var changes = journal.changes(after: cursor)
        if let found = changes, found.entries.isEmpty {
            await journal.waitForChange(after: cursor, timeout: Self.longPoll)
            changes = journal.changes(after: cursor)
        }
        var body = "retry: 300\n\n"
        if let changes {
            for entry in changes.entries { body += "id: \(changes.cursor)\ndata: \(JSONWriter.string(entry))\n\n" }
            if changes.entries.isEmpty { body += ": nothing new\n\n" }
        } else {
            body += "event: reset\ndata: {\"cursor\":\(journal.sequence)}\n\n"
        }
        return HTTPResponse(headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"], body: Array(body.utf8))
    }

    /// `?limit=`: 1-1000, 100 by default.
    static func limit(_ text: String?) throws -> Int {
        guard let text else { return 100 }
        guard let limit = Int(text), (1...1000).contains(limit) else { throw HTTPError(.badRequest, "limit must be a whole number of 1-1000") }
        return limit
    }
}

/// `GET /3ds-server/transactions` and the DS's and ACS's under /admin: the role's newest records,
/// filtered by card (`pan`: the whole number, its masked form, or its last four digits) and `status`
/// (a transStatus, or the record's state or phase).
struct RecordListRoute {
    static func register(_ path: String, on router: inout Router, newest: @escaping @Sendable (Int, ([UInt8]) -> Bool) async -> [[UInt8]]) {
        router.get(path) { request, _ async throws in
            let query = request.queryItems
            let limit = try InspectorRoutes.limit(query["limit"])
            let filter = Journal.Filter(pan: query["pan"].nonEmpty, status: query["status"].nonEmpty)
            let records = await newest(limit) { bytes in
                guard let json = try? JSONReader.parse(bytes).value else { return false }
                return filter.accepts(record: json)
            }
            var body: [UInt8] = Array(#"{"transactions":["#.utf8)
            for (index, record) in records.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body += record
            }
            body += Array("]}".utf8)
            return HTTPResponse(headers: .json, body: body)
        }
    }
}

extension Journal.Filter {
    /// The filter over a role's record: its `acctNumber` and its transStatus, state or phase.
    func accepts(record: JSONValue) -> Bool {
        var summary = record
        if let status, ["state", "phase"].contains(where: { record[$0]?.stringValue == status }) { summary.set("state", .string(status)) }
        return accepts(summary)
    }
}

extension Optional where Wrapped == String {
    /// Nil for an empty query parameter as for a missing one.
    var nonEmpty: String? { self.flatMap { $0.isEmpty ? nil : $0 } }
}
