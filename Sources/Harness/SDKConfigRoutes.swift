import Foundation
import JOSE
import JSON
import Messaging
import Net

/// `GET /sdk/config` and `GET /sdk/logo/{rid}.svg`: the configuration host, where SDKs (or their
/// apps) that fetch their Directory Servers at run time read them (docs/sdk-config.md). Every
/// answer is built once, at start-up: the configurations read files and sign.
struct SDKConfigRoutes: Sendable {
    /// One Directory Server as the host serves it.
    struct Entry: Sendable {
        let rid: String
        /// Its JSON object, without `logoURL` (that depends on the address the client used).
        let json: JSONValue
        /// Its text in each export format.
        let texts: [SDKConfiguration.Format: String]
        let logo: [UInt8]
    }

    private let entries: [Entry]
    /// The TLS root of the test PKI (what a device must trust for HTTPS), when the PKI has one.
    private let tlsRoot: Certificate?
    private let token: BearerToken?
    private let endpoints: LocalEndpoints

    /// `configurations` in the order of `directoryServers`: the order of the answer, and of the logos' colours.
    init(configurations: [SDKConfiguration], tlsRootPath: String, token: String?, endpoints: LocalEndpoints) {
        entries = configurations.enumerated().map { index, configuration in
            Entry(rid: configuration.profile.rid, json: configuration.jsonValue,
                  texts: Dictionary(uniqueKeysWithValues: Self.textFormats.map { ($0, configuration.render($0)) }),
                  logo: Array(SchemeLogo(name: configuration.profile.name, rid: configuration.profile.rid, position: index).svg.utf8))
        }
        tlsRoot = (try? String(contentsOfFile: tlsRootPath, encoding: .utf8)).flatMap { try? Certificate(pem: $0) }
        self.token = token.map(BearerToken.sdkConfig)
        self.endpoints = endpoints
    }

    /// The export formats answered as text: all but the CLI's `json`, whose place this host's own JSON takes.
    static let textFormats = SDKConfiguration.Format.allCases.filter { $0 != .json }
    /// What `format=` takes: `json` (the default) and the text formats.
    static let formats = ["json"] + textFormats.map(\.rawValue)

    func register(on router: inout Router) {
        if let token { router.guardPaths(under: "sdk", token.check) }
        router.get("/sdk/config") { request, context in try configuration(request, context) }
        router.get("/sdk/logo/{file}") { _, context in try logo(context.parameter("file")) }
    }

    private func configuration(_ request: HTTPRequest, _ context: RequestContext) throws(HTTPError) -> HTTPResponse {
        let query = request.queryItems
        var selected = entries
        if let rid = query["rid"] {
            selected = try [entry(rid)]
        }
        let formatName = query["format"] ?? "json"
        guard formatName != "json" else { return json(selected, logoBase: baseURL(request, context) + "/sdk/logo/") }
        guard let format = SDKConfiguration.Format(rawValue: formatName), Self.textFormats.contains(format) else {
            throw HTTPError(.badRequest, "format \(formatName) is not one of \(Self.formats.joined(separator: ", "))")
        }
        // Without a RID, every Directory Server's text, as `pki export` prints each.
        return .text(selected.compactMap { $0.texts[format] }.joined(separator: "\n"))
    }

    private func json(_ selected: [Entry], logoBase: String) -> HTTPResponse {
        let servers = selected.map { entry in
            var object = entry.json
            object.set("logoURL", .string(logoBase + entry.rid + ".svg"))
            return object
        }
        var members: [(key: String, value: JSONValue)] = [("directoryServers", .array(servers))]
        if let tlsRoot { members.append(("tlsRootCertificatePem", .string(tlsRoot.pemRepresentation))) }
        return HTTPResponse(headers: .json, body: JSONWriter.write(.object(members)))
    }

    private func logo(_ file: String) throws(HTTPError) -> HTTPResponse {
        guard file.hasSuffix(".svg") else { throw HTTPError(.notFound, "the logos are /sdk/logo/<RID>.svg") }
        return HTTPResponse(headers: ["Content-Type": "image/svg+xml"], body: try entry(String(file.dropLast(".svg".count))).logo)
    }

    /// The Directory Server `rid` (in any case), or 404 naming the known ones.
    private func entry(_ rid: String) throws(HTTPError) -> Entry {
        guard let entry = entries.first(where: { $0.rid.uppercased() == rid.uppercased() }) else {
            throw HTTPError(.notFound, "no Directory Server \(rid) (known: \(entries.map(\.rid).joined(separator: ", ")))")
        }
        return entry
    }

    /// The address the client reached the harness at (its Host header, with the listener's
    /// scheme), so that a phone is given a logo URL it can reach; the harness's own when the
    /// header is missing or holds more than a host and port.
    private func baseURL(_ request: HTTPRequest, _ context: RequestContext) -> String {
        if let host = request.headers["Host"], !host.isEmpty,
           host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) {
            return (context.isSecure ? "https://" : "http://") + host
        }
        return context.isSecure ? endpoints.secureURL("") : endpoints.baseURL
    }
}

/// A test scheme's logo: a rounded rectangle in the scheme's colour with its name and RID, SVG
/// without external resources (no fonts, no images).
struct SchemeLogo {
    let name: String
    let rid: String
    /// The scheme's place in `directoryServers`, which chooses its colour.
    let position: Int

    /// Hues a golden angle apart: every scheme of the list gets its own colour, and neighbours differ most.
    var colour: String { Self.hex(hue: (210 + Double(position) * 137.508).truncatingRemainder(dividingBy: 360), saturation: 0.62, lightness: 0.36) }

    var svg: String {
        // Long names (American Express) get a smaller type, to stay inside the card.
        let fontSize = min(28, 340 / max(name.count, 1))
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="240" height="150" viewBox="0 0 240 150" role="img" aria-label="\(Markup.escape(name)) \(rid)">
            <title>\(Markup.escape(name)), DS id \(rid) (test scheme)</title>
            <rect x="4" y="4" width="232" height="142" rx="18" ry="18" fill="\(colour)"/>
            <text x="120" y="80" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="\(fontSize)" font-weight="bold" fill="#ffffff">\(Markup.escape(name))</text>
            <text x="120" y="112" text-anchor="middle" font-family="Menlo, Consolas, monospace" font-size="16" fill="#ffffff" fill-opacity="0.85">\(rid)</text>
            </svg>

            """
    }

    /// `#rrggbb` of an HSL colour (hue in degrees): written out, as not every SVG renderer reads `hsl()`.
    static func hex(hue: Double, saturation: Double, lightness: Double) -> String {
        let chroma = (1 - abs(2 * lightness - 1)) * saturation
        let sector = hue / 60
        let second = chroma * (1 - abs(sector.truncatingRemainder(dividingBy: 2) - 1))
        let (red, green, blue): (Double, Double, Double) = switch Int(sector) {
        case 0: (chroma, second, 0)
        case 1: (second, chroma, 0)
        case 2: (0, chroma, second)
        case 3: (0, second, chroma)
        case 4: (second, 0, chroma)
        default: (chroma, 0, second)
        }
        let base = lightness - chroma / 2
        return "#" + [red, green, blue].map { String(format: "%02x", Int(((($0 + base) * 255)).rounded())) }.joined()
    }
}
