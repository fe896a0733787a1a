import CalWatchCore
import CalWatchRuntime

/// The page at `/`: the next occurrence as a card coloured by how near it is (30, 15 and 5 minutes), with Join and
/// the time to leave, then the rest of the day with conflicts and unanswered invitations marked, and Snooze and
/// Dismiss. Plain HTML that reads with JavaScript off (the buttons are forms); with it on, the day is fetched again
/// whenever the event stream brings something, and the countdowns every 30 s. No external assets; light and dark
/// by `prefers-color-scheme`.
struct DayPage {
    let sheet: Result<DaySheet, NextSource.Refusal>
    let next: NextUp?
    /// The last reminder's event id by subject: what Snooze snoozes.
    let snoozable: [String: String]
    /// What became of the last answer given through a form, said in the page's own words (never text from the
    /// address, which anyone could write into a link).
    let answered: String?

    static let answered = [
        "applied": "Done.",
        "refused": "The daemon refused it: the occurrence is over, or a snooze would pass its end.",
        "kept": "Recorded; the daemon applies it as soon as it is free.",
    ]

    func document(nonce: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>calwatch</title>
        <style nonce="\(nonce)">\(Self.style)</style>
        </head><body>
        <main id="day">\(main)</main>
        <script nonce="\(nonce)">\(Self.script)</script>
        </body></html>

        """
    }

    /// What the script fetches again (`/?fragment=1`): everything inside `<main>`.
    var main: String {
        var html = ""
        if let answered { html += #"<p class="said" role="status">\#(answered)</p>"# }
        html += nextCard
        switch sheet {
        case .success(let sheet):
            let (before, after) = (sheet.date.adding(days: -1), sheet.date.adding(days: 1))
            html += #"<nav class="days"><a href="/?date=\#(before)" rel="prev">← \#(before)</a>"#
            html += #"<h2>\#(sheet.date)</h2><a href="/?date=\#(after)" rel="next">\#(after) →</a></nav>"#
            if sheet.items.isEmpty { html += #"<p class="empty">Nothing on this day.</p>"# }
            html += #"<ol class="items">"#
            for item in sheet.items { html += row(item, sheet: sheet) }
            html += "</ol>"
        case .failure(let refusal):
            html += #"<p class="empty">The daemon does not hold this day (\#(Self.escape(refusal.description))).</p>"#
        }
        return html
    }

    private var nextCard: String {
        guard let next, let current = next.current else {
            return #"<section class="next calm" id="next"><h1>Nothing coming</h1></section>"#
        }
        let urgency =
            switch current.phase {
            case .live: "live"
            default:
                current.seconds <= 300
                    ? "now" : current.seconds <= 900 ? "soon" : current.seconds <= 1800 ? "near" : "calm"
            }
        let facts = current.facts
        var html =
            #"<section class="next \#(urgency)" id="next" data-subject="\#(Self.escape(Self.subject(current.occurrence)))">"#
        html += #"<p class="kind">\#(facts.kind.rawValue)</p>"#
        html += #"<h1>\#(Self.escape(current.occurrence.summary ?? "(no title)"))</h1>"#
        html +=
            #"<p class="countdown" data-at="\#(current.targetTime.secondsSinceEpoch)" data-to="\#(current.target.rawValue)">"#
        html += Self.escape(Self.countdown(current)) + "</p>"
        html += #"<p class="when">\#(Self.span(current.occurrence, zone: next.zone))"#
        if let location = current.occurrence.location, !location.isEmpty {
            html += " · " + Self.escape(String(location.prefix(200)))
        }
        html += "</p>"
        // A flight's terminal, gate, seat and live status, as its pass and the status service give them.
        if let flight = facts.flight {
            let glance = flight.glance(departure: current.occurrence.start, zone: next.zone)
            if !glance.isEmpty {
                html += #"<p class="flight">\#(glance.map { Self.escape($0) }.joined(separator: " · "))</p>"#
            }
        }
        if let leave = facts.leave {
            html += #"<p class="leave">Leave by \#(Self.clock(leave.by, zone: next.zone))"#
            if let prepareBy = leave.prepareBy { html += ", get ready at " + Self.clock(prepareBy, zone: next.zone) }
            if leave.estimated { html += " (estimated)" }
            if let from = leave.origin?.at, let to = leave.destination?.at {
                html +=
                    #" · <a href="https://www.openstreetmap.org/directions?from=\#(from.latitude),\#(from.longitude)&amp;to=\#(to.latitude),\#(to.longitude)" rel="noreferrer">directions</a>"#
            }
            html += "</p>"
        }
        if let progress = current.progress {
            html += #"<progress max="1" value="\#(progress)">\#(Int(progress * 100))%</progress>"#
        }
        html += #"<div class="actions">"#
        if let join = Self.webAddress(facts.joinURL) {
            html += #"<a class="join" href="\#(Self.escape(join))" rel="noreferrer" target="_blank">Join</a>"#
        }
        html += buttons(Self.subject(current.occurrence), ended: false, dismissed: false)
        html += "</div></section>"
        return html
    }

    private func row(_ item: DaySheet.Item, sheet: DaySheet) -> String {
        var classes = ["item", "kind-" + item.facts.kind.rawValue]
        if !item.conflicts.isEmpty { classes.append("conflict") }
        if item.needsAnswer { classes.append("needs-answer") }
        if item.dismissed { classes.append("dismissed") }
        let ended = item.occurrence.end <= sheet.now
        if ended { classes.append("past") }
        if item.occurrence.status == .cancelled || item.facts.declined { classes.append("cancelled") }
        var html = #"<li class="\#(classes.joined(separator: " "))" data-subject="\#(Self.escape(item.subject))">"#
        html += #"<span class="time">\#(Self.span(item.occurrence, zone: sheet.zone))</span> "#
        html += #"<span class="title">\#(Self.escape(item.occurrence.summary ?? "(no title)"))</span>"#
        html += #" <span class="calendar">\#(Self.escape(item.occurrence.calendar))</span>"#
        var notes: [String] = []
        if !item.conflicts.isEmpty {
            let others = sheet.items.filter { item.conflicts.contains($0.subject) }.map { $0.occurrence.summary ?? "?" }
            notes.append("overlaps " + others.map { Self.escape(String($0.prefix(80))) }.joined(separator: ", "))
        }
        if item.needsAnswer { notes.append("not answered") }
        if item.dismissed { notes.append("dismissed") }
        if item.acknowledged && !item.dismissed { notes.append("acknowledged") }
        if let until = item.snoozedUntil, !item.dismissed {
            notes.append("snoozed until " + Self.clock(until, zone: sheet.zone))
        }
        if let leave = item.facts.leave, !ended {
            notes.append("leave by " + Self.clock(leave.by, zone: sheet.zone) + (leave.estimated ? " (estimated)" : ""))
        }
        if !notes.isEmpty { html += #" <span class="notes">\#(notes.joined(separator: " · "))</span>"# }
        if let progress = item.progress {
            html += #" <progress max="1" value="\#(progress)">\#(Int(progress * 100))%</progress>"#
        }
        if !ended {
            html += #"<span class="actions">"#
            if let join = Self.webAddress(item.facts.joinURL) {
                html += #"<a class="join" href="\#(Self.escape(join))" rel="noreferrer" target="_blank">Join</a>"#
            }
            html += buttons(item.subject, ended: ended, dismissed: item.dismissed) + "</span>"
        }
        return html + "</li>"
    }

    /// Snooze (the last reminder sent, ten minutes) and Dismiss, as forms.
    private func buttons(_ subject: String, ended: Bool, dismissed: Bool) -> String {
        guard !ended, !dismissed else { return "" }
        var html = ""
        if let reminder = snoozable[subject] {
            html +=
                #"<form method="post" action="/v1/answers/snooze"><input type="hidden" name="event" value="\#(reminder)">"#
            html += #"<input type="hidden" name="for" value="10m"><button class="snooze">Snooze 10 min</button></form>"#
        }
        html +=
            #"<form method="post" action="/v1/answers/dismiss"><input type="hidden" name="event" value="\#(Self.escape(subject))">"#
        html += #"<button class="dismiss">Dismiss</button></form>"#
        return html
    }

    // MARK: text

    static func subject(_ occurrence: Occurrence) -> String {
        occurrence.uid + "/" + (occurrence.recurrenceID?.description ?? occurrence.start.description)
    }

    static func countdown(_ item: NextUp.Item) -> String {
        let left = NextUpFormat.countdown(item.seconds)
        switch (item.phase, item.target) {
        case (.live, _): return "\(left) left"
        case (_, .prepareBy): return "Get ready in \(left)"
        case (_, .leaveBy): return "Leave in \(left)"
        default: return item.seconds <= 0 ? "Now" : "In \(left)"
        }
    }

    static func span(_ occurrence: Occurrence, zone: ZoneRules) -> String {
        occurrence.allDay ? "all day" : clock(occurrence.start, zone: zone) + "–" + clock(occurrence.end, zone: zone)
    }

    static func clock(_ instant: Instant, zone: ZoneRules) -> String {
        let wall = zone.wallClock(at: instant)
        return (wall.hour < 10 ? "0" : "") + "\(wall.hour):" + (wall.minute < 10 ? "0" : "") + "\(wall.minute)"
    }

    /// An http(s) address only: a calendar's `javascript:` or `data:` link is no Join button.
    static func webAddress(_ text: String?) -> String? {
        guard let text, text.utf8.count <= 2048 else { return nil }
        let lower = text.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") ? text : nil
    }

    /// Text from a calendar as HTML: the markup characters escaped, and controls, bidirectional overrides and
    /// other invisible format characters left out, scalar by scalar.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x26: escaped.append(contentsOf: "&amp;".unicodeScalars)
            case 0x3C: escaped.append(contentsOf: "&lt;".unicodeScalars)
            case 0x3E: escaped.append(contentsOf: "&gt;".unicodeScalars)
            case 0x22: escaped.append(contentsOf: "&quot;".unicodeScalars)
            case 0x27: escaped.append(contentsOf: "&#39;".unicodeScalars)
            case 0x09, 0x0A, 0x0D: escaped.append(" ")
            case 0x00...0x1F, 0x7F...0x9F, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x206F, 0xFEFF: continue
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    // MARK: assets

    static let style = """
        :root{--bg:#fafafa;--fg:#1f2328;--muted:#656d76;--card:#fff;--line:#d0d7de;--calm:#2da44e;--near:#bf8700;\
        --soon:#d1580c;--now:#cf222e;--live:#8250df}
        @media (prefers-color-scheme: dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--card:#161b22;\
        --line:#30363d;--calm:#3fb950;--near:#d29922;--soon:#f0883e;--now:#f85149;--live:#a371f7}}
        body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,sans-serif}
        main{max-width:44rem;margin:0 auto;padding:1rem}
        .next{background:var(--card);border:1px solid var(--line);border-left:.5rem solid var(--calm);\
        border-radius:.5rem;padding:.75rem 1rem;margin-bottom:1rem}
        .next.near{border-left-color:var(--near)}.next.soon{border-left-color:var(--soon)}
        .next.now{border-left-color:var(--now)}.next.live{border-left-color:var(--live)}
        .next h1{font-size:1.4rem;margin:.1rem 0}.kind,.calendar,.when,.notes{color:var(--muted);font-size:.9rem}
        .kind{margin:0;text-transform:uppercase;letter-spacing:.05em}.countdown{font-size:1.2rem;font-weight:600;margin:.2rem 0}
        .items{list-style:none;padding:0}.item{border-bottom:1px solid var(--line);padding:.5rem 0}
        .item.past{opacity:.55}.item.cancelled .title{text-decoration:line-through}
        .item.conflict .time{color:var(--now);font-weight:600}.item.needs-answer .title::after{content:" ?";color:var(--near)}
        .time{font-variant-numeric:tabular-nums}.actions{display:inline-flex;gap:.5rem;margin-left:.5rem}\
        div.actions{display:flex;margin:.5rem 0 0}
        form{display:inline}button,.join{font:inherit;font-size:.85rem;padding:.15rem .6rem;border-radius:.3rem;\
        border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer;text-decoration:none}
        .join{background:var(--calm);color:#fff;border-color:transparent}progress{width:8rem;vertical-align:middle}
        .days{display:flex;align-items:baseline;justify-content:space-between;gap:1rem}.days a{color:var(--muted)}
        .said{background:var(--card);border:1px solid var(--line);padding:.4rem .75rem;border-radius:.3rem}
        """

    /// Fetches the day again when the stream brings an event (at most every half second) and every 30 s.
    static let script = """
        (function(){
          var main=document.getElementById('day'),timer=null;
          function refresh(){timer=null;var q=new URLSearchParams(location.search);q.delete('answered');q.set('fragment','1');
            fetch('/?'+q.toString(),{credentials:'same-origin'}).then(function(r){return r.ok?r.text():null})
            .then(function(h){if(h!==null){main.innerHTML=h;}});}
          function soon(){if(!timer){timer=setTimeout(refresh,500);}}
          if(window.EventSource){var es=new EventSource('/v1/events');es.onmessage=soon;}
          setInterval(refresh,30000);
        })();
        """
}
