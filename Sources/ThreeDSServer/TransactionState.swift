extension ThreeDSServer.Transaction {
    /// Where a transaction stands, as the requestor API shows it.
    public enum State: String, Sendable {
        /// Ended without a challenge.
        case frictionless
        /// The ACS asked for a challenge; the result comes by RReq.
        case challenge
        /// The result came by RReq.
        case completed
        /// No outcome: an Erro, an invalid answer, or no answer.
        case error
        /// The ACS offered Secure Payment Confirmation (ARes S, 2.3.1): the page's result goes in a second AReq.
        case spc
        /// The RReq said D (Decoupled Authentication Fallback, 2.3.1): the result comes from the 3RI authentication that follows.
        case decoupledFallback
    }
}
