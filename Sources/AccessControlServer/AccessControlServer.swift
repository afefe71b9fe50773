import EMV3DS
import EMVCrypto
import Foundation
import Logging
import Messaging
import Net
import Scenarios
import Store
import Synchronization

public struct AccessControlServerSettings: Sendable {
    public var referenceNumber = "3DS_LOA_ACS_HARN_020200_00001"
    public var operatorID = "HARNESS-ACS-OPERATOR"
    public var schemes: [PaymentScheme]

    public init(schemes: [PaymentScheme]) { self.schemes = schemes }
}

/// The scenarios in force; the harness swaps them on reload without stopping the ACS.
public final class ScenarioSource: Sendable {
    private let current: Mutex<ScenarioCatalog>

    public init(_ catalog: ScenarioCatalog) { current = Mutex(catalog) }

    public var catalog: ScenarioCatalog { current.withLock { $0 } }

    public func replace(with catalog: ScenarioCatalog) { current.withLock { $0 = catalog } }
}

/// The Access Control Server role: decides each authentication from the scenarios.
public final class AccessControlServer: Sendable {
    /// What the ACS remembers of a transaction.
    public struct Transaction: Sendable {
        public let ids: TransactionIDs
        public let version: MessageVersion
        public let scenario: String
        public var transStatus: TransStatus
    }

    let settings: AccessControlServerSettings
    let scenarios: ScenarioSource
    public let transactions: TransactionStore<Transaction>
    let logger: Logger

    public init(settings: AccessControlServerSettings, scenarios: ScenarioSource, capacity: Int = 100_000, logger: Logger) {
        self.settings = settings
        self.scenarios = scenarios
        transactions = TransactionStore(capacity: capacity)
        self.logger = logger
    }

    public func register(on router: inout Router) {
        router.post("/acs/areq") { request, _ in self.authenticate(request) }
    }

    func authenticate(_ request: HTTPRequest) -> HTTPResponse {
        let areq: AReq
        do { areq = try AReq(bytes: try request.emvMessageBody(), rules: AReqRules.fromDirectoryServer) } catch {
            logger.info("AReq refused", metadata: ["reason": "\(error)"])
            return .erro(error, from: .acs)
        }
        let scenario = scenarios.catalog.scenario(for: areq.acctNumber)
        let acsTransID = TransactionIdentifier.make()
        var ares = ARes(messageVersion: areq.version, threeDSServerTransID: areq.threeDSServerTransID, acsTransID: acsTransID,
                        dsTransID: areq["dsTransID"] ?? "", sdkTransID: areq.sdkTransID, acsReferenceNumber: settings.referenceNumber,
                        dsReferenceNumber: areq["dsReferenceNumber"] ?? "", transStatus: .unavailable)
        ares.acsOperatorID = settings.operatorID
        let (status, reason) = scenario.outcome.frictionlessResult(for: areq.version)
        ares.transStatus = status
        ares.transStatusReason = reason
        if status.carriesAuthenticationValue {
            ares.authenticationValue = TransactionIdentifier.authenticationValue()
            // A PAN of no known scheme (sent by a peer DS) gets the Visa-like default ECIs.
            ares.eci = (settings.schemes.scheme(for: areq.acctNumber) ?? PaymentScheme(rid: "", name: "", cardRanges: [])).eci(for: status)
        }
        var ids = areq.ids
        ids.acsTransID = acsTransID
        transactions.put(acsTransID, Transaction(ids: ids, version: areq.version, scenario: scenario.name, transStatus: status))
        logger.debug("ARes", metadata: ["scenario": "\(scenario.name)", "transStatus": "\(status.rawValue)", "acsTransID": "\(acsTransID)"])
        return .emv(ares.json)
    }
}
