import Postgres

// The tables of the shared store, made, migrated or checked at start.
extension PostgresArchive {
    /// The schema this code reads and writes (`harness_schema.version`); an older one is migrated at start.
    static let schemaVersion = 7
    /// What takes a database of each older version one version on, in one transaction each.
    static let migrations: [Int: String] = [
        // 2: each record names the instance that holds it in memory (``home(role:id:)``).
        1: "ALTER TABLE transactions ADD COLUMN home text",
        // 3: jobs due later that any instance runs once (``schedule(_:)``).
        2: jobsTable,
        // 4: the instances of a cluster, the counts they share (``ClusterStore``), and a lease on each job claimed.
        3: clusterTables + "; ALTER TABLE harness_jobs ADD COLUMN IF NOT EXISTS claimed_until bigint",
        // 5: which transaction took each use, so that its DS and its ACS on two instances take one use between them.
        4: countUsesTable,
        // 6: the changes made through the balancer, which an instance started later makes too (``ClusterStore/changes()``).
        5: changesTable,
        // 7: the secret by which the instances of a cluster know each other's requests (``ClusterStore/clusterSecret()``).
        6: secretTable,
    ]
    /// 244 random bits from the server's strong source (`gen_random_uuid`, PostgreSQL 13 and later), made once.
    static let secretTable = """
        CREATE TABLE harness_secret (secret text NOT NULL);
        INSERT INTO harness_secret (secret) SELECT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
        """
    static let changesTable = """
        CREATE TABLE harness_changes (seq bigserial PRIMARY KEY, id text UNIQUE NOT NULL, kind text NOT NULL, method text NOT NULL,
                                      target text NOT NULL, content_type text, body text NOT NULL, made bigint NOT NULL, expires bigint)
        """
    static let countUsesTable = "CREATE TABLE harness_counter_uses (id text NOT NULL, transaction text NOT NULL, PRIMARY KEY (id, transaction))"
    static let clusterTables = """
        CREATE TABLE harness_instances (url text PRIMARY KEY, seen bigint NOT NULL);
        CREATE TABLE harness_counters (id text PRIMARY KEY, remaining integer NOT NULL, expires bigint NOT NULL)
        """
    static let jobsTable = """
        CREATE TABLE harness_jobs (id text PRIMARY KEY, kind text NOT NULL, due bigint NOT NULL, payload text NOT NULL, home text,
                                   claimed_until bigint);
        CREATE INDEX harness_jobs_by_due ON harness_jobs (due)
        """

    /// The schema made, migrated or checked under an advisory lock, so that instances starting together do it once.
    static func prepareSchema(_ connection: BlockingPostgresConnection) throws(PostgresError) {
        // The server's notices ("relation … already exists, skipping") are not news to whoever starts the harness.
        _ = try connection.query("SET client_min_messages TO warning")
        _ = try connection.query("SELECT pg_advisory_lock(7210331)")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(7210331)") }
        _ = try connection.query("CREATE TABLE IF NOT EXISTS harness_schema (version integer NOT NULL)")
        let versions = try connection.query("SELECT version FROM harness_schema").compactMap { $0.first ?? nil }.compactMap { Int($0) }
        switch versions {
        case []:
            _ = try connection.query("""
                CREATE TABLE IF NOT EXISTS transactions (
                    role text NOT NULL, id text NOT NULL, updated bigint NOT NULL, record text NOT NULL, home text, PRIMARY KEY (role, id));
                CREATE INDEX IF NOT EXISTS transactions_by_time ON transactions (updated);
                \(jobsTable);
                \(clusterTables);
                \(countUsesTable);
                \(changesTable);
                \(secretTable);
                INSERT INTO harness_schema (version) VALUES (\(schemaVersion))
                """)
        case let found where found.count == 1 && found[0] < schemaVersion && migrations[found[0]] != nil:
            for from in found[0]..<schemaVersion {
                guard let step = migrations[from] else { break }
                _ = try connection.query("BEGIN; \(step); UPDATE harness_schema SET version = \(from + 1); COMMIT")
            }
        case [schemaVersion]:
            break
        default:
            throw PostgresError(operation: "open the store", message: "schema version \(versions.map(String.init).joined(separator: ", ")); "
                                + "this harness reads versions 1 to \(schemaVersion) (and migrates the older to \(schemaVersion)): use another database, or a harness of that version")
        }
        preferLZ4(connection)
    }

    /// Records over 2 KB (journal entries, challenge records) are compressed as PostgreSQL stores them: with lz4 where the
    /// server has it (14 and later, built with it, as Debian's is), not the default pglz, which took two thirds of the
    /// database's CPU per challenge (perf, docs/benchmarks.md). Changed once; a server without lz4 keeps pglz.
    static func preferLZ4(_ connection: BlockingPostgresConnection) {
        let method = try? connection.query("SELECT attcompression FROM pg_attribute WHERE attrelid = 'transactions'::regclass AND attname = 'record'")
        guard let method, method.first?.first != "l" else { return }
        // A moment's exclusive lock: not waited for behind a long transaction of another client (the next start tries again).
        _ = try? connection.query("SET lock_timeout = '2s'")
        _ = try? connection.query("ALTER TABLE transactions ALTER COLUMN record SET COMPRESSION lz4")
        _ = try? connection.query("RESET lock_timeout")
    }
}
