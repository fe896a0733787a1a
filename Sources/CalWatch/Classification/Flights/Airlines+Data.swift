// Compiled for calwatch from the two-character IATA designators that airlines print on their tickets, boarding
// passes and timetables (scheduled passenger airlines, current as of 2026). Facts gathered by hand, not copied
// from a third-party database. Licence: CC0-1.0 (public domain dedication).

extension AirlineTable {
    /// One carrier per line: IATA designator|name, and `|rail` for railways that sell seats under a designator
    /// (a "flight" number of theirs is a train).
    static let table = #"""
    2A|Deutsche Bahn|rail
    2B|Aerocondor
    2L|Helvetic Airways
    2R|VIA Rail Canada|rail
    2V|Amtrak|rail
    2W|World2fly
    3K|Jetstar Asia
    3U|Sichuan Airlines
    4U|Germanwings
    4Z|Airlink
    5J|Cebu Pacific
    6E|IndiGo
    7C|Jeju Air
    8M|Myanmar Airways International
    9B|AccesRail|rail
    9C|Spring Airlines
    9W|Jet Airways
    A3|Aegean Airlines
    A9|Georgian Airways
    AA|American Airlines
    AC|Air Canada
    AD|Azul
    AF|Air France
    AI|Air India
    AK|AirAsia
    AM|Aeroméxico
    AR|Aerolíneas Argentinas
    AS|Alaska Airlines
    AT|Royal Air Maroc
    AV|Avianca
    AY|Finnair
    AZ|ITA Airways
    B6|JetBlue
    BA|British Airways
    BE|Flybe
    BG|Biman Bangladesh Airlines
    BI|Royal Brunei Airlines
    BR|EVA Air
    BT|airBaltic
    BW|Caribbean Airlines
    CA|Air China
    CI|China Airlines
    CM|Copa Airlines
    CX|Cathay Pacific
    CZ|China Southern Airlines
    D8|Norwegian Air Sweden
    DE|Condor
    DL|Delta Air Lines
    DY|Norwegian
    EI|Aer Lingus
    EK|Emirates
    EN|Air Dolomiti
    ET|Ethiopian Airlines
    EW|Eurowings
    EY|Etihad Airways
    F9|Frontier Airlines
    FB|Bulgaria Air
    FI|Icelandair
    FJ|Fiji Airways
    FM|Shanghai Airlines
    FR|Ryanair
    FZ|flydubai
    G3|Gol
    G4|Allegiant Air
    G9|Air Arabia
    GA|Garuda Indonesia
    GF|Gulf Air
    HA|Hawaiian Airlines
    HO|Juneyao Air
    HU|Hainan Airlines
    HV|Transavia
    HX|Hong Kong Airlines
    HY|Uzbekistan Airways
    IB|Iberia
    IX|Air India Express
    J2|Azerbaijan Airlines
    JJ|LATAM Brasil
    JL|Japan Airlines
    JQ|Jetstar
    JU|Air Serbia
    KC|Air Astana
    KE|Korean Air
    KL|KLM
    KM|KM Malta Airlines
    KQ|Kenya Airways
    KU|Kuwait Airways
    LA|LATAM Airlines
    LG|Luxair
    LH|Lufthansa
    LO|LOT Polish Airlines
    LS|Jet2
    LX|Swiss
    LY|El Al
    ME|Middle East Airlines
    MF|Xiamen Airlines
    MH|Malaysia Airlines
    MS|EgyptAir
    MU|China Eastern Airlines
    NH|All Nippon Airways
    NK|Spirit Airlines
    NZ|Air New Zealand
    OA|Olympic Air
    OK|Czech Airlines
    OS|Austrian Airlines
    OU|Croatia Airlines
    OZ|Asiana Airlines
    PC|Pegasus Airlines
    PG|Bangkok Airways
    PK|Pakistan International Airlines
    PR|Philippine Airlines
    PS|Ukraine International Airlines
    QF|Qantas
    QR|Qatar Airways
    RJ|Royal Jordanian
    RO|TAROM
    S4|Azores Airlines
    S7|S7 Airlines
    SA|South African Airways
    SG|SpiceJet
    SK|SAS
    SN|Brussels Airlines
    SQ|Singapore Airlines
    SU|Aeroflot
    SV|Saudia
    SY|Sun Country Airlines
    TG|Thai Airways
    TK|Turkish Airlines
    TP|TAP Air Portugal
    TR|Scoot
    TS|Air Transat
    TU|Tunisair
    U2|easyJet
    UA|United Airlines
    UK|Vistara
    UL|SriLankan Airlines
    UO|HK Express
    UX|Air Europa
    V7|Volotea
    VA|Virgin Australia
    VN|Vietnam Airlines
    VS|Virgin Atlantic
    VY|Vueling
    W6|Wizz Air
    WF|Widerøe
    WN|Southwest Airlines
    WS|WestJet
    WY|Oman Air
    XQ|SunExpress
    XY|flynas
    ZH|Shenzhen Airlines
    """#
}
