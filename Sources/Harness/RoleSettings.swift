import AccessControlServer
import Configuration
import DirectoryServer
import EMV3DS
import EMVCrypto

// How the role sections become the roles' settings.
extension HarnessConfiguration {
    /// The DS role's settings from `directoryServer:` and the schemes.
    func directoryServerSettings(schemes: [PaymentScheme], keys: [String: DirectoryServerKeys]) -> DirectoryServerSettings {
        var settings = DirectoryServerSettings(schemes: schemes, keys: keys)
        settings.referenceNumber = directoryServer.referenceNumber
        settings.outOfRange = switch directoryServer.outOfRange {
        case .notAuthenticated: .ares(.notAuthenticated, reason: directoryServer.outOfRangeReason)
        case .unavailable: .ares(.unavailable, reason: directoryServer.outOfRangeReason)
        case .erro: .erro
        }
        return settings
    }

    /// The ACS role's settings from `accessControlServer:` and the schemes.
    func accessControlServerSettings(schemes: [PaymentScheme], signers: [String: ACSSigningIdentity]) -> AccessControlServerSettings {
        var settings = AccessControlServerSettings(schemes: schemes, signers: signers)
        settings.referenceNumber = accessControlServer.referenceNumber
        settings.operatorID = accessControlServer.operatorID
        settings.challengeURL = accessControlServer.challengeURL
        settings.challengeTimeout = accessControlServer.challengeTimeout
        (settings.rreqRetries, settings.rreqRetrySeconds) = (accessControlServer.rreqRetries, accessControlServer.rreqRetrySeconds)
        return settings
    }
}
