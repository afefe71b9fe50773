public import EMV3DS
public import EMVCrypto
public import Store

/// What the DS role is: its reference number, the schemes it plays with their card ranges and keys, its answer outside them.
public struct DirectoryServerSettings: Sendable {
    public var referenceNumber = "3DS_LOA_DIS_HARN_020200_00001"
    public var schemes: [PaymentScheme]
    public var outOfRange = OutOfRangeAnswer.ares(.notAuthenticated, reason: "13")
    /// The device-data keys of each scheme, by RID.
    public var keys: [String: DirectoryServerKeys]
    /// What a purchase date and a preparation are dated by.
    public var clock = HarnessClock.system

    public init(schemes: [PaymentScheme], keys: [String: DirectoryServerKeys]) {
        self.schemes = schemes
        self.keys = keys
    }
}
