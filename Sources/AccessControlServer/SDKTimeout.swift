import EMV3DS

/// The time an SDK gives a challenge: the AReq's `sdkMaxTimeout` (minutes, at least 05), counted from
/// the ARes. When it runs out the SDK sends Erro 402 and stops (SDK Spec: the challenge timeout); a
/// CReq after it is an SDK that does not keep its timer. A CReq gets 30 s of grace for the network
/// and the clocks; an Erro 402 counts as the timeout from 30 s before it.
struct SDKTimeout: Sendable {
    let minutes: Int
    let challengeStart: ContinuousClock.Instant
    /// The same moment in milliseconds since 1970: what another instance of a cluster reads it from.
    let wallStart: Int64

    static let grace = Duration.seconds(30)

    var limit: Duration { .seconds(minutes * 60) }

    /// `challenge.sdk-timeout` of a CReq at `now`: a failure past the limit, nothing before it.
    func check(creqAt now: ContinuousClock.Instant) -> CheckResult? {
        let elapsed = now - challengeStart
        guard elapsed > limit + Self.grace else { return nil }
        return .fail(.sdkTimeout, "a CReq \(Self.text(elapsed)) after the ARes, past the AReq's sdkMaxTimeout \(minutes) min: "
                                  + "the SDK ends the challenge at its timeout with Erro 402 and sends no CReq after it")
    }

    /// `challenge.sdk-timeout` of an Erro 402 at `now`: a pass when it is the SDK's challenge timeout, nil when it
    /// came before (an Erro about a CRes the SDK waited for in vain).
    func check(erro402At now: ContinuousClock.Instant) -> CheckResult? {
        let elapsed = now - challengeStart
        guard elapsed >= limit - Self.grace else { return nil }
        return .pass(.sdkTimeout, "Erro 402 \(Self.text(elapsed)) after the ARes, at the AReq's sdkMaxTimeout \(minutes) min")
    }

    static func text(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        return "\(seconds / 60) min \(seconds % 60) s"
    }
}
