import EMV3DS
import EventLoops
import Logging
import Messaging
import Net
import Store

// A challenge's time limit, and its end: finished with a result, or expired.
extension AccessControlServer {
    /// Starts the time limit of a challenge just stored, `seconds` from now. With instances sharing the store the limit is
    /// also a job: the instance that claims it ends the challenge (here, unless another instance took the challenge up).
    func startTimer(_ acsTransID: String, after seconds: Double) {
        // On the caller's loop when it runs on one (the loop that answers the ARes): started there, and cancelled there
        // when the final CReq comes on the same loop, with no thread woken. A challenge taken up from the store off a loop
        // gets a loop of the group.
        let timer = OneShotTimer(after: seconds, on: peer.client.nextLoop()) { [self] in
            background.run { [self] in await challengeTimeLimitReached(acsTransID) }
        }
        transactions.update(acsTransID) { transaction in
            guard case .challenge(var state) = transaction.phase else { return timer.cancel() }
            state.timer = timer
            transaction.phase = .challenge(state)
        }
    }

    /// A challenge's time limit came: it ends here, or, with instances sharing the store, at the challenge's home. One
    /// another instance took the challenge from only records its end.
    func challengeTimeLimitReached(_ acsTransID: String) async {
        let job = Self.expiryJob(acsTransID, due: settings.clock.wallMilliseconds())
        guard await sharing.claim(job) else { return await expire(acsTransID, reportedElsewhere: true) }
        await expire(acsTransID)
        await sharing.finish(job.id)
    }

    /// Ends every open challenge of this instance that `team`'s load mix drew (nil: the mix of no team), as at its time
    /// limit (its RReq says so): what `DELETE /admin/load-mix` does, so that a load test leaves no challenges open for ten
    /// minutes behind it. The number ended; their RReqs go in the background.
    public func endLoadMixChallenges(team: String? = nil) -> Int {
        let open = transactions.newest(limit: .max) { transaction in
            guard transaction.drawnByLoadMix, transaction.loadMixTeam == team, case .challenge = transaction.phase else { return false }
            return true
        }.map(\.id)
        guard !open.isEmpty else { return 0 }
        _ = background.run { [self] in
            for acsTransID in open { await challengeTimeLimitReached(acsTransID) }
        }
        return open.count
    }

    /// How a challenge the ACS's time limit ended is recorded: a CReq after it is not the SDK's fault.
    static let timedOutReason = "timed out"

    /// Ends a challenge still open at its time limit. `reportedElsewhere`: another instance of the cluster claimed the limit's
    /// job (this one was too late), and reports it.
    func expire(_ acsTransID: String, reportedElsewhere: Bool = false) async {
        let expired: (cancel: ChallengeCancel, transaction: Transaction)? = transactions.update(acsTransID) { transaction in
            guard case .challenge(let state) = transaction.phase else { return nil }
            let cancel: ChallengeCancel = state.nextCounter == 0 ? .firstCReqNotReceived : .timedOutAtACS
            transaction.leaveChallenge(for: .ended(Self.timedOutReason + " after \(transaction.challengeTimeout ?? settings.challengeTimeout) s"))
            if reportedElsewhere { transaction.resultsDelivery = "sent by another instance of the cluster" }
            return (cancel, transaction)
        } ?? nil
        guard let (cancel, transaction) = expired, !reportedElsewhere else { return }
        logger.info("challenge timed out", metadata: ["acsTransID": "\(acsTransID)"])
        journalChallengeEnd(transaction, .timedOut)
        await report(acsTransID, .cancelled(cancel))
    }


    /// Ends a decoupled authentication with its result: sends it, or records it as another instance of the cluster sent it.
    func finish(_ acsTransID: String, with result: ChallengeResult, sentElsewhere: Bool = false) async {
        let open = transactions.update(acsTransID) { transaction -> Bool in
            guard case .decoupled = transaction.phase else { return false }
            transaction.phase = .ended("decoupled authentication completed")
            if sentElsewhere {
                transaction.result = result
                transaction.transStatus = result.transStatus
                transaction.resultsDelivery = "sent by another instance of the cluster"
            }
            return true
        }
        if open == true, !sentElsewhere { await report(acsTransID, result) }
    }
}
