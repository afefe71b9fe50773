/// `transStatusReason`: the codes EMVCo defines in each version (80-99 are the DS's in every version).
public enum TransStatusReason {
    /// 01-21 in 2.1.0, to 26 in 2.2.0, to 30 in 2.3.1 (27 preferred method not supported, 28 content security policy
    /// validation failed, 29 and 30 decoupled fallback; SB 279, Table A.1 `transStatusReason`).
    public static func emvcoCodes(in version: MessageVersion) -> ClosedRange<Int> {
        switch version {
        case .v2_1_0: 1...21
        case .v2_2_0: 1...26
        case .v2_3_1: 1...30
        }
    }

    /// The codes valid in `version`, as two digits.
    public static func codes(in version: MessageVersion) -> [String] {
        (Array(emvcoCodes(in: version)) + Array(80...99)).map { $0 < 10 ? "0\($0)" : "\($0)" }
    }

    /// Whether `code` is a reason `version` defines.
    public static func isDefined(_ code: String, in version: MessageVersion) -> Bool {
        guard code.count == 2, let number = Int(code) else { return false }
        return emvcoCodes(in: version).contains(number) || (80...99).contains(number)
    }
}
