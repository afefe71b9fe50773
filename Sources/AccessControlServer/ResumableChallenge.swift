import EMV3DS
import EMVCrypto
import JSON
import Scenarios
import Store

/// What another instance of a cluster needs to go on with an open challenge whose instance died
/// (docs/scale.md): the secure channel's key or the browser's form state, the cardholder's progress, the
/// counter due and the time limits, kept in the stored record under `resume` while the challenge is open
/// (and only then: a settled record carries no key). The script is the scenario's, read again by name.
extension AccessControlServer.Transaction {
    var resume: JSONValue? {
        guard case .challenge(let state) = phase else { return nil }
        let medium: JSONValue = switch state.medium {
        case .secureChannel(let channel): .object([("channelKey", .string(Base64URL.encode(channel.key)))])
        case .browser(let browser):
            .object(omittingAbsent: [
                ("notificationURL", .string(browser.notificationURL)), ("started", .bool(browser.started)),
                ("threeDSSessionData", .string(browser.threeDSSessionData)), ("windowSize", .string(browser.windowSize)),
            ])
        }
        return .object(omittingAbsent: [
            ("medium", medium), ("progress", state.session.progress), ("nextCounter", .number(String(state.nextCounter))),
            ("messageCategory", .string(messageCategory)), ("scheme", .string(scheme?.rid)), ("resultsURL", .string(resultsURL)),
            ("authentication", .string(authentication?.rawValue)), ("renderingType", renderingType),
            ("threeDSCompInd", .string(threeDSCompInd)), ("noCReqDue", noCReqDue ? .bool(true) : nil), ("splitSDK", splitSDK ? .bool(true) : nil),
            ("splitSDKBrowser", splitSDKBrowser ? .bool(true) : nil),
            ("deadline", challengeDeadline.map { .number(String($0)) }),
            ("sdkTimeout", sdkTimeout.map { .object([("minutes", .number(String($0.minutes))), ("start", .number(String($0.wallStart)))]) }),
        ])
    }

    /// The open challenge as its stored record left it; nil when the record has no `resume` (settled, another role's),
    /// or its scenario no longer scripts a challenge (the scenarios changed since).
    init?(stored record: JSONValue, catalog: ScenarioCatalog, schemes: [PaymentScheme], clock: HarnessClock) {
        guard let resume = record["resume"], let acsTransID = record["acsTransID"]?.stringValue,
              let version = record["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)),
              let name = record["scenario"]?.stringValue, let scenario = catalog.scenario(named: name),
              let resultsURL = resume["resultsURL"]?.stringValue, let medium = resume["medium"],
              let nextCounter = resume["nextCounter"]?.numberText.flatMap(Int.init) else { return nil }
        let channel: DeviceChannel = medium["channelKey"] == nil ? .browser : .app
        let outcome = channel == .browser ? scenario.outcome(threeDSCompInd: resume["threeDSCompInd"]?.stringValue, in: catalog) : scenario.outcome
        guard case .challenge(let script) = outcome.plan(for: version, on: channel),
              let progress = resume["progress"], let session = ChallengeSession(script: script, version: version, progress: progress) else { return nil }
        let kept: ChallengeState.Medium
        if let key = medium["channelKey"]?.stringValue {
            guard let bytes = try? Base64URL.decode(key, part: "channelKey"), let secureChannel = SecureChannel(key: bytes) else { return nil }
            kept = .secureChannel(secureChannel)
        } else {
            guard let notificationURL = medium["notificationURL"]?.stringValue else { return nil }
            var browser = BrowserChallenge(notificationURL: notificationURL)
            browser.started = medium["started"] == .bool(true)
            browser.threeDSSessionData = medium["threeDSSessionData"]?.stringValue
            browser.windowSize = medium["windowSize"]?.stringValue
            kept = .browser(browser)
        }
        ids = TransactionIDs(threeDSServerTransID: record["threeDSServerTransID"]?.stringValue, acsTransID: acsTransID,
                             dsTransID: record["dsTransID"]?.stringValue, sdkTransID: record["sdkTransID"]?.stringValue)
        self.version = version
        self.scenario = name
        self.clock = clock
        maskedPAN = record["acctNumber"]?.stringValue ?? ""
        messageCategory = resume["messageCategory"]?.stringValue ?? ""
        scheme = resume["scheme"]?.stringValue.flatMap { rid in schemes.first { $0.rid == rid } }
        self.resultsURL = resultsURL
        outcomeFields = version >= .v2_3_1 ? scenario.outcomeFields : nil
        transStatus = .challenge
        authentication = resume["authentication"]?.stringValue.flatMap(AuthenticationMethod.init(rawValue:))
        renderingType = resume["renderingType"]
        phase = .challenge(ChallengeState(medium: kept, session: session, nextCounter: nextCounter))
        faults = scenario.faults
        expectation = scenario.expectation
        noCReqDue = resume["noCReqDue"] == .bool(true)
        splitSDK = resume["splitSDK"] == .bool(true)
        splitSDKBrowser = resume["splitSDKBrowser"] == .bool(true)
        challengeDeadline = resume["deadline"]?.numberText.flatMap(Int64.init)
        threeDSCompInd = resume["threeDSCompInd"]?.stringValue
        if let timeout = resume["sdkTimeout"], let minutes = timeout["minutes"]?.numberText.flatMap(Int.init),
           let start = timeout["start"]?.numberText.flatMap(Int64.init) {
            // The other instance's moment, on this instance's clock.
            sdkTimeout = SDKTimeout(minutes: minutes, challengeStart: clock.instant() - .milliseconds(clock.wallMilliseconds() - start), wallStart: start)
        }
        erroReceived = record["erroReceived"]?.arrayValue?.compactMap(\.stringValue) ?? []
        warnings = record["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
