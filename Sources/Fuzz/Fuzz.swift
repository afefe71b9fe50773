import Foundation
import FuzzTargets

// Built with -DFUZZING and -sanitize=fuzzer (`./harness fuzz`), libFuzzer supplies main and
// calls this for each input; the target comes from FUZZ_TARGET.
#if FUZZING
nonisolated(unsafe) private let target = ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap(FuzzTarget.init(rawValue:))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let target else { fatalError("set FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))") }
    target.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; libFuzzer's driver runs from it.
@_cdecl("Fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { data, size in fuzzOne(data, size) }
}
#else
/// Without libFuzzer: replays files through a target (`threeds-fuzz TARGET FILE...`).
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: threeds-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            target.run(Array(data))
        }
    }
}
#endif
