public import EMV3DS
public import EMVCrypto
public import Store

/// What the ACS role is: its reference number and operator, the schemes it signs for, its challenge URL and time limit.
public struct AccessControlServerSettings: Sendable {
    public var referenceNumber = "3DS_LOA_ACS_HARN_020200_00001"
    public var operatorID = "HARNESS-ACS-OPERATOR"
    public var schemes: [PaymentScheme]
    /// The `acsSignedContent` signer of each Directory Server profile, by RID.
    public var signers: [String: ACSSigningIdentity]
    /// The acsURL given to SDKs; nil means this harness's `/acs/challenge`, over HTTPS when it listens on HTTPS.
    public var challengeURL: String?
    /// Where RReqs go when the AReq carried no `dsURL`; nil means this harness's DS.
    public var directoryServerURL: String?
    /// Seconds a challenge may take, from the ARes to the final CRes, before it ends as timed out.
    public var challengeTimeout: Double = Self.defaultChallengeTimeout
    /// Ten minutes, unless configured (`accessControlServer.challengeTimeout`).
    public static let defaultChallengeTimeout: Double = 600
    /// How many times an RReq that surely did not reach the DS (no connection was made, or HTTP 503) is sent again before it
    /// is given up, and the wait before the first of them in seconds; each next waits twice as long.
    public var rreqRetries = 3
    public var rreqRetrySeconds: Double = 2
    /// The wait before each attempt again, in seconds.
    var rreqRetryDelays: [Double] { (0..<max(0, rreqRetries)).map { rreqRetrySeconds * Double(1 << $0) } }
    /// The browser challenge's page templates; without them a browser challenge ends at once as U (reason 07).
    public var browserPages: BrowserChallengePages?
    /// The clock of deadlines and due times, and of the SDK's challenge timeout (`challenge.sdk-timeout`); tests give one that jumps.
    public var clock = HarnessClock.system

    public init(schemes: [PaymentScheme], signers: [String: ACSSigningIdentity] = [:]) {
        self.schemes = schemes
        self.signers = signers
    }
}
