package import CLibUV

/// A Swift object that owns a libuv handle.
///
/// The handle's `data` holds a retained reference to its owner; the owner releases it
/// in the handle's close callback, so the object lives exactly as long as the handle.
package protocol LoopHandleOwner: AnyObject {
    /// Starts closing the handle; idempotent.
    func close()
}

extension UnsafeMutablePointer {
    /// The pointer seen as the `uv_handle_t` every libuv handle starts with.
    package var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

/// Closes `handle`, then releases its owner and frees its memory.
package func closeOwnedHandle<H>(_ handle: UnsafeMutablePointer<H>) {
    let base = handle.asHandle
    guard uv_is_closing(base) == 0 else { return }
    uv_close(base) { base in
        guard let base else { return }
        if let data = base.pointee.data {
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        base.deallocate()
    }
}

/// Stores a retained reference to `owner` in the handle, released by ``closeOwnedHandle(_:)``.
package func attach<H>(_ owner: AnyObject, to handle: UnsafeMutablePointer<H>) {
    handle.asHandle.pointee.data = Unmanaged<AnyObject>.passRetained(owner).toOpaque()
}

/// The owner stored in a handle by ``attach(_:to:)``.
package func owner<T: AnyObject, H>(of handle: UnsafeMutablePointer<H>?, as type: T.Type) -> T? {
    guard let data = handle?.asHandle.pointee.data else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? T
}
