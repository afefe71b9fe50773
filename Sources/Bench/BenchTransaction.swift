import EMV3DS
public import EMVCrypto
import JOSE
public import JSON
public import SDKSimulator

/// What the benchmarks send: an SDK's transaction for the Visa DS of the test PKI, and a complete app AReq of it.
public enum BenchTransaction {
    public static let directoryServerID = "A000000003"

    /// A device-data style by its name (`rsa`, `ec`, `android`, ...).
    public static func style(_ name: String) throws(BenchError) -> DeviceDataStyle {
        guard let style = DeviceDataStyle(rawValue: name) else { throw BenchError("unknown style \(name)") }
        return style
    }

    /// An SDK's transaction in `style`, and the DS's keys that open its device data.
    public static func deviceData(pki directory: String, style: DeviceDataStyle) throws -> (SimulatedSDKTransaction, DirectoryServerKeys) {
        let pki = TestPKI(directory: directory)
        let directoryServer = SDKDirectoryServer(rid: directoryServerID, certificate: try pki.dsCertificate(directoryServerID, style.keyVariant))
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: .v2_2_0, style: style)
        let keys = DirectoryServerKeys(rsa: try pki.dsPrivateKey(directoryServerID, .rsa), ec: try pki.dsPrivateKey(directoryServerID, .ec))
        return (sdk, keys)
    }

    /// A complete app-channel AReq for the Visa DS with device data in `style`: every id fixed but the SDK's.
    public static func appAReq(pki: String, style: DeviceDataStyle) throws -> JSONValue {
        let (sdk, _) = try deviceData(pki: pki, style: style)
        var areq = sdk.authenticateRequest(pan: "4000000000001000")
        let fixed: [(String, JSONValue)] = [
            ("messageType", .string("AReq")), ("deviceChannel", .string(DeviceChannel.app.rawValue)),
            ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
            ("threeDSServerRefNumber", .string("3DS_LOA_SER_BENCH_020200_00001")), ("threeDSServerURL", .string("http://127.0.0.1:9/rreq")),
            ("threeDSRequestorID", .string("bench")), ("threeDSRequestorName", .string("Bench")),
            ("threeDSRequestorURL", .string("https://bench.example")), ("threeDSRequestorAuthenticationInd", .string("01")),
            ("acquirerBIN", .string("400551")), ("acquirerMerchantID", .string("bench")), ("mcc", .string("5411")),
            ("merchantCountryCode", .string("840")), ("merchantName", .string("Bench")), ("purchaseExponent", .string("2")),
            ("purchaseDate", .string("20261121120000")), ("sdkMaxTimeout", .string("05")),
            ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
            ("sdkEncData", .string(sdk.deviceData)),
            ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("01")]))])),
        ]
        areq.set("deviceData", nil)
        for (key, value) in fixed { areq.set(key, value) }
        return areq
    }
}
