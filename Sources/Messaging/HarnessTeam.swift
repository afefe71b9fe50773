public import Net

/// A team's (or a pipeline's) scope on a shared harness: the pins, load mixes and PRes faults it sets apply to its own
/// transactions only, and it sees and removes its own alone (docs/operations.md). A request names its team by the header
/// `X-Harness-Team`, or by the path prefix `/teams/{team}`, which a 3DS Server under test can be given with its DS URL
/// when it cannot send a header of its own choosing. Without either, a request is in the shared scope.
public enum HarnessTeam {
    public static let header = "X-Harness-Team"
    /// The first segment of a path that names a team in its second: `/teams/ci-7/ds/areq` is `/ds/areq` for team `ci-7`.
    public static let pathSegment = "teams"
    /// A name: 1-64 of lower-case letters, digits, `.`, `_` and `-`, beginning with a letter or digit (a label in
    /// metrics, a key in the store, a path segment).
    public static let maxLength = 64

    public static func isValid(_ name: some StringProtocol) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= maxLength, isLetterOrDigit(first) else { return false }
        return name.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// The router's admission step: a path `/teams/{team}/rest` becomes `/rest` with the team in the header, so every route
    /// is a team's under the prefix. A name the prefix gives replaces a header's.
    public static func admit(_ request: inout HTTPRequest) {
        let target = request.target
        let prefix = "/" + pathSegment + "/"
        guard target.hasPrefix(prefix) else { return }
        let rest = target.dropFirst(prefix.count)
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        request.headers.set(header, String(rest[..<end]))
        let remainder = rest[end...]
        request.target = remainder.hasPrefix("/") ? String(remainder) : "/" + remainder
    }

    /// The path prefix of `team`, for a change kept to be made again (its target keeps its team).
    public static func prefix(_ team: String?) -> String { team.map { "/\(pathSegment)/\($0)" } ?? "" }
}

extension HTTPRequest {
    /// The team the request names (``HarnessTeam``), nil for the shared scope; 400 for a name that is not one.
    public func team() throws(HTTPError) -> String? {
        guard let value = headers[HarnessTeam.header] else { return nil }
        guard HarnessTeam.isValid(value) else {
            throw HTTPError(.badRequest, "team \"\(value.prefix(80))\" is not a team name: 1-\(HarnessTeam.maxLength) of a-z, 0-9, '.', '_', '-', "
                                         + "beginning with a letter or digit")
        }
        return value
    }
}
