public import EMV3DS

/// What the card's 3DS Method does in the browser channel, and what the ACS makes of
/// `threeDSCompInd` (Core specification: 3DS Method; Annex A: threeDSCompInd).
public struct ThreeDSMethodScript: Sendable, Equatable {
    /// When the ACS's 3DS Method page posts to the 3DS Server's notification URL.
    public enum Notification: Sendable, Equatable {
        /// As soon as the page has loaded: threeDSCompInd Y.
        case immediately
        /// After this many seconds: Y when under the 3DS Server's 10 seconds, else N.
        case after(seconds: Double)
        /// Never: the 3DS Server waits its 10 seconds and sends N.
        case never
    }

    /// False: the card's range has no 3DS Method URL in the PRes, and the AReq carries U.
    public var hasURL = true
    public var notification = Notification.immediately
    /// The scenario the ACS plays instead when the AReq's threeDSCompInd is not Y (an issuer
    /// that challenges what it could not fingerprint).
    public var unlessCompleted: String?

    public init(hasURL: Bool = true, notification: Notification = .immediately, unlessCompleted: String? = nil) {
        self.hasURL = hasURL
        self.notification = notification
        self.unlessCompleted = unlessCompleted
    }

    /// What a correct 3DS Server sends: Y when the page notifies within the 10 seconds it waits.
    public var expectedCompInd: ThreeDSCompInd {
        guard hasURL else { return .unavailable }
        guard let delay = notificationDelayMilliseconds, delay <= 10_000 else { return .notCompleted }
        return .completed
    }

    /// The 3DS Method every card range has unless its scenario says otherwise.
    public static let standard = ThreeDSMethodScript()

    /// The delay, in milliseconds, before the page notifies; nil when it never does.
    public var notificationDelayMilliseconds: Int? {
        switch notification {
        case .immediately: 0
        case .after(let seconds): Int((seconds * 1000).rounded())
        case .never: nil
        }
    }
}
