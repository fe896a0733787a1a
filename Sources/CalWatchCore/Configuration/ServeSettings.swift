/// The daemon's local server (`serve:`): `calwatch next`, the day's page, the event stream, answers and metrics.
///
/// It always listens on a Unix socket beside the journal (`<journal>.sock`, mode 0600: its permissions are the
/// credential); `listen:` adds TCP for a browser, a widget or a phone, where every route but `/healthz` and a signed
/// answer asks for the token in `<journal>.token`: loopback, or another address with `allowRemote: true` and TLS.
public struct ServeSettings: Sendable, Hashable {
    /// A loopback IPv4 address and port.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        public var description: String { "\(host):\(port)" }
    }

    /// The certificate chain and private key (PEM files) a TCP listener that other machines reach serves with.
    public struct TLS: Sendable, Hashable {
        public var certificate: String
        public var key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// `serve: off` runs no server (and `next` then always reads the calendars itself).
    public var enabled = true
    /// TCP as well as the socket; `nil`: the socket alone.
    public var listen: Address?
    /// `allowRemote: true`: `listen` may be an address other machines reach (then `tls` is required).
    public var allowRemote = false
    /// HTTPS instead of HTTP on `listen`.
    public var tls: TLS?

    public init() {}

    /// The socket of the server of the journal at `journal`.
    public static func socketPath(journal: String) -> String { journal + ".sock" }

    /// The token file of the server of the journal at `journal`.
    public static func tokenPath(journal: String) -> String { journal + ".token" }

    /// `text` as an IPv4 address and port, read as strictly as `loopback`; `nil` otherwise.
    public static func ipv4(_ text: String) -> Address? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = Int(parts[1]), (1...65_535).contains(port), String(port) == parts[1]
        else { return nil }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            octets.count == 4
            && octets.allSatisfy { octet in
                !octet.isEmpty && octet.allSatisfy { $0.isASCII && $0.isNumber }
                    && (octet == "0" || !octet.hasPrefix("0")) && UInt8(octet) != nil
            }
        return valid ? Address(host: String(parts[0]), port: port) : nil
    }

    /// `text` as a loopback address and port (`127.0.0.1:8787`, `localhost:8787`), read strictly: dotted decimal as
    /// inet_pton reads it (no sign, no leading zero), so that nothing that merely looks like loopback binds every
    /// interface. `nil` otherwise.
    public static func loopback(_ text: String) -> Address? {
        if text.hasPrefix("localhost:") { return ipv4("127.0.0.1" + text.dropFirst("localhost".count)) }
        guard let address = ipv4(text), address.host.hasPrefix("127.") else { return nil }
        return address
    }
}
