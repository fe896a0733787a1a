public import CalWatchCore
public import CalWatchRuntime
import CalWatchWebhook
@preconcurrency import Crypto
public import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOSSL
public import Prometheus
public import ServiceLifecycle

/// The daemon's one local server, on Hummingbird: what `calwatch next` asks, the day as a page and as JSON, the
/// event stream, answers (the page's, a script's and a phone's signed buttons) and metrics (docs/server.md).
///
/// It listens on a Unix socket beside the journal (mode 0600, in the journal's private folder: the file's
/// permissions are the credential) and, with `serve: listen:`, on loopback TCP, where every route but `/healthz` and
/// a signed answer asks for the token in `<journal>.token`. Requests are bounded (headers 16 KiB, bodies 8 KiB, 10 s
/// to arrive whole, 30 s idle, 512 connections a listener), and refusals are counted rather than logged one by one.
public struct LocalServer: Sendable {
    /// What the routes read and where answers go.
    public struct Environment: Sendable {
        /// The journal's path: the socket and the token are beside it.
        public var journal: String
        /// What the running watch holds; `nil` until its first read.
        public var view: @Sendable () -> NextSource?
        /// The daemon's journal, for answers.
        public var answers: @Sendable () throws -> JournalStore
        public var now: @Sendable () -> Instant
        public var timestamp: @Sendable () -> Timestamp
        /// The registry the daemon's metrics are recorded in.
        public var metrics: PrometheusCollectorRegistry?
        /// The phone's Snooze duration, when a webhook signs buttons (`answers:`).
        public var buttonSnooze: Int64?
        /// The configuration file's real path, when `calwatch next` may find this daemon by it (`SocketLink`):
        /// `nil` when the daemon reads another journal than that file names (`--state`).
        public var configurationFile: String?
        /// The daemon's environment (`XDG_RUNTIME_DIR`).
        public var processEnvironment: [String: String] = ProcessInfo.processInfo.environment
        /// Signing in to an account again from this server's page (a lapsed account's notice links to it), on
        /// loopback TCP only; `nil` where the daemon offers none.
        public var accountSignIn: AccountSignIn?

        /// Where `/v1/accounts/<name>/sign-in` sends the browser (the provider's page), and what came of the
        /// provider's answer when the browser comes back (`/?state=…&code=…`): `nil` when it answers no sign-in
        /// started here.
        public struct AccountSignIn: Sendable {
            public var start: @Sendable (String) -> URL?
            public var finish: @Sendable ([String: String]) async -> (signedIn: Bool, said: String)?

            public init(
                start: @escaping @Sendable (String) -> URL?,
                finish: @escaping @Sendable ([String: String]) async -> (signedIn: Bool, said: String)?
            ) {
                self.start = start
                self.finish = finish
            }
        }

        public init(
            journal: String, view: @escaping @Sendable () -> NextSource?,
            answers: @escaping @Sendable () throws -> JournalStore, now: @escaping @Sendable () -> Instant,
            timestamp: @escaping @Sendable () -> Timestamp, metrics: PrometheusCollectorRegistry?,
            buttonSnooze: Int64?, configurationFile: String?, accountSignIn: AccountSignIn? = nil
        ) {
            self.accountSignIn = accountSignIn
            self.configurationFile = configurationFile
            self.journal = journal
            self.view = view
            self.answers = answers
            self.now = now
            self.timestamp = timestamp
            self.metrics = metrics
            self.buttonSnooze = buttonSnooze
        }
    }

    /// The services to run, in the order the daemon's group starts them (stopped in reverse: the event feed
    /// first, so that open streams end before the listeners wait for them). A token that cannot be had is an error;
    /// a listener that cannot bind is logged when it runs, and the daemon goes on without it.
    public static func services(
        _ settings: ServeSettings, environment: Environment, logger: Logger
    ) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        guard settings.enabled else { return [] }
        let token = try ServerToken.loadOrMake(ServeSettings.tokenPath(journal: environment.journal))
        let feed = EventFeed()
        // A key that cannot be had leaves the buttons unanswered (404), not the whole server off.
        var answerKey: SymmetricKey?
        if environment.buttonSnooze != nil {
            do {
                answerKey = try AnswerKey.load(environment.journal + ".answers-key")
            } catch {
                logger.error("the phone's answer buttons are not taken: \(error)")
            }
        }
        let routes = Routes(
            environment: environment, feed: feed, refused: RefusedRequests(logger: logger), answerKey: answerKey)
        var quiet = logger
        quiet.logLevel = .error
        let socket = ServeSettings.socketPath(journal: environment.journal)
        let link = SocketLink(
            configuration: environment.configurationFile, socket: socket, environment: environment.processEnvironment)
        var listeners: [any Service] = [
            Listener(
                name: socket,
                application: Application(
                    router: routes.router(token: nil, secure: false), server: .http1(configuration: Self.http1),
                    configuration: .init(
                        address: .unixDomainSocket(path: socket), serverName: "calwatch",
                        availableConnectionsDelegate: MaximumAvailableConnections(512)),
                    onServerRunning: { _ in
                        _ = chmod(socket, 0o600)
                        do {
                            try link?.make()
                        } catch {
                            logger.warning("calwatch next cannot find this daemon without reading config.yml: \(error)")
                        }
                    }, logger: quiet),
                around: {
                    link?.remove()
                    unlink(socket)
                }, logger: logger)
        ]
        if let listen = settings.listen {
            let scheme = settings.tls == nil ? "http" : "https"
            do {
                let server: HTTPServerBuilder =
                    if let tls = settings.tls {
                        try .tls(.http1(configuration: Self.http1), tlsConfiguration: Self.tlsConfiguration(tls))
                    } else {
                        .http1(configuration: Self.http1)
                    }
                listeners.append(
                    Listener(
                        name: "\(scheme)://\(listen)",
                        application: Application(
                            router: routes.router(token: token, secure: settings.tls != nil), server: server,
                            configuration: .init(
                                address: .hostname(listen.host, port: listen.port), serverName: "calwatch",
                                availableConnectionsDelegate: MaximumAvailableConnections(512)),
                            logger: quiet),
                        around: {}, logger: logger))
            } catch {
                logger.error("the local server does not listen on \(scheme)://\(listen): \(error)")
            }
        }
        let poller = EventFeed.Poller(feed: feed, every: .milliseconds(250)) {
            try? await environment.view()?.lastSequence()
        }
        return listeners.map { .init(service: $0) } + [.init(service: poller)]
    }

    /// The certificate chain and key of `tls`, read now: a file that cannot be read is said at start.
    static func tlsConfiguration(_ tls: ServeSettings.TLS) throws -> TLSConfiguration {
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        } catch {
            throw ServerError(
                "cannot read the certificate \(tls.certificate) or the key \(tls.key) (PEM files): \(error)")
        }
    }

    /// HTTP/1.1 with its bounds: a request whole within 10 s (`RequestDeadline`), 30 s idle between requests, and
    /// the head's size.
    static let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [RequestDeadline(limit: .seconds(10))],
        idleTimeout: .seconds(30),
        httpDecoderConfiguration: .init(
            maxHeaderFieldSize: 8 << 10, maxHeaderListSize: 16 << 10, maxHeaderFieldCount: 64))
}

/// One listener: a bind that fails is logged and leaves the daemon running without it.
struct Listener<App: ApplicationProtocol>: Service {
    let name: String
    let application: App
    /// Run before it listens and after it stops (a socket's file removed).
    let around: @Sendable () -> Void
    let logger: Logger

    func run() async throws {
        around()
        defer { around() }
        do {
            logger.info("serving on \(name)")
            try await application.run()
        } catch {
            logger.error(
                "the local server cannot listen on \(name): \(error); calwatch next reads the calendars itself")
            try? await gracefulShutdown()
        }
    }
}
