public import EMV3DS

extension ThreeDSServer.Transaction {
    /// A transaction's result as one message (the ARes, or the RReq that followed) gave it.
    public struct Outcome: Sendable {
        public var transStatus: TransStatus
        public var transStatusReason: String?
        public var authenticationValue: String?
        public var eci: String?
        public var challengeCancel: String?
        public var whiteListStatus: String?
    }
}
