import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import JSON
import Messaging
import Net
import SDKSimulator
import Synchronization

/// A 3DS Server under test, as a team would write one against the docs: it posts AReqs straight
/// to the harness's DS (tagged with their run case), reads each answer with the protocol model,
/// answers an ARes it cannot use with an Erro, and answers RReqs at its own URL. Each `Bug` is a
/// common mistake a rehearsal must catch; with none it is a correct party.
final class SimulatedThreeDSServer: @unchecked Sendable {
    enum Bug: String, CaseIterable, Sendable {
        /// Takes an invalid ARes without telling the DS.
        case noErroAboutInvalidARes
        /// Answers every invalid ARes with Erro 203, whatever was wrong.
        case sameErroCodeForEverything
        /// Refuses a valid ARes with an Erro (a validation table stricter than Annex A).
        case erroAboutValidARes
        /// Answers the RReq with an RRes whose acsTransID is not the RReq's.
        case rresWithWrongAcsTransID
        /// Sends an AReq again with the same threeDSServerTransID.
        case reusesThreeDSServerTransID
        /// Answers every RReq with an RRes, without validating it or looking its transaction up.
        case rresToEveryRReq
        /// Refuses a valid RReq with an Erro (a validation table stricter than Annex A).
        case erroAboutValidRReq
        /// Answers the RReq after ``slowRResDelay``, past the DS's time limit in the test that sets it lower.
        case slowRRes
        /// Gives the right errorCode about an invalid ARes, with an errorDetail that names no data element (Table A.4 wants them).
        case errorDetailNamesNoElement
        /// Reads transStatusReason's condition as the ARes N's alone: takes an ARes R or U whatever its transStatusReason.
        case reasonCheckedForNOnly
        /// Refuses an ARes or an RReq with a member its version does not define (Erro 203 naming it): one no version
        /// defines, or another version's. Stricter than Annex A, A.2.
        case refusesMembersItsVersionDoesNotDefine
        /// Answers an Erro that cannot be read (no errorCode, an unknown errorComponent) with an Erro of its own, as it
        /// answers an invalid ARes: a receiver never answers an Erro, also one in error (EMVCo 3DS FAQ Q52).
        case answersAnInvalidErro
    }

    /// Mistakes about Decoupled Authentication Fallback (2.3.1), played by ``challenge(pan:version:tag:)``.
    enum FallbackBug: String, CaseIterable, Sendable {
        /// Asks for decoupled authentication as the primary method only (threeDSRequestorDecReqInd Y), never as a fallback.
        case fallbackNotAllowed
        /// Answers the RReq D with resultsStatus 01, as any other RReq.
        case resultsStatus01
        /// Sends no 3RI AReq after the RReq D.
        case noFollowUp
        /// Names the challenge with threeDSReqPriorAuthMethod 05 (an SPC authentication), not 02.
        case priorMethod05
    }

    let bugs: Set<Bug>
    let fallbackBugs: Set<FallbackBug>
    static let slowRResDelay = Duration.milliseconds(1500)
    private let harness: RunningHarness
    private let group = EventLoopGroup(loopCount: 1)
    private var server: HTTPServer!
    private var resultsURL: String { "http://127.0.0.1:\(server.httpPort ?? 0)/rreq" }
    /// What the RReq rules read of each ARes (decoupled or not), by the threeDSServerTransID of its AReq: an RReq naming another is refused.
    private let sent = Mutex([String: JSONValue]())
    /// Each AReq sent, its channel and its run case tag, by threeDSServerTransID: what a follow-up and an RReq's rules need.
    /// Each Erro the DS sent to its results URL.
    private let erros = Mutex([JSONValue]())
    var erroReceived: [JSONValue] { erros.withLock { $0 } }
    private let areqs = Mutex([String: (areq: JSONValue, channel: DeviceChannel, tag: String?)]())

    init(_ harness: RunningHarness, bugs: Set<Bug> = [], fallbackBugs: Set<FallbackBug> = []) throws {
        self.harness = harness
        self.bugs = bugs
        self.fallbackBugs = fallbackBugs
        var router = Router()
        router.post("/rreq") { [unowned self] (request, _) async throws -> HTTPResponse in
            if self.bugs.contains(.slowRRes) { try await Task.sleep(for: Self.slowRResDelay) }
            let rreq = try JSONReader.parse(request.body).value
            // An Erro the DS sends about an RRes is kept, not answered.
            if rreq["messageType"]?.stringValue == "Erro" {
                self.erros.withLock { $0.append(rreq) }
                return HTTPResponse(status: .ok)
            }
            if !self.bugs.contains(.rresToEveryRReq), let refusal = await self.refusal(of: request.body, rreq) {
                return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(refusal.json))
            }
            // A decoupled fallback (2.3.1): 04, and the 3RI AReq that performs it.
            let fallback = rreq["transStatus"]?.stringValue == "D"
            if fallback, !self.fallbackBugs.contains(.noFollowUp) { Task { try await self.followUp(rreq) } }
            // sdkTransID as the RReq has it: a 3RI one has none.
            var rres = JSONValue.object(omittingAbsent: [
                ("messageType", .string("RRes")), ("messageVersion", rreq["messageVersion"] ?? .null),
                ("threeDSServerTransID", rreq["threeDSServerTransID"] ?? .null), ("acsTransID", rreq["acsTransID"] ?? .null),
                ("dsTransID", rreq["dsTransID"] ?? .null), ("sdkTransID", rreq["sdkTransID"]),
                ("resultsStatus", .string(fallback && !self.fallbackBugs.contains(.resultsStatus01) ? "04" : "01")),
            ])
            if self.bugs.contains(.rresWithWrongAcsTransID) { rres.set("acsTransID", .string(UUID().uuidString.lowercased())) }
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(rres))
        }
        server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: nil, tls: nil),
                                router: router, group: group, logger: silentLogger)
        try server.start()
    }

    /// The first member of `message` its version's table does not define.
    static func undefinedMember(of message: JSONValue, in rules: MessageRules) -> String? {
        guard let version = message["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) else { return nil }
        return message.objectMembers?.first { $0.key != "messageType" && !rules.defines($0.key, in: version) }?.key
    }

    /// The Erro an RReq calls for: one naming a transaction this server never began (301), or one Annex A refuses.
    private func refusal(of body: [UInt8], _ rreq: JSONValue) async -> ErroMessage? {
        let invalid: InvalidMessage
        let ares = await aresRead(for: rreq["threeDSServerTransID"]?.stringValue)
        if bugs.contains(.erroAboutValidRReq) {
            invalid = InvalidMessage(Violation(field: "interactionCounter", code: .formatInvalid, reason: "a stricter table"), about: rreq)
        } else if let ares {
            let channel = rreq["threeDSServerTransID"]?.stringValue.flatMap { id in areqs.withLock { $0[id]?.channel } } ?? .app
            let version = rreq["threeDSServerTransID"]?.stringValue.flatMap { id in areqs.withLock { $0[id]?.areq["messageVersion"] } }
            do {
                let read = try RReq(bytes: body, channel: channel, ares: ares)
                // An RReq is in its transaction's version.
                if let version, version.stringValue != read.messageVersion.rawValue {
                    invalid = InvalidMessage(Violation(field: "messageVersion", code: .formatInvalid, reason: "is not the AReq's"), about: rreq)
                } else if bugs.contains(.refusesMembersItsVersionDoesNotDefine), let member = Self.undefinedMember(of: rreq, in: ResultsRules.rReq) {
                    invalid = InvalidMessage(Violation(field: member, code: .formatInvalid, reason: "is not a field of its version"), about: rreq)
                } else {
                    return nil
                }
            } catch { invalid = error }
        } else if rreq["threeDSServerTransID"] == nil {
            // No id to look a transaction up by: the message is refused as Annex A refuses it (201 naming the id), not as unknown.
            do { _ = try RReq(bytes: body); return nil } catch { invalid = error }
        } else {
            invalid = InvalidMessage(Violation(field: "threeDSServerTransID", code: .transactionIDNotRecognised, reason: "names no AReq of this 3DS Server"),
                                     about: rreq)
        }
        var erro = invalid.erro(from: .threeDSServer)
        erro.errorMessageType = "RReq"
        return erro
    }

    /// What the RReq rules read of the ARes of transaction `id`: nil when no AReq of this server has that id. An RReq may come
    /// while its ARes is still being read (a loaded machine, a short decoupled delay): it waits for it, up to 10 s.
    private func aresRead(for id: String?) async -> JSONValue? {
        guard let id else { return nil }
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let ares = sent.withLock { $0[id] }
            guard ares == .null, ContinuousClock.now < deadline else { return ares }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() {
        server.shutdown()
        group.shutdown()
    }

    /// One app-channel authentication of `pan` in `version`, tagged `tag`: the DS's answer, and the Erro sent about it, if any.
    @discardableResult
    func authenticate(pan: String, version: MessageVersion = .v2_2_0, tag: String?) async throws -> (answer: PeerAnswer<JSONValue>?, erro: ErroMessage?) {
        let areq = try appAReq(pan: pan, version: version, replacing: [
            "threeDSServerURL": .string(resultsURL),
            // Decoupled asked for, so a decoupled scenario answers D (2.2.0 and later).
            "threeDSRequestorDecReqInd": version >= .v2_2_0 ? .string("Y") : nil, "threeDSRequestorDecMaxTime": version >= .v2_2_0 ? .string("00010") : nil,
        ])
        let result = try await send(areq, tag: tag)
        if bugs.contains(.reusesThreeDSServerTransID) { _ = try await send(areq, tag: tag) }
        return result
    }

    /// A 2.3.1 app challenge of `pan` allowing the decoupled fallback (threeDSRequestorDecReqInd F), its cardholder played
    /// by the harness's SDK simulator: the SDK's report, nil when the ARes was no C.
    @discardableResult
    func challenge(pan: String, version: MessageVersion = .v2_3_1, tag: String?) async throws -> ChallengeRunner.Report? {
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: version, style: .android)
        let uiTypes = ACSUIType.allCases.filter { $0.since <= version }.map { JSONValue.string($0.rawValue) }
        let areq = try appAReq(pan: pan, version: version, sdk: sdk, replacing: [
            "threeDSServerURL": .string(resultsURL), "threeDSRequestorDecMaxTime": version >= .v2_2_0 ? .string("00010") : nil,
            // F (a fallback allowed) is 2.3.1's; 2.2.0 asks for decoupled authentication or not, 2.1.0 has neither.
            "threeDSRequestorDecReqInd": version >= .v2_3_1 ? .string(fallbackBugs.contains(.fallbackNotAllowed) ? "Y" : "F")
                                        : version >= .v2_2_0 ? .string("Y") : nil,
            "deviceRenderOptions": .object([("sdkInterface", .string("03")), ("sdkUiType", .array(uiTypes))]),
        ])
        guard case .message(let ares)? = try await send(areq, tag: tag).answer, ares["transStatus"]?.stringValue == "C",
              let acsTransID = ares["acsTransID"]?.stringValue, let signed = ares["acsSignedContent"]?.stringValue,
              let id = areq["threeDSServerTransID"]?.stringValue else { return nil }
        return await harness.challenger.run(sdk, parameters: ChallengeParameters(threeDSServerTransID: id, acsTransID: acsTransID, acsSignedContent: signed),
                                            answers: ChallengeAnswers(["1234", "continue"]), style: DeviceDataStyle.android.channelStyle)
    }

    /// A 3RI AReq with threeRIInd 19 on `pan` that follows no challenge: what a case must not take for the fallback.
    func threeRIAlone(pan: String, tag: String?) async throws {
        let first = try appAReq(pan: pan, version: .v2_3_1, replacing: ["threeDSServerURL": .string(resultsURL)])
        let id = UUID().uuidString.lowercased()
        areqs.withLock { $0[id] = (first, .app, tag) }
        try await followUp(.object([("threeDSServerTransID", .string(id)), ("acsTransID", .string(UUID().uuidString.lowercased()))]))
    }

    /// The 3RI AReq after an RReq D (Req 467): the first AReq's card, purchase and requestor, threeRIInd 19, decoupled, naming the challenge.
    private func followUp(_ rreq: JSONValue) async throws {
        guard let id = rreq["threeDSServerTransID"]?.stringValue, let (first, _, tag) = areqs.withLock({ $0[id] }),
              let acsTransID = rreq["acsTransID"]?.stringValue else { return }
        let kept: Set<String> = [
            "messageType", "messageVersion", "messageCategory", "threeDSServerRefNumber", "threeDSServerURL", "threeDSRequestorID", "threeDSRequestorName",
            "threeDSRequestorURL", "acctNumber", "cardExpiryDate", "acquirerBIN", "acquirerMerchantID", "mcc", "merchantCountryCode", "merchantName",
            "purchaseAmount", "purchaseCurrency", "purchaseExponent", "purchaseDate", "acquirerCountryCode", "acquirerCountryCodeSource",
            "threeDSRequestorDecMaxTime",
        ]
        var members = (first.objectMembers ?? []).filter { kept.contains($0.key) }
        members += [
            ("deviceChannel", .string("03")), ("threeDSServerTransID", .string(UUID().uuidString.lowercased())), ("threeRIInd", .string("19")),
            ("threeDSRequestorDecReqInd", .string("Y")),
            ("threeDSRequestorPriorAuthenticationInfo", .array([.object([
                ("threeDSReqPriorAuthMethod", .string(fallbackBugs.contains(.priorMethod05) ? "05" : "02")),
                ("threeDSReqPriorAuthTimestamp", .string("202611261200")), ("threeDSReqPriorRef", .string(acsTransID)),
            ])])),
        ]
        _ = try await send(.object(members), tag: tag)
    }

    private func send(_ areq: JSONValue, tag: String?) async throws -> (answer: PeerAnswer<JSONValue>?, erro: ErroMessage?) {
        if let id = areq["threeDSServerTransID"]?.stringValue {
            sent.withLock { $0[id] = .null }
            let channel = areq["deviceChannel"]?.stringValue.flatMap(DeviceChannel.init(rawValue:)) ?? .app
            areqs.withLock { $0[id] = (areq, channel, tag) }
        }
        let url = harness.baseURL + "/ds/areq"
        let peer = EMVPeer(client: harness.client)
        let headers: HTTPHeaders = tag.map { [HarnessCaseHeader.name: $0] } ?? [:]
        let version = areq["messageVersion"]?.stringValue ?? ""
        var erro: ErroMessage?
        var answer: PeerAnswer<JSONValue>?
        do {
            answer = try await peer.exchange(bytes: JSONWriter.write(areq), url: url, headers: headers) { [bugs] body throws(InvalidMessage) in
                do throws(InvalidMessage) {
                    let envelope = try MessageEnvelope.read(body.bytes, rules: AResRules.rules, request: areq)
                    // An ARes answers the AReq: in its version.
                    if envelope.json["messageVersion"] != areq["messageVersion"] {
                        throw InvalidMessage(Violation(field: "messageVersion", code: .formatInvalid, reason: "is not the AReq's"), about: envelope.json)
                    }
                    if bugs.contains(.refusesMembersItsVersionDoesNotDefine), let member = Self.undefinedMember(of: envelope.json, in: AResRules.rules) {
                        throw InvalidMessage(Violation(field: member, code: .formatInvalid, reason: "is not a field of its version"), about: envelope.json)
                    }
                    return envelope.json
                } catch {
                    if bugs.contains(.reasonCheckedForNOnly), error.violations.allSatisfy({ $0.field == "transStatusReason" }),
                       let raw = try? JSONReader.parse(body.bytes).value, ["R", "U"].contains(raw["transStatus"]?.stringValue) {
                        return raw
                    }
                    throw error
                }
            }
            // An ARes that does not echo the AReq's threeDSServerTransID answers another transaction: 301 naming it (Table A.4).
            if case .message(let ares)? = answer, ares["threeDSServerTransID"] != areq["threeDSServerTransID"] {
                erro = ErroMessage(messageVersion: version, errorCode: .transactionIDNotRecognised, errorComponent: .threeDSServer,
                                   errorDetail: "threeDSServerTransID", errorMessageType: "ARes", threeDSServerTransID: areq["threeDSServerTransID"]?.stringValue,
                                   acsTransID: ares["acsTransID"]?.stringValue, dsTransID: ares["dsTransID"]?.stringValue)
                answer = nil
            } else if case .message(let ares)? = answer, bugs.contains(.erroAboutValidARes) {
                erro = ErroMessage(messageVersion: version, errorCode: .formatInvalid, errorComponent: .threeDSServer, errorDetail: "acsReferenceNumber",
                                   errorMessageType: "ARes", threeDSServerTransID: ares["threeDSServerTransID"]?.stringValue,
                                   acsTransID: ares["acsTransID"]?.stringValue, dsTransID: ares["dsTransID"]?.stringValue)
            }
        } catch {
            // An answer that arrived but is no usable ARes: the Erro the failure calls for, in the AReq's version, with its ids.
            let unusable: InvalidMessage? = switch error {
            case .invalid(_, let invalid): invalid
            case .invalidErro(_, let invalid) where bugs.contains(.answersAnInvalidErro): invalid
            default: nil
            }
            if let invalid = unusable, !bugs.contains(.noErroAboutInvalidARes) {
                var refusal = invalid.erro(from: .threeDSServer, answering: areq)
                refusal.errorMessageType = "ARes"
                if bugs.contains(.sameErroCodeForEverything) { refusal.errorCode = .formatInvalid }
                if bugs.contains(.errorDetailNamesNoElement) { refusal.errorDetail = "Invalid message" }
                erro = refusal
            }
        }
        if let id = areq["threeDSServerTransID"]?.stringValue {
            // A refused ARes leaves no transaction an RReq could name: one that comes is refused at once, not waited for.
            if case .message(let ares)? = answer {
                sent.withLock { $0[id] = ResultsRules.aresContext(ares) }
            } else {
                sent.withLock { $0[id] = nil }
            }
        }
        if let erro { _ = await peer.notify(erro, url: url) }
        return (answer, erro)
    }
}
