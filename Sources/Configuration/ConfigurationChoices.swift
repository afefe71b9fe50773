public import Store

/// `server.roleCalls`: how the roles of this process call each other.
public enum RoleCalls: String, ConfigurationChoice {
    /// Over the loopback, as to any peer.
    case http
    /// Without a socket: the same route, bytes and faults.
    case inProcess = "in-process"
}

/// `store.backend`: where the records are kept.
public enum StoreBackend: String, ConfigurationChoice {
    /// One instance: `harness.sqlite` in the data directory.
    case sqlite
    /// Shared by the instances of a cluster, at `store.url`.
    case postgres
}

/// `logging.format`: a line of text per event, or a JSON object per line.
public enum LogFormat: String, ConfigurationChoice {
    case text, json
}

extension StoreDurability: ConfigurationChoice {}
