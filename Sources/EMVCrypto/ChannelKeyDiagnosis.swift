public import JOSE

/// A way an SDK derives the secure channel's key other than EMV's (Concat KDF, empty AlgorithmID and PartyUInfo, the
/// AReq's `sdkReferenceNumber` in PartyVInfo, 256 bits; A128GCM from the SDK with bytes 0-15): each is a CReq the ACS
/// cannot decrypt, and naming it says which input was off rather than only "cannot be decrypted".
public enum ChannelKeyMistake: Sendable, Equatable, CustomStringConvertible {
    /// Concat KDF with an empty PartyVInfo: the `sdkReferenceNumber` left out.
    case withoutSDKReferenceNumber
    /// Concat KDF with another `sdkReferenceNumber` in PartyVInfo than the AReq's.
    case otherSDKReferenceNumber(String)
    /// The `sdkReferenceNumber` in PartyUInfo rather than PartyVInfo.
    case sdkReferenceNumberAsPartyUInfo
    /// JWA's ECDH-ES inputs (RFC 7518 §4.6.2): AlgorithmID the `enc`, a key of the `enc`'s length, no `sdkReferenceNumber`.
    case joseECDHES
    /// A128GCM sealed with the half of the key the ACS seals its CRes with (bytes 16-31).
    case acsHalf
    /// The channel key of another challenge of this ACS (its `acsTransID`): an SDK that kept an earlier challenge's key.
    case otherTransaction(String)

    public var description: String {
        switch self {
        case .withoutSDKReferenceNumber: "the key derived without the sdkReferenceNumber (PartyVInfo empty)"
        case .otherSDKReferenceNumber(let reference): "the key derived with sdkReferenceNumber \(reference), not the AReq's"
        case .sdkReferenceNumberAsPartyUInfo: "the key derived with the sdkReferenceNumber in PartyUInfo instead of PartyVInfo"
        case .joseECDHES: "the key derived as JWA's ECDH-ES does (AlgorithmID the enc, no sdkReferenceNumber), not as EMV's secure channel does"
        case .acsHalf: "A128GCM with bytes 16-31 of the key, the ACS's half: an SDK seals its CReq with bytes 0-15"
        case .otherTransaction(let acsTransID): "the channel key of another challenge (acsTransID \(acsTransID)): a key kept from an earlier challenge"
        }
    }
}

/// What a channel was derived from, kept beside it to diagnose a CReq its key does not open: the ECDH shared secret Z and
/// the AReq's `sdkReferenceNumber`. Kept in memory only, for test keys.
public struct ChannelKeyInputs: Sendable {
    let sharedSecret: [UInt8]
    let sdkReferenceNumber: String

    public init(sharedSecret: [UInt8], sdkReferenceNumber: String) {
        self.sharedSecret = sharedSecret
        self.sdkReferenceNumber = sdkReferenceNumber
    }

    /// The channel EMV derives from these inputs.
    public var channel: SecureChannel { SecureChannel(sharedSecret: sharedSecret, sdkReferenceNumber: sdkReferenceNumber) }

    /// The mistake whose key opens the CReq `compact`, trying each derivation an SDK gets wrong, then the reference numbers
    /// and channels of other challenges (`otherReferences`, `otherChannels`); nil when none opens it.
    public func mistake(opening compact: String, otherReferences: [String] = [],
                        otherChannels: [(acsTransID: String, channel: SecureChannel)] = []) -> ChannelKeyMistake? {
        guard let jwe = try? JWE(compact: compact), jwe.keyManagement == .dir else { return nil }
        let encryption = jwe.contentEncryption
        func opens(_ channel: SecureChannel?, _ direction: SecureChannel.Direction = .sdkToACS) -> Bool {
            guard let key = try? channel?.contentKey(encryption, direction) else { return false }
            return (try? jwe.decrypt(contentKey: key)) != nil
        }
        func derived(partyU: String = "", partyV: String) -> SecureChannel? {
            SecureChannel(key: ConcatKDF.deriveKey(sharedSecret: sharedSecret, keyBitLength: 256, algorithmID: [],
                                                   partyUInfo: Array(partyU.utf8), partyVInfo: Array(partyV.utf8)))
        }
        if opens(derived(partyV: "")) { return .withoutSDKReferenceNumber }
        if opens(derived(partyU: sdkReferenceNumber, partyV: "")) { return .sdkReferenceNumberAsPartyUInfo }
        let jose = ConcatKDF.deriveKey(sharedSecret: sharedSecret, keyBitLength: encryption.keyLength * 8, algorithmID: Array(encryption.rawValue.utf8))
        if (try? jwe.decrypt(contentKey: jose)) != nil { return .joseECDHES }
        if encryption == .a128gcm, opens(channel, .acsToSDK) { return .acsHalf }
        for reference in Set(otherReferences) where reference != sdkReferenceNumber && opens(derived(partyV: reference)) {
            return .otherSDKReferenceNumber(reference)
        }
        return otherChannels.first { opens($0.channel) }.map { .otherTransaction($0.acsTransID) }
    }
}
