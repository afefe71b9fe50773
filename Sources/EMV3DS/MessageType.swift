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
