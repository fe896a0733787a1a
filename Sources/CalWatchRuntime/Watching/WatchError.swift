import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A system call that failed while setting up watching.
public struct WatchError: Error, CustomStringConvertible {
    public var operation: String
    public var code: Int32
    public var description: String { "\(operation): \(Errno(rawValue: code))" }
}
