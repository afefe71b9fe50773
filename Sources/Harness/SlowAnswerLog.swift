public import Logging
public import Net

/// A warning for every answer that took longer than `threshold` from its dispatch (the store's gate included): a stall
/// a user would see as a client timeout, named by route, status and time, so that its cause can be looked for. The live
/// feed (`/inspector/events`) holds its answers on purpose and is left out.
public struct SlowAnswerLog: HTTPServerObserver {
    let logger: Logger
    let threshold: Duration

    public init(logger: Logger, threshold: Duration = .seconds(2)) {
        self.logger = logger
        self.threshold = threshold
    }

    public func connectionOpened() {}
    public func connectionClosed() {}

    public func answered(_ answer: AnsweredRequest) {
        guard answer.duration >= threshold, answer.route != "/inspector/events" else { return }
        logger.warning("slow answer", metadata: ["route": "\(answer.route)", "method": "\(answer.method?.rawValue ?? "-")",
                                                 "status": "\(answer.status.code)", "ms": "\(MessageLog.milliseconds(answer.duration))"])
    }
}
