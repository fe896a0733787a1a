public import CalWatchCore
import CalWatchDesktop
import CalWatchMQTT
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import CalWatchWebhook

extension SinkKinds {
    /// Every kind of sink calwatch offers, the `type:`s config.yml chooses from. A new sink is a folder beside its
    /// kin and a line here (docs/development.md, "A sink in one folder").
    public static let calwatch =
        SinkKinds.runtime + [
            PostgresSettings.self,
            NotifySettings.self,
            WebhookSettings.self,
            MQTTSettings.self,
        ]
}

extension SourceKinds {
    /// Every kind of calendar on a server calwatch reads, the keys a `calendars:` entry chooses from (`url:`,
    /// `caldav:`). A new kind is a `SourceDriver` beside its client and a line here.
    public static let calwatch = SourceKinds.remote
}
