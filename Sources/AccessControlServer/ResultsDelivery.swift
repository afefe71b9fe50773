import EMV3DS
import Foundation
import Journal
import JSON
import Logging
import Messaging
import Net
public import Store

// The RReq: a challenge's result reported to the DS, now or as a job any instance runs when it is due.
extension AccessControlServer {
    /// The job kind of a decoupled result another instance may send.
    public static let resultJobKind = "acs.rreq"

    /// The job kind of a challenge's time limit, which another instance may reach.
    public static let expiryJobKind = "acs.expire"

    static func expiryJobID(_ acsTransID: String) -> String { "\(expiryJobKind):\(acsTransID)" }

    /// A challenge's time limit as a job: done at the challenge's home.
    static func expiryJob(_ acsTransID: String, due: Int64) -> ScheduledJob {
        ScheduledJob(id: expiryJobID(acsTransID), kind: expiryJobKind, due: due, payload: [], home: RecordID(role: role, id: acsTransID))
    }

    /// The RReq of `result` as a job: everything an instance that does not hold the transaction needs to send it.
    static func resultJob(_ transaction: Transaction, _ result: ChallengeResult, due: Int64) -> ScheduledJob {
        var ended = transaction
        ended.result = result
        ended.transStatus = result.transStatus
        let payload = JSONValue.object([("rreq", ended.rreq(for: result).json), ("resultsURL", .string(transaction.resultsURL))])
        return ScheduledJob(id: "\(resultJobKind):\(transaction.ids.acsTransID ?? "")", kind: resultJobKind, due: due, payload: JSONWriter.write(payload))
    }

    /// Runs a job of this ACS that another instance scheduled and never ran (it died): sends the decoupled result it holds,
    /// or ends a challenge at its time limit. False when the job is not this instance's to run yet: the challenge's home
    /// lives, or another instance took the challenge up meanwhile; it is claimed again later.
    public func runOverdue(_ job: ScheduledJob) async -> Bool {
        if job.kind == Self.expiryJobKind {
            let acsTransID = String(job.id.dropFirst(Self.expiryJobKind.count + 1))
            guard let sharedRecords, !holds(acsTransID) else { return false }  // held here: this instance's timer ends it
            // Ended meanwhile (its record settled): nothing to do.
            guard let stored = await sharedRecords.record(role: Self.role, id: acsTransID),
                  (try? JSONReader.parse(stored.json).value)?["resume"] != nil else { return true }
            // Its home's timer ends it while the home lives; a gone home's challenge is taken up here and ends at once.
            guard let takeOver = await sharing.takeOver(RecordID(role: Self.role, id: acsTransID)),
                  await takeUp(acsTransID, startingTimer: false, from: takeOver.previousHome) else { return false }
            await expire(acsTransID)
            return true
        }
        guard job.kind == Self.resultJobKind, let payload = try? JSONReader.parse(job.payload).value,
              let rreq = payload["rreq"], let url = payload["resultsURL"]?.stringValue else {
            logger.error("a job this ACS cannot run", metadata: ["id": "\(job.id)", "kind": "\(job.kind)"])
            return true
        }
        let delivery: String
        do {
            switch try await deliver(rreq, to: url) {
            case .message(let rres): delivery = "RRes resultsStatus \(rres.resultsStatus.rawValue)"
            case .erro(let erro): delivery = "Erro \(erro.errorCode.rawValue): \(erro.errorDescription)"
            }
        } catch {
            delivery = "no RRes: \(error)"
        }
        logger.info("RReq of a transaction whose instance is gone sent", metadata: [
            "acsTransID": "\(rreq["acsTransID"]?.stringValue ?? "-")", "delivery": "\(delivery)", "job": "\(job.id)"])
        return true
    }

    /// The path of this harness's DS that takes RReqs: what `dsURL` names when the DS is a co-hosted role.
    static let directoryServerResultsPath = "/ds/rreq"

    /// Sends an RReq to `url` and reads the RRes. In a cluster, an RReq for this harness's own DS at another instance that
    /// cannot be reached (the instance that began the transaction died, and no balancer stands before the instances)
    /// goes to this instance's DS instead, which passes it on to the DS transaction's home or takes it up from the store.
    func deliver(_ rreq: JSONValue, to url: String) async throws(PeerFailure) -> PeerAnswer<RRes> {
        let read: (ReceivedBody) throws(InvalidMessage) -> RRes = { body throws(InvalidMessage) in try RRes(bytes: body.bytes, written: body.written) }
        do {
            return try await peer.exchange(rreq, url: url, read: read)
        } catch {
            let own = endpoints.url(Self.directoryServerResultsPath)
            guard sharing.isShared, case .unreachable(_, .connectFailed) = error, url != own,
                  URL(string: url)?.path == Self.directoryServerResultsPath else { throw error }
            logger.info("RReq sent to this instance's DS: the DS at dsURL cannot be reached", metadata: ["dsURL": "\(url)", "reason": "\(error)"])
            return try await peer.exchange(rreq, url: own, read: read)
        }
    }

    /// Sends the RReq of an ended transaction through the DS and records the RRes.
    func report(_ acsTransID: String, _ result: ChallengeResult) async {
        guard let transaction = transactions.update(acsTransID, { transaction -> Transaction in
            transaction.result = result
            transaction.transStatus = result.transStatus
            return transaction
        }) else { return }
        let fallingBack = result.transStatus == .decoupled
        if fallingBack {
            // Before the RReq: the 3DS Server may send its 3RI AReq before the RRes is back here.
            transactions.update(acsTransID) { $0.fallbackRReqAt = settings.clock.wallMilliseconds() }
        }
        // The challenge's time limit is not due any more (a job left behind finds the record settled and does nothing): with
        // instances sharing the store, its job is gone while the RReq goes.
        guard sharing.isShared, transaction.authentication != .decoupled else { return await sendRReq(acsTransID, transaction, result) }
        async let timeLimitGone: Void = sharing.finish(Self.expiryJobID(acsTransID))
        await sendRReq(acsTransID, transaction, result)
        await timeLimitGone
    }

    /// Sends the RReq of `transaction` ended with `result`, and records what came back.
    private func sendRReq(_ acsTransID: String, _ transaction: Transaction, _ result: ChallengeResult) async {
        let fallingBack = result.transStatus == .decoupled
        let rreq = transaction.rreq(for: result)
        let delivery: String
        do {
            switch try await deliver(rreq.json, to: transaction.resultsURL) {
            case .message(let rres):
                delivery = "RRes resultsStatus \(rres.resultsStatus.rawValue)"
                if fallingBack { journal?.check(transaction.ids.dsTransID, Self.fallbackResultsCheck(rres.resultsStatus)) }
            case .erro(let erro):
                delivery = "Erro \(erro.errorCode.rawValue): \(erro.errorDescription)"
                if fallingBack {
                    journal?.check(transaction.ids.dsTransID, .fail(.rresDecoupledFallback, "the RReq D was answered with Erro \(erro.errorCode.rawValue) (\(erro.errorDetail)), not an RRes with resultsStatus 04"))
                }
            }
        } catch {
            delivery = "no RRes: \(error)"
            if fallingBack { journal?.check(transaction.ids.dsTransID, .fail(.rresDecoupledFallback, "the RReq D got no RRes: \(error)")) }
            logger.warning("RReq not delivered", metadata: ["acsTransID": "\(acsTransID)", "reason": "\(error)"])
        }
        transactions.update(acsTransID) { $0.resultsDelivery = delivery }
        // The DS ends the entry as it relays the RRes; this ends one whose RReq never got that far.
        journal?.end(transaction.ids.dsTransID, transStatus: result.transStatus.rawValue, because: "RReq sent: \(delivery)")
    }
}
