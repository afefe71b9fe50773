import EMV3DS
import Harness
import Logging
import Messaging
import Net
import Synchronization
import Testing

/// What was logged, for the assertions.
private final class Captured: Sendable {
    let lines = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
}

/// Captures what is logged.
private struct CapturingHandler: LogHandler {
    let captured: Captured
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        captured.lines.withLock { $0.append(("\(event.message)", metadata.merging(event.metadata ?? [:]) { $1 })) }
    }
}

@Suite("Message log: one info line per EMV message")
struct MessageLogTests {
    private let ids = TransactionIDs(threeDSServerTransID: "8a880dc0-d2d2-4067-bcb1-b08d1690b26e", acsTransID: "d7c1ee99-9478-44a6-b1f2-391e29c6b340",
                                     dsTransID: "0e7e5ae0-6b6c-4d4a-8b8f-6d2b3e9f7a11")

    private func log(at level: Logger.Level, _ answers: [AnsweredRequest]) -> [(message: String, metadata: Logger.Metadata)] {
        let captured = Captured()
        let handler = CapturingHandler(captured: captured, logLevel: level)
        let messageLog = MessageLog(logger: Logger(label: "test", factory: { _ in handler }))
        answers.forEach(messageLog.answered)
        return captured.lines.withLock { $0 }
    }

    @Test func eachAnsweredMessageIsOneLineWithItsRoleIdsOutcomeAndTime() throws {
        let lines = log(at: .info, [
            AnsweredRequest(route: "/ds/areq", method: .post, status: .ok, duration: .microseconds(12_345),
                            annotation: MessageExchange(received: .aReq, answered: .aRes, transStatus: "C", ids: ids)),
            AnsweredRequest(route: "/acs/challenge", method: .post, status: .ok, duration: .milliseconds(2),
                            annotation: MessageExchange(received: .erro, errorCode: .transactionTimedOut, ids: ids)),
            AnsweredRequest(route: "/health", method: .get, status: .ok, duration: .zero, annotation: nil),  // not an EMV message
        ])
        #expect(lines.map(\.message) == ["ds AReq -> ARes C", "acs Erro -> taken 402"])
        let first = try #require(lines.first).metadata
        #expect(first["ms"] == "12.34" && first["transStatus"] == "C" && first["role"] == "ds")
        #expect(first["threeDSServerTransID"] == "8a880dc0-d2d2-4067-bcb1-b08d1690b26e" && first["acsTransID"] != nil && first["dsTransID"] != nil)
        #expect(lines.last?.metadata["errorCode"] == "402")
    }

    @Test func aboveInfoNothingIsLogged() {
        let answer = AnsweredRequest(route: "/ds/areq", method: .post, status: .ok, duration: .zero,
                                     annotation: MessageExchange(received: .aReq, answered: .aRes, transStatus: "Y", ids: ids))
        #expect(log(at: .notice, [answer]).isEmpty)
    }
}
