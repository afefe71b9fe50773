public import EMV3DS
public import EMVCrypto
import Foundation
import Synchronization
public import JOSE
public import JSON
public import Net

/// What an SDK reports to the app at the end of a challenge (the SDK specification's
/// `completed`, `cancelled`, `timedout`, `protocolError` and `runtimeError` events).
public enum SDKOutcome: Sendable, Equatable, CustomStringConvertible {
    case completed(TransStatus)
    case cancelled
    case timedOut
    /// The ACS broke the protocol, or answered an Erro; the reason says which, and what the SDK sent.
    case protocolError(String)
    /// Something outside the protocol failed: the network, HTTP, or `acsSignedContent`.
    case runtimeError(String)

    public var description: String {
        switch self {
        case .completed(let status): "completed transStatus \(status.rawValue)"
        case .cancelled: "cancelled"
        case .timedOut: "timed out"
        case .protocolError(let reason): "protocolError: \(reason)"
        case .runtimeError(let reason): "runtimeError: \(reason)"
        }
    }
}

/// How an SDK talks on the secure channel. Both kinds exist in the field, and an ACS must take both.
public enum ChannelStyle: String, Sendable, CaseIterable {
    /// Zero IV but for the counter in its last byte, `challengeNoEntry` on the first CReq,
    /// `messageExtensions`, an Erro posted as `application/json`.
    case android
    /// Random IVs, an Erro posted as `application/jose`.
    case ios
}

extension DeviceDataStyle {
    /// The channel style of the platform whose device data this is: Android SDKs send `dir`.
    public var channelStyle: ChannelStyle { self == .android ? .android : .ios }
}

/// The challenge parameters the 3DS Server hands the app (from the ARes).
public struct ChallengeParameters: Sendable {
    public let threeDSServerTransID: String
    public let acsTransID: String
    public let acsSignedContent: String

    public init(threeDSServerTransID: String, acsTransID: String, acsSignedContent: String) {
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.acsSignedContent = acsSignedContent
    }

    /// Reads them from a 3DS Server transaction record's `challenge` member.
    public init?(record: JSONValue) {
        guard let challenge = record["challenge"], let server = challenge["threeDSServerTransID"]?.stringValue,
              let acs = challenge["acsTransID"]?.stringValue, let signed = challenge["acsSignedContent"]?.stringValue else { return nil }
        threeDSServerTransID = server
        acsTransID = acs
        acsSignedContent = signed
    }
}

/// The cardholder's side of a challenge, scripted: one answer per screen. Besides the
/// answer itself: `cancel` (or `cancel:NN`), `resend`, `continue` (oobContinue) and `empty`.
public struct ChallengeAnswers: Sendable, Equatable {
    public var answers: [String]
    /// `whitelistingDataEntry` sent once a screen has shown the whitelisting prompt.
    public var whitelisting: String?

    public init(_ answers: [String], whitelisting: String? = nil) {
        self.answers = answers
        self.whitelisting = whitelisting
    }

    /// "wrong;resend;5678": answers separated by semicolons (a multi-select answer has commas).
    public init(script: String, whitelisting: String? = nil) {
        self.init(script.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) },
                  whitelisting: whitelisting)
    }
}

/// One challenge as an SDK runs it: verify `acsSignedContent`, agree the key, then CReq/CRes
/// rounds until the final CRes, checking each CRes the way SDKs do.
public struct ChallengeRunner: Sendable {
    /// Its read timeout is how long the SDK waits for a CRes (10 s in SDKs).
    public let client: HTTPClient
    /// The DS CA roots the SDK was configured with.
    public let verifier: CertificateVerifier
    /// A wrong SDK on purpose, to see the harness's checks fail; nil for a correct one.
    public let misbehaviour: Misbehaviour?

    /// What a deliberately wrong SDK gets wrong.
    public enum Misbehaviour: String, Sendable, CaseIterable {
        /// Sends no Erro about a bad CRes (and reports the error all the same).
        case withholdErro = "withhold-erro"
        /// Sends its second CReq with the first one's sdkCounterStoA again.
        case repeatCounter = "repeat-counter"
        /// Answers an out-of-band screen with challengeDataEntry instead of oobContinue.
        case oobAsDataEntry = "oob-as-data-entry"
        /// Says in its CReqs that it opens an OOB app (2.3.1 oobAppURLInd 01), which a Split-SDK/Browser cannot.
        case oobAppURLSupported = "oob-app-url-supported"
        /// Takes a CRes whatever the values of its enumerated elements, reading one outside the version's set as the
        /// set's first: a parser that checks presence, not values (`acsUiType` 06 in 2.2.0 shown as a text screen).
        case acceptsAnyValue = "accepts-any-value"
        /// Takes a CRes whatever the JSON types of its elements, reading a value of another type as the one its format
        /// wants (a number's digits as a string): a parser that coerces (`acsUiType` 1 read as "01").
        case acceptsAnyType = "accepts-any-type"
        /// Takes a CRes whatever the lengths of its string elements: a parser that checks no length.
        case acceptsAnyLength = "accepts-any-length"
        /// Takes a CRes whatever the shape of its string elements beyond their length (a letter among digits, an http URL
        /// where https is wanted, base64 for base64url): a parser that checks length and type only.
        case acceptsAnyFormat = "accepts-any-format"
        /// Takes a CRes with a member written twice, keeping the last: a parser that reads into a dictionary.
        case acceptsDuplicates = "accepts-duplicates"
        /// Derives the channel key without the sdkReferenceNumber (an empty PartyVInfo).
        case kdfWithoutReference = "kdf-without-reference"
        /// Keeps the channel key of its first challenge and seals every later CReq with it: a channel never let go.
        case staleChannelKey = "stale-channel-key"
        /// Checks acsSignedContent's signature with the `x5c` leaf's key and no chain: takes a leaf of any root, expired,
        /// or under an intermediate `x5c` leaves out.
        case trustsAnyChain = "trusts-any-chain"
        /// Checks the `x5c` leaf against its DS roots alone, ignoring the certificates between: refuses every chain
        /// through an intermediate CA.
        case ignoresIntermediates = "ignores-intermediates"
        /// Takes acsSignedContent whatever its payload's sdkEphemPubKey: missing, unreadable or another SDK's key (the echo
        /// that binds the ACS's key to this SDK's is not checked).
        case ignoresSDKKeyEcho = "ignores-sdk-key-echo"
        /// Refuses a CRes or an acsSignedContent payload or header with a member its table does not define for the version,
        /// or an `acsEphemPubKey` with a member no JWK registers (Erro 203 naming it, or a runtime error): stricter than the
        /// specification and RFC 7517 §4, which have a receiver ignore it.
        case refusesUnknownMembers = "refuses-unknown-members"
        /// Takes a CRes whatever its messageType and messageVersion: a parser that knows which message it awaits and reads
        /// the content alone.
        case ignoresEnvelope = "ignores-envelope"
        /// Verifies acsSignedContent's signature with the algorithm its leaf's key implies (PS256 for RSA, ES256 for EC),
        /// whatever the header's `alg` says, and reads no `crit`: the algorithm-confusion bug of JWS libraries.
        case infersAlgFromKey = "infers-alg-from-key"
        /// Reads acsSignedContent's acsEphemPubKey as a P-256 point from its `x` and `y`, whatever its `kty` and `crv` say
        /// or without them: a parser that knows the curve EMV uses.
        case assumesP256Key = "assumes-p256-key"
        /// Takes a CRes that carries transStatus as the final one, whatever its challengeCompletionInd: a reader that looks
        /// for the outcome rather than for the end of the challenge, and stops a challenge an ACS has not ended.
        case endsOnTransStatus = "ends-on-trans-status"
        /// Answers an Erro from the ACS that it cannot read (no errorCode, an errorComponent outside C, S, D and A) with an
        /// Erro naming what is wrong, as it answers an invalid CRes: a receiver never answers an Erro, also one in error
        /// (EMVCo 3DS FAQ Q52).
        case answersAnInvalidErro = "answers-an-invalid-erro"
        /// Takes an Erro from the ACS in place of a CRes for an answer lost on the way and goes on with its next CReq, once:
        /// the ACS that sent the Erro has ended the challenge, and the SDK is to end it too (a protocol error).
        case continuesAfterACSErro = "continues-after-acs-erro"
    }

    /// The channel of the first challenge, for ``Misbehaviour/staleChannelKey``.
    private let firstChannel = FirstChannel()

    public init(client: HTTPClient, trustAnchors: [Certificate], misbehaviour: Misbehaviour? = nil) {
        self.client = client
        verifier = CertificateVerifier(trustAnchors: trustAnchors)
        self.misbehaviour = misbehaviour
    }

    /// acsSignedContent as this SDK reads it: verified up to its DS roots, its payload checked by its table, or as the
    /// misbehaviour gets either wrong. `ownKey` is the SDK's ephemeral key, which the payload echoes.
    private func signedContent(_ compact: String, ownKey: JSONValue) throws -> AcsSignedContent {
        let read: AcsSignedContent.VerifiedPayload
        switch misbehaviour {
        case .infersAlgFromKey:
            read = try Self.verifiedInferringTheAlgorithm(compact, with: verifier)
        case .trustsAnyChain:
            read = try AcsSignedContent.payloadCheckingTheSignatureOnly(compact)
        case .ignoresIntermediates:
            if let leaf = try JWS(compact: compact).certificateChain().first { try verifier.verify(leaf: leaf) }
            read = try AcsSignedContent.verifiedPayload(compact, with: verifier)
        default:
            read = try AcsSignedContent.verifiedPayload(compact, with: verifier)
        }
        if misbehaviour == .refusesUnknownMembers {
            let version = SignedContentRules.payloadContext.version
            if let member = read.payload.objectMembers?.first(where: { !SignedContentRules.acsPayload.defines($0.key, in: version) }) {
                throw AcsSignedContent.Failure.payload("\(member.key) is not a member of the payload")
            }
            let header = compact.split(separator: ".").first.flatMap { part in (try? Base64URL.decode(part)).flatMap { try? JSONReader.parse($0).value } }
            if let member = header?.objectMembers?.first(where: { !SignedContentRules.jwsHeader.defines($0.key, in: version) }) {
                throw AcsSignedContent.Failure.payload("its protected header has \(member.key), a parameter its table does not define")
            }
            let keyMembers = read.payload["acsEphemPubKey"]?.objectMembers ?? []
            if let member = keyMembers.first(where: { !SignedContentRules.registeredKeyParameters.contains($0.key) }) {
                throw AcsSignedContent.Failure.payload("acsEphemPubKey has \(member.key), a parameter no JWK registers")
            }
        }
        do { return try AcsSignedContent(read) } catch {
            guard let misbehaviour, let lenient = Self.readingLeniently(read, as: misbehaviour, ownKey: ownKey) else { throw error }
            return try AcsSignedContent(lenient)
        }
    }

    /// acsSignedContent as ``Misbehaviour/infersAlgFromKey`` reads it: the chain verified, the signature checked with the
    /// algorithm of the leaf's key, the header's `alg` and `crit` unread.
    private static func verifiedInferringTheAlgorithm(_ compact: String, with verifier: CertificateVerifier) throws -> AcsSignedContent.VerifiedPayload {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = try? Base64URL.decode(parts[0]), let payloadBytes = try? Base64URL.decode(parts[1]),
              let signature = try? Base64URL.decode(parts[2]), let header = try? JSONReader.parse(headerBytes).value,
              let x5c = header["x5c"]?.arrayValue?.compactMap(\.stringValue) else {
            throw AcsSignedContent.Failure.signature(.missingCertificateChain)
        }
        let chain = try x5c.map { encoded in try Certificate(der: Array(Data(base64Encoded: encoded) ?? Data())) }
        guard let leaf = chain.first else { throw AcsSignedContent.Failure.signature(.missingCertificateChain) }
        try verifier.verify(leaf: leaf, intermediates: Array(chain.dropFirst()))
        let algorithm = SignatureAlgorithm.emv(for: leaf.publicKey.kind)
        guard try leaf.publicKey.verify(signature: signature, of: Array("\(parts[0]).\(parts[1])".utf8), algorithm: algorithm) else {
            throw AcsSignedContent.Failure.signature(.signatureInvalid)
        }
        return try AcsSignedContent.VerifiedPayload(reading: payloadBytes, signer: leaf)
    }

    /// The payload as an SDK that does not check the echo of its own key reads it (``Misbehaviour/ignoresSDKKeyEcho``): a
    /// payload the table refuses for `sdkEphemPubKey` alone taken with its own key there; as one that assumes the ACS's key
    /// is P-256 (``Misbehaviour/assumesP256Key``): a payload refused for `acsEphemPubKey` alone taken when it has `x` and
    /// `y`. Nil for anything else.
    private static func readingLeniently(_ read: AcsSignedContent.VerifiedPayload, as misbehaviour: Misbehaviour,
                                         ownKey: JSONValue) -> AcsSignedContent.VerifiedPayload? {
        let violations = SignedContentRules.violations(ofACSPayload: read.payload, duplicates: read.duplicates)
        var lenient = read
        switch misbehaviour {
        case .ignoresSDKKeyEcho where violations.allSatisfy({ $0.field == "sdkEphemPubKey" }):
            lenient.payload.set("sdkEphemPubKey", ownKey)
        case .assumesP256Key where violations.allSatisfy({ $0.field == "acsEphemPubKey" }):
            guard var key = read.payload["acsEphemPubKey"], key["x"] != nil, key["y"] != nil else { return nil }
            key.set("kty", .string(ECPublicJWK.keyType))
            key.set("crv", .string(ECPublicJWK.curve))
            lenient.payload.set("acsEphemPubKey", key)
        default:
            return nil
        }
        return lenient
    }

    /// What happened: the outcome, and every screen the cardholder saw.
    public struct Report: Sendable {
        public var outcome: SDKOutcome
        public var screens: [ChallengeScreenContent] = []
        /// The Erro the SDK sent the ACS, if any.
        public var erroSent: ErroMessage?
        /// How long each CReq took to be answered, in order.
        public var roundTimes: [Duration] = []
        /// Members of the CRes messages that the CRes table does not define for their version.
        public var warnings: [String] = []
    }

    public func run(_ transaction: SimulatedSDKTransaction, parameters: ChallengeParameters, answers: ChallengeAnswers,
                    style: ChannelStyle, encryption: ContentEncryptionAlgorithm = .a128cbcHS256) async -> Report {
        let content: AcsSignedContent
        do { content = try signedContent(parameters.acsSignedContent, ownKey: transaction.ephemeralKey.publicKey.emvJWK) } catch let failure as AcsSignedContent.Failure {
            return Report(outcome: .runtimeError(failure.description))
        } catch {
            return Report(outcome: .runtimeError("acsSignedContent: \(error)"))
        }
        guard misbehaviour == .ignoresSDKKeyEcho || (try? PublicKey(emvJWK: content.sdkEphemPubKey)) == transaction.ephemeralKey.publicKey else {
            return Report(outcome: .runtimeError("acsSignedContent: sdkEphemPubKey is not this SDK's key"))
        }
        var channel: SecureChannel
        do {
            channel = try SecureChannel(privateKey: transaction.ephemeralKey, peerPublicKey: content.acsEphemPubKey,
                                        sdkReferenceNumber: misbehaviour == .kdfWithoutReference ? "" : SimulatedSDKTransaction.sdkReferenceNumber)
        } catch { return Report(outcome: .runtimeError("key agreement: \(error)")) }
        if misbehaviour == .staleChannelKey { channel = firstChannel.keep(channel) }

        let session = Session(runner: self, transaction: transaction, parameters: parameters, acsURL: content.acsURL,
                              channel: channel, style: style, encryption: encryption)
        var report = Report(outcome: .runtimeError("no CRes"))
        var pending = answers.answers[...]
        var action: CReq.Action = style == .android ? .noEntry : .none
        var whitelisting: String?
        var shown: ACSUIType?
        let clock = ContinuousClock()
        for counter in 0..<100 {
            let start = clock.now
            let step = await session.exchange(counter: counter, action: action, whitelisting: whitelisting, answering: shown)
            report.roundTimes.append(clock.now - start)
            switch step {
            case .finished(let outcome, let erro):
                report.outcome = outcome
                report.erroSent = erro
                return report
            case .screen(let screen, let warnings):
                report.screens.append(screen)
                report.warnings += warnings
                shown = screen.uiType
                if screen.whitelistingInfoText != nil { whitelisting = answers.whitelisting }
                guard let answer = pending.popFirst() else {
                    action = .cancel(.cardholderCancelled)  // the script ran out: the cardholder gives up
                    continue
                }
                action = Self.action(for: answer, on: screen)
                if misbehaviour == .oobAsDataEntry, case .oobContinue = action { action = .dataEntry(answer) }
            }
        }
        report.outcome = .protocolError("the challenge did not end within 100 CReqs")
        return report
    }

    /// The CReq action for one scripted answer on `screen`.
    static func action(for answer: String, on screen: ChallengeScreenContent) -> CReq.Action {
        switch answer {
        case "cancel": return .cancel(.cardholderCancelled)
        case "resend": return .resend
        case "continue": return .oobContinue
        case "empty", "": return .noEntry
        default:
            if answer.hasPrefix("cancel:"), let code = ChallengeCancel(rawValue: String(answer.dropFirst(7))) { return .cancel(code) }
            if screen.uiType.continuesOutOfBand { return .oobContinue }
            if screen.uiType.isHTML {
                // Submit the page's form as a browser would: its first text field.
                let field = screen.html.flatMap(Self.firstInputName) ?? "answer"
                let value = answer.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? answer
                return .htmlDataEntry("\(field)=\(value)")
            }
            return .dataEntry(answer)
        }
    }

    /// The `name` of the first input that is not a submit button.
    static func firstInputName(_ html: String) -> String? {
        var rest = html[...]
        while let start = rest.range(of: "<input") {
            let tagEnd = rest[start.upperBound...].firstIndex(of: ">") ?? rest.endIndex
            let tag = rest[start.upperBound..<tagEnd]
            rest = rest[tagEnd...]
            guard !tag.contains("type=\"submit\""), let nameStart = tag.range(of: "name=\"") else { continue }
            return String(tag[nameStart.upperBound...].prefix { $0 != "\"" })
        }
        return nil
    }
}

/// One secure-channel conversation: seals CReqs, reads CRes, sends Erro on a bad one.
struct Session {
    enum Step {
        case screen(ChallengeScreenContent, warnings: [String])
        case finished(SDKOutcome, erroSent: ErroMessage?)
    }

    let runner: ChallengeRunner
    let transaction: SimulatedSDKTransaction
    let parameters: ChallengeParameters
    let acsURL: String
    let channel: SecureChannel
    let style: ChannelStyle
    let encryption: ContentEncryptionAlgorithm

    /// How an exchange ended early: the step to report (an Erro may have been sent).
    private struct Ended: Error {
        let step: Step
        init(_ outcome: SDKOutcome, erroSent: ErroMessage? = nil) { step = .finished(outcome, erroSent: erroSent) }
    }

    /// One CReq and its CRes; `answering` is the type of the screen the action answers.
    func exchange(counter: Int, action: CReq.Action, whitelisting: String?, answering screen: ACSUIType?) async -> Step {
        let creq = makeCReq(counter: counter, action: action, whitelisting: whitelisting)
        do {
            var (creq, response) = (creq, try await post(creq, answering: screen))
            if runner.misbehaviour == .continuesAfterACSErro, response.headers.mediaType == "application/json" {
                creq = makeCReq(counter: counter + 1, action: action, whitelisting: whitelisting)
                response = try await post(creq, answering: screen)
            }
            let cres = try await read(response, answering: creq)
            switch cres.content {
            case .final(let status):
                if case .cancel = action { return .finished(.cancelled, erroSent: nil) }
                return .finished(.completed(status), erroSent: nil)
            case .screen(let screen):
                if case .cancel = action {
                    return .finished(.protocolError("an ongoing CRes answered a cancel"),
                                     erroSent: await sendErro(.formatInvalid, "challengeCompletionInd", "must be Y after a cancel"))
                }
                return .screen(screen, warnings: cres.warnings)
            }
        } catch {
            return error.step
        }
    }

    private func makeCReq(counter: Int, action: CReq.Action, whitelisting: String?) -> CReq {
        let counter = runner.misbehaviour == .repeatCounter && counter == 1 ? 0 : counter
        var creq = CReq(messageVersion: transaction.messageVersion, threeDSServerTransID: parameters.threeDSServerTransID,
                        acsTransID: parameters.acsTransID, sdkTransID: transaction.sdkTransID, counter: counter, action: action)
        if transaction.messageVersion >= .v2_2_0 {
            creq.whitelistingDataEntry = whitelisting
            // Where an OOB app returns the cardholder: the app's own URL.
            if case .oobContinue = action { creq.threeDSRequestorAppURL = "https://merchant.example/3ds-return" }
        }
        if style == .android { creq.extraMembers = [("messageExtensions", .array([]))] }
        if runner.misbehaviour == .oobAppURLSupported { creq.oobAppURLInd = "01" }
        return creq
    }

    /// Seals the CReq (Android: a zero IV ending in the counter) and posts it to the acsURL.
    private func post(_ creq: CReq, answering screen: ACSUIType?) async throws(Ended) -> HTTPResponse {
        let iv: [UInt8]? = style == .android
            ? [UInt8](repeating: 0, count: encryption == .a128gcm ? 11 : 15) + [UInt8(truncatingIfNeeded: creq.counter)] : nil
        let sealed: String
        do {
            sealed = try channel.seal(JSONWriter.write(creq.json(continuing: screen)), encryption: encryption, kid: parameters.acsTransID,
                                      direction: .sdkToACS, iv: iv)
        } catch { throw Ended(.runtimeError("CReq encryption: \(error)")) }
        let response: HTTPResponse
        do {
            response = try await runner.client.post(acsURL, body: Array(sealed.utf8), contentType: "application/jose; charset=UTF-8")
        } catch .readTimedOut {
            throw Ended(.timedOut, erroSent: await sendErro(.transactionTimedOut, "CRes", "no CRes within the SDK's time limit"))
        } catch {
            throw Ended(.runtimeError("\(acsURL): \(error)"))
        }
        guard (200..<300).contains(response.status.code) else { throw Ended(.runtimeError("ACS answered HTTP \(response.status.code)")) }
        return response
    }

    /// The CRes in the answer, decrypted and checked as an SDK checks it: kid, ids, version, counter.
    private func read(_ response: HTTPResponse, answering creq: CReq) async throws(Ended) -> CRes {
        // A JSON answer is an Erro from the ACS (how Android SDKs read it).
        if response.headers.mediaType == "application/json" {
            var (erro, problem): (ErroMessage?, MessageError?) = (nil, nil)
            if let json = (try? JSONReader.parse(response.body))?.value {
                do { erro = try ErroMessage(json: json) } catch { problem = error }
            }
            if runner.misbehaviour == .answersAnInvalidErro, let violation = problem?.violation {
                throw Ended(.protocolError("an Erro from the ACS that does not read"),
                            erroSent: await sendErro(violation.code, violation.field, violation.reason))
            }
            throw Ended(.protocolError(erro.map { "Erro \($0.errorCode.rawValue) from the ACS: \($0.errorDescription)" }
                                           ?? "a JSON answer that is not an Erro"))
        }
        let plaintext: [UInt8]
        do {
            let opened = try channel.open(String(decoding: response.body, as: UTF8.self), direction: .acsToSDK)
            // The CRes JWE names the transaction's ACS: another kid is not this channel's message.
            guard opened.jwe.header.kid == parameters.acsTransID else {
                throw Ended(.protocolError("CRes kid \(opened.jwe.header.kid ?? "none") is not the acsTransID"),
                            erroSent: await sendErro(.dataDecryptionFailure, "kid", "the CRes kid is not the acsTransID"))
            }
            plaintext = opened.plaintext
        } catch let ended as Ended {
            throw ended
        } catch {
            throw Ended(.protocolError("CRes cannot be decrypted: \(error)"),
                        erroSent: await sendErro(.dataDecryptionFailure, "CRes", "CRes cannot be decrypted"))
        }
        var cres: CRes
        do { cres = try CRes(bytes: plaintext) } catch {
            if let misbehaviour = runner.misbehaviour, let taken = Self.readingLeniently(plaintext, refused: error, as: misbehaviour) {
                cres = taken
            } else {
                throw Ended(.protocolError("invalid CRes: \(error)"),
                            erroSent: await sendErro(error.code, error.errorDetail(), error.description))
            }
        }
        if runner.misbehaviour == .endsOnTransStatus, case .screen = cres.content,
           let status = (try? JSONReader.parse(plaintext))?.value["transStatus"]?.stringValue.flatMap(TransStatus.init(rawValue:)) {
            cres.content = .final(status)
        }
        if runner.misbehaviour == .refusesUnknownMembers,
           let member = (try? JSONReader.parse(plaintext))?.value.objectMembers?
               .first(where: { ChallengeRules.cRes.format(of: $0.key, in: cres.messageVersion) == nil })?.key {
            throw Ended(.protocolError("CRes \(member) is not a field of its version"),
                        erroSent: await sendErro(.formatInvalid, member, "is not a field of CRes \(cres.messageVersion.rawValue)"))
        }
        if let field = creq.ids.mismatches(in: cres.ids).first {
            throw Ended(.protocolError("CRes \(field) does not match"), erroSent: await sendErro(.transactionIDNotRecognised, field, "does not match"))
        }
        guard cres.messageVersion == transaction.messageVersion || runner.misbehaviour == .ignoresEnvelope else {
            throw Ended(.protocolError("CRes messageVersion \(cres.messageVersion.rawValue)"),
                        erroSent: await sendErro(.versionNotSupported, ErrorDetail.supportedVersions, "differs from the AReq's"))
        }
        guard cres.counter == creq.counter else {
            throw Ended(.protocolError("acsCounterAtoS \(cres.counter), expected \(creq.counter)"),
                        erroSent: await sendErro(.dataDecryptionFailure, "acsCounterAtoS", "does not match sdkCounterStoA"))
        }
        return cres
    }

    /// The CRes as a lenient SDK reads it: the one element refused (203) for what `misbehaviour` does not check, read as a
    /// value that passes (``ChallengeRunner/Misbehaviour/acceptsAnyValue``: one of the version's set; `acceptsAnyType`: the
    /// value coerced to its format's type; `acceptsAnyLength`: the value cut or lengthened to its bounds; `acceptsAnyFormat`: a
    /// value of its length and type whose shape is wrong), else as an example
    /// of its format (or any of its set); `acceptsDuplicates`: each member once, the last; nil when anything else is wrong
    /// with it, or the misbehaviour checks what is.
    private static func readingLeniently(_ plaintext: [UInt8], refused error: InvalidMessage, as misbehaviour: ChallengeRunner.Misbehaviour) -> CRes? {
        if misbehaviour == .ignoresEnvelope {
            guard error.violations.allSatisfy({ $0.field == "messageType" }), var json = try? JSONReader.parse(plaintext).value else { return nil }
            json.set("messageType", .string(MessageType.cRes.rawValue))
            return try? CRes(bytes: JSONWriter.write(json))
        }
        if misbehaviour == .acceptsDuplicates {
            guard !error.violations.isEmpty, error.violations.allSatisfy({ $0.code == .duplicateElement }),
                  case .object(let members)? = try? JSONReader.parse(plaintext).value else { return nil }
            var seen = Set<String>(), kept: [(key: String, value: JSONValue)] = []
            for member in members.reversed() where seen.insert(member.key).inserted { kept.insert(member, at: 0) }
            return try? CRes(bytes: JSONWriter.write(.object(kept)))
        }
        guard var json = try? JSONReader.parse(plaintext).value,
              let version = json["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)),
              let field = error.violations.first?.field, error.violations.allSatisfy({ $0.code == .formatInvalid && $0.field == field }),
              let value = json[field] else { return nil }
        let rules = ChallengeRules.cRes
        let example = rules.example(of: field, in: version)
        var readings: [JSONValue]
        switch misbehaviour {
        case .acceptsAnyValue:
            guard let text = value.stringValue, !text.isEmpty, let allowed = rules.allowedValues(of: field, in: version), !allowed.contains(text) else { return nil }
            readings = allowed.map(JSONValue.string)
        case .acceptsAnyType:
            guard let example, value.typeName != example.typeName else { return nil }
            let coerced = value.numberText ?? value.stringValue ?? JSONWriter.string(value)
            // A number's digits, with the leading zeros its format's length wants ("01" sent as 1).
            let width = rules.lengthBounds(of: field, in: version)?.lowerBound ?? 0
            readings = [.string(String(repeating: "0", count: max(0, width - coerced.count)) + coerced), example]
                + (rules.allowedValues(of: field, in: version) ?? []).map(JSONValue.string)
        case .acceptsAnyLength:
            guard let text = value.stringValue, let bounds = rules.lengthBounds(of: field, in: version), !bounds.contains(text.count) else { return nil }
            readings = [.string(NegativeValue.resized(text, to: min(max(text.count, bounds.lowerBound), bounds.upperBound)))] + (example.map { [$0] } ?? [])
        case .acceptsAnyFormat:
            guard let text = value.stringValue, let example, example.typeName == value.typeName, rules.allowedValues(of: field, in: version) == nil,
                  rules.format(of: field, in: version)?.formatBreak != nil, rules.lengthBounds(of: field, in: version)?.contains(text.count) ?? true else { return nil }
            readings = [example]
        case .withholdErro, .repeatCounter, .oobAsDataEntry, .oobAppURLSupported, .acceptsDuplicates, .kdfWithoutReference, .staleChannelKey,
             .trustsAnyChain, .ignoresIntermediates, .ignoresSDKKeyEcho, .refusesUnknownMembers, .ignoresEnvelope, .infersAlgFromKey,
             .assumesP256Key, .endsOnTransStatus, .answersAnInvalidErro, .continuesAfterACSErro:
            return nil
        }
        for reading in readings {
            json.set(field, reading)
            if let cres = try? CRes(bytes: JSONWriter.write(json)) { return cres }
        }
        return nil
    }

    /// Posts an Erro to the acsURL without waiting for anything but the HTTP answer; nil when
    /// the SDK withholds it (``ChallengeRunner/Misbehaviour/withholdErro``).
    func sendErro(_ code: ErrorCode, _ detail: String, _ reason: String) async -> ErroMessage? {
        var erro = ErroMessage(messageVersion: transaction.messageVersion.rawValue, errorCode: code, errorComponent: .sdk,
                               errorDetail: detail, errorMessageType: MessageType.cRes.rawValue,
                               threeDSServerTransID: parameters.threeDSServerTransID, acsTransID: parameters.acsTransID,
                               sdkTransID: transaction.sdkTransID)
        erro.explain(reason)
        if runner.misbehaviour == .withholdErro { return nil }
        let contentType = style == .android ? "application/json" : "application/jose; charset=UTF-8"
        _ = try? await runner.client.post(acsURL, body: JSONWriter.write(erro.json), contentType: contentType)
        return erro
    }
}

/// The first channel a runner made: what an SDK that never lets its channel go seals with.
final class FirstChannel: Sendable {
    private let channel = Mutex<SecureChannel?>(nil)

    /// The first channel kept, or `channel` when it is the first.
    func keep(_ channel: SecureChannel) -> SecureChannel {
        self.channel.withLock { kept in
            if let kept { return kept }
            kept = channel
            return channel
        }
    }
}
