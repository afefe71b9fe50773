import EMV3DS
import Faults
import Foundation
import Testing
@testable import DirectoryServer

/// The DS's checks of the 3DS Server that need no state, each failed by what it exists to find and passed by what a
/// correct 3DS Server sends; the flows that reach them are in FlowTests.
@Suite("Directory Server checks")
struct DirectoryServerChecksTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aPurchaseDateAheadOfUTCFailsAndOneWithinTheClockAllowancePasses() {
        let ahead = UTCTime.purchaseDate(Self.now.addingTimeInterval(2 * 3600))
        let withinAllowance = UTCTime.purchaseDate(Self.now.addingTimeInterval(Double(DirectoryServer.purchaseDateAheadAllowance - 60)))
        #expect(DirectoryServer.purchaseDateCheck(ahead, now: Self.now).verdict == .fail)
        #expect(DirectoryServer.purchaseDateCheck(withinAllowance, now: Self.now).verdict == .pass)
    }

    @Test func aPurchaseDateHoursBehindWarnsWithTheCardholderPresentOnly() {
        let behind = UTCTime.purchaseDate(Self.now.addingTimeInterval(-5 * 3600))
        #expect(DirectoryServer.purchaseDateCheck(behind, now: Self.now).verdict == .warning)
        #expect(DirectoryServer.purchaseDateCheck(behind, now: Self.now, cardholderPresent: false).verdict == .pass)
    }

    static let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .requiredElementMissing, errorComponent: .threeDSServer,
                                  errorDetail: "transStatus", errorMessageType: "ARes")

    @Test func anErroWhereNoneWasDueFails() {
        #expect(DirectoryServer.erroCheck(Self.erro, due: .forbidden, about: .aRes, version: .v2_2_0).verdict == .fail)
    }

    @Test func theDueErroPassesAndOneWithAnotherCodeComponentOrFieldFails() {
        let due = ErroDue.required([.requiredElementMissing], field: "transStatus")
        #expect(DirectoryServer.erroCheck(Self.erro, due: due, about: .aRes, version: .v2_2_0).verdict == .pass)
        var otherCode = Self.erro
        otherCode.errorCode = .formatInvalid
        var otherComponent = Self.erro
        otherComponent.errorComponent = .acs
        var otherField = Self.erro
        otherField.errorDetail = "acsTransID"
        for wrong in [otherCode, otherComponent, otherField] {
            #expect(DirectoryServer.erroCheck(wrong, due: due, about: .aRes, version: .v2_2_0).verdict == .fail, "\(wrong.json)")
        }
        #expect(DirectoryServer.erroCheck(Self.erro, due: due, about: .aRes, version: .v2_3_1).verdict == .fail, "another messageVersion")
    }

    /// An ARes that said it was an AReq: Erro 101 may leave errorMessageType out, and may name the type the message said it
    /// was; another fault's Erro names the ARes. An ARes of another version: the Erro may be in the version read.
    @Test func anErroAboutASpoiltEnvelopeMayNameWhatTheMessageSaidItWas() {
        let aboutType = Fault.fieldValue("messageType", "AReq").erroDue
        var notRecognised = ErroMessage(messageVersion: "2.2.0", errorCode: .messageNotRecognised, errorComponent: .threeDSServer,
                                        errorDetail: "messageType", errorMessageType: nil)
        #expect(DirectoryServer.erroCheck(notRecognised, due: aboutType, about: .aRes, version: .v2_2_0).verdict == .pass)
        notRecognised.errorMessageType = "AReq"
        #expect(DirectoryServer.erroCheck(notRecognised, due: aboutType, about: .aRes, version: .v2_2_0).verdict == .pass)
        var invalid = notRecognised
        invalid.errorCode = .formatInvalid
        invalid.errorMessageType = nil
        #expect(DirectoryServer.erroCheck(invalid, due: aboutType, about: .aRes, version: .v2_2_0).verdict == .fail, "203 names the message")
        var namedAReq = Self.erro
        namedAReq.errorMessageType = "AReq"
        #expect(DirectoryServer.erroCheck(namedAReq, due: .required([.requiredElementMissing], field: "transStatus"), about: .aRes, version: .v2_2_0).verdict == .fail)

        var namedOtherType = notRecognised
        namedOtherType.errorMessageType = "PRes"
        #expect(DirectoryServer.erroCheck(namedOtherType, due: aboutType, about: .aRes, version: .v2_2_0).verdict == .fail, "a type the ARes did not say")

        let aboutVersion = Fault.messageVersion("2.1.0").erroDue
        var inTheVersionRead = ErroMessage(messageVersion: "2.1.0", errorCode: .formatInvalid, errorComponent: .threeDSServer,
                                           errorDetail: "messageVersion", errorMessageType: "ARes")
        #expect(DirectoryServer.erroCheck(inTheVersionRead, due: aboutVersion, about: .aRes, version: .v2_2_0).verdict == .pass)
        inTheVersionRead.messageVersion = "2.3.1"
        #expect(DirectoryServer.erroCheck(inTheVersionRead, due: aboutVersion, about: .aRes, version: .v2_2_0).verdict == .fail, "a third version")
    }

    @Test func anErroAboutAnAnswerThatNeverArrivedIsAllowed() {
        #expect(DirectoryServer.erroCheck(Self.erro, due: .ungraded, about: .aRes, version: .v2_2_0).verdict == .pass)
    }

    static func preq(serialNum: String?) throws -> PReq {
        let json = """
            {"messageType":"PReq","messageVersion":"2.2.0","threeDSServerRefNumber":"3DS_LOA_SER_TEST_020200_00001",
             "threeDSServerOperatorID":"OP","threeDSServerTransID":"8a880dc0-d2d2-4067-bcb1-b08d1690b26e"\
            \(serialNum.map { ",\"serialNum\":\"\($0)\"" } ?? "")}
            """
        return try PReq(bytes: Array(json.utf8))
    }

    @Test func aPReqWithoutTheSerialItWasGivenFailsAndOneWithItPasses() throws {
        let earlier = DirectoryServer.Preparation(lastAt: Self.now.addingTimeInterval(-2 * 3600), serial: "S1")
        let without = DirectoryServer.preparationChecks(try Self.preq(serialNum: nil), earlier: earlier, currentSerial: "S1", now: Self.now)
        let with = DirectoryServer.preparationChecks(try Self.preq(serialNum: "S1"), earlier: earlier, currentSerial: "S1", now: Self.now)
        #expect(without.map(\.verdict) == [.fail, .pass])
        #expect(with.map(\.verdict) == [.pass, .pass])
    }

    @Test func aPReqWithinTheHourFailsUnlessTheRangesChangedSince() throws {
        let earlier = DirectoryServer.Preparation(lastAt: Self.now.addingTimeInterval(-60), serial: "S1")
        let unchanged = DirectoryServer.preparationChecks(try Self.preq(serialNum: "S1"), earlier: earlier, currentSerial: "S1", now: Self.now)
        let changed = DirectoryServer.preparationChecks(try Self.preq(serialNum: "S1"), earlier: earlier, currentSerial: "S2", now: Self.now)
        #expect(unchanged.map(\.verdict) == [.pass, .fail])
        #expect(changed.map(\.verdict) == [.pass, .pass])
        #expect(DirectoryServer.preparationChecks(try Self.preq(serialNum: nil), earlier: nil, currentSerial: "S1", now: Self.now).map(\.verdict) == [.pass, .pass],
                "a first PReq asks for every range")
    }

    @Test func anRResThatDoesNotEchoTheRReqsIdsIs301NamingEachId() {
        let rreq = RReq(messageVersion: .v2_2_0, messageCategory: "01", threeDSServerTransID: "s", acsTransID: "a", dsTransID: "d",
                        sdkTransID: nil, transStatus: .authenticated, interactionCounter: "01")
        #expect(DirectoryServer.unechoed(TransactionIDs(threeDSServerTransID: "s", acsTransID: "a", dsTransID: "d"), of: rreq) == nil)
        let invalid = DirectoryServer.unechoed(TransactionIDs(threeDSServerTransID: "s", acsTransID: "other", dsTransID: "d"), of: rreq)
        #expect(invalid?.violations.map(\.field) == ["acsTransID"])
        #expect(invalid?.violations.map(\.code) == [.transactionIDNotRecognised])
    }
}
