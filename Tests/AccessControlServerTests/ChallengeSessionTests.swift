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

    // MARK: Decoupled Authentication Fallback (2.3.1, EMVCo SB 279 Req 461: an information screen, then D)

    static func fallingBack(_ reason: String, attempts: Int = 3) -> ChallengeScript {
        var script = ChallengeScript(steps: [ChallengeStep(screen: screen(.text), answer: "1234")], attempts: attempts)
        script.decoupledFallback = DecoupledFallbackScript(reason: reason, text: "Approve in your banking app.")
        return script
    }

    @Test mutating func afterTheStepsPassAFallbackShowsTheInformationScreenThenEndsD() throws {
        var session = ChallengeSession(script: Self.fallingBack("30"), version: .v2_3_1, fallbackAllowed: true)
        _ = session.handle(creq(.none, version: .v2_3_1))
        let information = try #require(Self.shown(session.handle(creq(.dataEntry("1234"), version: .v2_3_1))))
        #expect(information.uiType == .information && information.text == "Approve in your banking app.")
        #expect(session.handle(creq(.oobContinue, version: .v2_3_1)) == .finish(ChallengeResult(transStatus: .decoupled, reason: "30", interactions: 2)))
    }

    /// Reason 29 replaces the failure: the attempts ran out, and the bank goes on decoupled.
    @Test mutating func afterTheAttemptsRunOutReason29FallsBack() throws {
        var session = ChallengeSession(script: Self.fallingBack("29", attempts: 1), version: .v2_3_1, fallbackAllowed: true)
        _ = session.handle(creq(.none, version: .v2_3_1))
        #expect(try #require(Self.shown(session.handle(creq(.dataEntry("0000"), version: .v2_3_1)))).uiType == .information)
        #expect(session.handle(creq(.noEntry, version: .v2_3_1)) == .finish(ChallengeResult(transStatus: .decoupled, reason: "29", interactions: 2)))
    }

    /// Without the requestor's F or B, or before 2.3.1, the challenge ends as scripted; the cardholder may cancel on the information screen.
    @Test(arguments: [(MessageVersion.v2_3_1, false), (.v2_2_0, true)])
    mutating func withoutTheRequestorsConsentOrBefore231TheChallengeEndsAsScripted(_ version: MessageVersion, _ allowed: Bool) {
        var session = ChallengeSession(script: Self.fallingBack("30"), version: version, fallbackAllowed: allowed)
        _ = session.handle(creq(.none, version: version))
        #expect(session.handle(creq(.dataEntry("1234"), version: version)) == .finish(ChallengeResult(transStatus: .authenticated, interactions: 1)))
    }

    /// Another instance of a cluster takes the challenge up on the information screen: it ends D there too.
    @Test mutating func theInformationScreenSurvivesTheRecord() throws {
        var session = ChallengeSession(script: Self.fallingBack("30"), version: .v2_3_1, fallbackAllowed: true)
        _ = session.handle(creq(.none, version: .v2_3_1))
        _ = session.handle(creq(.dataEntry("1234"), version: .v2_3_1))
        var restored = try #require(ChallengeSession(script: Self.fallingBack("30"), version: .v2_3_1, progress: session.progress))
        #expect(restored.screen().uiType == .information)
        #expect(restored.handle(creq(.oobContinue, version: .v2_3_1)) == .finish(ChallengeResult(transStatus: .decoupled, reason: "30", interactions: 2)))
    }
}
