// Compiled for calwatch from the two-character IATA designators that airlines print on their tickets, boarding
// passes and timetables: scheduled passenger airlines of 2026, and a few that stopped flying recently (old
// calendars still hold their flights). Facts gathered by hand, not copied from a third-party database.
// Licence: CC0-1.0 (public domain dedication).

extension AirlineTable {
    /// Where the table comes from, as `calwatch --version` names it.
    public static let dataSource = "calwatch's own table, 2026 (CC0-1.0)"

    /// One carrier per line: IATA designator|name, and `|rail` for railways that sell seats under a designator
    /// (a "flight" number of theirs is a train).
    static let table = #"""
    2A|Deutsche Bahn|rail
    2B|Aerocondor
    2K|Avianca Ecuador
    2L|Helvetic Airways
    2R|VIA Rail Canada|rail
    2V|Amtrak|rail
    2W|World2fly
    3K|Jetstar Asia
    3O|Air Arabia Maroc
    3U|Sichuan Airlines
    4M|LATAM Argentina
    4O|Interjet
    4U|Germanwings
    4Y|Discover Airlines
    4Z|Airlink
    5J|Cebu Pacific
    5O|ASL Airlines France
    5Y|Atlas Air
    6E|IndiGo
    6H|Israir
    7C|Jeju Air
    7F|First Air
    8L|Lucky Air
    8M|Myanmar Airways International
    8P|Pacific Coastal Airlines
    9B|AccesRail|rail
    9C|Spring Airlines
    9E|Endeavor Air
    9W|Jet Airways
    A3|Aegean Airlines
    A6|Air Travel
    A9|Georgian Airways
    AA|American Airlines
    AC|Air Canada
    AD|Azul
    AE|Mandarin Airlines
    AF|Air France
    AH|Air Algérie
    AI|Air India
    AK|AirAsia
    AM|Aeroméxico
    AQ|9 Air
    AR|Aerolíneas Argentinas
    AS|Alaska Airlines
    AT|Royal Air Maroc
    AV|Avianca
    AY|Finnair
    AZ|ITA Airways
    B6|JetBlue
    BA|British Airways
    BC|Skymark Airlines
    BE|Flybe
    BG|Biman Bangladesh Airlines
    BI|Royal Brunei Airlines
    BP|Air Botswana
    BR|EVA Air
    BT|airBaltic
    BW|Caribbean Airlines
    BX|Air Busan
    BY|TUI Airways
    C5|CommutAir
    CA|Air China
    CI|China Airlines
    CL|Lufthansa CityLine
    CM|Copa Airlines
    CX|Cathay Pacific
    CZ|China Southern Airlines
    D7|AirAsia X
    D8|Norwegian Air Sweden
    DD|Nok Air
    DE|Condor
    DG|Cebgo
    DL|Delta Air Lines
    DP|Pobeda
    DR|Ruili Airlines
    DS|easyJet Switzerland
    DT|TAAG Angola Airlines
    DX|Danish Air Transport
    DY|Norwegian
    EC|easyJet Europe
    EI|Aer Lingus
    EK|Emirates
    EN|Air Dolomiti
    ET|Ethiopian Airlines
    EU|Chengdu Airlines
    EW|Eurowings
    EY|Etihad Airways
    F8|Flair Airlines
    F9|Frontier Airlines
    FA|FlySafair
    FB|Bulgaria Air
    FD|Thai AirAsia
    FI|Icelandair
    FJ|Fiji Airways
    FM|Shanghai Airlines
    FO|Flybondi
    FR|Ryanair
    FV|Rossiya Airlines
    FZ|flydubai
    G3|Gol
    G4|Allegiant Air
    G5|China Express Airlines
    G7|GoJet Airlines
    G8|Go First
    G9|Air Arabia
    GA|Garuda Indonesia
    GF|Gulf Air
    GJ|Loong Air
    GK|Jetstar Japan
    GL|Air Greenland
    GQ|Sky Express
    GS|Tianjin Airlines
    H2|Sky Airline
    HA|Hawaiian Airlines
    HF|Air Côte d'Ivoire
    HM|Air Seychelles
    HO|Juneyao Air
    HU|Hainan Airlines
    HV|Transavia
    HX|Hong Kong Airlines
    HY|Uzbekistan Airways
    I5|AIX Connect
    IB|Iberia
    ID|Batik Air
    IE|Solomon Airlines
    IT|Tigerair Taiwan
    IW|Wings Air
    IX|Air India Express
    IZ|Arkia
    J2|Azerbaijan Airlines
    J9|Jazeera Airways
    JA|JetSMART
    JD|Beijing Capital Airlines
    JJ|LATAM Brasil
    JL|Japan Airlines
    JQ|Jetstar
    JT|Lion Air
    JU|Air Serbia
    JX|Starlux Airlines
    KA|Cathay Dragon
    KC|Air Astana
    KE|Korean Air
    KL|KLM
    KM|KM Malta Airlines
    KN|China United Airlines
    KP|ASKY Airlines
    KQ|Kenya Airways
    KU|Kuwait Airways
    KX|Cayman Airways
    KY|Kunming Airlines
    LA|LATAM Airlines
    LG|Luxair
    LH|Lufthansa
    LJ|Jin Air
    LM|Loganair
    LO|LOT Polish Airlines
    LS|Jet2
    LX|Swiss
    LY|El Al
    ME|Middle East Airlines
    MF|Xiamen Airlines
    MH|Malaysia Airlines
    MK|Air Mauritius
    MM|Peach Aviation
    MN|Kulula
    MO|Calm Air
    MQ|Envoy Air
    MS|EgyptAir
    MU|China Eastern Airlines
    MX|Breeze Airways
    NF|Air Vanuatu
    NH|All Nippon Airways
    NK|Spirit Airlines
    NO|Neos
    NS|Hebei Airlines
    NX|Air Macau
    NZ|Air New Zealand
    OA|Olympic Air
    OD|Batik Air Malaysia
    OG|Fly Play
    OH|PSA Airlines
    OK|Czech Airlines
    OO|SkyWest Airlines
    OR|TUI fly Netherlands
    OS|Austrian Airlines
    OU|Croatia Airlines
    OZ|Asiana Airlines
    P4|Air Peace
    P5|Wingo
    PC|Pegasus Airlines
    PD|Porter Airlines
    PG|Bangkok Airways
    PK|Pakistan International Airlines
    PN|West Air
    PR|Philippine Airlines
    PS|Ukraine International Airlines
    PW|Precision Air
    PX|Air Niugini
    QF|Qantas
    QG|Citilink
    QH|Bamboo Airways
    QK|Jazz Aviation
    QP|Akasa Air
    QQ|Alliance Airlines
    QR|Qatar Airways
    QW|Qingdao Airlines
    QX|Horizon Air
    QZ|Indonesia AirAsia
    RC|Atlantic Airways
    RJ|Royal Jordanian
    RK|Ryanair UK
    RO|TAROM
    RS|Air Seoul
    S4|Azores Airlines
    S7|S7 Airlines
    SA|South African Airways
    SB|Aircalin
    SC|Shandong Airlines
    SG|SpiceJet
    SK|SAS
    SL|Thai Lion Air
    SN|Brussels Airlines
    SQ|Singapore Airlines
    SU|Aeroflot
    SV|Saudia
    SY|Sun Country Airlines
    TB|TUI fly Belgium
    TC|Air Tanzania
    TG|Thai Airways
    TK|Turkish Airlines
    TM|LAM Mozambique Airlines
    TN|Air Tahiti Nui
    TO|Transavia France
    TP|TAP Air Portugal
    TR|Scoot
    TS|Air Transat
    TU|Tunisair
    TV|Tibet Airlines
    TW|T'way Air
    U2|easyJet
    UA|United Airlines
    UG|Tunisair Express
    UK|Vistara
    UL|SriLankan Airlines
    UM|Air Zimbabwe
    UO|HK Express
    UP|Bahamasair
    UQ|Urumqi Air
    UT|Utair
    UX|Air Europa
    V7|Volotea
    VA|Virgin Australia
    VB|VivaAerobus
    VJ|VietJet Air
    VL|Lufthansa City Airlines
    VN|Vietnam Airlines
    VS|Virgin Atlantic
    VT|Air Tahiti
    VY|Vueling
    W3|Arik Air
    W4|Wizz Air Malta
    W6|Wizz Air
    W9|Wizz Air UK
    WB|RwandAir
    WE|Thai Smile
    WF|Widerøe
    WG|Sunwing Airlines
    WJ|JetSMART Argentina
    WK|Edelweiss Air
    WN|Southwest Airlines
    WS|WestJet
    WY|Oman Air
    X3|TUI fly
    XC|Corendon Airlines
    XP|Avelo Airlines
    XQ|SunExpress
    XY|flynas
    Y4|Volaris
    YV|Mesa Airlines
    YX|Republic Airways
    Z2|Philippines AirAsia
    ZE|Eastar Jet
    ZH|Shenzhen Airlines
    ZL|Rex Airlines
    ZW|Air Wisconsin
    """#
}
