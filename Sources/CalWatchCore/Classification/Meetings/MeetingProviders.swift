/// A video-meeting service and how its join links look: the hosts it serves (a host matches itself and its
/// subdomains: `zoom.us` covers `acme.zoom.us` and `us02web.zoom.us`, never `zoom.us.evil.example`), the paths
/// that join a meeting, and paths that look alike but only help, list dial-in numbers or start the meeting as
/// host.
///
/// `meetings.providers:` in config.yml adds services of the user's own (a self-hosted Jitsi, BigBlueButton, a
/// company's video host), checked before these.
public struct MeetingProvider: Sendable, Hashable {
    /// The lower-case id `scan` prints: `zoom`, `teams`, `meet`.
    public var id: String
    public var hosts: [String]
    /// Prefixes (lower case) of a join link's path and query (`/j/`, `/?meetingid=`), or with a leading `*` a
    /// part anywhere in it (Webex puts the site first: `/acme/j.php`); empty: any path with something after the
    /// slash.
    public var join: [String] = []
    /// Path prefixes (lower case) that are not join links.
    public var notJoin: [String] = []
    /// Words (lower case) a LOCATION uses for the service (`microsoft teams`): of several links in an invitation,
    /// the one of the service LOCATION names is the one to join.
    public var names: [String] = []

    public init(id: String, hosts: [String], join: [String] = [], notJoin: [String] = [], names: [String] = []) {
        self.id = id
        self.hosts = hosts
        self.join = join
        self.notJoin = notJoin
        self.names = names
    }
}

extension MeetingProvider {
    /// A service's name as people write it ("Google Meet" for `meet`), for cards a person reads; a service of the
    /// user's own keeps its id.
    public static func title(of id: String) -> String {
        guard let known = all.first(where: { $0.id == id }) else { return id }
        let words = (known.names.first ?? known.id).split(separator: " ")
        return words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }

    /// The services calwatch knows, as data. Order matters only where hosts overlap (none do).
    static let all: [MeetingProvider] = [
        MeetingProvider(
            id: "zoom", hosts: ["zoom.us", "zoom.com", "zoom.com.cn", "zoom.de"],
            join: ["/j/", "/my/", "/w/", "/wc/join/", "/wc/", "/ev/", "/e/", "/join?confno="],
            notJoin: ["/s/", "/u/", "/zoomconference", "/support", "/meeting/schedule", "/signin"],
            names: ["zoom"]),
        MeetingProvider(
            id: "zoomgov", hosts: ["zoomgov.com"], join: ["/j/", "/my/", "/w/", "/wc/join/"], notJoin: ["/s/", "/u/"]),
        MeetingProvider(
            id: "teams",
            hosts: [
                "teams.microsoft.com", "teams.live.com", "teams.microsoft.us", "gov.teams.microsoft.us",
                "dod.teams.microsoft.us", "teams.cloud.microsoft",
            ],
            join: ["/l/meetup-join/", "/meet/", "/l/meet/", "/_#/l/meetup-join/", "/dl/launcher/"],
            notJoin: ["/meetingoptions", "/l/meeting-options"],
            names: ["microsoft teams", "teams meeting", "teams-besprechung", "réunion teams", "reunión de teams"]),
        MeetingProvider(
            id: "meet", hosts: ["meet.google.com"], notJoin: ["/new", "/landing", "/_meet", "/about"],
            names: ["google meet"]),
        MeetingProvider(id: "hangouts", hosts: ["hangouts.google.com"], join: ["/call/", "/hangouts/_/"]),
        MeetingProvider(
            id: "webex", hosts: ["webex.com", "webex.com.cn", "webex.ca"],
            join: [
                "/meet/", "/join/", "*/j.php", "/wbxmjs/joinservice/", "*/webappng/sites/", "/m/", "*/meet/",
                "/weblink/",
            ],
            notJoin: ["/cmp3300/webcomponents/widget/globalcallin", "/globalcallin", "/start", "/support"],
            names: ["webex"]),
        MeetingProvider(id: "gotomeeting", hosts: ["gotomeeting.com"], join: ["/join/", "/?meetingid="]),
        MeetingProvider(
            id: "gotomeeting", hosts: ["meet.goto.com", "gotomeet.me", "joingo.co"],
            notJoin: ["/dial", "/install", "/support"]),
        MeetingProvider(id: "gotowebinar", hosts: ["gotowebinar.com"], join: ["/join/", "/register/"]),
        MeetingProvider(
            id: "jitsi", hosts: ["meet.jit.si", "jitsi.member.fsf.org", "meet.ffmuc.net"], names: ["jitsi"]),
        MeetingProvider(id: "8x8", hosts: ["8x8.vc", "video.8x8.vc"]),
        MeetingProvider(
            id: "whereby", hosts: ["whereby.com", "appear.in"], notJoin: ["/information", "/user", "/org"]),
        MeetingProvider(id: "chime", hosts: ["chime.aws", "app.chime.aws"], notJoin: ["/download", "/dialinnumbers"]),
        MeetingProvider(id: "slack", hosts: ["app.slack.com", "slack.com"], join: ["/huddle/"]),
        MeetingProvider(id: "discord", hosts: ["discord.gg"]),
        MeetingProvider(id: "discord", hosts: ["discord.com", "discordapp.com"], join: ["/invite/", "/channels/"]),
        MeetingProvider(id: "facetime", hosts: ["facetime.apple.com"], join: ["/join"]),
        MeetingProvider(
            id: "ringcentral", hosts: ["meetings.ringcentral.com", "v.ringcentral.com", "video.ringcentral.com"],
            join: ["/j/", "/join/", "/conf/"]),
        MeetingProvider(id: "skype", hosts: ["join.skype.com", "meet.lync.com"]),
        MeetingProvider(
            id: "zoho", hosts: ["meeting.zoho.com", "meeting.zoho.eu", "meeting.zoho.in", "meeting.zoho.com.au"],
            notJoin: ["/api", "/help"]),
        MeetingProvider(id: "bluejeans", hosts: ["bluejeans.com"], notJoin: ["/downloads", "/numbers"]),
        MeetingProvider(id: "lifesize", hosts: ["call.lifesizecloud.com", "lifesizecloud.com"]),
        MeetingProvider(id: "vonage", hosts: ["meetings.vonage.com"]),
        MeetingProvider(id: "dialpad", hosts: ["meetings.dialpad.com", "uberconference.com"]),
        MeetingProvider(id: "pexip", hosts: ["pexip.me"]),
        MeetingProvider(id: "livestorm", hosts: ["app.livestorm.co"]),
        MeetingProvider(id: "streamyard", hosts: ["streamyard.com"], notJoin: ["/watch"]),
        MeetingProvider(id: "riverside", hosts: ["riverside.fm"], join: ["/studio/"]),
        MeetingProvider(id: "around", hosts: ["around.co"], join: ["/r/"]),
        MeetingProvider(id: "gather", hosts: ["app.gather.town", "gather.town"], join: ["/app/", "/invite"]),
        MeetingProvider(id: "clickmeeting", hosts: ["clickmeeting.com"]),
        MeetingProvider(id: "adobeconnect", hosts: ["adobeconnect.com"]),
        MeetingProvider(id: "element", hosts: ["call.element.io"]),
        MeetingProvider(id: "whatsapp", hosts: ["call.whatsapp.com"], join: ["/video/", "/voice/"]),
        MeetingProvider(id: "signal", hosts: ["signal.link"], join: ["/call/"]),
        MeetingProvider(
            id: "tencent", hosts: ["meeting.tencent.com", "voovmeeting.com"], join: ["/dm/", "/p/", "/s/"]),
        MeetingProvider(id: "feishu", hosts: ["vc.feishu.cn"], join: ["/j/"]),
        MeetingProvider(id: "lark", hosts: ["vc.larksuite.com"], join: ["/j/"]),
        MeetingProvider(id: "dingtalk", hosts: ["meeting.dingtalk.com"], join: ["/j/"]),
        MeetingProvider(
            id: "telemost", hosts: ["telemost.yandex.ru", "telemost.yandex.com", "telemost.360.yandex.ru"],
            join: ["/j/"]),
        MeetingProvider(id: "vkcalls", hosts: ["vk.com", "vk.ru"], join: ["/call/join/"]),
        MeetingProvider(id: "daily", hosts: ["daily.co"]),
        MeetingProvider(id: "talky", hosts: ["talky.io"]),
        MeetingProvider(id: "freeconferencecall", hosts: ["join.freeconferencecall.com"]),
        MeetingProvider(id: "joinme", hosts: ["join.me"]),
        MeetingProvider(id: "demio", hosts: ["event.demio.com", "my.demio.com"]),
        MeetingProvider(id: "bigmarker", hosts: ["bigmarker.com"]),
        MeetingProvider(id: "hopin", hosts: ["hopin.com", "app.hopin.com"], join: ["/events/"]),
        MeetingProvider(id: "airmeet", hosts: ["airmeet.com"], join: ["/e/"]),
        MeetingProvider(id: "butter", hosts: ["butter.us", "app.butter.us"]),
        MeetingProvider(id: "tuple", hosts: ["tuple.app"], join: ["/c/"]),
        MeetingProvider(id: "mmhmm", hosts: ["ooo.mmhmm.app"]),
        MeetingProvider(id: "kumospace", hosts: ["kumospace.com"]),
        MeetingProvider(id: "huddle01", hosts: ["app.huddle01.com", "huddle01.app"]),
        MeetingProvider(id: "livekit", hosts: ["meet.livekit.io"]),
        MeetingProvider(id: "vowel", hosts: ["app.vowel.com"]),
        MeetingProvider(id: "pop", hosts: ["pop.com"], join: ["/j/"]),
        MeetingProvider(id: "starleaf", hosts: ["meet.starleaf.com"]),
        MeetingProvider(id: "avaya", hosts: ["spaces.avayacloud.com", "accounts.avayacloud.com"], join: ["/spaces/"]),
        MeetingProvider(id: "teamviewer", hosts: ["go.teamviewer.com"], join: ["/m"]),
        MeetingProvider(id: "alfaview", hosts: ["app.alfaview.com"]),
        MeetingProvider(
            id: "wire", hosts: ["app.wire.com", "account.wire.com"], join: ["/join", "/conversation-join"]),
        MeetingProvider(id: "jamkazam", hosts: ["jamkazam.com"], join: ["/client"]),
        MeetingProvider(id: "eyeson", hosts: ["app.eyeson.team"]),
        MeetingProvider(id: "webinargeek", hosts: ["webinargeek.com"], join: ["/watch/"]),
        MeetingProvider(id: "zohoshowtime", hosts: ["showtime.zoho.com"]),
        MeetingProvider(id: "brightcove", hosts: ["brightcove.com"], join: ["/live/"]),
        // Gong's consent page, which sends each participant on to the meeting after asking to record.
        MeetingProvider(id: "gong", hosts: ["join.gong.io"], names: ["gong"]),
        MeetingProvider(
            id: "meetecho", hosts: ["meetecho.com"], notJoin: ["/support", "/docs"], names: ["meetecho"]),
    ]

    /// The services people run on their own domains, known by the shape of their join links rather than by host:
    /// BigBlueButton's Greenlight rooms (`/b/ann-k7q-3xz`, `/rooms/abc-def-ghi/join`) and API joins, Pexip's web app
    /// (`/webapp/#/?conference=…`), Vidyo portals (`/flex.html?roomdirect&key=…`, a `vidyo` host's `/join/…`),
    /// Nextcloud Talk (`/call/k3x9q2mz`), Galène (a `galene` host's `/group/name/`), OpenVidu and Element Call hosts, and Jitsi on a
    /// `meet.` or `jitsi.` host (`meet.example.org/TeamStandup`, one segment naming the room).
    static func selfHosted(_ link: WebLink, path: String) -> String? {
        let segments = path.split(separator: "/")
        let labels = link.host.split(separator: ".")
        func room(_ text: Substring) -> Bool {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            return (3...4).contains(parts.count)
                && parts.allSatisfy { $0.count == 3 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        }
        if segments.count >= 2, segments[0] == "b" || segments[0] == "rooms", room(segments[1]) {
            return "bigbluebutton"
        }
        if path.hasPrefix("/bigbluebutton/api/join") || path.hasPrefix("/html5client/join")
            || (labels.first == "bbb" || link.host.contains("bigbluebutton")) && segments.count >= 2
        {
            return "bigbluebutton"
        }
        let query = link.query.lowercased()
        if (path.hasPrefix("/webapp") && (link.fragment.contains("conference=") || query.contains("conference=")))
            || (segments.first.map { $0.hasPrefix("webapp") } == true && segments.contains("conference"))
        {
            return "pexip"
        }
        if path == "/flex.html" && (query.contains("roomdirect") || query.contains("key=")) { return "vidyo" }
        if link.host.contains("vidyo"), segments.first == "join", segments.count >= 2 { return "vidyo" }
        if let call = segments.firstIndex(of: "call"), call + 1 < segments.count, segments.count <= call + 2,
            segments[call + 1].count >= 8, segments[call + 1].allSatisfy({ $0.isASCII && $0.isLetter || $0.isNumber }),
            call == 0 || segments[..<call].elementsEqual(["index.php"])
        {
            return "nextcloud"
        }
        if link.host.contains("galene"), segments.first == "group", segments.count >= 2 { return "galene" }
        if link.host.contains("openvidu"), segments.count >= 1 || !link.fragment.isEmpty { return "openvidu" }
        if labels.first == "call", labels.count >= 3, link.fragment.hasPrefix("/") || segments.first == "room" {
            return "element"
        }
        if labels.count >= 3, labels.first == "meet" || labels.first == "jitsi" || labels.first == "visio",
            segments.count == 1, segments[0].count >= 3, !segments[0].contains("."),
            !Self.notRooms.contains(String(segments[0]))
        {
            return "jitsi"
        }
        return nil
    }

    /// "Join" in the languages invitations are written in, folded (lower case, no accents).
    static let joinWords: [String] = [
        "join", "joining", "beitreten", "teilnehmen", "rejoindre", "participer", "unirse", "unete", "unirte",
        "participar", "partecipa", "partecipare", "deelnemen", "aansluiten", "deelnemen aan", "entrar", "dolacz",
        "dołacz", "katıl", "katil", "bergabung", "gabung", "tham gia", "присоединиться", "подключиться", "войти",
        "pripojit", "liity", "liittya", "deltag", "anslut", "bli med", "csatlakozas", "alaturati",
        "συμμετοχη", "הצטרף", "انضم", "参加", "加入", "참여", "참가", "เขารวม", "เข้าร่วม", "ingresar", "accede", "accedi",
    ]
    /// "Meeting", "call" and "video" in the same languages, as the start of a word ("spotkan" for "spotkania").
    static let meetingWords: [String] = [
        "meeting", "call", "video", "conferenc", "webinar", "besprechung", "konferenz", "sitzung", "reunion", "visio",
        "llamada", "riunion", "chiamata", "vergader", "gesprek", "reuniao", "chamada", "spotkan", "rozmow", "toplant",
        "gorusme", "rapat", "panggilan", "cuoc hop", "встреч", "конференц", "звонок", "schuz", "hovor", "kokous",
        "puhelu", "møde", "mote", "möte", "samtal", "ertekezlet", "megbeszeles", "sedint", "συσκεψ", "ישיבה", "פגישה",
        "اجتماع", "مكالمة", "会議", "会议", "通話", "视频", "ミーティング", "회의", "통화", "การประชุม", "online", "room",
    ]
    /// Sites whose links on such a line are about the meeting, never its room: event pages, maps, documents.
    static let notMeetingHosts: [String] = [
        "meetup.com", "eventbrite.com", "facebook.com", "linkedin.com", "youtube.com", "youtu.be", "maps.google.com",
        "maps.apple.com", "goo.gl", "docs.google.com", "drive.google.com", "calendar.google.com", "outlook.office.com",
        "outlook.live.com", "sharepoint.com", "dropbox.com", "github.com", "gitlab.com", "openstreetmap.org",
        "wikipedia.org", "instagram.com", "x.com", "twitter.com",
    ]

    /// A site's own pages under a `meet.` host, never a Jitsi room.
    static let notRooms: Set<String> = [
        "about", "login", "logout", "signin", "signup", "register", "help", "support", "docs", "blog", "pricing",
        "privacy", "terms", "contact", "download", "downloads", "static", "images", "settings", "admin", "api",
        "events", "calendar", "home", "index.html",
    ]

    /// Hosts that only ever serve help, status or dial-in pages.
    static let helpHostPrefixes = ["support.", "help.", "docs.", "community.", "status.", "dialin.", "aka.ms"]
}
