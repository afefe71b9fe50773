/// The Concat KDF of NIST SP 800-56A §5.8.1 with SHA-256, as JWA (RFC 7518 §4.6.2) and
/// the EMV 3DS secure channel use it.
///
/// OtherInfo = AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo, each of the first
/// three as a 32-bit big-endian length then the bytes; SuppPubInfo is the key length in
/// bits, 32-bit big-endian. 3DS uses an empty AlgorithmID and PartyUInfo and puts the
/// DS id or the `sdkReferenceNumber` in PartyVInfo.
public enum ConcatKDF {
    public static func deriveKey(sharedSecret: [UInt8], keyBitLength: Int, algorithmID: [UInt8],
                                 partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = []) -> [UInt8] {
        var otherInfo: [UInt8] = []
        for field in [algorithmID, partyUInfo, partyVInfo] {
            otherInfo += bigEndian32(field.count) + field
        }
        otherInfo += bigEndian32(keyBitLength)
        let byteCount = (keyBitLength + 7) / 8
        var output: [UInt8] = []
        var counter = 1
        while output.count < byteCount {
            output += DigestAlgorithm.sha256.hash(bigEndian32(counter) + sharedSecret + otherInfo)
            counter += 1
        }
        return Array(output.prefix(byteCount))
    }

    static func bigEndian32(_ value: Int) -> [UInt8] {
        let v = UInt32(truncatingIfNeeded: value)
        return [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
    }
}
