import JSON

/// A JOSE object written as JSON (a protected header, a JWK): its members in the order of their names, as a reader
/// comparing two writings expects (RFC 7638 sorts a thumbprint's the same way). Written by the one JSON writer, not
/// Foundation's encoder: every acsSignedContent and every CRes has a header, and the encoder was a third of their writing.
protocol JSONMembersEncodable {
    /// Every member, nil where absent, in the order of their names.
    var sortedMembers: [(String, JSONValue?)] { get }
}

extension JSONMembersEncodable {
    var json: JSONValue { .object(omittingAbsent: sortedMembers) }
}

/// BASE64URL of the header's JSON: the first part of a compact JWS or JWE.
func encodeHeader(_ header: some JSONMembersEncodable) -> String {
    Base64URL.encode(JSONWriter.write(header.json))
}

private func strings(_ values: [String]?) -> JSONValue? { values.map { .array($0.map(JSONValue.string)) } }

extension JWSHeader: JSONMembersEncodable {
    var sortedMembers: [(String, JSONValue?)] {
        [("alg", .string(alg)), ("crit", strings(crit)), ("cty", .string(cty)), ("kid", .string(kid)), ("typ", .string(typ)), ("x5c", strings(x5c))]
    }
}

extension JWEHeader: JSONMembersEncodable {
    var sortedMembers: [(String, JSONValue?)] {
        [("alg", .string(alg)), ("apu", .string(apu)), ("apv", .string(apv)), ("crit", strings(crit)), ("cty", .string(cty)), ("enc", .string(enc)),
         ("epk", epk?.json), ("kid", .string(kid)), ("typ", .string(typ)), ("zip", .string(zip))]
    }
}

extension JWK: JSONMembersEncodable {
    var sortedMembers: [(String, JSONValue?)] {
        [("alg", .string(alg)), ("crv", .string(crv)), ("d", .string(d)), ("dp", .string(dp)), ("dq", .string(dq)), ("e", .string(e)),
         ("kid", .string(kid)), ("kty", .string(kty)), ("n", .string(n)), ("p", .string(p)), ("q", .string(q)), ("qi", .string(qi)),
         ("use", .string(use)), ("x", .string(x)), ("x5c", strings(x5c)), ("y", .string(y))]
    }
}
