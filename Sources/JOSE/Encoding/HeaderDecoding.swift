import JSON

/// A JOSE object read from JSON members (a protected header, a JWK).
protocol JSONMembersDecodable {
    init(members: JSONMembers) throws(JOSEError)
}

/// Typed access to the members of a JSON object; a member of the wrong type is an error
/// naming it, so a header with `"kid": 5` is refused rather than read as absent.
struct JSONMembers {
    let object: JSONValue
    /// What to call a wrong member in errors.
    let failure: (String) -> JOSEError

    func string(_ name: String) throws(JOSEError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw failure("\(name) must be a string") }
        return text
    }

    func requiredString(_ name: String) throws(JOSEError) -> String {
        guard let text = try string(name) else { throw failure("\(name) is required") }
        return text
    }

    func strings(_ name: String) throws(JOSEError) -> [String]? {
        guard let value = object[name] else { return nil }
        guard case .array(let elements) = value else { throw failure("\(name) must be an array of strings") }
        var texts: [String] = []
        for element in elements {
            guard let text = element.stringValue else { throw failure("\(name) must be an array of strings") }
            texts.append(text)
        }
        return texts
    }

    func object<T: JSONMembersDecodable>(_ name: String, as type: T.Type) throws(JOSEError) -> T? {
        guard let value = object[name] else { return nil }
        guard value.objectMembers != nil else { throw failure("\(name) must be an object") }
        return try T(members: JSONMembers(object: value, failure: failure))
    }
}

/// Decodes a protected header, rejecting duplicate members and unknown critical ones.
func decodeHeader<H: JSONMembersDecodable>(_ bytes: [UInt8], as type: H.Type, understood: Set<String>) throws(JOSEError) -> H {
    let parsed: (value: JSONValue, duplicates: [JSONReader.Duplicate])
    do { parsed = try JSONReader.parse(bytes) } catch { throw .invalidHeader("not JSON") }
    guard parsed.value.objectMembers != nil else { throw .invalidHeader("not a JSON object") }
    if let duplicate = parsed.duplicates.first { throw .invalidHeader("member \(duplicate.path) appears more than once") }
    let members = JSONMembers(object: parsed.value, failure: { .invalidHeader($0) })
    if parsed.value["crit"] != nil {
        guard let names = try? members.strings("crit"), !names.isEmpty else { throw .invalidHeader("crit must be a non-empty array of names") }
        if let unknown = names.first(where: { !understood.contains($0) }) {
            throw .invalidHeader("critical header parameter \(unknown) is not understood")
        }
    }
    return try H(members: members)
}

extension JWEHeader: JSONMembersDecodable {
    init(members: JSONMembers) throws(JOSEError) {
        self.init(alg: try members.requiredString("alg"), enc: try members.requiredString("enc"), kid: try members.string("kid"),
                  epk: try members.object("epk", as: JWK.self), apu: try members.string("apu"), apv: try members.string("apv"))
        zip = try members.string("zip")
        typ = try members.string("typ")
        cty = try members.string("cty")
        crit = try members.strings("crit")
    }
}

extension JWSHeader: JSONMembersDecodable {
    init(members: JSONMembers) throws(JOSEError) {
        self.init(alg: try members.requiredString("alg"), kid: try members.string("kid"), typ: try members.string("typ"),
                  cty: try members.string("cty"), x5c: try members.strings("x5c"))
        crit = try members.strings("crit")
    }
}

extension JWK: JSONMembersDecodable {
    init(members: JSONMembers) throws(JOSEError) {
        self.init(kty: try members.requiredString("kty"), crv: try members.string("crv"), x: try members.string("x"),
                  y: try members.string("y"), n: try members.string("n"), e: try members.string("e"), d: try members.string("d"),
                  p: try members.string("p"), q: try members.string("q"), dp: try members.string("dp"), dq: try members.string("dq"),
                  qi: try members.string("qi"), kid: try members.string("kid"), use: try members.string("use"),
                  alg: try members.string("alg"), x5c: try members.strings("x5c"))
    }
}
