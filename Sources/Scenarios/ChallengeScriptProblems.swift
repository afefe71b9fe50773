public import EMV3DS

extension ChallengeScript {
    /// What the CRes table refuses in the screens this script makes, in every version and in each of a screen's
    /// forms (first shown, after a wrong answer, after a resend): the scenario file's check, so that no scenario
    /// scripts a screen the ACS would send invalid.
    public var problems: [(step: Int, version: MessageVersion, violation: Violation)] {
        var found: [(step: Int, version: MessageVersion, violation: Violation)] = []
        let ids = TransactionIDs(threeDSServerTransID: Self.placeholderID, acsTransID: Self.placeholderID, sdkTransID: Self.placeholderID)
        for version in MessageVersion.allCases {
            for step in steps.indices {
                for screen in [screen(at: step, in: version), screen(at: step, in: version, warning: true), screen(at: step, in: version, resent: true)] {
                    let cres = CRes(messageVersion: version, ids: ids, counter: 0, content: .screen(screen))
                    if let violation = ChallengeRules.cRes.check(cres.json, context: MessageContext(version: version)).violations.first {
                        found.append((step, version, violation))
                        break
                    }
                }
            }
        }
        return found
    }

    private static let placeholderID = "00000000-0000-4000-8000-000000000000"
}
