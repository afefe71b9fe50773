import Messaging
import Net
import Testing
@testable import AccessControlServer

/// Only an RReq that surely did not reach the DS goes again: after a read time-out or a broken answer the DS may have taken
/// it, and the 3DS Server would see it twice (RReqRetryTests sends them through a balancer).
@Suite("Which RReqs go again")
struct RReqRetryRuleTests {
    let url = "http://ds.example/ds/rreq"

    @Test func anRReqNoConnectionTookOrA503RefusedGoesAgain() {
        #expect(AccessControlServer.surelyNotDelivered(.unreachable(url: url, .connectFailed(address: "ds", reason: "refused"))))
        #expect(AccessControlServer.surelyNotDelivered(.unreachable(url: url, .connectTimedOut(address: "ds", milliseconds: 5_000))))
        #expect(AccessControlServer.surelyNotDelivered(.httpStatus(url: url, 503, body: "")))
    }

    @Test func anRReqTheDSMayHaveTakenDoesNot() {
        #expect(!AccessControlServer.surelyNotDelivered(.unreachable(url: url, .readTimedOut(milliseconds: 30_000))))
        #expect(!AccessControlServer.surelyNotDelivered(.unreachable(url: url, .connectionClosed(reason: "reset"))))
        #expect(!AccessControlServer.surelyNotDelivered(.httpStatus(url: url, 502, body: "")))
    }

    @Test func eachAttemptWaitsTwiceAsLongAsTheOneBefore() {
        var settings = AccessControlServerSettings(schemes: [])
        (settings.rreqRetries, settings.rreqRetrySeconds) = (3, 2)
        #expect(settings.rreqRetryDelays == [2, 4, 8])
        settings.rreqRetries = 0
        #expect(settings.rreqRetryDelays.isEmpty)
    }
}
