/// The harness's version: printed by `threeds-harness --version` and answered by `GET /health`.
public enum HarnessVersion {
    public static let current = "0.9.0"
}
