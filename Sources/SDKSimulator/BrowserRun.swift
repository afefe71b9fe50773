public import EMV3DS
import EMVCrypto
import Foundation
import JOSE
public import JSON
import Net

/// A cardholder's browser on a merchant's checkout, driven without a browser: the pages' forms
/// are read and posted as a browser posts them (`simulate --channel browser`). The merchant's
/// back end is the harness's requestor API: prepare, the 3DS Method in a hidden iframe,
/// authenticate with the browser's fields, the ACS's pages, the final CRes to the notificationURL.
public struct BrowserSimulator: Sendable {
    public let simulator: Simulator

    public init(simulator: Simulator) { self.simulator = simulator }

    /// How long a merchant's page waits for the 3DS Method's notification (Core specification).
    static let methodWaitMilliseconds = 10_000

    /// What the run did, for the printout, besides the transaction.
    public struct Run: Sendable {
        public let transaction: TransactionRun
        public let lines: [String]
    }

    /// Runs one browser transaction on `pan` in `version`, answering the challenge's pages with `answers`.
    public func run(pan: String, version: MessageVersion, answers: ChallengeAnswers,
                    resultWait: Duration = .seconds(30)) async throws(SimulationError) -> Run {
        var lines: [String] = []
        let prepared = try await postJSON("/3ds-server/prepare", .object([("acctNumber", .string(pan))]))
        guard let id = prepared["threeDSServerTransID"]?.stringValue else { throw .unreadable("prepare answered no threeDSServerTransID") }
        if let methodURL = prepared["threeDSMethodURL"]?.stringValue, let methodData = prepared["threeDSMethodData"]?.stringValue {
            lines.append("  3DS Method: " + (try await runMethod(methodURL, data: methodData)))
        } else {
            lines.append("  3DS Method: none for this card's range")
        }
        var body = Self.authenticationBody(pan: pan, version: version)
        body.set("threeDSServerTransID", .string(id))
        let authenticator = try await enrolForSPC(pan: pan, version: version, lines: &lines)
        if authenticator != nil {
            body.set("threeDSRequestorSpcSupport", .string("Y"))
            body.set("payeeOrigin", .string(Self.payeeOrigin))
        }
        var authentication = SimulationResult(record: try await postJSON("/3ds-server/authenticate", body, acceptingBadGateway: true))
        if let compInd = authentication.sentAReq?["threeDSCompInd"]?.stringValue { lines.append("  AReq threeDSCompInd \(compInd)") }
        var transactionID = id
        if authentication.state == "spc", let authenticator, let play = simulator.spc {
            // The second AReq is a transaction of its own: what follows is its.
            authentication = try await confirm(authentication.record, play: play, authenticator: authenticator, lines: &lines)
            transactionID = authentication.threeDSServerTransID ?? id
        }
        guard authentication.state == "challenge" else {
            return Run(transaction: TransactionRun(authentication: authentication, challenge: nil, final: authentication), lines: lines)
        }
        guard authentication.transStatus == TransStatus.challenge.rawValue else {
            // Decoupled: the result comes by RReq, later.
            let final = try await simulator.awaitResult(transactionID, limit: resultWait)
            return Run(transaction: TransactionRun(authentication: authentication, challenge: nil, final: final), lines: lines)
        }
        guard let challenge = authentication.record["browserChallenge"], let acsURL = challenge["acsURL"]?.stringValue,
              let creq = challenge["creq"]?.stringValue, let sessionData = challenge["threeDSSessionData"]?.stringValue else {
            throw .unreadable("an ARes C without browserChallenge {acsURL, creq, threeDSSessionData}")
        }
        let (outcome, pages) = try await runChallenge(acsURL: acsURL, creq: creq, sessionData: sessionData, answers: answers)
        lines += pages
        // As the app's run reads it after a final CRes (the ACS sends the RReq before it; a decoupled fallback's comes
        // after). An error page in place of one may come of a time limit, which ends the challenge before its RReq.
        let final = if case .protocolError = outcome {
            try await simulator.awaitResult(transactionID, limit: .seconds(5))
        } else {
            try await simulator.record(transactionID, after: ChallengeRunner.Report(outcome: outcome), limit: resultWait)
        }
        var transaction = TransactionRun(authentication: authentication, challenge: ChallengeRunner.Report(outcome: outcome), final: final)
        transaction.channel = .browser
        return Run(transaction: transaction, lines: lines)
    }

    // MARK: Secure Payment Confirmation (2.3.1; docs/spc.md)

    /// The merchant the simulated checkout is: SPC takes an https payee origin.
    static let payeeOrigin = "https://merchant.example"

    /// With `simulator.spc`, at 2.3.1: a software authenticator enrolled for the card on the issuer's page, as a browser at
    /// localhost does (WebAuthn needs a domain); nil otherwise.
    private func enrolForSPC(pan: String, version: MessageVersion, lines: inout [String]) async throws(SimulationError) -> SoftwareAuthenticator? {
        guard simulator.spc != nil, version >= .v2_3_1 else { return nil }
        let authenticator: SoftwareAuthenticator
        do { authenticator = try SoftwareAuthenticator() } catch { throw .unreadable("no key for the software authenticator: \(error)") }
        let host = Self.relyingPartyHost(simulator.baseURL)
        let origin = (simulator.baseURL.hasPrefix("https") ? "https://" : "http://") + host
        let rpID = String(host.split(separator: ":").first ?? "localhost")
        // The registration answers a challenge the ACS issued, as the enrolment page's does.
        let challenge: [UInt8]
        do {
            let answer = try await simulator.client.post(simulator.baseURL + "/acs/spc/enrol/challenge", body: [])
            guard answer.status == .ok, let text = try? JSONReader.parse(answer.body).value["challenge"]?.stringValue,
                  let bytes = try? Base64URL.decode(text) else { throw SimulationError.refused(status: answer.status.code, "SPC enrolment challenge: \(answer.bodyText)") }
            challenge = bytes
        } catch let error as SimulationError { throw error } catch { throw .unreachable("\(error)") }
        let (clientData, attestation) = authenticator.registration(rpID: rpID, origin: origin, challenge: challenge)
        let body = JSONValue.object([("acctNumber", .string(pan)), ("clientDataJSON", .string(Base64URL.encode(clientData))),
                                     ("attestationObject", .string(Base64URL.encode(attestation)))])
        let response: HTTPResponse
        do { response = try await simulator.client.post(simulator.baseURL + "/acs/spc/credentials", body: JSONWriter.write(body), headers: ["Host": host, "Origin": origin]) } catch {
            throw .unreachable("\(error)")
        }
        guard response.status.code == 201 else { throw .refused(status: response.status.code, "SPC enrolment: \(response.bodyText)") }
        lines.append("  SPC: credential enrolled for the card at \(rpID)")
        return authenticator
    }

    /// The host (and port) of `baseURL` as a relying party: an IP address becomes localhost, which resolves to it.
    static func relyingPartyHost(_ baseURL: String) -> String {
        let authority = baseURL.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? "localhost"
        let port = authority.split(separator: ":").dropFirst().first.map { ":\($0)" } ?? ""
        let name = String(authority.split(separator: ":").first ?? "")
        return (name.allSatisfy { $0.isNumber || $0 == "." } ? "localhost" : name) + port
    }

    /// What the browser's SPC does with the ARes S's data, posted to the 3DS Server, which sends the second AReq.
    private func confirm(_ record: JSONValue, play: SPCPlay, authenticator: SoftwareAuthenticator,
                         lines: inout [String]) async throws(SimulationError) -> SimulationResult {
        guard let spc = record["spc"], let data = spc["spcTransData"], data["challenge"]?.stringValue != nil,
              let resultURL = spc["resultURL"]?.stringValue, let rpID = spc["webAuthnCredList"]?.arrayValue?.first?["rpID"]?.stringValue else {
            throw .unreadable("a transaction in state spc without spc {spcTransData.challenge, webAuthnCredList[].rpID, resultURL}")
        }
        let result: JSONValue
        switch play {
        case .accept, .spoil:
            // A spoilt assertion is one a careless page produces: signed for another challenge than the ARes S's.
            let other = play == .spoil ? Base64URL.encode(randomBytes(32)) : nil
            do { result = .object([("assertion", try authenticator.assertion(confirming: data, rpID: rpID, topOrigin: Self.payeeOrigin, challenge: other).json)]) } catch {
                throw .unreadable("the software authenticator could not sign: \(error)")
            }
        case .decline: result = .object([("spcIncompInd", .string("02"))])
        case .unavailable: result = .object([("spcIncompInd", .string("01"))])
        }
        lines.append("  ARes S: SPC \(play.rawValue) → " + (result["assertion"] != nil ? "assertion" : "spcIncompInd \(result["spcIncompInd"]?.stringValue ?? "")"))
        return SimulationResult(record: try await postJSON(resultURL, result, acceptingBadGateway: true))
    }

    /// Posts `threeDSMethodData` to the method URL as the hidden iframe does, then the page's
    /// notification form after its delay, unless it never comes within the 10 seconds (not waited out here).
    private func runMethod(_ url: String, data: String) async throws(SimulationError) -> String {
        let page = try await postForm(url, [("threeDSMethodData", data)])
        guard let form = HTMLForm(page, id: "notify") else { return "the page never notifies: threeDSCompInd N (a page waits 10 s)" }
        let delay = form.attributes["data-notify-after-ms"].flatMap(Int.init) ?? 0
        guard delay <= Self.methodWaitMilliseconds else { return "the page notifies after \(delay) ms, past the 10 s: N" }
        if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
        _ = try await postForm(form.action, form.fields)
        return "notified" + (delay > 0 ? " after \(delay) ms" : "")
    }

    /// The ACS's pages, one answer each, until the page that posts the final CRes; that form
    /// goes to the notificationURL. The outcome is what the final CRes says.
    private func runChallenge(acsURL: String, creq: String, sessionData: String,
                              answers: ChallengeAnswers) async throws(SimulationError) -> (SDKOutcome, [String]) {
        var lines: [String] = []
        var page = try await postForm(acsURL, [("creq", creq), ("threeDSSessionData", sessionData)])
        var cancelled = false
        for index in 0..<100 {
            guard let form = HTMLForm(page) else { return (.protocolError("a page without a form: \(Self.title(page))"), lines) }
            if let cres = form.field("cres") {
                let status = try? Base64URL.decodeObject(cres).object["transStatus"]?.stringValue
                // The notification page is the merchant's: whatever it answers, the RReq has the result.
                _ = try await postForm(form.action, form.fields)
                lines.append("  final CRes transStatus \(status ?? "?") posted to the notificationURL")
                if cancelled { return (.cancelled, lines) }
                return (status.flatMap(TransStatus.init(rawValue:)).map(SDKOutcome.completed) ?? .protocolError("a final CRes without transStatus"), lines)
            }
            let answer = index < answers.answers.count ? answers.answers[index] : ""
            lines.append("  page \(index + 1): \(Self.title(page)) → \(answer.isEmpty ? "(nothing)" : answer)")
            let fields: [(String, String)]
            if page.contains("name=\"action\"") {
                fields = Self.fields(answering: answer, whitelisting: page.contains("name=\"whitelisting\"") ? answers.whitelisting : nil)
                cancelled = answer.hasPrefix("cancel")
            } else {
                // The scenario's own HTML: its form's first field.
                fields = [(ChallengeRunner.firstInputName(page) ?? "answer", answer)]
            }
            page = try await postForm(form.action, fields)
        }
        return (.protocolError("the challenge did not end within 100 pages"), lines)
    }

    /// The harness's page's form for one scripted answer: its buttons are `action` values.
    static func fields(answering answer: String, whitelisting: String?) -> [(String, String)] {
        var fields: [(String, String)]
        switch answer {
        case "resend": fields = [("action", "resend")]
        case "continue": fields = [("action", "continue")]
        case "empty", "": fields = [("action", "submit")]
        default:
            if answer == "cancel" || answer.hasPrefix("cancel:") { return [("action", "cancel")] }
            // A multiple choice: one field per ticked box.
            fields = [("action", "submit")] + answer.split(separator: ",").map { ("answer", String($0)) }
        }
        if whitelisting == "Y" { fields.append(("whitelisting", "Y")) }
        return fields
    }

    /// A browser authentication's body: what a merchant's page collects of the browser, with
    /// the card and a purchase.
    public static func authenticationBody(pan: String, version: MessageVersion) -> JSONValue {
        .object([
            ("deviceChannel", .string("02")), ("messageVersion", .string(version.rawValue)), ("acctNumber", .string(pan)),
            ("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978")), ("cardExpiryDate", .string("3012")),
            ("browserAcceptHeader", .string("text/html,application/xhtml+xml")),
            ("browserUserAgent", .string("Mozilla/5.0 (X11; Linux x86_64) threeds-harness-simulate")),
            ("browserIP", .string("192.0.2.10")), ("browserJavaEnabled", .bool(false)), ("browserJavascriptEnabled", .bool(true)),
            ("browserLanguage", .string("en-GB")), ("browserColorDepth", .string("24")), ("browserScreenHeight", .string("900")),
            ("browserScreenWidth", .string("1440")), ("browserTZ", .string("-60")), ("acceptLanguage", .array([.string("en-GB"), .string("en")])),
            ("challengeWindowSize", .string("05")),
        ])
    }

    // MARK: HTTP

    private func postJSON(_ path: String, _ body: JSONValue, acceptingBadGateway: Bool = false) async throws(SimulationError) -> JSONValue {
        let response: HTTPResponse
        do { response = try await simulator.client.post(simulator.baseURL + path, body: JSONWriter.write(body), headers: simulator.caseHeaders) } catch { throw .unreachable("\(error)") }
        // 502 carries the record of a transaction the DS failed: that is a result, not a refusal.
        guard response.status.code == 200 || (acceptingBadGateway && response.status.code == 502) else {
            throw .refused(status: response.status.code, response.bodyText)
        }
        do { return try JSONReader.parse(response.body).value } catch { throw .unreadable(error.description) }
    }

    private func postForm(_ url: String, _ fields: [(String, String)]) async throws(SimulationError) -> String {
        let response: HTTPResponse
        do { response = try await simulator.client.post(url, body: Self.encode(fields), contentType: "application/x-www-form-urlencoded") } catch {
            throw .unreachable("\(error)")
        }
        guard response.status.code == 200 else { throw .refused(status: response.status.code, Self.title(response.bodyText)) }
        return response.bodyText
    }

    static func encode(_ fields: [(String, String)]) -> [UInt8] { FormEncoding.body(fields) }

    /// A page's heading (or title), and its paragraph when it is a refusal, for the printout.
    static func title(_ page: String) -> String {
        let heading = page.firstMatch(of: #/<h1>([^<]*)</h1>/#)?.output.1 ?? page.firstMatch(of: #/<title>([^<]*)</title>/#)?.output.1 ?? "untitled page"
        return HTMLForm.unescape(String(heading))
    }
}

/// A page's form as a browser reads it: where it posts, its attributes, its hidden fields.
public struct HTMLForm: Sendable {
    public let action: String
    public let attributes: [String: String]
    public let fields: [(String, String)]

    /// The page's first form, or the one with `id`.
    public init?(_ page: String, id: String? = nil) {
        let tags = page.matches(of: #/<form\b([^>]*)>/#)
        guard let tag = tags.first(where: { id == nil || Self.attributes($0.output.1)["id"] == id }) else { return nil }
        attributes = Self.attributes(tag.output.1)
        guard let action = attributes["action"] else { return nil }
        self.action = action
        let rest = page[tag.range.upperBound...]
        let body = rest[..<(rest.range(of: "</form>")?.lowerBound ?? rest.endIndex)]
        fields = body.matches(of: #/<input\b([^>]*)>/#).compactMap { input in
            let attributes = Self.attributes(input.output.1)
            guard attributes["type"] == "hidden", let name = attributes["name"] else { return nil }
            return (name, attributes["value"] ?? "")
        }
    }

    /// The value of the hidden field `name`.
    public func field(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }

    private static func attributes(_ text: Substring) -> [String: String] {
        var attributes: [String: String] = [:]
        for match in text.matches(of: #/([a-zA-Z-]+)="([^"]*)"/#) { attributes[String(match.output.1)] = unescape(String(match.output.2)) }
        return attributes
    }

    /// The character references the harness's pages write (Markup.escape).
    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#10;", with: "\n").replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// What a simulated browser does after an ARes S (`simulate --spc`).
public enum SPCPlay: String, Sendable, CaseIterable {
    /// The cardholder confirms: the assertion goes in the second AReq.
    case accept
    /// The cardholder cancels the browser's prompt: spcIncompInd 02.
    case decline
    /// The browser cannot run SPC: spcIncompInd 01.
    case unavailable
    /// A faulty page: an assertion signed for another challenge (the ACS answers N/01, `areq.spc` fails).
    case spoil
}
