import Crypto
public import Foundation
import ZIPFoundation

/// A `.pkpass` file, as airlines' apps and mails give boarding passes for wallets: a ZIP archive holding
/// `pass.json` (the pass: its barcode, whose text is the BCBP, and the gate, terminal and boarding time), a
/// `manifest.json` with the SHA-1 of every other file, and `signature`, the issuer's PKCS #7 signature of the
/// manifest. A stranger's ZIP: at most `largest` bytes on disk, `entries` files, `largestJSON` bytes of each JSON
/// file and `largestContents` bytes in all once unpacked, counted as they are unpacked (a ZIP's sizes can lie);
/// nothing is written to disk. A pass whose files differ from its manifest is refused as altered.
public struct WalletPass: Sendable, Hashable {
    /// The barcodes' texts, in the pass's order (`barcodes`, then the older `barcode`).
    public var barcodes: [String] = []
    /// `semantics.departureGate`, else a field whose key names the gate.
    public var gate: String?
    /// `semantics.departureTerminal`, else a field whose key names the terminal.
    public var terminal: String?
    /// `semantics.currentBoardingDate` (or the original), else a field whose key names boarding, as a date.
    public var boarding: Instant?
    /// `relevantDate`: when the wallet shows the pass, about the time of boarding.
    public var relevantDate: Instant?
    /// Whether the archive holds a `signature` (`WalletPassSignature` checks it).
    public var signed = false
    /// `manifest.json` as the archive holds it, and the detached PKCS #7 signature of it.
    public var manifest = Data()
    public var signature: Data?
    /// Where the issuer serves the pass's latest version (PassKit's web service), when it says.
    public var webService: WebService?

    /// `webServiceURL` and what asking it takes. The token is the issuer's secret for this pass: sent only to that
    /// address, never shown.
    public struct WebService: Sendable, Hashable, CustomStringConvertible {
        /// `GET {url}/v1/passes/{passTypeIdentifier}/{serialNumber}`.
        public var latest: URL
        public var token: String

        public var description: String { latest.absoluteString }
    }

    public static let largest = 8 << 20
    public static let entries = 64
    public static let largestJSON = 512 << 10
    public static let largestContents = 16 << 20

    /// Why an archive is not read as a pass.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Reads the pass in `data`, the whole `.pkpass` file.
    public init(archive data: Data) throws(Problem) {
        guard data.count <= Self.largest else {
            throw Problem(reason: "larger than a pass (\(Self.largest >> 20) MiB at most)")
        }
        let archive: Archive
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw Problem(reason: "not a ZIP archive")
        }
        var files: [String: Entry] = [:]
        for entry in archive {
            guard files.count < Self.entries else {
                throw Problem(reason: "more than \(Self.entries) files: not a pass")
            }
            guard entry.type == .file else { continue }
            files[entry.path] = entry
        }
        var unpacked = 0
        /// A file's bytes, stopped as soon as it passes `limit` or all files pass `largestContents`.
        func contents(_ entry: Entry, limit: Int) throws(Problem) -> Data {
            var bytes = Data()
            do {
                _ = try archive.extract(entry, bufferSize: 16 << 10) { chunk in
                    bytes.append(chunk)
                    unpacked += chunk.count
                    guard bytes.count <= limit, unpacked <= Self.largestContents else { throw Problem(reason: "") }
                }
            } catch {
                throw Problem(
                    reason: bytes.count > limit || unpacked > Self.largestContents
                        ? "\(entry.path) unpacks to more than a pass holds (\(Self.size(min(limit, Self.largestContents))))"
                        : "\(entry.path) cannot be unpacked")
            }
            return bytes
        }
        guard let passEntry = files["pass.json"] else { throw Problem(reason: "no pass.json: not a wallet pass") }
        guard let manifestEntry = files["manifest.json"] else {
            throw Problem(reason: "no manifest.json: a wallet pass lists its files there")
        }
        let manifestData = try contents(manifestEntry, limit: Self.largestJSON)
        guard let manifest = try? JSONDecoder().decode([String: String].self, from: manifestData) else {
            throw Problem(reason: "manifest.json is not a list of files and their SHA-1")
        }
        // Every file but the manifest and its signature, as the manifest says it: a pass changed after it was
        // issued is not taken.
        for (path, entry) in files.sorted(by: { $0.key < $1.key }) where path != "manifest.json" && path != "signature"
        {
            guard let listed = manifest[path] else { throw Problem(reason: "altered: \(path) is not in manifest.json") }
            let digest = Insecure.SHA1.hash(data: try contents(entry, limit: Self.largestContents))
            guard digest.map({ String(format: "%02x", $0) }).joined() == listed.lowercased() else {
                throw Problem(reason: "altered: \(path) is not the file manifest.json lists")
            }
        }
        if let missing = manifest.keys.sorted().first(where: { files[$0] == nil }) {
            throw Problem(reason: "altered: \(missing), in manifest.json, is missing")
        }
        signed = files["signature"] != nil
        self.manifest = manifestData
        if let signatureEntry = files["signature"] { signature = try contents(signatureEntry, limit: Self.largestJSON) }
        let passData = try contents(passEntry, limit: Self.largestJSON)
        guard let pass = try? JSONDecoder().decode(PassJSON.self, from: passData) else {
            throw Problem(reason: "pass.json is not a pass (JSON with formatVersion and a pass style)")
        }
        barcodes = ((pass.barcodes ?? []) + (pass.barcode.map { [$0] } ?? [])).map(\.message)
        webService = Self.webService(pass)
        relevantDate = pass.relevantDate.flatMap(Self.instant)
        let fields =
            pass.boardingPass.map { style in
                [
                    style.headerFields, style.primaryFields, style.secondaryFields, style.auxiliaryFields,
                    style.backFields,
                ]
                .compactMap { $0 }.flatMap { $0 }
            } ?? []
        func field(_ word: String) -> String? {
            fields.first { $0.key.lowercased().contains(word) }?.value?.text
        }
        gate = Self.short(pass.semantics?.departureGate ?? field("gate"))
        terminal = Self.short(pass.semantics?.departureTerminal ?? field("terminal"))
        boarding = (pass.semantics?.currentBoardingDate ?? pass.semantics?.originalBoardingDate ?? field("boarding"))
            .flatMap(Self.instant)
    }

    /// The pass's web service: an https address (http only on loopback, for a service on this machine), with the
    /// pass's type, serial number and token as PassKit's web service takes them.
    private static func webService(_ pass: PassJSON) -> WebService? {
        guard var base = pass.webServiceURL, base.utf8.count <= 2048, let token = pass.authenticationToken,
            (16...512).contains(token.utf8.count), token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
            let type = pass.passTypeIdentifier, let serial = pass.serialNumber,
            let type = type.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])),
            let serial = serial.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])),
            type.utf8.count <= 512, serial.utf8.count <= 512
        else { return nil }
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/v1/passes/" + type + "/" + serial), url.user == nil,
            let host = url.host?.lowercased()
        else { return nil }
        let loopback = host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        guard url.scheme?.lowercased() == "https" || (url.scheme?.lowercased() == "http" && loopback) else {
            return nil
        }
        return WebService(latest: url, token: token)
    }

    /// `16 MiB`, `512 KiB`.
    private static func size(_ bytes: Int) -> String { bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB" }

    /// A gate or terminal as a pass gives it: one line of at most 8 characters, else none.
    private static func short(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.count <= 8,
            !text.contains(where: {
                $0.isNewline || $0.unicodeScalars.contains { $0.properties.generalCategory == .control }
            })
        else { return nil }
        return text
    }

    /// A W3C date as passes write them: `2027-11-22T17:45-05:00`, with or without seconds.
    static func instant(_ text: String) -> Instant? {
        guard text.utf8.count <= 64 else { return nil }
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
            [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate, .withTimeZone],
        ] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) {
                return Instant(secondsSinceEpoch: Int64(date.timeIntervalSince1970.rounded(.down)))
            }
        }
        return nil
    }

    /// `pass.json`, as far as it is read (Apple's PassKit package format).
    private struct PassJSON: Decodable {
        struct Barcode: Decodable { var message: String }
        struct Field: Decodable {
            var key: String
            var value: Value?
        }
        /// A field's value: text, a number or a date's text.
        enum Value: Decodable {
            case text(String)
            case other

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                self = (try? container.decode(String.self)).map(Value.text) ?? .other
            }

            var text: String? {
                if case .text(let text) = self { return text }
                return nil
            }
        }
        struct Style: Decodable {
            var headerFields, primaryFields, secondaryFields, auxiliaryFields, backFields: [Field]?
        }
        struct Semantics: Decodable {
            var departureGate, departureTerminal, currentBoardingDate, originalBoardingDate: String?
        }
        var formatVersion: Int
        var passTypeIdentifier, serialNumber, webServiceURL, authenticationToken: String?
        var barcode: Barcode?
        var barcodes: [Barcode]?
        var relevantDate: String?
        var boardingPass: Style?
        var semantics: Semantics?
    }
}
