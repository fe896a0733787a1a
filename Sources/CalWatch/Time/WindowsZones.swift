import Foundation

/// Windows zone names ("W. Europe Standard Time"), as Outlook and Exchange write them, mapped to IANA zones.
public enum WindowsZones {
    /// The IANA zone for a Windows zone name, per CLDR's windowsZones table.
    public static func ianaName(for windowsName: String) -> String? {
        cldrTable[windowsName] ?? cldrTable[windowsName.trimmingCharacters(in: .whitespaces)]
    }
}
