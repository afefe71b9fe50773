import CLibUV

/// The process's heap, as glibc's allocator counts it.
public enum ProcessMemory {
    /// Bytes allocated and not freed: what the process holds, without the free space inside
    /// its heap that the resident size also counts.
    public static var heapBytesInUse: Int { Int(mallinfo2().uordblks) }
}
