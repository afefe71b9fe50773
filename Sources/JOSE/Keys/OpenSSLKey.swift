import COpenSSL
import Foundation

/// The kinds of key EMV 3DS uses.
public enum KeyKind: String, Sendable, Equatable {
    case rsa = "RSA"
    case ecP256 = "EC P-256"
}

/// An owned `EVP_PKEY`; freed with its last reference. OpenSSL keys are immutable after
/// creation and safe to use from several threads.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer
    let kind: KeyKind

    /// Owns `pointer`, a copy of a key whose kind is known (no look-up of its curve).
    private init(copy pointer: OpaquePointer, kind: KeyKind) {
        self.pointer = pointer
        self.kind = kind
    }

    init(_ pointer: OpaquePointer) throws(JOSEError) {
        self.pointer = pointer
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA:
            kind = .rsa
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pointer, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1,
                  String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1" else {
                EVP_PKEY_free(pointer)
                throw .invalidKey("only the EC curve P-256 is supported")
            }
            kind = .ecP256
        default:
            EVP_PKEY_free(pointer)
            throw .invalidKey("only RSA and EC P-256 keys are supported")
        }
    }

    deinit { EVP_PKEY_free(pointer) }

    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    func bigNumber(_ name: String, padTo length: Int? = nil) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else { return nil }
        defer { BN_clear_free(number) }
        let size = length ?? Int((BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(number, &bytes, Int32(size)) == Int32(size) else { return nil }
        return bytes
    }

    /// Builds a key from OSSL_PARAMs, then checks it (point on the curve, RSA consistency).
    static func fromData(type: String, isPrivate: Bool, build: (ParamBuilder) -> Bool) throws(JOSEError) -> EVPKey {
        let builder = try ParamBuilder()
        guard build(builder), let params = OSSL_PARAM_BLD_to_param(builder.pointer) else { throw .invalidKey("cannot encode \(type) parameters") }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw .openSSLCallFailed() }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, isPrivate ? shim_EVP_PKEY_KEYPAIR() : shim_EVP_PKEY_PUBLIC_KEY(), params) == 1,
              let key else {
            throw .invalidKey("OpenSSL rejected the \(type) parameters\(openSSLError())")
        }
        let wrapped = try EVPKey(key)
        try wrapped.checkConsistency(isPrivate: isPrivate, type: type)
        return wrapped
    }

    /// The check of a key made from outside numbers: the point on the curve, sane RSA numbers.
    private func checkConsistency(isPrivate: Bool, type: String) throws(JOSEError) {
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw .openSSLCallFailed() }
        defer { EVP_PKEY_CTX_free(check) }
        // The quick public check is enough for P-256, whose cofactor is 1; the full check adds a
        // scalar multiplication, as dear as the ECDH itself.
        let valid = isPrivate ? EVP_PKEY_pairwise_check(check) : EVP_PKEY_public_check_quick(check)
        guard valid == 1 else { throw .invalidKey("\(type) key fails its consistency check\(openSSLError())") }
    }
}

extension EVPKey {
    /// A P-256 public key from its uncompressed point (`04 || x || y`), checked like ``fromData``.
    /// It is a copy of a template key with the point replaced: building it from parameters makes
    /// the curve's group anew (its Montgomery constants, the order's inverse) for every key, and
    /// an SDK's ephemeral key is imported on every AReq (56 µs that way, 21 µs this way, OpenSSL 3.5).
    static func p256Public(point: [UInt8]) throws(JOSEError) -> EVPKey {
        guard let template = p256Template, let copy = EVP_PKEY_dup(template.pointer) else { return try p256FromParameters(point) }
        let key = EVPKey(copy: copy, kind: .ecP256)
        // Decoding checks that the point is on the curve; the quick check adds that it is not the point at infinity.
        guard EVP_PKEY_set1_encoded_public_key(copy, point, point.count) == 1 else {
            throw .invalidKey("OpenSSL rejected the EC parameters\(openSSLError())")
        }
        try key.checkConsistency(isPrivate: false, type: "EC")
        return key
    }

    private static func p256FromParameters(_ point: [UInt8]) throws(JOSEError) -> EVPKey {
        try fromData(type: "EC", isPrivate: false) { builder in
            builder.push(OSSL_PKEY_PARAM_GROUP_NAME, utf8: "prime256v1") && builder.push(OSSL_PKEY_PARAM_PUB_KEY, octets: point)
        }
    }

    /// The public key of P-256's generator: what ``p256Public(point:)`` copies.
    private static let p256Template = try? p256FromParameters([0x04,
        0x6B, 0x17, 0xD1, 0xF2, 0xE1, 0x2C, 0x42, 0x47, 0xF8, 0xBC, 0xE6, 0xE5, 0x63, 0xA4, 0x40, 0xF2,
        0x77, 0x03, 0x7D, 0x81, 0x2D, 0xEB, 0x33, 0xA0, 0xF4, 0xA1, 0x39, 0x45, 0xD8, 0x98, 0xC2, 0x96,
        0x4F, 0xE3, 0x42, 0xE2, 0xFE, 0x1A, 0x7F, 0x9B, 0x8E, 0xE7, 0xEB, 0x4A, 0x7C, 0x0F, 0x9E, 0x16,
        0x2B, 0xCE, 0x33, 0x57, 0x6B, 0x31, 0x5E, 0xCE, 0xCB, 0xB6, 0x40, 0x68, 0x37, 0xBF, 0x51, 0xF5])
}

/// Runs `body` with a memory BIO and returns what it wrote.
func withMemoryBIO(_ body: (OpaquePointer) -> Int32) throws(JOSEError) -> [UInt8] {
    guard let bio = BIO_new(BIO_s_mem()) else { throw .crypto("BIO_new") }
    defer { BIO_free(bio) }
    guard body(bio) == 1 else { throw .openSSLCallFailed() }
    var data: UnsafeMutablePointer<CChar>?
    let count = shim_BIO_get_mem_data(bio, &data)
    guard count > 0, let data else { return [] }
    return Array(UnsafeRawBufferPointer(start: data, count: count))
}

/// Runs `body` with a read-only memory BIO over `bytes`.
func withReadBIO<T>(_ bytes: [UInt8], _ body: (OpaquePointer) -> T?) throws(JOSEError) -> T? {
    let result: T?? = bytes.withUnsafeBytes { raw in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
        defer { BIO_free(bio) }
        return .some(body(bio))
    }
    guard let result else { throw .crypto("BIO_new_mem_buf") }
    return result
}

/// An `OSSL_PARAM_BLD` and everything pushed into it: the builder keeps pointers (to the
/// names, the BIGNUMs and the octets) until the params are built, so this object owns
/// copies that outlive the builder's use of them.
final class ParamBuilder {
    let pointer: OpaquePointer
    private var numbers: [OpaquePointer] = []
    private var buffers: [UnsafeMutableRawPointer] = []

    init() throws(JOSEError) {
        guard let pointer = OSSL_PARAM_BLD_new() else { throw .crypto("OSSL_PARAM_BLD_new") }
        self.pointer = pointer
    }

    deinit {
        numbers.forEach { BN_clear_free($0) }
        buffers.forEach { free($0) }
        OSSL_PARAM_BLD_free(pointer)
    }

    private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!
        buffers.append(copy)
        return copy
    }

    /// Pushes a big-endian unsigned integer.
    func push(_ name: String, integer bytes: [UInt8]) -> Bool {
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { return false }
        numbers.append(number)
        return OSSL_PARAM_BLD_push_BN(pointer, keep(name), number) == 1
    }

    func push(_ name: String, octets bytes: [UInt8]) -> Bool {
        guard let copy = malloc(max(bytes.count, 1)) else { return false }
        buffers.append(copy)
        copy.copyMemory(from: bytes, byteCount: bytes.count)
        return OSSL_PARAM_BLD_push_octet_string(pointer, keep(name), copy, bytes.count) == 1
    }

    func push(_ name: String, utf8 value: String) -> Bool {
        shim_OSSL_PARAM_BLD_push_utf8_string(pointer, keep(name), keep(value)) == 1
    }
}
