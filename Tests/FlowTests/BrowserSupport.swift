import EMV3DS
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

// What the browser-channel tests share: a merchant page's authentication body, HTML forms
// posted as a browser posts them, and the ACS's pages read as a browser reads them.

/// A browser authentication's body for `POST /3ds-server/authenticate`: every browser field a
/// merchant page collects (the table keeps each version's own), as the simulator's browser sends it.
func browserRequest(pan: String, version: MessageVersion) -> JSONValue {
    BrowserSimulator.authenticationBody(pan: pan, version: version)
}

/// An `application/x-www-form-urlencoded` body.
func form(_ fields: [(String, String)]) -> [UInt8] { FormEncoding.body(fields) }

/// A page of the ACS as a browser reads it (the simulator's reading): its first form, or a failed expectation.
func ACSPage(_ html: String) throws -> HTMLForm { try #require(HTMLForm(html), "no form with an action in the page: \(html)") }

/// The AReq a 3DS Server's record says it sent.
func sentAReq(_ record: JSONValue) -> JSONValue? { SimulationResult(record: record).sentAReq }

extension RunningHarness {
    /// Posts an HTML form to `url`, as a browser does.
    func postForm(_ url: String, _ fields: [(String, String)]) async throws -> HTTPResponse {
        try await client.post(url, body: form(fields), contentType: "application/x-www-form-urlencoded")
    }
}
