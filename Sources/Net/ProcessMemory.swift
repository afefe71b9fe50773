import CLibUV

/// The process's heap, as glibc's allocator counts it.
public enum ProcessMemory {
    /// Bytes allocated and not freed (arena and mmapped blocks): what the process holds, without the free space inside
    /// its heap that the resident size also counts.
    public static var heapBytesInUse: Int {
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)  // small blocks in the arenas, and large ones mapped on their own
    }
}
