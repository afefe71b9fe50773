import EMV3DS
import Foundation
import Journal
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store

/// A load of the ACS's 3DS Method page: the browser was there, for this transaction.
struct ThreeDSMethodVisit: Sendable {
    /// Visits kept, oldest dropped first.
    static let capacity = 10_000

    let at: Date
    /// The scenario whose card range's method URL it was (nil: the scheme's own range).
    let scenario: String?
    let script: ThreeDSMethodScript
    let userAgent: String?
    /// What the form got wrong that the ACS read past (base64url padding): `method.data` fails with it.
    var formProblem: String? = nil
}

/// The 3DS Method (Core specification 5.1.5, 6.2.2.1): before the browser AReq, the 3DS
/// Requestor's page posts the form field `threeDSMethodData` (base64url JSON with
/// `threeDSServerTransID` and `threeDSMethodNotificationURL`) to the card range's
/// `threeDSMethodURL` in a hidden iframe. The ACS notes the browser, then its page posts
/// `threeDSMethodData` with the `threeDSServerTransID` to the notification URL: at once, later,
/// or never, as the card's scenario scripts it.
extension AccessControlServer {
    /// The 3DS Server waits this long for the notification before it sends threeDSCompInd N.
    static let threeDSMethodWait: Double = 10

    func registerThreeDSMethod(on router: inout Router) {
        router.post(ACSPaths.threeDSMethod) { request, _ in self.threeDSMethod(request) }
    }

    func threeDSMethod(_ request: HTTPRequest) -> HTTPResponse {
        let name = request.queryItems["scenario"]
        let script = name.flatMap { scenarios.catalog.scenario(named: $0) }?.threeDSMethod ?? .standard
        let id: String, notificationURL: String, encoded: String
        do throws(BrowserRefusal) { (id, notificationURL, encoded) = try Self.readMethodData(request) } catch {
            // Kept for the AReq, when the data still names its transaction.
            if let id = Self.transactionID(in: request) {
                methodRefusals.put(id, error.reason)
                share(id, .object([("refusal", .string(error.reason))]))
            }
            return Self.errorPage(error)
        }
        let formProblem = Base64URLPadding.problem(in: encoded, named: "threeDSMethodData")
        let visit = ThreeDSMethodVisit(at: settings.clock.date(), scenario: name, script: script, userAgent: request.headers["User-Agent"], formProblem: formProblem)
        methodVisits.put(id, visit)
        share(id, .object(omittingAbsent: [("scenario", .string(name)), ("userAgent", .string(visit.userAgent)), ("formProblem", .string(formProblem))]))
        logger.debug("3DS Method", metadata: ["threeDSServerTransID": "\(id)", "scenario": "\(name ?? "-")"])
        let notice = Base64URL.encode(JSONWriter.write(.object([("threeDSServerTransID", .string(id))])))
        guard let delay = script.notificationDelayMilliseconds else {
            return .html(Self.methodPage(body: "<p>3DS Method: this card's method never notifies.</p>"))
        }
        // The form's attributes say what the script does, for clients without one (the simulator).
        return .html(Self.methodPage(body: """
            <form id="notify" method="post" action="\(Markup.escape(notificationURL))" data-notify-after-ms="\(delay)">
            <input type="hidden" name="threeDSMethodData" value="\(notice)">
            </form>
            <script>setTimeout(function () { document.getElementById("notify").submit(); }, \(delay));</script>
            """))
    }

    /// The canonical threeDSServerTransID a refused form's data still carries, if any.
    private static func transactionID(in request: HTTPRequest) -> String? {
        guard let encoded = request.formFields?["threeDSMethodData"], let data = try? Base64URL.decodeObject(encoded).object,
              let id = data["threeDSServerTransID"]?.stringValue, FieldFormat.isCanonicalUUID(id) else { return nil }
        return id
    }

    /// The transaction id and notification URL the form carries, and the field as it came; or a refusal naming what is wrong.
    private static func readMethodData(_ request: HTTPRequest) throws(BrowserRefusal) -> (String, String, String) {
        guard let form = request.formFields else { throw BrowserRefusal("expected a form (Content-Type application/x-www-form-urlencoded) with threeDSMethodData") }
        guard let encoded = form["threeDSMethodData"], !encoded.isEmpty else { throw BrowserRefusal("the form has no threeDSMethodData") }
        let data: JSONValue
        do { data = try Base64URL.decodeObject(encoded).object } catch {
            switch error {
            case .notBase64URL: throw BrowserRefusal("threeDSMethodData is not base64url")
            case .notJSONObject: throw BrowserRefusal("threeDSMethodData is base64url, but not of a JSON object")
            }
        }
        guard let id = data["threeDSServerTransID"]?.stringValue, FieldFormat.isCanonicalUUID(id) else {
            throw BrowserRefusal("threeDSMethodData.threeDSServerTransID is missing or not a canonical UUID")
        }
        guard let url = data["threeDSMethodNotificationURL"]?.stringValue, url.utf8.count <= 256,
              url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") else {
            throw BrowserRefusal("threeDSMethodData.threeDSMethodNotificationURL is missing or not an http(s) URL of at most 256 characters")
        }
        return (id, url, encoded)
    }

    private static func methodPage(body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>3DS Method</title></head>
        <body>
        \(body)
        </body></html>
        """
    }

    /// The store's name of the 3DS Method's visits and refusals, when instances share it.
    static let methodVisitRole = "acs-3ds-method"

    /// Puts a visit (or refusal) where the instance that takes the transaction's AReq finds it.
    private func share(_ id: String, _ record: JSONValue) {
        sharedRecords?.save(role: Self.methodVisitRole, id: id) { JSONWriter.write(record) }
    }

    /// The visit (or refusal) another instance saw, when this one saw none: kept here like its own.
    func fetchSharedMethodVisit(_ id: String) async {
        guard let sharedRecords, !methodVisits.contains(id), !methodRefusals.contains(id),
              let stored = await sharedRecords.record(role: Self.methodVisitRole, id: id),
              let record = try? JSONReader.parse(stored.json).value else { return }
        if let refusal = record["refusal"]?.stringValue {
            methodRefusals.put(id, refusal)
            return
        }
        let name = record["scenario"]?.stringValue
        let script = name.flatMap { scenarios.catalog.scenario(named: $0) }?.threeDSMethod ?? .standard
        // Written before the page's answer: when the store has it is when the visit was, near enough.
        let at = Date(timeIntervalSince1970: Double(stored.updated) / 1000)
        methodVisits.put(id, ThreeDSMethodVisit(at: at, scenario: name, script: script, userAgent: record["userAgent"]?.stringValue,
                                                formProblem: record["formProblem"]?.stringValue))
    }

    /// The check of a browser AReq's `threeDSCompInd` against what the ACS saw of its 3DS Method.
    func threeDSCompIndCheck(_ areq: AReq, script: ThreeDSMethodScript) -> CheckResult {
        let claimed = areq["threeDSCompInd"] ?? ""
        guard script.hasURL else {
            return claimed == "U" ? .pass(.threeDSCompInd, "U: the card's range has no 3DS Method URL")
                : .fail(.threeDSCompInd, "\(claimed): the card's range has no 3DS Method URL in the PRes, so threeDSCompInd must be U")
        }
        let visit = methodVisits.get(areq.threeDSServerTransID)
        switch claimed {
        case "Y":
            guard let visit else {
                return .fail(.threeDSCompInd, "Y, but the ACS's 3DS Method page was never loaded for threeDSServerTransID \(areq.threeDSServerTransID)")
            }
            guard let delay = visit.script.notificationDelayMilliseconds else {
                return .fail(.threeDSCompInd, "Y, but this card's 3DS Method page never notifies: N after \(Int(Self.threeDSMethodWait)) seconds")
            }
            if Double(delay) > Self.threeDSMethodWait * 1000 {
                return .fail(.threeDSCompInd, "Y, but the page notifies after \(delay) ms: past the \(Int(Self.threeDSMethodWait)) seconds the 3DS Server waits, N")
            }
            return .pass(.threeDSCompInd, "Y: the 3DS Method ran and notified")
        case "N":
            return .pass(.threeDSCompInd, visit == nil ? "N: the 3DS Method page was not loaded (the range has one: run it when you can)"
                : "N: the 3DS Method ran, its notification did not come in time")
        default:
            return .fail(.threeDSCompInd, "U, but the card's range has a 3DS Method URL in the PRes: run it, then send Y or N")
        }
    }
}
