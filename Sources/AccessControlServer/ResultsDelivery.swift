import EMV3DS
import EventLoops
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
        return rreqJob(ended.rreq(for: result).json, to: transaction.resultsURL, acsTransID: transaction.ids.acsTransID ?? "", attempt: 0, due: due)
    }

    /// An RReq to send to `url` at `due` as a job: attempt 0 is its first sending, the others its attempts again.
    static func rreqJob(_ rreq: JSONValue, to url: String, acsTransID: String, attempt: Int, due: Int64) -> ScheduledJob {
        let payload = JSONValue.object(omittingAbsent: [("rreq", rreq), ("resultsURL", .string(url)),
                                                        ("attempt", attempt > 0 ? .number(String(attempt)) : nil)])
        return ScheduledJob(id: "\(resultJobKind):\(acsTransID)" + (attempt > 0 ? ":\(attempt)" : ""), kind: resultJobKind, due: due,
                            payload: JSONWriter.write(payload))
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
        let acsTransID = rreq["acsTransID"]?.stringValue ?? "-"
        let attempt = payload["attempt"]?.numberText.flatMap { Int($0) } ?? 0
        let outcome = await sendOrRetry(rreq, to: url, acsTransID: acsTransID, attempt: attempt)
        record(outcome, of: rreq, acsTransID: acsTransID)
        logger.info(attempt > 0 ? "RReq sent again" : "RReq of a transaction whose instance is gone sent", metadata: [
            "acsTransID": "\(acsTransID)", "delivery": "\(outcome.delivery)", "job": "\(job.id)"])
        return true
    }

    /// The path of this harness's DS that takes RReqs: what `dsURL` names when the DS is a co-hosted role.
    static let directoryServerResultsPath = "/ds/rreq"

    /// Sends an RReq to `url` and reads the RRes. In a cluster, this harness's DS named by its public URL is reached at this
    /// instance, which passes the RReq on to the DS transaction's home or takes the transaction up from the store: through
    /// the balancer the RReq of a challenge taken over here could reach a third instance, which would take the DS transaction
    /// and its journal entry up a second time, without the CReqs this one answered. An RReq for this harness's DS at another
    /// instance that cannot be reached (the instance that began the transaction died, and no balancer stands before the
    /// instances) goes to this instance's DS too.
    func deliver(_ rreq: JSONValue, to url: String) async throws(PeerFailure) -> PeerAnswer<RRes> {
        let read: (ReceivedBody) throws(InvalidMessage) -> RRes = { body throws(InvalidMessage) in try RRes(bytes: body.bytes, written: body.written) }
        let own = endpoints.ownURL(Self.directoryServerResultsPath)
        let target = sharing.isShared && url == endpoints.url(Self.directoryServerResultsPath) ? own : url
        do {
            return try await peer.exchange(rreq, url: target, read: read)
        } catch {
            guard sharing.isShared, case .unreachable(_, .connectFailed) = error, target != own,
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
        let rreq = transaction.rreq(for: result).json
        record(await sendOrRetry(rreq, to: transaction.resultsURL, acsTransID: acsTransID, attempt: 0), of: rreq, acsTransID: acsTransID)
    }

    /// What came of sending an RReq: an answer, a failure, or a failure after which it goes again.
    enum RReqOutcome {
        case answered(PeerAnswer<RRes>)
        case failed(PeerFailure, attempts: Int)
        case retrying(PeerFailure, attempt: Int, of: Int, after: Double)

        /// What the transaction's record says of its RReq.
        var delivery: String {
            switch self {
            case .answered(.message(let rres)): "RRes resultsStatus \(rres.resultsStatus.rawValue)"
            case .answered(.erro(let erro)): "Erro \(erro.errorCode.rawValue): \(erro.errorDescription)"
            case .failed(let failure, let attempts): "no RRes" + (attempts > 1 ? " after \(attempts) attempts" : "") + ": \(failure)"
            case .retrying(let failure, let attempt, let of, let after):
                "no RRes: \(failure); attempt \(attempt + 1) of \(of + 1) in \(after == after.rounded() ? String(Int(after)) : String(after)) s"
            }
        }
    }

    /// Sends `rreq` to `url` (attempt `attempt` of its retries, 0 the first sending); one that surely did not reach the DS
    /// is sent again later, as a job in the store too, up to `rreqRetries` times.
    func sendOrRetry(_ rreq: JSONValue, to url: String, acsTransID: String, attempt: Int) async -> RReqOutcome {
        do { return .answered(try await deliver(rreq, to: url)) } catch {
            let delays = settings.rreqRetryDelays
            guard Self.surelyNotDelivered(error), delays.indices.contains(attempt) else { return .failed(error, attempts: attempt + 1) }
            let delay = delays[attempt]
            let job = Self.rreqJob(rreq, to: url, acsTransID: acsTransID, attempt: attempt + 1,
                                   due: settings.clock.wallMilliseconds() + Int64(delay * 1000))
            sharing.schedule(job)
            background.run { [self] in
                // Cancelled at shutdown: the job stays in the store for another instance, if any.
                guard (try? await Task.sleep(for: .seconds(delay))) != nil, await sharing.claim(job) else { return }
                _ = await runOverdue(job)
                await sharing.finish(job.id)
            }
            return .retrying(error, attempt: attempt + 1, of: delays.count, after: delay)
        }
    }

    /// Whether an RReq that failed surely did not reach the DS: no connection was made, or the DS (or a balancer before it)
    /// said it could not take it (503). A read time-out or a broken answer may follow an RReq the DS took: sent again, the
    /// 3DS Server would see it twice.
    static func surelyNotDelivered(_ failure: PeerFailure) -> Bool {
        switch failure {
        case .unreachable(_, .connectFailed), .unreachable(_, .connectTimedOut), .unreachable(_, .nameResolutionFailed): true
        case .httpStatus(_, 503, _): true
        default: false
        }
    }

    /// Records what came of an RReq on its transaction and journal entry, where this instance holds them: the checks of a
    /// decoupled fallback's RReq D, and the entry's end unless the RReq goes again.
    func record(_ outcome: RReqOutcome, of rreq: JSONValue, acsTransID: String) {
        let delivery = outcome.delivery
        transactions.update(acsTransID) { $0.resultsDelivery = delivery }
        let dsTransID = rreq["dsTransID"]?.stringValue
        switch outcome {
        case .retrying:
            // The DS never had it: the inspector shows the attempt the ACS made.
            journal?.message(dsTransID, from: .accessControlServer, to: .directoryServer, rreq, note: "not delivered: " + delivery)
            return logger.info("RReq to be sent again", metadata: ["acsTransID": "\(acsTransID)", "delivery": "\(delivery)"])
        case .failed(let failure, _):
            if Self.surelyNotDelivered(failure) {
                journal?.message(dsTransID, from: .accessControlServer, to: .directoryServer, rreq, note: "not delivered, given up: " + delivery)
            }
            logger.warning("RReq not delivered", metadata: ["acsTransID": "\(acsTransID)", "reason": "\(delivery)"])
        case .answered:
            break
        }
        if rreq["transStatus"]?.stringValue == TransStatus.decoupled.rawValue {
            let check: CheckResult = switch outcome {
            case .answered(.message(let rres)): Self.fallbackResultsCheck(rres.resultsStatus)
            case .answered(.erro(let erro)):
                .fail(.rresDecoupledFallback, "the RReq D was answered with Erro \(erro.errorCode.rawValue) (\(erro.errorDetail)), not an RRes with resultsStatus 04")
            case .failed(let failure, _), .retrying(let failure, _, _, _): .fail(.rresDecoupledFallback, "the RReq D got no RRes: \(failure)")
            }
            journal?.check(dsTransID, check)
        }
        // The DS ends the entry as it relays the RRes; this ends one whose RReq never got that far.
        journal?.end(dsTransID, transStatus: rreq["transStatus"]?.stringValue, because: "RReq sent: \(delivery)")
    }
}
