public import EMV3DS

/// What a correct client does about a scenario: the harness says it in the README and at
/// `/admin/scenarios`, the simulator checks it, and the ACS records whether the Erro came.
public struct Expectation: Sendable, Equatable {
    /// How an SDK reports a challenge's end (the SDK specification's events).
    public enum SDKReport: String, Sendable, CaseIterable {
        case completed, cancelled, timedOut, protocolError, runtimeError
    }

    /// What the SDK reports (faults on the SDK leg).
    public var sdk: SDKReport?
    /// The Erro the SDK must post to the ACS.
    public var sdkErro: ErrorCode?
    /// The state a 3DS Server's transaction ends in ("error" when the DS or ACS failed it).
    public var threeDSServerState: String?
    /// The same in words.
    public var text: String

    public init(sdk: SDKReport? = nil, sdkErro: ErrorCode? = nil, threeDSServerState: String? = nil, text: String) {
        self.sdk = sdk
        self.sdkErro = sdkErro
        self.threeDSServerState = threeDSServerState
        self.text = text
    }
}
