import EMV3DS
import Scenarios
import Testing
@testable import AccessControlServer

/// The cardholder's progress through a challenge, without HTTP or crypto: each CReq's action
/// against the script gives the next screen or the result.
@Suite("Challenge session")
struct ChallengeSessionTests {
    static func screen(_ type: ACSUIType) -> ChallengeScreenContent {
        var screen = ChallengeScreenContent(uiType: type)
        screen.header = "Purchase authentication"
        if type == .singleSelect || type == .multiSelect { screen.options = [("1", "Mobile"), ("2", "Email"), ("3", "Post")] }
        return screen
    }

    static func script(attempts: Int = 3) -> ChallengeScript {
        ChallengeScript(steps: [
            ChallengeStep(screen: screen(.text), answer: "1234", resendAnswer: "5678"),
            ChallengeStep(screen: screen(.multiSelect), answer: "1,3"),
        ], attempts: attempts)
    }

    /// The screen a decision shows, if it shows one.
    static func shown(_ decision: ChallengeSession.Decision) -> ChallengeScreenContent? {
        if case .show(let screen) = decision { screen } else { nil }
    }

    var counter = 0
    mutating func creq(_ action: CReq.Action, version: MessageVersion = .v2_2_0, whitelisting: String? = nil) -> CReq {
        defer { counter += 1 }
        var creq = CReq(messageVersion: version, threeDSServerTransID: "s", acsTransID: "a", sdkTransID: "k", counter: counter, action: action)
        creq.whitelistingDataEntry = whitelisting
        return creq
    }

    @Test mutating func theRightAnswersInTurnAuthenticate() throws {
        var session = ChallengeSession(script: Self.script(), version: .v2_2_0)
        #expect(try #require(Self.shown(session.handle(creq(.none)))).uiType == .text)
        #expect(try #require(Self.shown(session.handle(creq(.dataEntry("1234"))))).uiType == .multiSelect)
        // Multi-select answers match as a set, whatever the order and spacing.
        #expect(session.handle(creq(.dataEntry("3, 1"))) == .finish(ChallengeResult(transStatus: .authenticated, interactions: 2)))
    }

    @Test mutating func wrongAnswersWarnThenFailAtTheLimit() throws {
        var session = ChallengeSession(script: Self.script(attempts: 2), version: .v2_2_0)
        _ = session.handle(creq(.none))
        #expect(try #require(Self.shown(session.handle(creq(.dataEntry("0000"))))).textIsWarning)
        #expect(session.handle(creq(.dataEntry("0000"))) == .finish(ChallengeResult(transStatus: .notAuthenticated, reason: "01", interactions: 2)))
    }

    @Test mutating func aResentCodeReplacesTheFirst() throws {
        var session = ChallengeSession(script: Self.script(), version: .v2_2_0)
        _ = session.handle(creq(.none))
        _ = session.handle(creq(.resend))
        #expect(try #require(Self.shown(session.handle(creq(.dataEntry("1234"))))).textIsWarning, "the old code is a wrong answer now")
        #expect(try #require(Self.shown(session.handle(creq(.dataEntry("5678"))))).uiType == .multiSelect)
    }

    @Test mutating func aCancelEndsWithItsCodeAndTheWhitelistingAnswer() {
        var session = ChallengeSession(script: Self.script(), version: .v2_2_0)
        _ = session.handle(creq(.none))
        var expected = ChallengeResult.cancelled(.cardholderCancelled, interactions: 0)
        expected.whiteListStatus = "Y"
        #expect(session.handle(creq(.cancel(.cardholderCancelled), whitelisting: "Y")) == .finish(expected))
    }

    @Test mutating func noWhitelistingStatusIn210() {
        var session = ChallengeSession(script: Self.script(), version: .v2_1_0)
        _ = session.handle(creq(.none, version: .v2_1_0))
        // whiteListStatus is a 2.2.0 field: a 2.1.0 SDK's answer to the prompt does not make one.
        #expect(session.handle(creq(.cancel(.cardholderCancelled), version: .v2_1_0, whitelisting: "Y"))
                == .finish(.cancelled(.cardholderCancelled, interactions: 0)))
    }
}
