/// The `messageType` of an EMV 3DS message.
public enum MessageType: String, Sendable, CaseIterable, Codable {
    case aReq = "AReq"
    case aRes = "ARes"
    case cReq = "CReq"
    case cRes = "CRes"
    case rReq = "RReq"
    case rRes = "RRes"
    case pReq = "PReq"
    case pRes = "PRes"
    case erro = "Erro"
}

extension MessageType {
    /// The other message of its exchange: the request an answer answers, the answer a request gets; nil for `Erro`.
    public var counterpart: MessageType? {
        switch self {
        case .aReq: .aRes
        case .aRes: .aReq
        case .cReq: .cRes
        case .cRes: .cReq
        case .rReq: .rRes
        case .rRes: .rReq
        case .pReq: .pRes
        case .pRes: .pReq
        case .erro: nil
        }
    }
}
