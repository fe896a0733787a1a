public import CalWatchCore
import CalWatchDesktop
import CalWatchMQTT
import CalWatchPostgres
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
