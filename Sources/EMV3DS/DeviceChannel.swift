/// `deviceChannel`: where the cardholder is.
public enum DeviceChannel: String, Sendable, CaseIterable, Codable {
    case app = "01"
    case browser = "02"
    /// 3DS Requestor Initiated: no cardholder present.
    case threeRI = "03"

    public var name: String {
        switch self {
        case .app: "app"
        case .browser: "browser"
        case .threeRI: "3RI"
        }
    }
}
