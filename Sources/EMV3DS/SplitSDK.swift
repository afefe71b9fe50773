/// The Split-SDK's rules that differ from a Default-SDK's (EMV 3DS 2.3.1, SB 279 Annex A).
public enum SplitSDK {
    /// `sdkType` of a Split-SDK.
    public static let sdkType = "02"
    /// `splitSdkType.sdkVariant` of a Split-SDK/Browser: its CReqs say `oobAppURLInd` 02 (OOB App URL does not work there).
    public static let browserVariant = "02"
    /// `authenticationMethod` codes not valid for a limited Split-SDK: 01 static passcode, 06 knowledge-based.
    public static let methodsNotForLimited: Set<String> = ["01", "06"]
}
