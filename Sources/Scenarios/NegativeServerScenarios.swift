import EMV3DS
import Faults
import JSON

// The negative cases of a 3DS Server: the ARes, the RReq, the PRes and the Erro it reads, spoilt as an SDK's CRes are.
extension NegativeScenarios {
    /// The cases of a 3DS Server, on the file's first frictionless Y scenario: its ARes (Annex A Table A.2) without each
    /// element the ARes table requires there, with each string element sent as "", with an element given a value outside
    /// its version's set, sent as a JSON value of another type or of a length outside its format's bounds, in the versions
    /// where the table says so and alike in the app and the browser (one scenario plays
    /// in both channels); and an unknown critical extension (Erro 202) and an unknown member (ignored). The 3DS Server must
    /// end the transaction in error and send the DS an Erro naming the element (Core specification: it validates the ARes;
    /// Table A.4), which `ares.erro` grades.
    public static func ares(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = plainFrictionlessY(in: scenarios) else { return [] }
        // A payment's (messageCategory 01), as the scenario's transactions are.
        let probe = { (version: MessageVersion, channel: DeviceChannel) in
            (aresProbe(version: version, channel: channel), MessageContext(version: version, channel: channel, category: .payment))
        }
        let found = agreeingInBothChannels(in: MessageVersion.allCases, rules: AResRules.rules, probe: probe)
            + agreeingInBothChannels(in: MessageVersion.allCases, rules: AResRules.rules, spoils: spoilsToIgnore, probe: probe)
            + [Spoil(.criticalExtension, "messageExtension"), Spoil(.unknownMember, unknownMember)].map { FoundCase(spoil: $0, versions: MessageVersion.allCases) }
        return serverCases(found, base: base, message: "ares", cardPrefix: aresCardPrefix, leg: .directoryServer,
                           spoilt: "The frictionless ARes",
                           ignored: "The 3DS Server ignores it: the transaction ends Y, and no Erro goes to the DS (graded: ares.erro).",
                           refusedState: "error") { code, naming in
            "The 3DS Server refuses the ARes: it ends the transaction in error and sends the DS Erro \(code.rawValue) naming \(naming) (graded: ares.erro)."
        }
    }

    /// The cases of a 3DS Server's challenge ARes (transStatus C), on the file's first plain challenge of a text screen (the
    /// one the CRes cases start from): each element the ARes C carries that the frictionless ARes does not
    /// (`acsChallengeMandated`, the authentication method; the app's `acsRenderingType` and `acsSignedContent`, the
    /// browser's `acsURL`), spoilt as the frictionless ARes's cases spoil theirs. An element one channel's ARes carries makes
    /// a case of that channel (``Scenario/channel``). The 3DS Server must refuse the ARes as it refuses a frictionless one:
    /// no challenge starts.
    public static func challengeAres(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = scenarios.first(where: { showsFirst(.text, $0) }) else { return [] }
        return aresCases(of: "challenge", base: base, cardPrefix: challengeAresCardPrefix, versions: MessageVersion.allCases,
                         spoilt: "The challenge ARes (transStatus C)", probe: challengeAresProbe)
    }

    /// The cases of a 3DS Server's ARes of the other outcomes, as the challenge ARes's: a final ARes N, R and U (each on
    /// the file's first plain frictionless scenario of that status; `transStatusReason`, which each requires, so that a
    /// 3DS Server that checks the condition for N alone fails R's and U's) and, from 2.2.0, a decoupled ARes D (on the
    /// decoupled scenario the RReq cases start from; `acsChallengeMandated`, `acsDecConInd`, `cardholderInfo`, the
    /// authentication method). A refused ARes D starts no decoupled authentication: the ACS, told by the DS's Erro, sends no RReq.
    public static func otherOutcomeAres(from scenarios: [Scenario]) -> [Scenario] {
        let finals = finalOutcomes.flatMap { outcome -> [Scenario] in
            let base = scenarios.first { scenario in
                guard isPlain(scenario), case .frictionless(let status, _) = scenario.outcome else { return false }
                return status == outcome.status
            }
            return base.map { base in
                aresCases(of: outcome.name, base: base, cardPrefix: outcome.cardPrefix, versions: MessageVersion.allCases,
                          spoilt: "The \(outcome.name) ARes (transStatus \(outcome.status.rawValue))") { version, channel in
                    var ares = probedARes(version: version, channel: channel, transStatus: outcome.status)
                    ares.transStatusReason = "01"
                    return ares.json
                }
            } ?? []
        }
        // The result 5 s after the ARes D, not 1 s: time for a refusing 3DS Server's Erro to reach the ACS before any RReq.
        return finals + (plainDecoupled(in: scenarios, delay: 5).map { base in
            aresCases(of: "decoupled", base: base, cardPrefix: decoupledAresCardPrefix, versions: MessageVersion.allCases.filter { $0 >= .v2_2_0 },
                      spoilt: "The decoupled ARes (transStatus D)") { version, channel in
                var ares = probedARes(version: version, channel: channel, transStatus: .decoupled)
                ares.acsChallengeMandated = "Y"
                ares.acsDecConInd = "Y"
                ares.cardholderInfo = "Approve the payment in your banking app."
                ares.setAuthentication(.decoupled)
                return ares.json
            }
        } ?? [])
    }

    /// The cases of a 3DS Server's reading of an Erro, on the file's first plain frictionless Y scenario: the DS answers the
    /// AReq with an Erro (an `erro` fault on the `ds` leg) that the Erro table's cases spoil as the ARes's spoil the ARes
    /// (Annex A: Error Message, Table A.1's error elements): an element left out, sent empty, of another type or length, of
    /// a value outside its set, written twice, an unknown member. Whatever is wrong with it, the 3DS Server ends the
    /// transaction in error and sends nothing back: "A receiving component never responds to the sending component of an
    /// Error Message, also when it is in error" (EMVCo 3DS FAQ, Technical Questions, April 2026, Q52). `ares.erro` fails
    /// an Erro that comes. In every version, alike in the app and the browser.
    public static func erro(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = plainFrictionlessY(in: scenarios) else { return [] }
        let probe = { (version: MessageVersion, channel: DeviceChannel) in
            (Fault.erroMessage(erroInsteadOfTheARes, insteadOf: aresProbe(version: version, channel: channel), from: .directoryServer).json,
             MessageContext(version: version, channel: channel))
        }
        let found = agreeingInBothChannels(in: MessageVersion.allCases, rules: ErroRules.rules, probe: probe)
            + [FoundCase(spoil: Spoil(.unknownMember, unknownMember), versions: MessageVersion.allCases)]
        return erroCases(found, base: base, message: "erro", cardPrefix: erroCardPrefix, code: erroInsteadOfTheARes, on: .directoryServer,
                         spoilt: "The Erro the DS answers the AReq with",
                         expectation: Expectation(threeDSServerState: "error", text: "The 3DS Server ends the transaction in error and sends the DS "
                                                      + "nothing about the Erro, in error or not (EMVCo FAQ Q52; graded: ares.erro)."))
    }

    /// The code of the Erro the DS answers the AReq with in the Erro's cases: the ACS could not be reached.
    static let erroInsteadOfTheARes = ErrorCode.systemConnectionFailure

    /// The generated Erro cases' cards.
    static let erroCardPrefix = "400000012"

    /// The final outcomes whose ARes carries a reason: their cases' names and cards.
    static let finalOutcomes: [(name: String, status: TransStatus, cardPrefix: String)] = [
        ("declined", .notAuthenticated, "400000004"), ("rejected", .rejected, "400000001"), ("unavailable", .unavailable, "400000002"),
    ]

    /// The cases of an ARes of `outcome` on `base`: each element `probe`'s ARes carries that the frictionless ARes Y does
    /// not, in the channel whose ARes carries it. The 3DS Server must refuse such an ARes as a frictionless one.
    static func aresCases(of outcome: String, base: Scenario, cardPrefix: String, versions: [MessageVersion], spoilt: String,
                          probe: (MessageVersion, DeviceChannel) -> JSONValue) -> [Scenario] {
        let found = casesByChannel(in: versions, rules: AResRules.rules) { version, channel in
            (probe(version, channel), MessageContext(version: version, channel: channel, category: .payment),
             Set(aresProbe(version: version, channel: channel).objectMembers?.map(\.key) ?? []))
        }
        return inTheirChannels(found, serverCases(found.map(\.found), base: base, message: "ares-\(outcome)", cardPrefix: cardPrefix,
                                                leg: .directoryServer, spoilt: spoilt, ignored: "", refusedState: "error") { code, naming in
            "The 3DS Server refuses the ARes: it ends the transaction in error, goes no further with it, and sends the DS Erro \(code.rawValue) naming \(naming) (graded: ares.erro)."
        })
    }

    /// The file's first plain frictionless Y scenario: what the ARes and PRes cases start from.
    static func plainFrictionlessY(in scenarios: [Scenario]) -> Scenario? {
        scenarios.first { scenario in
            guard isPlain(scenario), case .frictionless(.authenticated, nil) = scenario.outcome else { return false }
            return true
        }
    }

    /// Whether `scenario` plays its outcome as scripted, on a card of its own: no faults, no expectation of its own, no SPC,
    /// no outcome fields.
    static func isPlain(_ scenario: Scenario) -> Bool {
        scenario.pan != nil && scenario.faults.isEmpty && scenario.expectation == nil && scenario.spc == nil && scenario.outcomeFields == nil
    }

    /// The file's first plain decoupled Y scenario with a delay, its result sent `delay` seconds after its ARes D.
    static func plainDecoupled(in scenarios: [Scenario], delay: Double = 1) -> Scenario? {
        guard var base = scenarios.first(where: { scenario in
            guard isPlain(scenario), case .decoupled(let script) = scenario.outcome, script.status == .authenticated, script.reason == nil,
                  script.delay != nil else { return false }
            return true
        }), case .decoupled(var script) = base.outcome else { return nil }
        script.delay = delay
        base.outcome = .decoupled(script)
        return base
    }

    /// The generated decoupled ARes cases' cards.
    static let decoupledAresCardPrefix = "400000003"

    /// The cases of a 3DS Server's RReq after a challenge, on the same challenge as the challenge ARes's (its text screen
    /// answered): each element the RReq of a challenge carries that the decoupled result's RReq does not (its cases,
    /// ``rreq(from:)``, spoil those), and in 2.1.0, which has no decoupled authentication, every one; spoilt as the RReq's
    /// cases spoil theirs, in the channel whose RReq carries the element (`acsRenderingType`: the app's). The 3DS Server
    /// must answer the RReq with the Erro the table names and take no result from it (`rreq.erro`); the SDK's challenge
    /// ends as it would (the ACS sends its final CRes whatever the RRes). In 2.1.0 also the unknown critical extension
    /// (Erro 202), the unknown member and the elements later versions define (taken), which the decoupled RReq's cases
    /// make from 2.2.0.
    public static func challengeRReq(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = scenarios.first(where: { showsFirst(.text, $0) }) else { return [] }
        let afterC = JSONValue.object([("transStatus", .string(TransStatus.challenge.rawValue))])
        let probe = { (version: MessageVersion, channel: DeviceChannel) in
            (challengeRReqProbe(version: version, channel: channel), MessageContext(version: version, channel: channel, category: .payment, request: afterC))
        }
        let found = casesByChannel(in: MessageVersion.allCases, rules: ResultsRules.rReq) { version, channel in
            let (message, context) = probe(version, channel)
            return (message, context, version >= .v2_2_0 ? Set(rreqProbe(version: version, channel: channel).objectMembers?.map(\.key) ?? []) : [])
        } + ([Spoil(.criticalExtension, "messageExtension"), Spoil(.unknownMember, unknownMember)].map { FoundCase(spoil: $0, versions: [.v2_1_0]) }
            + agreeingInBothChannels(in: [.v2_1_0], rules: ResultsRules.rReq, spoils: spoilsToIgnore, probe: probe)).map { ($0, nil) }
        return inTheirChannels(found, serverCases(found.map(\.found), base: base, message: "rreq-challenge", cardPrefix: challengeRReqCardPrefix,
                                                leg: .results, spoilt: "The RReq of the challenge's result",
                                                ignored: "The 3DS Server takes it: it answers an RRes, and the transaction ends Y (graded: rreq.erro).",
                                                refusedState: "challenge") { code, naming in
            "The 3DS Server answers the RReq with Erro \(code.rawValue) naming \(naming), not an RRes, and takes no result from it (graded: rreq.erro)."
        })
    }

    /// The spoils `probe` finds in each version and channel, leaving out the elements `covered` there (another message's
    /// cases spoil them); each with its versions, and its one channel when only one channel's message carries it in every
    /// one of them.
    static func casesByChannel(in versions: [MessageVersion], rules: MessageRules,
                               probe: (MessageVersion, DeviceChannel) -> (message: JSONValue, context: MessageContext, covered: Set<String>))
        -> [(found: FoundCase, channel: DeviceChannel?)] {
        var spoils: [Spoil] = []
        var channels: [Spoil: [MessageVersion: Set<DeviceChannel>]] = [:]
        for version in versions {
            for channel in [DeviceChannel.app, .browser] {
                let (message, context, covered) = probe(version, channel)
                for spoil in Self.probe(message, rules: rules, context: context, final: false) where !covered.contains(spoil.element) {
                    if channels[spoil] == nil { spoils.append(spoil) }
                    channels[spoil, default: [:]][version, default: []].insert(channel)
                }
            }
        }
        return spoils.map { spoil in
            let byVersion = channels[spoil] ?? [:]
            // The channels it is a case of in every one of its versions: both, or the one whose message carries the element.
            let common = byVersion.values.reduce(Set([DeviceChannel.app, .browser])) { $0.intersection($1) }
            return (FoundCase(spoil: spoil, versions: versions.filter { byVersion[$0] != nil }), common.count == 1 ? common.first : nil)
        }
    }

    /// `scenarios`, made of `found` in order, each in its one channel where it has one.
    static func inTheirChannels(_ found: [(found: FoundCase, channel: DeviceChannel?)], _ scenarios: [Scenario]) -> [Scenario] {
        zip(scenarios, found).map { scenario, found in
            var scenario = scenario
            scenario.channel = found.channel
            if let channel = found.channel { scenario.description += " \(channel == .app ? "App" : "Browser") channel only." }
            return scenario
        }
    }

    /// The RReq of a text challenge's result Y as the harness's ACS sends one (an app's carries sdkTransID and the
    /// rendering type of the challenge).
    static func challengeRReqProbe(version: MessageVersion, channel: DeviceChannel) -> JSONValue {
        var rreq = authenticatedRReq(version: version, channel: channel, interactions: "01", method: ACSUIType.text.authenticationMethod)
        if channel == .app { rreq.acsRenderingType = renderingType(version) }
        return rreq.json
    }

    /// The rendering type of a native text screen, as the ARes C and the RReq of an app challenge carry it.
    static func renderingType(_ version: MessageVersion) -> JSONValue? {
        AResRules.rules.buildMember("acsRenderingType", [
            ("acsInterface", .string("01")), ("acsUiTemplate", .string(ACSUIType.text.rawValue)), ("deviceUserInterfaceMode", .string("01")),
        ], version: version)
    }

    /// The generated cases' cards of the RReq of a challenge.
    static let challengeRReqCardPrefix = "400000005"

    /// An ARes C as the harness's ACS answers one: the app's with its rendering type and a signed content (any compact JWS
    /// of base64url parts: the 3DS Server passes it on unread), the browser's with the acsURL.
    static func challengeAresProbe(version: MessageVersion, channel: DeviceChannel) -> JSONValue {
        var ares = probedARes(version: version, channel: channel, transStatus: .challenge)
        ares.acsChallengeMandated = "Y"
        ares.setAuthentication(ACSUIType.text.authenticationMethod)
        if channel == .app {
            ares.acsSignedContent = "eyJhbGciOiJQUzI1NiJ9.eyJhY3NVUkwiOiJodHRwczovL2xvY2FsaG9zdC9hY3MvY2hhbGxlbmdlIn0.c2lnbmF0dXJl"
            ares.acsRenderingType = renderingType(version)
        } else {
            ares.acsURL = "https://localhost/acs/challenge/browser"
        }
        return ares.json
    }

    /// The generated challenge ARes cases' cards.
    static let challengeAresCardPrefix = "400000006"

    /// The generated ARes cases' cards: as ``cardPrefix``, another serial range.
    static let aresCardPrefix = "400000008"

    /// A frictionless ARes Y as the harness's ACS and DS answer one (an app's carries sdkTransID, and in 2.3.1 the device
    /// information version read and threeDSRequestorAppURLInd: without them the app's probe is refused before any spoil,
    /// and no case of a single element is found).
    static func aresProbe(version: MessageVersion, channel: DeviceChannel) -> JSONValue {
        var ares = probedARes(version: version, channel: channel, transStatus: .authenticated)
        ares.authenticationValue = "AAABBBCCCDDDEEEFFFGGGHHHIII="
        ares.eci = "05"
        return ares.json
    }

    /// What every probed ARes carries: the ids, the reference numbers and the operator, and the app's channel fields.
    private static func probedARes(version: MessageVersion, channel: DeviceChannel, transStatus: TransStatus) -> ARes {
        let id = placeholderID
        var ares = ARes(messageVersion: version, threeDSServerTransID: id, acsTransID: id, dsTransID: id, sdkTransID: channel == .app ? id : nil,
                        acsReferenceNumber: "3DS_LOA_ACS_HARN_020200_00001", dsReferenceNumber: "3DS_LOA_DIS_HARN_020200_00001",
                        transStatus: transStatus)
        ares.acsOperatorID = "HARNESS-ACS-OPERATOR"
        if channel == .app { ares.setAppChannelFields(deviceInfoVersion: "1.0") }
        return ares
    }

    /// The cases of a 3DS Server's RReq, on the file's first plain decoupled Y scenario (its result by RReq after a delay,
    /// made 1 s here): the RReq the DS relays (Annex A Table A.8) spoilt as the ARes's cases spoil the ARes, in the
    /// versions with decoupled authentication (2.1.0's ACS answers U/07). The 3DS Server must answer the RReq with the
    /// Erro the table names, not an RRes, and take no result from it (`rreq.erro`); an unknown member it takes.
    public static func rreq(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = plainDecoupled(in: scenarios) else { return [] }
        let probe = { (version: MessageVersion, channel: DeviceChannel) in
            (rreqProbe(version: version, channel: channel),
             MessageContext(version: version, channel: channel, category: .payment, request: .object([("acsDecConInd", .string("Y")), ("transStatus", .string("D"))])))
        }
        let versions = MessageVersion.allCases.filter { $0 >= .v2_2_0 }
        let found = agreeingInBothChannels(in: versions, rules: ResultsRules.rReq, probe: probe)
            + agreeingInBothChannels(in: versions, rules: ResultsRules.rReq, spoils: spoilsToIgnore, probe: probe)
            + [Spoil(.criticalExtension, "messageExtension"), Spoil(.unknownMember, unknownMember)].map { FoundCase(spoil: $0, versions: versions) }
        return serverCases(found, base: base, message: "rreq", cardPrefix: rreqCardPrefix, leg: .results,
                           spoilt: "The decoupled result's RReq",
                           ignored: "The 3DS Server takes it: it answers an RRes, and the transaction ends Y (graded: rreq.erro).",
                           refusedState: "challenge") { code, naming in
            "The 3DS Server answers the RReq with Erro \(code.rawValue) naming \(naming), not an RRes, and takes no result from it (graded: rreq.erro)."
        }
    }

    /// The cases of `rules` that `probe` makes alike in the app and the browser in each of `versions`, with the versions of
    /// each: the spoils of one element (``probe(_:rules:context:final:)``), or those `spoils` finds.
    static func agreeingInBothChannels(in versions: [MessageVersion], rules: MessageRules,
                                       spoils: (JSONValue, MessageRules, MessageContext) -> [Spoil] = { Self.probe($0, rules: $1, context: $2, final: false) },
                                       probe message: (MessageVersion, DeviceChannel) -> (JSONValue, MessageContext)) -> [FoundCase] {
        var found: [FoundCase] = []
        for version in versions {
            let (browserMessage, browserContext) = message(version, .browser)
            let inBrowser = Set(spoils(browserMessage, rules, browserContext))
            let (appMessage, appContext) = message(version, .app)
            for spoil in spoils(appMessage, rules, appContext) where inBrowser.contains(spoil) {
                add(spoil, in: version, to: &found)
            }
        }
        return found
    }

    /// What `message` may carry in `context`'s version that the receiver must ignore: each element another version of
    /// `rules` defines (``MessageRules/elementsOtherVersionsDefine(besides:context:)``), and each conditional element a rule
    /// has the receiver ignore where its condition does not hold (``MessageRules/elementsIgnoredOutsideTheirCondition(besides:context:)``).
    static func spoilsToIgnore(_ message: JSONValue, rules: MessageRules, context: MessageContext) -> [Spoil] {
        rules.elementsOtherVersionsDefine(besides: message, context: context).map { Spoil(.undefined, $0) }
            + rules.elementsIgnoredOutsideTheirCondition(besides: message, context: context).map { Spoil(.misplaced, $0) }
    }

    /// The scenarios of a 3DS Server's cases: `base` with each case's fault on `leg`, its description and expectation.
    /// `spoilt` names the message in a description; `ignored` says what the 3DS Server does with a change it must ignore;
    /// a refusal leaves the transaction in `refusedState`, and `refusal` says it for the Erro due and what it names.
    static func serverCases(_ found: [FoundCase], base: Scenario, message: String, cardPrefix: String, leg: FaultLeg,
                            spoilt: String, ignored: String, refusedState: String,
                            refusal: (ErrorCode, String) -> String) -> [Scenario] {
        found.enumerated().map { index, found in
            var scenario = base
            scenario.name = name(message, found.spoil)
            scenario.pan = card(cardPrefix, serial: index + 1)
            scenario.versions = Set(found.versions)
            scenario.faults = [FaultInjection(found.spoil.fault, on: leg)]
            scenario.description = "\(spoilt) \(found.spoil.change) (\(found.versions.map(\.rawValue).joined(separator: ", ")))."
            if let (code, naming) = found.spoil.erroDue {
                scenario.expectation = Expectation(threeDSServerState: refusedState, text: refusal(code, naming))
            } else {
                scenario.description += " " + ignored
                scenario.expectation = nil
            }
            return scenario
        }
    }

    /// The generated RReq cases' cards.
    static let rreqCardPrefix = "400000007"

    /// The cases of a 3DS Server's PRes (its answer to a PReq, Annex A: PRes), on the file's first frictionless Y scenario:
    /// the PRes the DS gives spoilt as the ARes's cases spoil the ARes, in the versions where the table says so, and an
    /// unknown critical extension (Erro 202) and an unknown member (taken). A PReq names no card: a case's faults are on
    /// the `pres` leg and spoil the PRes to the PReq the case is armed for (`POST /admin/ds/pres-faults` with its name).
    /// The 3DS Server must post the DS the Erro naming the element and keep the ranges it had (Core specification: it
    /// validates the PRes; Table A.4), which `pres.erro` grades. Listed in the app channel: a PReq has none of its own.
    public static func pres(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = plainFrictionlessY(in: scenarios) else { return [] }
        var found: [FoundCase] = []
        for version in MessageVersion.allCases {
            let (pres, context) = (presProbe(version: version), MessageContext(version: version))
            for spoil in Self.probe(pres, rules: PreparationRules.pRes, context: context, final: false)
                + spoilsToIgnore(pres, rules: PreparationRules.pRes, context: context) {
                add(spoil, in: version, to: &found)
            }
        }
        found += [Spoil(.criticalExtension, "messageExtension"), Spoil(.unknownMember, unknownMember)].map { FoundCase(spoil: $0, versions: MessageVersion.allCases) }
        // And the Erro the DS may answer a PReq with, spoilt as the ARes's Erro is: never answered (EMVCo FAQ Q52).
        let erroFound = erroSpoils(code: erroInsteadOfThePRes, from: .directoryServer, answer: presProbe)
        let erroCases = erroCases(erroFound, base: base, message: "pres-erro", cardPrefix: presErroCardPrefix, code: erroInsteadOfThePRes,
                                  on: .preparation, spoilt: "The Erro the DS answers the PReq it is armed for with", expectation: nil,
                                  ignored: "The 3DS Server keeps the card ranges it had and posts the DS nothing about the Erro, in error or not "
                                      + "(EMVCo FAQ Q52; graded: pres.erro).")
        return (serverCases(found, base: base, message: "pres", cardPrefix: presCardPrefix, leg: .preparation,
                            spoilt: "The PRes to the PReq it is armed for",
                            ignored: "The 3DS Server takes it, and posts no Erro about it (graded: pres.erro).",
                            refusedState: "completed") { code, naming in
            "The 3DS Server posts the DS Erro \(code.rawValue) naming \(naming) about the PRes (graded: pres.erro), and keeps the card ranges it had."
        } + erroCases).map { scenario in
            var scenario = scenario
            scenario.channel = .app
            return scenario
        }
    }

    /// The generated PRes cases' cards (a transaction on one is the base's frictionless Y: the case is its PRes).
    static let presCardPrefix = "400000010"

    /// The cards of the cases of the Erro in place of the PRes, and that Erro's code: a transient system failure.
    static let presErroCardPrefix = "400000014"
    static let erroInsteadOfThePRes = ErrorCode.transientSystemFailure

    /// A PRes as the harness's DS answers a PReq without serialNum: its serial and one card range.
    static func presProbe(version: MessageVersion) -> JSONValue {
        PRes(messageVersion: version, threeDSServerTransID: placeholderID, dsTransID: placeholderID, serialNum: "1700000000-0",
             cardRangeData: [CardRangeData(startRange: "4000000000000000", endRange: "4999999999999999", versions: .v2_1_0...MessageVersion.latest)]).json
    }

    /// The RReq of a decoupled result Y as the harness's ACS sends one (an app's carries sdkTransID).
    static func rreqProbe(version: MessageVersion, channel: DeviceChannel) -> JSONValue {
        authenticatedRReq(version: version, channel: channel, interactions: "00", method: .decoupled).json
    }

    /// An RReq of a payment's result Y authenticated by `method` after `interactions` (an app's carries sdkTransID).
    private static func authenticatedRReq(version: MessageVersion, channel: DeviceChannel, interactions: String, method: AuthenticationMethod) -> RReq {
        let id = placeholderID
        var rreq = RReq(messageVersion: version, messageCategory: MessageCategory.payment.rawValue, threeDSServerTransID: id, acsTransID: id,
                        dsTransID: id, sdkTransID: channel == .app ? id : nil, transStatus: .authenticated, interactionCounter: interactions)
        rreq.authenticationValue = "AAABBBCCCDDDEEEFFFGGGHHHIII="
        rreq.eci = "05"
        rreq.setAuthentication(method)
        return rreq
    }
}
