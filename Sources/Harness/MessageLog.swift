import EMV3DS
public import Logging
import Messaging
public import Net

/// One log line per EMV message a role answered, at info: role, what came and what went, the
/// outcome, the transaction's ids and the time taken, so that `--log-level info` shows the
/// life of every transaction. At a higher level nothing is built.
public struct MessageLog: HTTPServerObserver {
    let logger: Logger
    /// The logger's level, read once: reading it copies the logger's handler, on every answer the server gives.
    private let logsInfo: Bool

    public init(logger: Logger) {
        self.logger = logger
        logsInfo = logger.logLevel <= .info
    }

    public func connectionOpened() {}
    public func connectionClosed() {}

    public func answered(_ answer: AnsweredRequest) {
        guard logsInfo, let exchange = answer.annotation as? MessageExchange, let received = exchange.received else { return }
        var metadata: Logger.Metadata = [
            "role": "\(HarnessMetrics.role(of: answer.route))",
            "received": "\(received.rawValue)",
            "answer": "\(exchange.answered?.rawValue ?? "none")",
            "ms": "\(Self.milliseconds(answer.duration))",
        ]
        if let transStatus = exchange.transStatus { metadata["transStatus"] = "\(transStatus)" }
        if let code = exchange.errorCode { metadata["errorCode"] = "\(code.rawValue)" }
        for (name, id) in [("threeDSServerTransID", exchange.ids.threeDSServerTransID), ("dsTransID", exchange.ids.dsTransID),
                           ("acsTransID", exchange.ids.acsTransID), ("sdkTransID", exchange.ids.sdkTransID)] {
            if let id { metadata[name] = "\(id)" }
        }
        // The message reads as the exchange ("ds AReq -> ARes C"); the metadata carries the same for filters.
        let outcome = exchange.transStatus.map { " \($0)" } ?? exchange.errorCode.map { " \($0.rawValue)" } ?? ""
        logger.info("\(metadata["role"] ?? "") \(received.rawValue) -> \(exchange.answered?.rawValue ?? "taken")\(outcome)", metadata: metadata)
    }

    /// Milliseconds with two decimals.
    static func milliseconds(_ duration: Duration) -> String {
        let hundredths = duration.components.seconds * 100_000 + duration.components.attoseconds / 10_000_000_000_000
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}

/// Several observers as one: the server takes one.
struct Observers: HTTPServerObserver {
    let all: [any HTTPServerObserver]

    func connectionOpened() { all.forEach { $0.connectionOpened() } }
    func connectionClosed() { all.forEach { $0.connectionClosed() } }
    func answered(_ answer: AnsweredRequest) { all.forEach { $0.answered(answer) } }
}
