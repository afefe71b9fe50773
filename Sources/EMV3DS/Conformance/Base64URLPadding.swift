/// Base64url in EMV 3DS carries no `=` padding. EMVCo ruled so for every base64url value of the protocol (the ruling
/// is recorded in the 3dsecure.io API changelog of 2020, whose API had required padding before), and production ACSs
/// refuse a padded browser `creq` (juspay/hyperswitch issue 10478: "creq payload has decoding issue (invalid padding)
/// only appearing in prod"). The harness's roles read a padded value where they can (a check is the verdict, not a
/// refusal); the check that reads the value fails it with ``problem(in:named:)``.
public enum Base64URLPadding {
    /// Why `value`, the base64url value of `field`, is not as the specification writes it; nil when it carries no padding.
    public static func problem(in value: some StringProtocol, named field: String) -> String? {
        guard value.hasSuffix("=") else { return nil }
        let count = value.reversed().prefix { $0 == "=" }.count
        return "\(field) ends in \(count) '=' of base64 padding: base64url in EMV 3DS is unpadded "
            + "(EMVCo's ruling, recorded in the 3dsecure.io API changelog, 2020); production ACSs refuse a padded value"
    }
}
