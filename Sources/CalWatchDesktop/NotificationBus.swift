import CSDBus
import CalWatchRuntime
import Foundation
import SystemPackage

/// One connection to the session bus and the notification server on it (the Desktop Notifications
/// Specification, `org.freedesktop.Notifications`), through sd-bus. sd-bus is not thread-safe, so the connection
/// lives on a thread of its own and every call goes through this actor; waiting for the server's signals
/// (`pump`) parks that thread for at most a quarter of a second at a time, never one of Swift's cooperative pool.
actor NotificationBus {
    private let executor = BlockingExecutor(name: "calwatch-notify")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// What the server says of itself (`GetServerInformation`, `GetCapabilities`).
    struct Server: Sendable, Equatable {
        var name: String
        var vendor: String
        var version: String
        var capabilities: Set<String>
    }

    /// A signal of the server's.
    enum Signal: Sendable, Equatable {
        case actionInvoked(id: UInt32, action: String)
        case activationToken(id: UInt32, token: String)
        case closed(id: UInt32, reason: UInt32)
    }

    /// Why the bus or the server could not be used.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A card to show.
    struct Card: Sendable {
        var summary: String
        var body: String
        var icon = ""
        var actions: [(key: String, label: String)] = []
        /// 0 low, 1 normal, 2 critical.
        var urgency: UInt8 = 1
        var category: String?
        /// Progress, 0–100.
        var value: Int32?
        /// Cards with one tag replace each other on servers that stack by it (dunst, Ubuntu's notify-osd).
        var stack: String?
        var resident = false
        /// Milliseconds; -1: the server's default, 0: never.
        var timeout: Int32 = -1
    }

    private let address: String?
    private var bus: OpaquePointer?
    private(set) var server: Server?
    /// The connection that owns the server's name: only its signals are the server's.
    private var owner: String?

    init(address: String?) {
        self.address = address
    }

    isolated deinit {
        if let bus { sd_bus_flush_close_unref(bus) }
    }

    /// Connects, when not connected, and asks the server what it is and can do.
    func connect() throws(Failure) -> Server {
        if let bus, let server, sd_bus_is_open(bus) > 0 { return server }
        close()
        var opened: OpaquePointer?
        let status = address.map { cw_bus_open($0, &opened) } ?? cw_bus_open(nil, &opened)
        guard status >= 0, let opened else {
            throw Failure(
                description: address == nil
                    ? "no session bus (DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus is missing): "
                        + Self.reason(status)
                    : "cannot connect to \(address!): \(Self.reason(status))")
        }
        bus = opened
        _ = cw_subscribe(opened)
        do {
            let server = try ask(opened)
            self.server = server
            owner = currentOwner(opened)
            return server
        } catch {
            close()
            throw error
        }
    }

    private func ask(_ bus: OpaquePointer) throws(Failure) -> Server {
        var name: UnsafeMutablePointer<CChar>?
        var vendor: UnsafeMutablePointer<CChar>?
        var version: UnsafeMutablePointer<CChar>?
        var spec: UnsafeMutablePointer<CChar>?
        var message: UnsafeMutablePointer<CChar>?
        let status = cw_server_information(bus, &name, &vendor, &version, &spec, &message)
        defer { for pointer in [name, vendor, version, spec, message] { free(pointer) } }
        guard status >= 0 else {
            throw Failure(description: "no notification server on the bus: \(said(status, message))")
        }
        var list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var capabilityMessage: UnsafeMutablePointer<CChar>?
        _ = cw_capabilities(bus, &list, &capabilityMessage)
        free(capabilityMessage)
        defer { cw_free_strv(list) }
        var capabilities = Set<String>()
        var index = 0
        while let item = list?[index] {
            capabilities.insert(String(cString: item))
            index += 1
        }
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        return Server(name: text(name), vendor: text(vendor), version: text(version), capabilities: capabilities)
    }

    /// Shows `card`, in place of card `replacing` when given; returns its id.
    func show(_ card: Card, replacing: UInt32 = 0) throws(Failure) -> UInt32 {
        _ = try connect()
        guard let bus else { throw Failure(description: "not connected") }
        var id: UInt32 = 0
        var message: UnsafeMutablePointer<CChar>?
        defer { free(message) }
        let texts: [String] = card.actions.flatMap { [$0.key, $0.label] }
        let strings: [UnsafeMutablePointer<CChar>?] = texts.map { strdup($0) }
        defer { for pointer in strings { free(pointer) } }
        let constants: [UnsafePointer<CChar>?] = strings.map { $0.map { UnsafePointer($0) } }
        let status = constants.withUnsafeBufferPointer { actions in
            cw_notify(
                bus, "calwatch", replacing, card.icon, card.summary, card.body, actions.baseAddress, actions.count,
                card.urgency, card.category, nil, card.value ?? -1, card.stack, card.resident ? 1 : 0, card.timeout,
                &id, &message)
        }
        guard status >= 0 else {
            if sd_bus_is_open(bus) <= 0 { close() }
            throw Failure(description: "Notify failed: \(said(status, message))")
        }
        return id
    }

    /// Closes card `id` (one the server no longer has is no error).
    func close(card id: UInt32) {
        guard let bus else { return }
        var message: UnsafeMutablePointer<CChar>?
        _ = cw_close(bus, id, &message)
        free(message)
    }

    /// Opens `url` through the XDG Desktop Portal when it answers; `false` when there is none.
    func openThroughPortal(_ url: String, token: String?) -> Bool {
        guard let bus else { return false }
        var message: UnsafeMutablePointer<CChar>?
        defer { free(message) }
        return cw_portal_open_uri(bus, url, token, &message) >= 0
    }

    /// Waits up to a quarter of a second for the bus, and returns the server's signals that came. A bus that
    /// closed (a logout) is let go; the next `connect` opens one again.
    func pump() -> [Signal] {
        guard let bus else { return [] }
        _ = sd_bus_wait(bus, 250_000)
        var signals: [Signal] = []
        var signal = cw_signal()
        while true {
            let status = cw_next_signal(bus, &signal)
            if status < 0 {
                close()
                break
            }
            if status == 0 { break }
            let text = signal.text.map { String(cString: $0) } ?? ""
            let sender = signal.sender.map { String(cString: $0) }
            free(signal.text)
            free(signal.sender)
            // Any program on the bus can send a signal that looks like the server's: a forged click must not
            // snooze or open anything. The owner is asked again when it seems to have changed (a new server).
            if sender != owner {
                owner = currentOwner(bus)
                guard sender == owner else { continue }
            }
            switch signal.kind {
            case 1: signals.append(.actionInvoked(id: signal.id, action: text))
            case 2: signals.append(.activationToken(id: signal.id, token: text))
            default: signals.append(.closed(id: signal.id, reason: signal.reason))
            }
        }
        return signals
    }

    private func currentOwner(_ bus: OpaquePointer) -> String? {
        var name: UnsafeMutablePointer<CChar>?
        defer { free(name) }
        guard cw_server_owner(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Whether a connection is open.
    var isConnected: Bool { bus.map { sd_bus_is_open($0) > 0 } ?? false }

    private func close() {
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
        server = nil
    }

    private func said(_ status: Int32, _ message: UnsafeMutablePointer<CChar>?) -> String {
        message.map { String(cString: $0) } ?? Self.reason(status)
    }

    private static func reason(_ status: Int32) -> String { Errno(rawValue: -status).description }
}
