/// `threeDSCompInd` of a browser AReq: whether the 3DS Method ran before it.
public enum ThreeDSCompInd: String, Sendable {
    /// The ACS's 3DS Method page notified its end within 10 seconds.
    case completed = "Y"
    /// The card's range has a 3DS Method, and no notification came in time.
    case notCompleted = "N"
    /// The card's range has no 3DS Method URL.
    case unavailable = "U"
}
