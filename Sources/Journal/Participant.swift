/// A party to a transaction: the columns of the inspector's sequence diagram.
public enum Participant: String, Sendable, CaseIterable {
    case sdk = "SDK"
    case browser = "Browser"
    case threeDSServer = "3DS Server"
    case directoryServer = "DS"
    case accessControlServer = "ACS"
}
