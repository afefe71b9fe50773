import Testing
@testable import Harness

@Suite("Configuration file")
struct ConfigurationTests {
    @Test func emptyFileMeansDefaults() throws {
        let configuration = try HarnessConfiguration.parse("{}")
        #expect(configuration == HarnessConfiguration())
        #expect(configuration.server.httpPort == 8080)
        #expect(configuration.server.httpsPort == 8443)
        #expect(configuration.server.maxHeaderBytes == 16_384)
        #expect(configuration.server.maxBodyBytes == 1_048_576)
    }

    @Test func committedDefaultFileParses() throws {
        let configuration = try HarnessConfiguration.load(path: repositoryRoot + "/config/harness.yaml")
        #expect(configuration == HarnessConfiguration())
    }

    @Test func valuesOverrideDefaultsAndNullTurnsAListenerOff() throws {
        let configuration = try HarnessConfiguration.parse("""
            server:
              httpPort: 9090
              httpsPort: null
              loops: 2
            logging:
              format: json
            """)
        #expect(configuration.server.httpPort == 9090)
        #expect(configuration.server.httpsPort == nil)
        #expect(configuration.loopCount == 2)
        #expect(configuration.serverConfiguration().tls == nil)
    }

    @Test(arguments: [
        ("server:\n  htpPort: 1", "harness.yaml: server.htpPort: unknown key"),
        ("server:\n  httpPort: 70000", "harness.yaml: server.httpPort: 70000 is not a port (0-65535)"),
        ("server:\n  httpPort: eighty", "harness.yaml: server.httpPort:"),
        ("server:\n  httpPort: null\n  httpsPort: null", "harness.yaml: server: set httpPort or httpsPort (or both)"),
        ("logging:\n  format: xml", "harness.yaml: logging.format: \"xml\" is not text or json"),
        ("logging:\n  level: loud", "harness.yaml: logging.level: \"loud\" is not one of"),
    ])
    func invalidFilesNameTheKey(yaml: String, message: String) {
        #expect {
            _ = try HarnessConfiguration.parse(yaml, source: "harness.yaml")
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix(message) == true
        }
    }

    @Test func missingFileIsReported() {
        #expect(throws: ConfigurationError.unreadable(path: "/nonexistent/harness.yaml")) {
            _ = try HarnessConfiguration.load(path: "/nonexistent/harness.yaml")
        }
    }

    @Test func relativeTLSPathsResolveAgainstTheBaseDirectory() {
        let server = HarnessConfiguration().serverConfiguration(baseDirectory: "/srv/harness")
        #expect(server.tls?.certificateChainFile == "/srv/harness/certs/tls/server-chain.pem")
        #expect(server.tls?.privateKeyFile == "/srv/harness/certs/tls/server-key.pem")
    }
}
