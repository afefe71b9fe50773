import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import Harness
import JOSE
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

private func json(_ response: HTTPResponse) throws -> JSONValue { try JSONReader.parse(response.body).value }

/// A certificate as an SDK reads standard base64 DER.
private func certificate(base64 text: String?) throws -> Certificate {
    let der = try #require(text.flatMap { Data(base64Encoded: $0) }, "not standard base64: \(text ?? "nothing")")
    return try Certificate(der: Array(der))
}

/// Checks one DS key as an SDK would take it: the key id, the certificate (PEM and base64 DER the
/// same, chaining to the root) and the single JWK (its key the certificate's, `kid`, `use`, `x5c`).
private func checkKey(_ key: JSONValue, rid: String, root: Certificate) throws {
    let type = try #require(key["type"]?.stringValue)
    let variant = try #require(TestPKI.KeyVariant(rawValue: type.lowercased()))
    #expect(key["keyId"]?.stringValue == TestPKI.dsKeyID(rid, variant))
    let fromPEM = try Certificate(pem: try #require(key["certificatePem"]?.stringValue))
    #expect(try certificate(base64: key["certificateDerBase64"]?.stringValue) == fromPEM)
    #expect(fromPEM == (try pki.dsCertificate(rid, variant)))
    try CertificateVerifier(trustAnchors: [root]).verify(leaf: fromPEM)
    let jwk = try JWK(json: Array(JSONWriter.string(try #require(key["jwk"])).utf8))
    #expect(try PublicKey(jwk: jwk) == fromPEM.publicKey)
    #expect(jwk.kid == key["keyId"]?.stringValue)
    #expect(jwk.use == "enc")
    #expect(jwk.x5c == [fromPEM.x5cEncoding, root.x5cEncoding])
}

@Suite("Configuration host: GET /sdk/config and the logos")
struct SDKConfigHostTests {
    @Test func theAnswerHoldsEveryDirectoryServerAsAnSDKReadsIt() async throws {
        try await withHarness { harness in
            let response = try await harness.get("/sdk/config")
            #expect(response.status == .ok, "\(response.bodyText)")
            #expect(response.headers["Content-Type"] == "application/json")
            let answer = try json(response)
            let tlsRoot = try Certificate(pem: try #require(answer["tlsRootCertificatePem"]?.stringValue))
            #expect(tlsRoot == (try Certificate(pem: String(contentsOfFile: repositoryRoot + "/certs/tls/root-ca.pem", encoding: .utf8))))
            let servers = try #require(answer["directoryServers"]?.arrayValue)
            #expect(servers.compactMap { $0["dsId"]?.stringValue } == harness.app.configuration.directoryServers.map(\.rid))
            for server in servers {
                let rid = try #require(server["dsId"]?.stringValue)
                #expect(server["name"]?.stringValue == harness.app.configuration.directoryServers.first { $0.rid == rid }?.name)
                let roots = try #require(server["rootCertificates"]?.arrayValue)
                #expect(roots.count == 1)
                let root = try Certificate(pem: try #require(roots.first?["certificatePem"]?.stringValue))
                #expect(try certificate(base64: roots.first?["certificateDerBase64"]?.stringValue) == root)
                #expect(root == (try pki.rootCertificate(rid)))
                let keys = try #require(server["keys"]?.arrayValue)
                #expect(keys.compactMap { $0["type"]?.stringValue } == ["RSA", "EC"])
                for key in keys { try checkKey(key, rid: rid, root: root) }
                #expect(server["logoURL"]?.stringValue == harness.baseURL + "/sdk/logo/\(rid).svg")
            }
        }
    }

    /// The SDK takes its DS key from the host (the RSA and EC certificates, and the EC key's JWK
    /// by its `x5c`), encrypts the device data with it, and the transaction goes through
    /// `/3ds-server/authenticate`: frictionless Y only if the DS decrypted that device data.
    @Test(arguments: [("A000000003", DeviceDataStyle.android, "4000000000001000", "05"),
                      ("A000000003", .iosEC, "4000000000001000", "05"),
                      ("A000000004", .rsa, "5200000000001005", "02")])
    func aKeyFromTheHostEncryptsDeviceDataTheDirectoryServerDecrypts(rid: String, style: DeviceDataStyle, pan: String, eci: String) async throws {
        try await withHarness { harness in
            let answer = try json(try await harness.get("/sdk/config?rid=\(rid)"))
            let server = try #require(answer["directoryServers"]?.arrayValue?.first)
            let wanted = style.keyVariant.rawValue.uppercased()
            let key = try #require(server["keys"]?.arrayValue?.first { $0["type"]?.stringValue == wanted })
            let dsCertificate = style == .iosEC
                ? try certificate(base64: key["jwk"]?["x5c"]?.arrayValue?.first?.stringValue)
                : try Certificate(pem: try #require(key["certificatePem"]?.stringValue))
            let directoryServer = SDKDirectoryServer(rid: try #require(server["dsId"]?.stringValue), certificate: dsCertificate,
                                                     keyID: key["keyId"]?.stringValue)
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: .v2_2_0, style: style)
            let result = try await harness.simulator.authenticate(sdk, pan: pan)
            #expect(result.state == "frictionless", "\(result.summary)")
            #expect(result.transStatus == "Y", "\(result.summary)")
            #expect(result.eci == eci)
        }
    }

    @Test func aConfiguredTokenGuardsTheHostAndItsLogos() async throws {
        let token = "sdk-config-token-for-tests"
        try await withHarness(configure: { $0.sdkConfigToken = ConfigurationSecret(token) }) { harness in
            for path in ["/sdk/config", "/sdk/config?rid=A000000003", "/sdk/logo/A000000003.svg", "//sdk/config/"] {
                let refused = try await harness.get(path)
                #expect(refused.status.code == 401, "\(path)")
                #expect(refused.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
                #expect(try json(refused)["error"]?.stringValue?.contains("/sdk/config and /sdk/logo need Authorization: Bearer") == true, "\(refused.bodyText)")
            }
            let wrong = try await harness.client.get(harness.baseURL + "/sdk/config", headers: ["Authorization": "Bearer \(token)x"])
            #expect(wrong.status.code == 401)
            let right = try await harness.client.get(harness.baseURL + "/sdk/config", headers: ["Authorization": "Bearer \(token)"])
            #expect(right.status.code == 200)
            #expect(try await harness.get("/sdk/logo/A000000003.svg?access_token=\(token)").status.code == 200)
            // Nothing else asks for it.
            #expect(try await harness.get("/health").status.code == 200)
            #expect(try await harness.get("/admin/scenarios").status.code == 200)
        }
    }

    @Test func anUnknownRIDIsNotFoundAndAnUnknownFormatIsRefused() async throws {
        try await withHarness { harness in
            let unknown = try await harness.get("/sdk/config?rid=A000000999")
            #expect(unknown.status.code == 404)
            #expect(try json(unknown)["error"]?.stringValue?.contains("no Directory Server A000000999 (known: A000000003, A000000004") == true,
                    "\(unknown.bodyText)")
            let badFormat = try await harness.get("/sdk/config?format=xml")
            #expect(badFormat.status.code == 400)
            #expect(try json(badFormat)["error"]?.stringValue == "format xml is not one of json, pem, der, jwk, activesdk, token, jwk-single, stripe")
            #expect(try await harness.get("/sdk/logo/A000000999.svg").status.code == 404)
            #expect(try await harness.get("/sdk/logo/A000000003.png").status.code == 404)
            // A RID is matched in any case, as `pki export` matches it.
            #expect(try await harness.get("/sdk/config?rid=a000000003").status.code == 200)
        }
    }

    @Test func eachSchemeHasItsOwnSVGLogoWithoutExternalResources() async throws {
        try await withHarness { harness in
            var colours: Set<String> = []
            for scheme in harness.app.configuration.directoryServers {
                let response = try await harness.get("/sdk/logo/\(scheme.rid).svg")
                #expect(response.status == .ok)
                #expect(response.headers["Content-Type"] == "image/svg+xml")
                let svg = response.bodyText
                #expect(svg.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg""#))
                #expect(svg.contains(">\(scheme.name)</text>") && svg.contains(">\(scheme.rid)</text>"))
                #expect(svg.components(separatedBy: "http").count == 2, "only the namespace may name a URL: \(svg)")
                #expect(!svg.contains("href") && !svg.contains("@import"))
                let fill = try #require(svg.range(of: ##"fill="#[0-9a-f]{6}""##, options: .regularExpression).map { String(svg[$0]) })
                colours.insert(fill)
            }
            #expect(colours.count == harness.app.configuration.directoryServers.count, "\(colours)")
        }
    }

    @Test func everyExportFormatIsServedAsTheCommandLinePrintsIt() async throws {
        try await withHarness { harness in
            let configuration = try SDKConfiguration(pki: pki, profile: DirectoryServerProfile(rid: "A000000004", name: "Mastercard"))
            // The token format holds a signature made anew each time: its parsing is checked below.
            for format in SDKConfiguration.Format.allCases where format != .json && format != .token {
                let response = try await harness.get("/sdk/config?rid=A000000004&format=\(format.rawValue)")
                #expect(response.status == .ok, "\(format)")
                #expect(response.headers["Content-Type"] == "text/plain; charset=utf-8")
                #expect(response.bodyText == configuration.render(format), "\(format)")
            }
            let token = try json(try await harness.get("/sdk/config?rid=A000000004&format=token"))
            #expect(token["ec"]?["directoryServerId"]?.stringValue == "A000000004")
            // Without a RID, every Directory Server's text.
            let every = try await harness.get("/sdk/config?format=pem").bodyText
            for scheme in harness.app.configuration.directoryServers { #expect(every.contains("DS id (RID) \(scheme.rid)")) }
        }
    }
}

@Suite("SDK configuration export formats, read as each SDK reads them")
struct SDKConfigurationFormatTests {
    static let configuration: SDKConfiguration? = try? SDKConfiguration(pki: pki, profile: DirectoryServerProfile(rid: "A000000003", name: "Visa"))

    func setUp() throws -> (SDKConfiguration, CertificateVerifier) {
        let configuration = try #require(Self.configuration, "the committed test PKI under certs/")
        return (configuration, CertificateVerifier(trustAnchors: [configuration.root]))
    }

    @Test func jsonHoldsEachKeyWithItsJWKAndTheRoot() throws {
        let (configuration, _) = try setUp()
        let object = try JSONReader.parse(Array(configuration.render(.json).utf8)).value
        #expect(object["dsId"]?.stringValue == "A000000003")
        #expect(try Certificate(pem: try #require(object["rootCertificates"]?.arrayValue?.first?["certificatePem"]?.stringValue)) == configuration.root)
        for key in try #require(object["keys"]?.arrayValue) { try checkKey(key, rid: "A000000003", root: configuration.root) }
    }

    @Test func activeSDKGivesTheFourArgumentsPerKeyInKotlinAndSwift() throws {
        let (configuration, verifier) = try setUp()
        let text = configuration.render(.activeSDK)
        let calls = text.split(separator: "\n").filter { $0.contains("DirectoryServerInfo(\"") }
        #expect(calls.count == 4)
        #expect(calls.filter { $0.hasPrefix("val ") }.count == 2 && calls.filter { $0.hasPrefix("let ") }.count == 2)
        for call in calls {
            // The quoted arguments: DS_ID, KID, DS_CERT, DS_CA_CERT.
            let arguments = call.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            #expect(arguments.count == 4)
            #expect(arguments.first == "A000000003")
            let dsCertificate = try certificate(base64: arguments[2])
            let key = try #require(configuration.keys.first { $0.keyID == arguments[1] }, "\(call)")
            #expect(dsCertificate == key.certificate)
            #expect(try certificate(base64: arguments[3]) == configuration.root)
            try verifier.verify(leaf: dsCertificate)
        }
        // The values alone, in PEM too.
        #expect(text.contains("KID (EC): A000000003-ds-ec\n"))
        #expect(try Certificate.chain(pem: text).count == 3)
    }

    @Test func tokenGivesTheTokenStylesMembersPerKey() throws {
        let (configuration, verifier) = try setUp()
        let object = try JSONReader.parse(Array(configuration.render(.token).utf8)).value
        for key in configuration.keys {
            let members = try #require(object[key.variant.rawValue])
            #expect(members["directoryServerId"]?.stringValue == "A000000003")
            let jwkJSON = try #require(members["directoryServerPublicKey"]?.stringValue.flatMap { Data(base64Encoded: $0) })
            let jwk = try JWK(json: jwkJSON)
            #expect(try PublicKey(jwk: jwk) == key.certificate.publicKey)
            #expect(jwk.kid == key.keyID)
            let roots = try JWS(compact: try #require(members["directoryServerRootCertificates"]?.stringValue))
            try roots.verifyWithCertificateChain(verifier)
            let payload = try JSONReader.parse(roots.payload).value
            #expect(try certificate(base64: payload["certificates"]?.arrayValue?.first?.stringValue) == configuration.root)
        }
    }

    @Test func singleJWKGivesOneKeyPerLineWithItsChain() throws {
        let (configuration, verifier) = try setUp()
        let lines = configuration.render(.singleJWK).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.count == configuration.keys.count)
        for (line, key) in zip(lines, configuration.keys) {
            let jwk = try JWK(json: Array(line.utf8))
            #expect(jwk.kid == key.keyID && jwk.use == "enc")
            #expect(try PublicKey(jwk: jwk) == key.certificate.publicKey)
            let chain = try (jwk.x5c ?? []).map { try certificate(base64: $0) }
            #expect(chain.count == 2)
            try verifier.verify(leaf: try #require(chain.first), intermediates: Array(chain.dropFirst()))
        }
    }

    @Test func stripeGivesDirectoryServerEncryptionInPEM() throws {
        let (configuration, verifier) = try setUp()
        let object = try JSONReader.parse(Array(configuration.render(.stripe).utf8)).value
        for key in configuration.keys {
            let encryption = try #require(object[key.variant.rawValue])
            #expect(encryption["directoryServerId"]?.stringValue == "A000000003")
            #expect(encryption["keyId"]?.stringValue == key.keyID)
            let dsCertificate = try Certificate(pem: try #require(encryption["dsCertificateData"]?.stringValue))
            #expect(dsCertificate == key.certificate)
            let roots = try (encryption["rootCertsData"]?.arrayValue ?? []).map { try Certificate(pem: try #require($0.stringValue)) }
            #expect(roots == [configuration.root])
            try CertificateVerifier(trustAnchors: roots).verify(leaf: dsCertificate)
            try verifier.verify(leaf: dsCertificate)
            // Stripe's API sends the same under its own names.
            let api = try #require(encryption["directory_server_encryption"])
            #expect(api["directory_server_id"] == encryption["directoryServerId"] && api["certificate"] == encryption["dsCertificateData"])
            #expect(api["root_certificate_authorities"] == encryption["rootCertsData"] && api["key_id"] == encryption["keyId"])
        }
    }
}
