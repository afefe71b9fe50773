import COpenSSL
public import Foundation
import JSON

/// A JSON Web Key (RFC 7517) for RSA or EC P-256. Members not needed are kept as read
/// (an SDK's `use` and `kid`), so a key echoes back unchanged.
public struct JWK: Codable, Sendable, Equatable {
    public var kty: String
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?
    public var d: String?
    public var p: String?
    public var q: String?
    public var dp: String?
    public var dq: String?
    public var qi: String?
    public var kid: String?
    public var use: String?
    public var alg: String?
    public var x5c: [String]?

    public init(kty: String, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil,
                d: String? = nil, p: String? = nil, q: String? = nil, dp: String? = nil, dq: String? = nil, qi: String? = nil,
                kid: String? = nil, use: String? = nil, alg: String? = nil, x5c: [String]? = nil) {
        self.kty = kty; self.crv = crv; self.x = x; self.y = y; self.n = n; self.e = e
        self.d = d; self.p = p; self.q = q; self.dp = dp; self.dq = dq; self.qi = qi
        self.kid = kid; self.use = use; self.alg = alg; self.x5c = x5c
    }

    /// Parses a JWK from JSON text or bytes.
    public init(json: some DataProtocol) throws(JOSEError) {
        do { self = try JSONDecoder().decode(JWK.self, from: Data(json)) } catch {
            throw .invalidJWK("not a JWK object: \(error)")
        }
    }

    /// Compact JSON with sorted members.
    public var jsonString: String { String(decoding: JSONWriter.write(json), as: UTF8.self) }

    /// This key without its private members.
    public var publicOnly: JWK {
        var copy = self
        copy.d = nil; copy.p = nil; copy.q = nil; copy.dp = nil; copy.dq = nil; copy.qi = nil
        return copy
    }

    /// RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order.
    public func thumbprint() throws(JOSEError) -> String {
        let canonical: String
        switch kty {
        case "EC":
            guard let crv, let x, let y else { throw .invalidJWK("EC key needs crv, x and y") }
            canonical = #"{"crv":"\#(crv)","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        case "RSA":
            guard let n, let e else { throw .invalidJWK("RSA key needs n and e") }
            canonical = #"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#
        default:
            throw .invalidJWK("unsupported kty \(kty)")
        }
        return Base64URL.encode(DigestAlgorithm.sha256.hash(Array(canonical.utf8)))
    }

    fileprivate func member(_ value: String?, _ name: String, length: Int? = nil) throws(JOSEError) -> [UInt8] {
        guard let value else { throw .invalidJWK("\(kty) key is missing \(name)") }
        let bytes: [UInt8]
        do { bytes = try JOSEError.decodingBase64URL(value, part: "JWK member \(name)") } catch { throw .invalidJWK("\(name) is not base64url") }
        if let length, bytes.count != length { throw .invalidJWK("\(name) is \(bytes.count) bytes, expected \(length)") }
        return bytes
    }
}

extension JWK {
    /// The uncompressed point (04 || x || y) of an EC P-256 JWK, its members checked (not yet that it is on the curve).
    func p256Point() throws(JOSEError) -> [UInt8] {
        guard kty == "EC" else { throw .invalidJWK("unsupported kty \(kty)") }
        guard crv == "P-256" else { throw .invalidJWK("EC curve \(crv ?? "missing") is not P-256") }
        return [0x04] + (try member(x, "x", length: 32)) + (try member(y, "y", length: 32))
    }
}

extension PublicKey {
    /// The public key of an RSA or EC P-256 JWK (private members are ignored).
    public init(jwk: JWK) throws(JOSEError) {
        key = try JWKCoding.makeKey(jwk, isPrivate: false)
    }

    /// The key as a JWK (`kid` and `use` added if given).
    public func jwk(kid: String? = nil, use: String? = nil) -> JWK {
        var jwk = JWKCoding.publicMembers(key)
        jwk.kid = kid
        jwk.use = use
        return jwk
    }
}

extension PrivateKey {
    /// A private key from a JWK with its private members.
    public init(jwk: JWK) throws(JOSEError) {
        key = try JWKCoding.makeKey(jwk, isPrivate: true)
    }

    /// The key as a JWK with its private members.
    public func jwk(kid: String? = nil) -> JWK {
        var jwk = JWKCoding.publicMembers(key)
        jwk.kid = kid
        switch key.kind {
        case .ecP256:
            jwk.d = key.bigNumber(OSSL_PKEY_PARAM_PRIV_KEY, padTo: 32).map { Base64URL.encode($0) }
        case .rsa:
            func member(_ name: String) -> String? { key.bigNumber(name).map { Base64URL.encode($0) } }
            jwk.d = member(OSSL_PKEY_PARAM_RSA_D)
            jwk.p = member("rsa-factor1")
            jwk.q = member("rsa-factor2")
            jwk.dp = member("rsa-exponent1")
            jwk.dq = member("rsa-exponent2")
            jwk.qi = member("rsa-coefficient1")
        }
        return jwk
    }
}

private enum JWKCoding {
    static func publicMembers(_ key: EVPKey) -> JWK {
        switch key.kind {
        case .ecP256:
            return JWK(kty: "EC", crv: "P-256",
                       x: key.bigNumber(OSSL_PKEY_PARAM_EC_PUB_X, padTo: 32).map { Base64URL.encode($0) },
                       y: key.bigNumber(OSSL_PKEY_PARAM_EC_PUB_Y, padTo: 32).map { Base64URL.encode($0) })
        case .rsa:
            return JWK(kty: "RSA", n: key.bigNumber(OSSL_PKEY_PARAM_RSA_N).map { Base64URL.encode($0) },
                       e: key.bigNumber(OSSL_PKEY_PARAM_RSA_E).map { Base64URL.encode($0) })
        }
    }

    static func makeKey(_ jwk: JWK, isPrivate: Bool) throws(JOSEError) -> EVPKey {
        switch jwk.kty {
        case "EC":
            let point = try jwk.p256Point()
            if !isPrivate { return try EVPKey.p256Public(point: point) }
            let d = try jwk.member(jwk.d, "d", length: 32)
            return try EVPKey.fromData(type: "EC", isPrivate: isPrivate) { builder in
                builder.push(OSSL_PKEY_PARAM_GROUP_NAME, utf8: "prime256v1")
                    && builder.push(OSSL_PKEY_PARAM_PUB_KEY, octets: point)
                    && builder.push(OSSL_PKEY_PARAM_PRIV_KEY, integer: d)
            }
        case "RSA":
            var members = [(OSSL_PKEY_PARAM_RSA_N, try jwk.member(jwk.n, "n")), (OSSL_PKEY_PARAM_RSA_E, try jwk.member(jwk.e, "e"))]
            if isPrivate {
                members.append((OSSL_PKEY_PARAM_RSA_D, try jwk.member(jwk.d, "d")))
                // The CRT members are optional in JWK; OpenSSL takes them when all are present.
                if jwk.p != nil {
                    members += [("rsa-factor1", try jwk.member(jwk.p, "p")),
                                ("rsa-factor2", try jwk.member(jwk.q, "q")),
                                ("rsa-exponent1", try jwk.member(jwk.dp, "dp")),
                                ("rsa-exponent2", try jwk.member(jwk.dq, "dq")),
                                ("rsa-coefficient1", try jwk.member(jwk.qi, "qi"))]
                }
            }
            let key = try EVPKey.fromData(type: "RSA", isPrivate: isPrivate) { builder in
                members.allSatisfy { builder.push($0.0, integer: $0.1) }
            }
            guard key.bits >= 2048 else { throw .invalidKey("RSA keys under 2048 bits are refused") }
            return key
        default:
            throw .invalidJWK("unsupported kty \(jwk.kty)")
        }
    }
}
