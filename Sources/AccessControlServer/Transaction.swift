public import EMV3DS
import EMVCrypto
import EventLoops
import Faults
public import JSON
import Net
import Scenarios
public import Store

/// The medium and the cardholder's progress of an open challenge.
struct ChallengeState: Sendable {
    /// How the challenge reaches the cardholder: the app's secure channel, or the browser's pages.
    enum Medium: Sendable {
        case secureChannel(SecureChannel)
        case browser(BrowserChallenge)
    }

    var medium: Medium
    var session: ChallengeSession
    /// What the app's channel key was derived from, to say which input a CReq it does not open got wrong (this
    /// instance's challenges only: another instance taking one up has the key alone).
    var keyInputs: ChannelKeyInputs?
    /// The `sdkCounterStoA` the next CReq must carry.
    var nextCounter = 0
    /// Ends the challenge at its time limit; cancelled when it ends sooner.
    var timer: OneShotTimer?
}

extension AccessControlServer {
    /// What the ACS remembers of a transaction.
    public struct Transaction: ArchivableRecord {
        /// Where a transaction is.
        enum Phase: Sendable {
            /// Ended with the ARes (frictionless).
            case answered
            case challenge(ChallengeState)
            /// Waiting to send the decoupled result.
            case decoupled
            /// An ARes S sent: waiting for the second AReq, or its time limit (RReq N, reason 14).
            case spcOffered
            case ended(String)
        }

        public let ids: TransactionIDs
        public let version: MessageVersion
        public let scenario: String
        let maskedPAN: String
        let messageCategory: String
        let scheme: PaymentScheme?
        /// Where the RReq goes: the AReq's `dsURL`.
        let resultsURL: String
        public var transStatus: TransStatus = .unavailable
        /// How the cardholder authenticates: the challenge's first screen, or decoupled.
        var authentication: AuthenticationMethod?
        /// `acsRenderingType` of an app challenge, repeated in its RReq.
        var renderingType: JSONValue?
        var phase = Phase.answered
        public var result: ChallengeResult?
        /// What came back for the RReq.
        public var resultsDelivery: String?
        /// The scenario's faults (the challenge endpoint acts on the SDK leg's, round by round).
        var faults: [FaultInjection] = []
        /// The Erro a correct SDK sends about those faults, and whether it came.
        /// What a correct SDK does about the scenario: the challenge's end, the Erro it sends.
        var expectation: Expectation?
        var expectedSDKErro: ErrorCode? { expectation?.sdkErro }
        var sdkErroReceived: ErrorCode?
        /// Set once the ACS has spoilt what a correct SDK stops at, with a runtime error (acsSignedContent, a CRes's HTTP
        /// answer) or a protocol error (an Erro in place of the CRes): from then on no CReq is due.
        var noCReqDue = false
        /// The time limit of its challenge when not the ACS's: a load mix's (``Scenario/challengeTimeout``).
        var challengeTimeout: Double?
        /// Its scenario was drawn from a load mix: its challenge ends when the mix does.
        var drawnByLoadMix = false
        /// The team whose mix drew it (nil: the mix of no team): that team's `DELETE /admin/load-mix` ends its challenge.
        var loadMixTeam: String?
        /// The scenario spoilt the final CRes so that the SDK owes an Erro about it: the challenge's end is judged when that
        /// Erro comes, after the final CRes, not as the final CRes goes.
        var finalCResRefusalDue = false
        /// When the last CRes went, to tell how soon an SDK's Erro about it came.
        var lastCResAt: ContinuousClock.Instant?
        /// The app challenge's time limit at the SDK: the AReq's sdkMaxTimeout from the ARes.
        var sdkTimeout: SDKTimeout?
        /// When the ACS's time limit ends the challenge, in milliseconds since 1970 (the same for every instance of a cluster).
        var challengeDeadline: Int64?
        /// The browser AReq's `threeDSCompInd`, which chose the outcome played (``Scenario/outcome(threeDSCompInd:in:)``).
        var threeDSCompInd: String?
        /// A Split-SDK's transaction (2.3.1 `sdkType` 02): its CReqs must be in A128GCM (SB 279 §6.2.4.1).
        var splitSDK = false
        /// A Split-SDK/Browser's (`splitSdkType.sdkVariant` 02): its CReqs say `oobAppURLInd` 02 (SB 279, `oobAppURLInd`).
        var splitSDKBrowser = false
        /// Decoupled Authentication Fallback (2.3.1): when the RReq D went (milliseconds since 1970), and the dsTransID of
        /// the 3RI AReq that followed it up.
        var fallbackRReqAt: Int64?
        var fallbackFollowedBy: String?
        /// The ACS's clock: the follow-up window is measured on it.
        let clock: HarnessClock
        /// The scenario's 2.3.1 outcome fields, repeated in the RReq of a challenge or decoupled authentication.
        var outcomeFields: JSONValue?
        /// Erro messages from the DS about this transaction's ARes.
        var erroReceived: [String] = []
        /// Members of the AReq that its table does not define for its version or channel.
        var warnings: [String] = []

        init(areq: AReq, acsTransID: String, scenario: String, scheme: PaymentScheme?, resultsURL: String, clock: HarnessClock) {
            self.clock = clock
            var ids = areq.ids
            ids.acsTransID = acsTransID
            self.ids = ids
            version = areq.version
            maskedPAN = CardNumber.masked(areq.acctNumber)
            self.scenario = scenario
            messageCategory = areq.messageCategory
            self.scheme = scheme
            self.resultsURL = resultsURL
            splitSDK = areq["sdkType"] == SplitSDK.sdkType
            splitSDKBrowser = areq.isSplitSDKBrowser
        }

        /// The scheme's ECI for an authenticated or attempted result (Visa-like for a PAN of no known scheme).
        func eci(for status: TransStatus) -> String? {
            (scheme ?? PaymentScheme(rid: "", name: "", cardRanges: [])).eci(for: status)
        }

        /// Cancels the challenge's time limit, if one runs.
        func stopTimer() {
            if case .challenge(let state) = phase { state.timer?.cancel() }
        }

        /// Leaves the challenge phase for `next`, stopping its timer.
        mutating func leaveChallenge(for next: Phase) {
            if case .challenge(let state) = phase { state.timer?.cancel() }
            phase = next
        }

        /// The RReq reporting `result`.
        func rreq(for result: ChallengeResult) -> RReq {
            var rreq = RReq(messageVersion: version, messageCategory: messageCategory.isEmpty ? "01" : messageCategory,
                            threeDSServerTransID: ids.threeDSServerTransID ?? "", acsTransID: ids.acsTransID ?? "",
                            dsTransID: ids.dsTransID ?? "", sdkTransID: ids.sdkTransID, transStatus: result.transStatus,
                            interactionCounter: CReq.counterText(min(result.interactions, 99)).suffix(2).description)
            if result.transStatus.carriesReason { rreq.transStatusReason = result.reason ?? "01" }
            // A decoupled fallback's D says why (29 or 30, DecoupledFallback).
            if result.transStatus == .decoupled { rreq.transStatusReason = result.reason }
            if result.transStatus.carriesAuthenticationValue {
                rreq.authenticationValue = TransactionIdentifier.authenticationValue()
                rreq.eci = eci(for: result.transStatus)
            }
            if let authentication { rreq.setAuthentication(authentication) }
            rreq.acsRenderingType = renderingType
            // 09 and 10 name an Erro the RReq must carry; without one (an SDK cancelling with them) it is a transaction error.
            let reportsErro = result.cancel == .erroFromSDK || result.cancel == .erroToSDK
            rreq.challengeCancel = (reportsErro && result.errorReport == nil ? ChallengeCancel.transactionError : result.cancel)?.rawValue
            rreq.challengeErrorReporting = result.errorReport
            rreq.whiteListStatus = result.whiteListStatus
            if let outcomeFields { rreq.addOutcomeFields(outcomeFields) }
            return rreq
        }

        public var archivedJSON: [UInt8] { JSONWriter.write(json) }

        /// Answered without a challenge, or ended and its RReq sent (whatever came back): no message is due.
        public var isSettled: Bool {
            switch phase {
            case .answered: true
            // A challenge that fell back stays in memory while its 3RI AReq may come (DecoupledFallback.followUpWindow).
            case .ended: resultsDelivery != nil && !awaitsFallbackFollowUp
            case .challenge, .decoupled, .spcOffered: false
            }
        }

        public var json: JSONValue {
            let phaseName: String
            var ended: String?
            switch phase {
            case .answered: phaseName = "answered"
            case .challenge: phaseName = "challenge"
            case .decoupled: phaseName = "decoupled"
            case .spcOffered: phaseName = "spc"
            case .ended(let why):
                phaseName = "ended"
                ended = why
            }
            return .object(omittingAbsent: [
                ("acsTransID", .string(ids.acsTransID)),
                ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
                ("dsTransID", .string(ids.dsTransID)),
                ("sdkTransID", .string(ids.sdkTransID)),
                ("messageVersion", .string(version.rawValue)),
                ("acctNumber", .string(maskedPAN)),
                ("scenario", .string(scenario)),
                ("phase", .string(phaseName)),
                ("endedBecause", .string(ended)),
                ("transStatus", .string(transStatus.rawValue)),
                ("transStatusReason", .string(result?.reason)),
                ("challengeCancel", .string(result?.cancel?.rawValue)),
                ("whiteListStatus", .string(result?.whiteListStatus)),
                ("decoupledFallback", fallbackRReqAt.map { at in .object(omittingAbsent: [
                    ("rreqAtMs", .number(String(at))), ("followedBy", .string(fallbackFollowedBy))]) }),
                ("resultsDelivery", .string(resultsDelivery)),
                ("expectedSDKErro", .string(sdkErroCheck)),
                ("erroReceived", erroReceived.isEmpty ? nil : .array(erroReceived.map(JSONValue.string))),
                ("warnings", warnings.isEmpty ? nil : .array(warnings.map(JSONValue.string))),
                ("resume", resume),
            ])
        }

        /// An RReq D went, and no 3RI AReq has followed it up yet, within the window the specification gives it.
        var awaitsFallbackFollowUp: Bool {
            guard let at = fallbackRReqAt, fallbackFollowedBy == nil else { return false }
            return clock.wallMilliseconds() - at < Int64(DecoupledFallback.followUpWindow * 1000)
        }

        /// "expected Erro 302 from SDK: received" (or "not received", or what came instead).
        var sdkErroCheck: String? {
            guard let expected = expectedSDKErro else { return sdkErroReceived.map { "unexpected Erro \($0.rawValue) from SDK" } }
            let prefix = "expected Erro \(expected.rawValue) from SDK: "
            switch sdkErroReceived {
            case nil: return prefix + "not received"
            case expected?: return prefix + "received"
            case let other?: return prefix + "received Erro \(other.rawValue) instead"
            }
        }
    }
}
