import EMV3DS
import EMVCrypto
import Faults
import Foundation
import Journal
import JSON
import Logging
import Messaging
import Net
import Store
import Synchronization

// The PReq: the card ranges, their changes since a serial, and the checks of a 3DS Server's preparation.
extension DirectoryServer {
    /// A 3DS Server's last PReq, and the checks of its PReqs, graded on its next AReq (a run's cases are AReqs).
    struct Preparation: Sendable {
        var lastAt: Date
        /// The serial its last PRes gave; nil after an Erro 307, when every range must be asked for again.
        var serial: String?
        var pending: [CheckResult] = []
        /// The Erro due about the DS's last answer to a PReq whose faults were armed, until the 3DS Server's Erro or next AReq.
        var owed: OwedErro?
        /// The ``preparationScope`` it was given in: one of an earlier scope is none the 3DS Server is held to.
        var scope: Int = 0
    }

    /// What a 3DS Server owes about an answer to its PReq that the armed faults made.
    struct OwedErro: Sendable {
        let threeDSServerTransID: String
        let due: ErroDue
        let version: MessageVersion
        let faults: String
        /// The journal entry of the PRes when a scenario's faults spoilt it (a PRes case): the Erro's check goes there too.
        var entry: String? = nil
    }

    /// Forgets what each 3DS Server was given by PReq, for judging: its next PReq may ask for every range, at any time.
    public func beginPreparationScope() {
        preparationScope.add(1, ordering: .relaxed)
    }

    /// Answers a PReq: without `serialNum` every range, with one the changes since it (`actionInd` A, M, D
    /// in order; none when nothing changed), with one this DS never gave Erro 307; always the current serial.
    /// The armed PRes faults spoil the answer; an Erro the 3DS Server posts here about it is graded (`pres.erro`).
    func prepare(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return preparationErro(erro) }
        let preq: PReq
        do { preq = try PReq(bytes: try request.emvMessageBody(), written: request.writtenJSON) } catch {
            return await refusedPreparation(request, error)
        }
        let now = settings.clock.date()
        let cardRanges = cardRanges.log(try? request.team())
        let serial = cardRanges.serial
        let scope = preparationScope.load(ordering: .relaxed)
        let earlier = preparations.get(preq.threeDSServerRefNumber).flatMap { $0.scope == scope ? $0 : nil }
        let checks = Self.preparationChecks(preq, earlier: earlier, currentSerial: serial, now: now)
        let ranges = preq.serialNum.map(cardRanges.changes(since:)) ?? cardRanges.current(base: configuredRanges())
        let answer: JSONValue
        if let ranges {
            answer = PRes(messageVersion: preq.messageVersion, threeDSServerTransID: preq.threeDSServerTransID,
                          dsTransID: TransactionIdentifier.make(), serialNum: serial, cardRangeData: ranges).json
        } else {
            let reason = "is not a serial this DS gave (its serials start anew when it starts): send the PReq without serialNum for every range"
            answer = InvalidMessage(Violation(field: "serialNum", code: .serialNumberNotValid, reason: reason), about: preq.json)
                .erro(from: .directoryServer).json
        }
        let (faults, scenario) = await takePResFaults(for: preq.threeDSServerRefNumber, version: preq.messageVersion, team: try? request.team())
        var owed = faults.isEmpty ? nil : OwedErro(threeDSServerTransID: preq.threeDSServerTransID, due: ErroDue(answerSpoiltBy: faults),
                                                   version: preq.messageVersion,
                                                   faults: faults.map(\.name).joined(separator: ", "))
        preparationSenders.put(preq.threeDSServerTransID, preq.threeDSServerRefNumber)
        // A PRes the faults spoilt or held back is none the 3DS Server could keep: its next PReq is judged against the one before.
        let given = faults.isEmpty ? (at: now, serial: ranges == nil ? nil : serial) : (at: earlier?.lastAt ?? now, serial: earlier?.serial)
        // The newest checks are kept: a 3DS Server that sends no AReq keeps no more than ten.
        preparations.put(preq.threeDSServerRefNumber, Preparation(lastAt: given.at, serial: given.serial,
                                                                  pending: Array(((earlier?.pending ?? []) + checks).suffix(10)), owed: owed, scope: scope))
        guard !faults.isEmpty else { return .emv(answer) }
        spoiltPreparations.put(preq.threeDSServerTransID, SpoiltPreparation(threeDSServerRefNumber: preq.threeDSServerRefNumber))
        // In a cluster the store says where the Erro about it is graded: written before the PRes goes.
        if let sharedArchive, await !sharedArchive.written() {
            logger.warning("a spoilt PRes's record is not stored: the Erro about it is graded only if it reaches this instance",
                           metadata: ["threeDSServerTransID": "\(preq.threeDSServerTransID)"])
        }
        logger.info("PRes spoilt by the armed faults", metadata: ["faults": "\(owed?.faults ?? "")", "threeDSServerTransID": "\(preq.threeDSServerTransID)"])
        let spoilt = await FaultyAnswer.answer(answer, faults: faults, from: .directoryServer)
        if let scenario, let journal {
            let entry = await journalPreparationCase(scenario, preq: preq, request: request, answer: spoilt, faults: owed?.faults ?? "", in: journal)
            owed?.entry = entry
            // Unless a later PReq of this 3DS Server has been answered since: its owed Erro is the one in force.
            preparations.update(preq.threeDSServerRefNumber) { preparation in
                if preparation.owed?.threeDSServerTransID == preq.threeDSServerTransID { preparation.owed = owed }
            }
        }
        return spoilt
    }

    /// A PRes a scenario's faults spoilt, as a transaction of that scenario (a PRes case): the PReq and the PRes, in the
    /// app channel (a PReq has none of its own, and the cases are listed there), for a test run's case to take. Its id.
    func journalPreparationCase(_ scenario: String, preq: PReq, request: HTTPRequest, answer: HTTPResponse, faults: String,
                                in journal: Journal) async -> String {
        let id = TransactionIdentifier.make()
        var entry = JournalEntry(dsTransID: id, ids: TransactionIDs(json: preq.json), pan: nil, version: preq.messageVersion.rawValue,
                                 channel: DeviceChannel.app.rawValue, scenario: scenario)
        entry.caseTag = request.harnessCase
        entry.add(from: .threeDSServer, to: .directoryServer, type: MessageType.pReq.rawValue, body: request.body)
        // An Erro may go in place of the PRes (an erro fault): the journal names what went.
        let read = try? JSONReader.parse(answer.body)
        let sent = read?.value["messageType"]?.stringValue ?? MessageType.pRes.rawValue
        entry.add(from: .directoryServer, to: .threeDSServer, type: sent, body: answer.body, note: "spoilt by the scenario: \(faults)", isJSON: read != nil)
        entry.end(transStatus: nil, because: "the \(sent) to the PReq (\(faults)): the 3DS Server's Erro about it is graded")
        await journal.open(entry)
        return id
    }

    /// A PReq the DS cannot take: the Erro, and a journal entry of its own (no transaction follows from it) that fails
    /// `preq.elements`, so that a test run of the 3DS Server shows why it sent no AReq.
    func refusedPreparation(_ request: HTTPRequest, _ invalid: InvalidMessage) async -> HTTPResponse {
        let answer = HTTPResponse.erro(invalid, from: .directoryServer)
        guard let journal else { return answer }
        let json = request.bodyJSON
        let id = TransactionIdentifier.make()
        var entry = JournalEntry(dsTransID: id, ids: json.map(TransactionIDs.init(json:)) ?? TransactionIDs(), pan: nil,
                                 version: json?["messageVersion"]?.stringValue, channel: nil, scenario: nil)
        entry.caseTag = request.harnessCase
        entry.refused = MessageType.pReq.rawValue
        entry.add(from: .threeDSServer, to: .directoryServer, type: MessageType.pReq.rawValue, body: request.body, isJSON: json != nil)
        entry.record(.fail(.preparationElements, invalid.description))
        entry.add(from: .directoryServer, to: .threeDSServer, type: MessageType.erro.rawValue, body: answer.body)
        entry.end(transStatus: nil, because: "Erro \(invalid.erro(from: .directoryServer).errorCode.rawValue) to the PReq")
        await journal.open(entry)
        return answer
    }

    /// An Erro from a 3DS Server about the DS's answer to its PReq, graded against what that answer called for
    /// (`pres.erro`, on the 3DS Server's next AReq). Erro messages are not answered with a message.
    func preparationErro(_ erro: ErroMessage) -> HTTPResponse {
        let taken = HTTPResponse.taken(erro)
        guard let id = erro.threeDSServerTransID, let sender = preparationSenders.get(id) else {
            logger.info("Erro from a 3DS Server names no PReq of this DS", metadata: ["errorCode": "\(erro.errorCode.rawValue)"])
            return taken
        }
        let graded = preparations.update(sender) { preparation -> (entry: String?, check: CheckResult) in
            let due = preparation.owed.flatMap { $0.threeDSServerTransID == id ? $0 : nil }
            // A PRes the faults left alone was valid: nothing was due.
            let check = Self.erroCheck(erro, due: due?.due ?? .forbidden, about: .pRes, version: due?.version ?? .v2_2_0)
            if due != nil { preparation.owed = nil }
            // A PRes case's Erro is graded in the case's own entry, not on the 3DS Server's next AReq (another case's).
            if due?.entry == nil { preparation.pending = Array((preparation.pending + [check]).suffix(10)) }
            return (due?.entry, check)
        }
        // A PRes case's own entry: its run case is graded by this Erro.
        if let graded, let entry = graded.entry {
            journal?.message(entry, from: .threeDSServer, to: .directoryServer, erro.json)
            journal?.check(entry, graded.check)
        }
        return taken
    }

    /// The configured ranges, each scenario card with a 3DS Method of its own cut out.
    func configuredRanges() -> [CardRangeData] {
        settings.schemes.flatMap { scheme in
            scheme.cardRanges.flatMap { cardRangeData($0, methodURL: scheme.acsURL == nil ? endpoints.url(ACSPaths.threeDSMethod) : nil) }
        }
    }

    /// The checks of the 3DS Server's PReqs since its last AReq, taken once; an Erro still owed about a spoilt PRes fails `pres.erro`.
    func pendingPreparationChecks(of threeDSServerRefNumber: String?) -> [CheckResult] {
        guard let threeDSServerRefNumber else { return [] }
        let scope = preparationScope.load(ordering: .relaxed)
        return preparations.update(threeDSServerRefNumber) { preparation in
            // A PRes case's Erro stays owed past an AReq: the case's deadline grades it, in the case's own entry.
            defer { preparation.pending = []; if preparation.owed?.entry == nil { preparation.owed = nil } }
            guard preparation.scope == scope else { return [] }
            guard let owed = preparation.owed, owed.entry == nil, let codes = owed.due.codes else { return preparation.pending }
            let naming = owed.due.field.map { ", errorDetail naming \($0)" } ?? ""
            return preparation.pending + [.fail(.presErro, "no Erro came about the PRes the DS spoilt (\(owed.faults)) for the PReq \(owed.threeDSServerTransID) "
                                                         + "before this AReq: an Erro \(codes.joined(separator: " or "))\(naming) was due, posted to the DS's PReq URL")]
        } ?? []
    }
}
