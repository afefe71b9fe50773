import COpenSSL
import Glibc

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

/// Random bytes for identifiers and other public values, never keys: taken from a buffer of
/// this thread's that OpenSSL's generator fills 4 KiB at a time. Each `RAND_bytes` call re-keys
/// the generator, which cost 1.7 % of an AReq's CPU for its three ids of 16 bytes.
public func randomPublicBytes(_ count: Int) -> [UInt8] {
    let buffer = RandomBuffer.ofThisThread
    if count > buffer.bytes.count { return randomBytes(count) }
    if buffer.next + count > buffer.bytes.count {
        precondition(RAND_bytes(&buffer.bytes, Int32(buffer.bytes.count)) == 1, "RAND_bytes failed: the process has no entropy")
        buffer.next = 0
    }
    defer { buffer.next += count }
    return Array(buffer.bytes[buffer.next..<(buffer.next + count)])
}

/// A thread's unused random bytes (``randomPublicBytes(_:)``), reached through a pthread key:
/// only its own thread reads or writes it.
private final class RandomBuffer {
    var bytes = [UInt8](repeating: 0, count: 4096)
    var next = 4096

    static var ofThisThread: RandomBuffer {
        if let pointer = pthread_getspecific(key) { return Unmanaged<RandomBuffer>.fromOpaque(pointer).takeUnretainedValue() }
        let buffer = RandomBuffer()
        pthread_setspecific(key, Unmanaged.passRetained(buffer).toOpaque())
        return buffer
    }

    /// Released with its thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<RandomBuffer>.fromOpaque(pointer).release() }
        } == 0, "no pthread key left")
        return key
    }()
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
