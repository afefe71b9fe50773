public import Foundation

/// Runs `body` on a thread of its own and awaits it. A test's blocking wait (a child process, a poll, a database
/// starting) would otherwise hold one of the cooperative pool's threads, as many as there are cores (two in CI), which
/// every harness running inside the test process needs: two such waits at once in parallel tests freeze them all, and
/// a decoupled RReq due in 2 seconds comes 30 seconds late.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
