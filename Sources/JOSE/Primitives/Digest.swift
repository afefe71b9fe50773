import COpenSSL

/// Hash functions JOSE uses, on OpenSSL's EVP.
public enum DigestAlgorithm: Sendable {
    case sha1, sha256, sha384, sha512

    var md: OpaquePointer {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    }

    public var byteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// The digest of `data`.
    public func hash(_ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        data.withUnsafeBytes { _ = EVP_Digest($0.baseAddress, $0.count, &output, &length, md, nil) }
        return Array(output.prefix(Int(length)))
    }

    /// HMAC of `data` under `key`.
    public func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        data.withUnsafeBytes { bytes in
            _ = key.withUnsafeBytes { HMAC(md, $0.baseAddress, Int32($0.count), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &output, &length) }
        }
        return Array(output.prefix(Int(length)))
    }
}

/// Cryptographically secure random bytes from OpenSSL.
public func randomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    guard count > 0 else { return bytes }
    precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed: the process has no entropy")
    return bytes
}

/// Compares in time independent of where the inputs differ.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return CRYPTO_memcmp(a, b, a.count) == 0
}

/// The oldest OpenSSL error in words, as " [OpenSSL: …]" to append to a reason; the thread's
/// error queue is emptied. ``JOSEError/description`` leaves it out (it may reach a party
/// outside); ``JOSEError/logDescription`` keeps it.
func openSSLError() -> String {
    shim_take_error_string().map { " [OpenSSL: " + String(cString: $0) + "]" } ?? ""
}
