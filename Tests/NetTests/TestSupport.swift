import EventLoops
import Foundation
import Testing
@testable import Net
import TestSupport

/// A server on 127.0.0.1 with free ports, stopped by `stop()`.
final class TestServer: @unchecked Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    var port: Int { server.httpPort ?? 0 }
    var tlsPort: Int { server.httpsPort ?? 0 }
    var openConnections: Int { server.openConnections }

    init(router: Router, loops: Int = 2, tls: TLSConfiguration? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: tls == nil ? nil : 0, tls: tls)
        configure(&configuration)
        group = EventLoopGroup(loopCount: loops)
        server = try HTTPServer(configuration: configuration, router: router, group: group)
        try server.start()
    }

    func stop() {
        server.shutdown()
        group.shutdown()
    }
}

enum TestCerts {
    static var root: String { repositoryRoot + "/certs/tls/root-ca.pem" }
    static var serverChain: String { testTLSServer.certificate }
    static var serverKey: String { testTLSServer.key }
    static var clientChain: String { repositoryRoot + "/certs/tls/client-chain.pem" }
    static var clientKey: String { repositoryRoot + "/certs/tls/client-key.pem" }
    static var server: TLSConfiguration { TLSConfiguration(certificateChainFile: serverChain, privateKeyFile: serverKey) }
}

/// A blocking TCP socket for sending raw, possibly malformed, bytes.
final class RawSocket {
    let fd: Int32

    init(port: Int, receiveTimeout: TimeInterval = 5) throws {
        // `fd` is set only once connected: an initializer that throws after every property is
        // set still runs deinit, and a second close would close whatever descriptor another
        // thread (a loop's epoll, a connection) has been given that number meanwhile.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        self.fd = fd
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - floor(receiveTimeout)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until the peer closes or the receive timeout passes.
    func readAll() -> String {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            result.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Reads byte by byte until `terminator` (inclusive), the peer closes or the timeout passes.
    func readUntil(_ terminator: String) -> String {
        var result: [UInt8] = []
        var byte: UInt8 = 0
        while !result.elementsEqual(terminator.utf8) && !String(decoding: result, as: UTF8.self).hasSuffix(terminator) {
            guard recv(fd, &byte, 1, 0) == 1 else { break }
            result.append(byte)
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Reads until `count` complete responses (by Content-Length) have arrived.
    func readResponses(_ count: Int) -> [String] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let parsed = Self.split(data)
            if parsed.count >= count { return parsed }
            let read = recv(fd, &buffer, buffer.count, 0)
            if read <= 0 { return parsed }
            data.append(contentsOf: buffer[0..<read])
        }
    }

    /// Whether the peer has closed (recv returns 0 within the timeout).
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, 0)
        return count == 0
    }

    static func split(_ data: [UInt8]) -> [String] {
        var responses: [String] = []
        var text = Substring(String(decoding: data, as: UTF8.self))
        while let end = text.range(of: "\r\n\r\n") {
            let head = text[..<end.lowerBound]
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = end.upperBound
            guard text.utf8.count - text[..<bodyStart].utf8.count >= length else { break }
            let bodyEnd = text.utf8.index(bodyStart, offsetBy: length)
            responses.append(String(text[..<bodyEnd]))
            text = text[bodyEnd...]
        }
        return responses
    }
}

/// Runs a command and returns its exit code and combined output (killed after `timeout`).
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String = "", timeout: TimeInterval = 20) throws -> (status: Int32, output: String) {
    try ChildProcess.run(executable, arguments, input: input, timeout: timeout)
}

func statusLine(_ response: String) -> String {
    String(response.split(separator: "\r\n", maxSplits: 1).first ?? "")
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes handshakes into
/// the backlog, and nothing ever answers.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                _ = listen(fd, 16)
                _ = getsockname(fd, pointer, &length)
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// Waits until `condition` holds, looking every millisecond, for at most `seconds`: tests
/// synchronise on a state of the server, not on a guess of how long it takes to get there.
@discardableResult
func waitUntil(_ what: Comment, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("gave up waiting: \(what)", sourceLocation: sourceLocation)
            return false
        }
        usleep(1_000)
    }
    return true
}

/// ``waitUntil(_:seconds:sourceLocation:_:)`` for async tests: yields instead of blocking a thread.
@discardableResult
func waitUntil(_ what: Comment, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("gave up waiting: \(what)", sourceLocation: sourceLocation)
            return false
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

extension TestServer {
    /// Waits until a request is in its handler on some connection.
    func waitUntilAHandlerRuns(sourceLocation: SourceLocation = #_sourceLocation) {
        waitUntil("a request in its handler", sourceLocation: sourceLocation) { server.connectionActivities.contains(.handling) }
    }

    /// Stops the server on another thread; `wait()` on the answer blocks until it has stopped.
    func stopInBackground() -> DispatchGroup {
        let stopped = DispatchGroup()
        DispatchQueue.global().async(group: stopped) { self.stop() }
        return stopped
    }
}
