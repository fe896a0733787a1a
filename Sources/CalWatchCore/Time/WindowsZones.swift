import Foundation

/// Windows zone names ("W. Europe Standard Time"), as Outlook and Exchange write them, mapped to IANA zones.
public enum WindowsZones {
    /// The IANA zone for a Windows zone name, per CLDR's windowsZones table.
    ///
    /// Also reads Outlook's `tzone://Microsoft/<name>` form, and names that differ only in case (`Utc`).
    public static func ianaName(for windowsName: String) -> String? {
        var name = windowsName.trimmingCharacters(in: .whitespaces)
        if name.lowercased().hasPrefix("tzone://microsoft/") { name = String(name.dropFirst(18)) }
        if let exact = cldrTable[name] { return exact }
        return lowercased[name.lowercased()]
    }

    /// The IANA zones the table maps to: the zone CLDR chose for each Windows zone.
    static let ianaZones = Set(cldrTable.values)

    /// How many Windows names the table maps (`calwatch --version`).
    public static var count: Int { cldrTable.count }

    private static let lowercased: [String: String] = Dictionary(
        cldrTable.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
}
