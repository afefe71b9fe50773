import Foundation
@testable import JOSE
import TestSupport

/// RFC test vectors (Tests/JOSETests/Fixtures/rfc-vectors.json).
enum Vectors {
    nonisolated(unsafe) static let all: [String: [String: Any]] = {  // read-only after first use
        let path = repositoryRoot + "/Tests/JOSETests/Fixtures/rfc-vectors.json"
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: [String: Any]] else { return [:] }
        return object
    }()

    static func string(_ vector: String, _ key: String) -> String { all[vector]?[key] as? String ?? "" }

    static func jwk(_ vector: String) throws -> JWK {
        let object = all[vector]?["jwk"] ?? [:]
        return try JWK(json: JSONSerialization.data(withJSONObject: object))
    }
}

/// A tiny test PKI: root, intermediate, leaves, made fresh for each use.
struct TestChain {
    let rootKey: PrivateKey
    let root: Certificate
    let intermediateKey: PrivateKey
    let intermediate: Certificate
    let leafKey: PrivateKey
    let leaf: Certificate

    init(leafKind: KeyKind = .ecP256, leafNotBefore: Date = Date().addingTimeInterval(-3600), leafDays: Int = 365,
         intermediateIsCA: Bool = true) throws {
        rootKey = try PrivateKey.generateP256()
        root = try CertificateBuilder.issue(CertificateProfile(commonName: "Test Root", notBefore: Date().addingTimeInterval(-86_400), isCA: true),
                                            publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        intermediateKey = try PrivateKey.generateP256()
        intermediate = try CertificateBuilder.issue(
            CertificateProfile(commonName: "Test Intermediate", notBefore: Date().addingTimeInterval(-86_400), isCA: intermediateIsCA,
                               keyUsage: intermediateIsCA ? [] : ["digitalSignature"]),
            publicKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
        leafKey = leafKind == .rsa ? try PrivateKey.generateRSA() : try PrivateKey.generateP256()
        leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Test ACS", notBefore: leafNotBefore, validFor: leafDays),
                                            publicKey: leafKey.publicKey, issuer: intermediate, issuerKey: intermediateKey)
    }
}
