import Net

/// Where a web view's flow ends: the app's `returnURL`, with the outcome in its query under the
/// names the app's SDK reads. `summaryStatus` is the one every gateway SDK reads; the
/// transaction's id goes under `idParameter`: `threeDSServerTransID` by default, `3DSecureId`
/// for the Mastercard Gateway SDK's web view (gateway-android-sdk's Gateway3DSecurePresenter
/// completes on the `gatewaysdk` scheme and reads `summaryStatus` and `3DSecureId`).
public struct ReturnRedirect: Sendable, Equatable {
    public static let defaultIDParameter = "threeDSServerTransID"

    public let returnURL: String
    public let idParameter: String

    public init(returnURL: String, idParameter: String? = nil) {
        self.returnURL = returnURL
        self.idParameter = idParameter ?? Self.defaultIDParameter
    }

    /// A name that goes in a URL as it is: 1-64 letters, digits, `-`, `.`, `_`, `~` (RFC 3986's unreserved).
    public static func isParameterName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
        }
    }

    /// Why `name` cannot be the id's parameter; nil when it can.
    public static func problem(withParameterName name: String) -> String? {
        isParameterName(name) ? nil : "returnIdParameter must be 1-64 letters, digits, '-', '.', '_' or '~' (e.g. 3DSecureId), got \"\(name.prefix(80))\""
    }

    /// The URL the browser is sent to: `summaryStatus`, the id (when there is one) and `extra`,
    /// each value form-encoded, appended with `?`, or `&` when the returnURL has a query.
    public func location(summaryStatus: String, id: String?, extra: [(String, String)] = []) -> String {
        var parameters = [("summaryStatus", summaryStatus)] + extra
        if let id { parameters.append((idParameter, id)) }
        return returnURL + (returnURL.contains("?") ? "&" : "?") + parameters.map { "\($0.0)=\(FormEncoding.encode($0.1))" }.joined(separator: "&")
    }
}
