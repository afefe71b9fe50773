import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import JOSE
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store
import Synchronization

/// Secure Payment Confirmation (EMV 3DS 2.3.1, browser channel; docs/spc.md). The issuer enrols a WebAuthn
/// credential for a card on its own page; a later AReq that says the requestor supports SPC
/// (`threeDSRequestorSpcSupport` Y) gets an ARes S with what the merchant's page passes to the browser's SPC
/// (`spcTransData`, `webAuthnCredList`); the page's second AReq brings the assertion back, and the ACS verifies it.
///
/// The flow's fields are from EMVCo's Specification Bulletin 279 (the 2.3.1 changes); the core specification's
/// SPC section is not replicated there, so how the second AReq names the first is the harness's reading (docs/spc.md):
/// `threeDSRequestorPriorAuthenticationInfo` with `threeDSReqPriorAuthMethod` 05 and `threeDSReqPriorRef` the first acsTransID.
extension AccessControlServer {
    static let spcEnrolPath = "/acs/spc/enrol", spcCredentialsPath = "/acs/spc/credentials", spcChallengePath = "/acs/spc/enrol/challenge"
    /// `spcTransData.timeout`, milliseconds: the 60000-500000 the table allows; the browser's prompt waits this long.
    static let spcTimeout = "300000"

    func registerSecurePaymentConfirmation(on router: inout Router) {
        router.get(Self.spcEnrolPath) { request, _ in
            Self.enrolmentPage(acctNumber: request.queryItems["acctNumber"] ?? "", challenge: self.spcChallenges.issue())
        }
        // For an enrolment without the page (a test's software authenticator): the challenge the registration must answer.
        router.post(Self.spcChallengePath) { _, _ in
            .emv(.object([("challenge", .string(Base64URL.encode(self.spcChallenges.issue()))),
                          ("expiresInSeconds", .number(String(SPCEnrolmentChallenges.lifetime.components.seconds)))]))
        }
        router.post(Self.spcCredentialsPath) { request, _ throws(HTTPError) in try self.enrol(request) }
    }

    /// A registration from the enrolment page: `{acctNumber, clientDataJSON, attestationObject}`, base64url as
    /// PublicKeyCredential.toJSON() writes them. The relying party is the page's host: WebAuthn needs a domain.
    func enrol(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let body = try request.jsonBody()
        guard let acctNumber = body["acctNumber"]?.stringValue, (13...19).contains(acctNumber.count), CardNumber.isLuhnValid(acctNumber) else {
            throw HTTPError(.badRequest, "acctNumber must be a 13-19 digit Luhn-valid card number")
        }
        func bytes(_ name: String) throws(HTTPError) -> [UInt8] {
            guard let text = body[name]?.stringValue ?? body["response"]?[name]?.stringValue, let bytes = try? Base64URL.decodeLeniently(text) else {
                throw HTTPError(.badRequest, "\(name) is required, base64url (the registration's AuthenticatorAttestationResponse)")
            }
            return bytes
        }
        guard let host = request.headers["Host"], let rpID = Self.relyingParty(host: host) else {
            throw HTTPError(.badRequest, "WebAuthn needs a domain as relying party: open the enrolment page at http://localhost:PORT, not at an IP address")
        }
        let origin = (request.headers["Origin"]).flatMap { $0.isEmpty ? nil : $0 } ?? "http://\(host)"
        let credential: WebAuthnCredential
        let clientData = try bytes("clientDataJSON")
        do { credential = try WebAuthnCredential(clientDataJSON: clientData, attestationObject: try bytes("attestationObject"), origin: origin, rpID: rpID) } catch {
            throw HTTPError(.badRequest, "registration refused: \(error)")
        }
        // Checked last, so that a registration refused for another reason leaves its challenge good for a second try.
        do {
            guard spcChallenges.take(try WebAuthnCredential.challenge(ofRegistration: clientData)) else {
                throw WebAuthnError("clientDataJSON.challenge", "is not a challenge this ACS issued, or has expired, or was used already "
                                    + "(WebAuthn Level 3, §7.1, step 8): enrol from the page (GET \(Self.spcEnrolPath)), or ask POST \(Self.spcChallengePath) for one")
            }
        } catch {
            throw HTTPError(.badRequest, "registration refused: \(error)")
        }
        spcEnrolments.add(credential, for: acctNumber)
        logger.info("SPC credential enrolled", metadata: ["acctNumber": "\(CardNumber.masked(acctNumber))", "rpID": "\(rpID)"])
        return .emv(.object([("acctNumber", .string(CardNumber.masked(acctNumber))), ("rpID", .string(rpID)),
                             ("credentialId", .string(Base64URL.encode(credential.id)))]), status: .created)
    }

    /// The host of a `Host` header when it is a domain (not an IP literal): the credential's RP ID.
    static func relyingParty(host: String) -> String? {
        let name = host.hasPrefix("[") ? "" : String(host.split(separator: ":").first ?? "")
        guard !name.isEmpty, !name.allSatisfy({ $0.isNumber || $0 == "." }) else { return nil }
        return name.lowercased()
    }

    // MARK: The first AReq: ARes S

    /// The ARes S for a card whose scenario offers SPC, when the requestor supports it and the card has a credential;
    /// nil when SPC does not apply (the scenario's outcome, its fallback, is played).
    func offerSPC(_ areq: AReq, script: SPCScript?, ares: inout ARes) -> SPCOffer? {
        guard let script, areq.version >= .v2_3_1, areq.deviceChannel == DeviceChannel.browser.rawValue,
              areq["threeDSRequestorSpcSupport"] == "Y" else { return nil }
        let credentials = spcEnrolments.credentials(for: areq.acctNumber)
        guard !credentials.isEmpty else { return nil }
        let currency = areq["purchaseCurrency"].flatMap(Currency.init)
        let payment = areq["messageCategory"] == MessageCategory.payment.rawValue
        // For a non-payment authentication the amount is 0 (SB 279, spcTransData).
        let exponent = areq["purchaseExponent"].flatMap(Int.init) ?? currency?.exponent ?? 2
        let value = payment ? Currency.decimal(digits: areq["purchaseAmount"] ?? "0", exponent: exponent) ?? "0" : "0"
        let expectation = SPCAssertion.Expectation(
            challenge: Base64URL.encode(randomBytes(32)), payeeOrigin: areq["payeeOrigin"],
            currency: currency?.alphabetic ?? areq["purchaseCurrency"] ?? "EUR", value: value,
            displayName: script.displayName ?? "Harness card ending \(areq.acctNumber.suffix(4))")
        ares.transStatus = .securePaymentConfirmation
        ares.spcTransData = .object(omittingAbsent: [
            ("challenge", .string(expectation.challenge)), ("currency", .string(expectation.currency)), ("value", .string(expectation.value)),
            ("displayName", .string(expectation.displayName)), ("icon", .string(Self.cardIcon)), ("timeout", .string(Self.spcTimeout)),
            ("payeeOrigin", .string(expectation.payeeOrigin)),
            ("payeeName", expectation.payeeOrigin == nil ? .string(String((areq["merchantName"] ?? "Merchant").prefix(40))) : nil),
        ])
        // At most SPCEnrolments.perCard credentials, within the 1-10 webAuthnCredList takes.
        ares.webAuthnCredList = .array(credentials.map { credential in
            .object([("rpID", .string(credential.rpID)), ("credentialIds", .string(Base64URL.encode(credential.id)))])
        })
        return SPCOffer(expectation: expectation, credentials: credentials, script: script, acsTransID: ares.acsTransID, first: SPCOffer.boundFields(of: areq))
    }

    /// The ACS waits `challengeTimeout` (10 minutes by default) for the second AReq; without it, RReq N with
    /// transStatusReason 14 (transaction timed out at the ACS) for the first (SB 279, Req 452-453). The wait is cancelled
    /// when the second AReq comes.
    func awaitSecondAReq(_ acsTransID: String) {
        let timer = OneShotTimer(after: settings.challengeTimeout, on: peer.client.nextLoop()) { [self] in
            guard take(acsTransID) != nil else { return }
            logger.info("no second AReq after the ARes S", metadata: ["acsTransID": "\(acsTransID)"])
            transactions.update(acsTransID) { $0.phase = .ended("no second AReq after the ARes S within \(settings.challengeTimeout) s") }
            background.run { [self] in await report(acsTransID, ChallengeResult(transStatus: .notAuthenticated, reason: "14", interactions: 0)) }
        }
        spcOffers.update(acsTransID) { $0.timer = timer }
    }

    /// The open offer of the ARes S `acsTransID`, taken: once, by the second AReq or by the time limit.
    private func take(_ acsTransID: String) -> SPCOffer? {
        spcOffers.update(acsTransID) { offer -> SPCOffer? in
            guard !offer.answered else { return nil }
            offer.answered = true
            return offer
        } ?? nil
    }

    // MARK: The second AReq

    /// What the second AReq after an ARes S decides; nil for an AReq that is none: it names no open ARes S in its prior
    /// authentication (`threeDSReqPriorAuthMethod` 05, `threeDSReqPriorRef`), and brings no SPC result (an earlier SPC
    /// authentication named as prior is what the method also says).
    func spcFollowUp(_ areq: AReq) -> SPCFollowUp? {
        let prior = areq.json["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue ?? []
        let methods = areq.json["threeDSRequestorAuthenticationInfo"]?.arrayValue ?? []
        let assertionData = methods.first(where: { $0["threeDSReqAuthMethod"]?.stringValue == "09" })?["threeDSReqAuthData"]
        let bringsResult = assertionData != nil || areq["spcIncompInd"] != nil
        let refs = prior.filter { $0["threeDSReqPriorAuthMethod"]?.stringValue == "05" }.compactMap { $0["threeDSReqPriorRef"]?.stringValue }
        // Taken once: a second AReq sent again finds the offer answered. (A loop, not a lazy compactMap: taking has an
        // effect, and a lazy collection's `first` runs the closure twice.)
        var taken: SPCOffer?
        for ref in refs where taken == nil { taken = take(ref) }
        guard let offer = taken else {
            guard bringsResult else { return nil }
            return .unknownPrior("an SPC result, but threeDSRequestorPriorAuthenticationInfo names no ARes S of this ACS awaiting its second AReq "
                                 + "(threeDSReqPriorAuthMethod 05, threeDSReqPriorRef the first acsTransID)" + (refs.isEmpty ? "" : ": \(refs.joined(separator: ", "))"))
        }
        offer.timer?.cancel()
        if let changed = offer.changedField(in: areq) {
            return .refused(offer, "its \(changed) is not the first AReq's: the second AReq carries the same card, purchase and requestor")
        }
        if let data = assertionData {
            do {
                let assertion = try SPCAssertion(json: data)
                guard let credential = offer.credentials.first(where: { $0.id == assertion.credentialID }) else {
                    return .refused(offer, "rawId is none of the credentials the ARes S listed in webAuthnCredList")
                }
                try assertion.verify(with: credential, expecting: offer.expectation)
                return .verified(offer)
            } catch {
                return .refused(offer, error.description)
            }
        }
        if let incomplete = areq["spcIncompInd"] { return .incomplete(offer, incomplete) }
        return .refused(offer, "carries neither an SPC assertion (threeDSRequestorAuthenticationInfo with threeDSReqAuthMethod 09) nor spcIncompInd")
    }

    /// A 48×30 card, what the browser's SPC prompt shows beside `displayName` (`spcTransData.icon` may be a data URL).
    static let cardIcon = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAADAAAAAeCAIAAADlxgqWAAAAP0lEQVR42u3TQQ0AIAwEwYrggysk1imIKI+mmc0JmM/FPtlqAQQ0DrSaBQRUBrk9EBBQ3n8BAfUAuT0Q0GzQAwXTBu+q/LWYAAAAAElFTkSuQmCC"

    /// The issuer's enrolment page: registers a WebAuthn credential with the `payment` extension for the card.
    static func enrolmentPage(acctNumber: String, challenge: [UInt8]) -> HTTPResponse {
        .html("""
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Issuer: Secure Payment Confirmation enrolment</title>
            <style>body{font:16px system-ui,sans-serif;max-width:34em;margin:2em auto;padding:0 1em;color:#1d2733}
            input,button{font:inherit;padding:.5em;margin:.3em 0}button{background:#1950a0;color:#fff;border:0;border-radius:4px;padding:.6em 1.2em}
            #status{margin-top:1em;padding:.8em;border-radius:4px;background:#eef2f7}</style></head>
            <body><h1>Pay faster with this device</h1>
            <p>The harness's test issuer registers a passkey for your card. Merchants can then ask you to confirm payments with it
            (Secure Payment Confirmation, EMV 3-D Secure 2.3.1).</p>
            <label>Card number<br><input id="acctNumber" inputmode="numeric" size="22" value="\(Markup.escape(acctNumber))"></label><br>
            <button id="enrol" type="button">Register this device</button>
            <div id="status" role="status">Not enrolled yet.</div>
            <script>
            const b64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
            document.getElementById("enrol").addEventListener("click", async () => {
              const status = document.getElementById("status"), acctNumber = document.getElementById("acctNumber").value.trim();
              try {
                const credential = await navigator.credentials.create({ publicKey: {
                  rp: { name: "Harness test issuer" },
                  user: { id: crypto.getRandomValues(new Uint8Array(16)), name: acctNumber, displayName: "Card ending " + acctNumber.slice(-4) },
                  challenge: Uint8Array.from(atob("\(Base64URL.encode(challenge))".replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
                  pubKeyCredParams: [{ type: "public-key", alg: -7 }],
                  authenticatorSelection: { userVerification: "required", residentKey: "required", authenticatorAttachment: "platform" },
                  extensions: { payment: { isPayment: true } } } });
                const answer = await fetch("\(spcCredentialsPath)", { method: "POST", headers: { "Content-Type": "application/json" },
                  body: JSON.stringify({ acctNumber, clientDataJSON: b64url(credential.response.clientDataJSON),
                                         attestationObject: b64url(credential.response.attestationObject) }) });
                const result = await answer.json();
                status.textContent = answer.ok ? "Enrolled: card " + result.acctNumber + ", credential " + result.credentialId.slice(0, 12) + "…"
                                               : "Refused: " + (result.error || answer.status);
                status.dataset.state = answer.ok ? "enrolled" : "refused";
              } catch (error) {
                status.textContent = "The browser did not register a credential: " + error.name + ": " + error.message;
                status.dataset.state = "failed";
              }
            });
            </script></body></html>
            """)
    }
}

/// An ARes S awaiting the second AReq: what the browser was to confirm, with which credentials, and of which AReq.
struct SPCOffer: Sendable {
    /// Offers kept, oldest dropped first; the ACS's 10 minutes for the second AReq (SB 279, Req 452) bound them in time.
    static let capacity = 10_000
    /// What the second AReq must carry as the first did: the card, the purchase, the payee and requestor, the version and channel.
    static let boundFieldNames = ["acctNumber", "messageVersion", "deviceChannel", "messageCategory", "purchaseAmount", "purchaseCurrency",
                                  "purchaseExponent", "payeeOrigin", "threeDSRequestorID", "acquirerMerchantID"]

    let expectation: SPCAssertion.Expectation
    let credentials: [WebAuthnCredential]
    let script: SPCScript
    /// The ARes S's.
    let acsTransID: String
    /// The first AReq's values of ``boundFieldNames``.
    let first: [String: String]
    var answered = false
    /// The time limit's wait, cancelled when the second AReq comes.
    var timer: OneShotTimer?

    static func boundFields(of areq: AReq) -> [String: String] {
        Dictionary(uniqueKeysWithValues: boundFieldNames.compactMap { name in areq[name].map { (name, $0) } })
    }

    /// The first of the bound fields the second AReq changed; nil when it carries them all as the first did.
    func changedField(in areq: AReq) -> String? {
        Self.boundFieldNames.first { areq[$0] != first[$0] }
    }
}

/// What came of the second AReq.
enum SPCFollowUp {
    /// The assertion verified: the scenario's SPC status.
    case verified(SPCOffer)
    /// An assertion that does not verify, or neither an assertion nor `spcIncompInd`: N, reason 01.
    case refused(SPCOffer, String)
    /// SPC did not complete (`spcIncompInd`): the scenario's outcome, its fallback.
    case incomplete(SPCOffer, String)
    /// `threeDSReqPriorRef` names no open SPC offer: answered as a first AReq.
    case unknownPrior(String)

    /// The ARes S this AReq follows, when it names an open one.
    var firstAcsTransID: String? {
        switch self {
        case .verified(let offer), .refused(let offer, _), .incomplete(let offer, _): offer.acsTransID
        case .unknownPrior: nil
        }
    }

    var check: CheckResult {
        switch self {
        case .verified: .pass(.spcFollowUp, "the assertion verifies with the enrolled credential")
        case .refused(_, let reason): .fail(.spcFollowUp, reason)
        case .incomplete(_, let indicator): .pass(.spcFollowUp, "spcIncompInd \(indicator): SPC did not complete, the ACS falls back")
        case .unknownPrior(let reason): .fail(.spcFollowUp, reason)
        }
    }
}

/// The WebAuthn credentials enrolled for SPC, by card number; bounded in cards and in credentials per card.
final class SPCEnrolments: Sendable {
    static let cardCapacity = 10_000, perCard = 5
    private let state = Mutex<(byCard: [String: [WebAuthnCredential]], order: [String])>(([:], []))

    func add(_ credential: WebAuthnCredential, for acctNumber: String) {
        state.withLock { state in
            if state.byCard[acctNumber] == nil { state.order.append(acctNumber) }
            state.byCard[acctNumber, default: []].append(credential)
            state.byCard[acctNumber] = Array(state.byCard[acctNumber, default: []].suffix(Self.perCard))
            while state.order.count > Self.cardCapacity { state.byCard[state.order.removeFirst()] = nil }
        }
    }

    func credentials(for acctNumber: String) -> [WebAuthnCredential] { state.withLock { $0.byCard[acctNumber] ?? [] } }
}
