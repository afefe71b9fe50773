public import JSON

/// The SDK's device information, the plaintext of the AReq's `sdkEncData`, as the EMVCo SDK
/// specification lays it out: `DV` the data version, `DD` the parameters by identifier
/// (`C001`… common, `A001`… Android, `I001`… iOS), `DPNA` why a parameter is not available,
/// by identifier, and `SW` the security warnings raised. Public SDKs write it so (JudoKit's
/// ThreeDSDeviceData: DV string, DD and DPNA maps of strings, SW a list of strings).
public enum DeviceInformation {
    /// Why a parameter is not available: market or regional restriction, platform version,
    /// permission, value null or blank.
    public static let unavailabilityReasons: Set<String> = ["RE01", "RE02", "RE03", "RE04"]
    /// Security warnings: jailbroken, tampered, emulator, debugger, OS not supported.
    public static let securityWarnings: Set<String> = ["SW01", "SW02", "SW03", "SW04", "SW05"]

    /// What breaks the layout (`failures`) and what is unusual but readable (`warnings`).
    public static func problems(in json: JSONValue) -> (failures: [String], warnings: [String]) {
        var failures: [String] = []
        var warnings: [String] = []
        if json["DV"]?.stringValue?.isEmpty != false { failures.append("DV (the data version) is missing or not a string") }
        switch json["DD"] {
        case .object(let members)?:
            if members.isEmpty { failures.append("DD has no parameter") }
            let oddNames = members.map(\.key).filter { !isIdentifier($0) }
            if !oddNames.isEmpty { warnings.append("DD names parameters outside the specification's identifiers (C001, A001, I001…): \(oddNames.prefix(5).joined(separator: ", "))") }
            // Every value is a string, numbers and lists written as text (JudoKit's DD is a map of strings; Stripe's 3ds2sdk writes strings).
            let notText = members.filter { $0.value.stringValue == nil }
            if !notText.isEmpty {
                failures.append("DD gives \(notText.prefix(5).map { "\($0.key) as \(JSONWriter.string($0.value))" }.joined(separator: ", ")): each value is a string")
            }
            // A parameter of the other platform: C001 names the platform, A identifiers are Android's, I identifiers iOS's.
            let platform = members.first { $0.key == "C001" }?.value.stringValue
            let foreign: Character? = platform == "Android" ? "I" : platform == "iOS" ? "A" : nil
            let misplaced = members.map(\.key).filter { isIdentifier($0) && $0.first == foreign }
            if let platform, !misplaced.isEmpty {
                failures.append("DD of platform \(platform) (C001) gives \(misplaced.prefix(5).joined(separator: ", ")), identifiers of the other platform")
            }
        default:
            failures.append("DD (the device parameters) is missing or not an object")
        }
        switch json["DPNA"] {
        case nil: break
        case .object(let members)?:
            let wrong = members.filter { $0.value.stringValue.map { !unavailabilityReasons.contains($0) } ?? true }
            if !wrong.isEmpty {
                failures.append("DPNA gives \(wrong.prefix(5).map { "\($0.key): \(JSONWriter.string($0.value))" }.joined(separator: ", ")): "
                                + "a reason is one of \(unavailabilityReasons.sorted().joined(separator: ", "))")
            }
        default:
            failures.append("DPNA is not an object of parameter identifiers and reasons")
        }
        switch json["SW"] {
        case nil: break
        case .array(let items)?:
            // A vendor may add warnings of its own: unusual, not wrong, as long as each is a string.
            let notText = items.filter { $0.stringValue == nil }
            let unknown = items.compactMap(\.stringValue).filter { !securityWarnings.contains($0) }
            if !notText.isEmpty { failures.append("SW lists \(notText.prefix(5).map(JSONWriter.string).joined(separator: ", ")): each warning is a string") }
            if !unknown.isEmpty {
                warnings.append("SW lists \(unknown.prefix(5).joined(separator: ", ")), outside the specification's \(securityWarnings.sorted().joined(separator: ", "))")
            }
        default:
            failures.append("SW is not a list of security warnings")
        }
        return (failures, warnings)
    }

    /// `C001`, `A012`, `I003`: a letter for the platform and three digits.
    static func isIdentifier(_ name: String) -> Bool {
        // Read in place: every parameter of every AReq's device data is asked, twice.
        let bytes = name.utf8
        guard bytes.count == 4, let platform = bytes.first,
              platform == UInt8(ascii: "C") || platform == UInt8(ascii: "A") || platform == UInt8(ascii: "I") else { return false }
        return bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
