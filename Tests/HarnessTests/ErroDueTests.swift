import EMV3DS
import Faults
import Testing

/// What a receiver owes about an answer the scenario's faults spoilt, whatever order the faults are listed in: a fault that
/// keeps the answer from arriving as a message decides first, bytes that are no JSON next, and an Erro in place of the
/// answer is never answered (EMVCo 3DS FAQ, Technical Questions, April 2026, Q52).
@Suite("The Erro due about a spoilt answer")
struct ErroDueTests {
    @Test func anElementLeftOutCallsFor201NamingIt() {
        #expect(ErroDue(answerSpoiltBy: [.missingField("transStatus")]) == .required([.requiredElementMissing], field: "transStatus"))
    }

    @Test func anAnswerThatDoesNotArriveAsAMessageIsUngradedInEitherOrder() {
        #expect(ErroDue(answerSpoiltBy: [.httpStatus(500), .missingField("transStatus")]) == .ungraded)
        #expect(ErroDue(answerSpoiltBy: [.missingField("transStatus"), .httpStatus(500)]) == .ungraded)
    }

    @Test func bytesThatAreNoJSONCallFor101InEitherOrder() {
        let due = ErroDue.required([.messageNotRecognised], field: nil)
        #expect(ErroDue(answerSpoiltBy: [.missingField("transStatus"), .malformedJSON]) == due)
        #expect(ErroDue(answerSpoiltBy: [.malformedJSON, .missingField("transStatus")]) == due)
    }

    @Test func anErroInPlaceOfTheAnswerIsNeverAnsweredSpoiltOrNot() {
        #expect(ErroDue(answerSpoiltBy: [.erro(.transientSystemFailure)]) == .forbidden)
        #expect(ErroDue(answerSpoiltBy: [.erro(.transientSystemFailure), .missingField("errorCode")]) == .forbidden)
        #expect(ErroDue(answerSpoiltBy: [.missingField("errorCode"), .erro(.transientSystemFailure)]) == .forbidden)
        // Cut to bytes that are no JSON, or not arriving at all, it is no Erro to leave unanswered either.
        #expect(ErroDue(answerSpoiltBy: [.erro(.transientSystemFailure), .malformedJSON]) == .ungraded)
        #expect(ErroDue(answerSpoiltBy: [.erro(.transientSystemFailure), .noAnswer]) == .ungraded)
    }
}
