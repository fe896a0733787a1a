/// Where `calwatch next` finds the daemon that reads a given configuration file, without reading the file's YAML:
/// the daemon links its local server's socket (which lies beside its journal, wherever `state:` puts it) under the
/// user's runtime directory, by a name made from the configuration file's real path.
///
/// Shared by the daemon's server and the `calwatch` front, which starts in a few milliseconds because it links
/// neither Foundation nor anything else; so this is plain Swift.
public enum LocalAddress {
    /// `$XDG_RUNTIME_DIR/calwatch/next-<16 hex digits>.sock` for the configuration file at `realPath` (absolute,
    /// symbolic links resolved). The runtime directory is the user's own (mode 0700, XDG Base Directory), so nobody
    /// else can place a link there.
    public static func link(configuration realPath: String, runtimeDirectory: String) -> String {
        directory(runtimeDirectory) + "/next-" + hex(fnv1a(realPath)) + ".sock"
    }

    /// The folder of the links: `$XDG_RUNTIME_DIR/calwatch`.
    public static func directory(_ runtimeDirectory: String) -> String { runtimeDirectory + "/calwatch" }

    /// FNV-1a, 64 bits: a name, not a secret; two configurations that share a name only make `next` read the
    /// calendars itself, since the daemon checks which file the asker means.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
