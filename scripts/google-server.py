#!/usr/bin/env python3
"""A stand-in for Google's OAuth 2.0 endpoints and the Calendar API v3, for calwatch's tests, on loopback. It answers
in the documented shapes:

- OAuth for desktop apps (https://developers.google.com/identity/protocols/oauth2/native-app): the authorization
  page redirecting back with a code (PKCE S256 required), the code redeemed with the client secret, refresh-token
  grants (Google returns no new refresh token), `invalid_grant` "Token has been expired or revoked.", and
  `refresh_token_expires_in` for an application in testing mode (7 days);
- Calendar API v3: calendarList.list, calendars.get (primary), and events.list with singleEvents=false,
  maxResults pages through nextPageToken to a nextSyncToken; with a syncToken, what changed since, deleted events
  as `{"id", "status": "cancelled"}` (with recurringEventId and originalStartTime for an instance); 410
  `fullSyncRequired` for a token it forgot; 403 `rateLimitExceeded`; 401 `authError`.

Usage: google-server.py FOLDER; it prints its port on the first line of standard output. The test drives it
through files in FOLDER, read again at each request:

- `calendars.json`: {"user": "address", "calendars": [{"id", "summary", "primary", "selected", "defaultReminders",
  "events": [Google event, with times in UTC], ...}]};
- `revoked`: every refresh is refused (invalid_grant);
- `testing`: tokens are issued as to an application in testing mode (refresh_token_expires_in 604799);
- `forget-tokens`: the sync tokens issued so far are forgotten (410), once;
- `throttle`: holds N; the next N API requests get 403 rateLimitExceeded;
- `expires-in`: the lifetime in seconds of the access tokens issued from then on (default 3599).

Each request is logged to FOLDER/requests.log as `METHOD PATH STATUS AUTH` (AUTH `bearer` when an Authorization
header came; its value is never written).
"""
import base64
import hashlib
import json
import os
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FOLDER = sys.argv[1]
LOCK = threading.Lock()
CLIENT_SECRET = "GOCSPX-stand-in-secret"
STATE = {"codes": {}, "refresh": set(), "access": set(), "syncs": {}, "pages": {}, "issued": 0}
PARSED = {}


def read_json(name, default):
    path = os.path.join(FOLDER, name)
    try:
        status = os.stat(path)
        kept = PARSED.get(name)
        if kept and kept[:3] == (status.st_ino, status.st_mtime_ns, status.st_size):
            return kept[3]
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
        PARSED[name] = (status.st_ino, status.st_mtime_ns, status.st_size, value)
        return value
    except (OSError, ValueError):
        return default


def exists(name):
    return os.path.exists(os.path.join(FOLDER, name))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def api_error(code, reason, message, domain="global"):
    return {"error": {"errors": [{"domain": domain, "reason": reason, "message": message}], "code": code,
                      "message": message}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        auth = "bearer" if self.headers.get("Authorization") else "-"
        with open(os.path.join(FOLDER, "requests.log"), "a", encoding="utf-8") as log:
            log.write(f"{self.command} {self.path.split('?')[0]} {status} {auth}\n")

    def tokens(self, with_refresh):
        lifetime = int(read_json("expires-in", 3599))
        with LOCK:
            STATE["issued"] += 1
            access = f"ya29.stand-in-{STATE['issued']}-{secrets.token_hex(8)}"
            STATE["access"].add(access)
            body = {"access_token": access, "expires_in": lifetime, "token_type": "Bearer",
                    "scope": "https://www.googleapis.com/auth/calendar.readonly"}
            if with_refresh:
                refresh = f"1//stand-in-{STATE['issued']}-{secrets.token_hex(16)}"
                STATE["refresh"].add(refresh)
                body["refresh_token"] = refresh
                if exists("testing"):
                    body["refresh_token_expires_in"] = 604799
        return body

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/o/oauth2/v2/auth":
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                return self.answer(400, {"error": "invalid_request", "error_description": "code_challenge required"})
            code = "4/0stand-in-" + secrets.token_hex(12)
            with LOCK:
                STATE["codes"][code] = {"challenge": query["code_challenge"], "redirect_uri": query.get("redirect_uri")}
            back = query.get("redirect_uri", "") + "?" + urllib.parse.urlencode(
                {"state": query.get("state", ""), "code": code, "scope": query.get("scope", "")})
            self.send_response(302)
            self.send_header("Location", back)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if url.path.startswith("/calendar/v3/"):
            return self.api(url, query)
        return self.answer(404, api_error(404, "notFound", "Not Found"))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        if urllib.parse.urlsplit(self.path).path != "/token":
            return self.answer(404, {"error": "not_found"})
        # The client may authenticate in the form (client_secret_post) or with HTTP Basic (client_secret_basic).
        basic = self.headers.get("Authorization") or ""
        if basic.startswith("Basic "):
            user, _, password = base64.b64decode(basic[6:]).decode().partition(":")
            form.setdefault("client_id", urllib.parse.unquote_plus(user))
            form.setdefault("client_secret", urllib.parse.unquote_plus(password))
        if form.get("client_secret") != CLIENT_SECRET:
            return self.answer(401, {"error": "invalid_client", "error_description": "Unauthorized"})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            with LOCK:
                code = STATE["codes"].pop(form.get("code", ""), None)
            if code is None or code["redirect_uri"] != form.get("redirect_uri"):
                return self.answer(400, {"error": "invalid_grant", "error_description": "Malformed auth code."})
            if b64url(hashlib.sha256(form.get("code_verifier", "").encode()).digest()) != code["challenge"]:
                return self.answer(400, {"error": "invalid_grant", "error_description": "Invalid code verifier."})
            return self.answer(200, self.tokens(with_refresh=True))
        if grant == "refresh_token":
            with LOCK:
                known = form.get("refresh_token") in STATE["refresh"]
            if exists("revoked") or not known:
                return self.answer(400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
            return self.answer(200, self.tokens(with_refresh=False))
        return self.answer(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type: " + str(grant)})

    def api(self, url, query):
        throttle = int(read_json("throttle", 0))
        if throttle > 0:
            with open(os.path.join(FOLDER, "throttle"), "w", encoding="utf-8") as handle:
                handle.write(str(throttle - 1))
            return self.answer(403, api_error(403, "rateLimitExceeded", "Rate Limit Exceeded", "usageLimits"))
        bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        with LOCK:
            allowed = bearer in STATE["access"]
        if not allowed:
            return self.answer(401, api_error(401, "authError", "Invalid Credentials"))
        data = read_json("calendars.json", {"user": "", "calendars": []})
        parts = [urllib.parse.unquote(part) for part in url.path.strip("/").split("/")]
        if parts == ["calendar", "v3", "users", "me", "calendarList"]:
            items = [dict({key: value for key, value in calendar.items() if key != "events"},
                          kind="calendar#calendarListEntry", accessRole="owner", timeZone="Europe/Berlin")
                     for calendar in data["calendars"]]
            return self.answer(200, {"kind": "calendar#calendarList", "etag": "\"p1\"", "nextSyncToken": "list-1",
                                     "items": items})
        if parts == ["calendar", "v3", "calendars", "primary"]:
            return self.answer(200, {"kind": "calendar#calendar", "id": data["user"], "summary": data["user"],
                                     "timeZone": "Europe/Berlin"})
        if len(parts) == 5 and parts[:3] == ["calendar", "v3", "calendars"] and parts[4] == "events":
            return self.events(data, parts[3], query)
        return self.answer(404, api_error(404, "notFound", "Not Found"))

    def events(self, data, calendar_id, query):
        calendar = next((c for c in data["calendars"] if c["id"] == calendar_id), None)
        if calendar is None:
            return self.answer(404, api_error(404, "notFound", "Not Found"))
        if query.get("singleEvents", "false") != "false":
            return self.answer(400, api_error(400, "invalid", "the stand-in serves singleEvents=false only"))
        size = min(int(query.get("maxResults", 250)), 2500)
        if exists("forget-tokens"):
            os.remove(os.path.join(FOLDER, "forget-tokens"))
            with LOCK:
                STATE["syncs"].clear()
                STATE["pages"].clear()
        with LOCK:
            if "pageToken" in query:
                page = STATE["pages"].pop(query["pageToken"], None)
                if page is None:
                    return self.answer(400, api_error(400, "invalid", "Invalid page token value."))
            else:
                current = {event["id"]: json.dumps(event, sort_keys=True) for event in calendar["events"]}
                if "syncToken" in query:
                    seen = STATE["syncs"].pop(query["syncToken"], None)
                    if seen is None:
                        return self.answer(410, api_error(410, "fullSyncRequired",
                                                          "Sync token is no longer valid, a full sync is required."))
                    items = [json.loads(text) for key, text in current.items() if seen.get(key) != text]
                    for key, text in seen.items():
                        if key not in current:
                            gone = json.loads(text)
                            removed = {"kind": "calendar#event", "etag": "\"0\"", "id": key, "status": "cancelled"}
                            for field in ("recurringEventId", "originalStartTime"):
                                if field in gone:
                                    removed[field] = gone[field]
                            items.append(removed)
                else:
                    # A full sync leaves out deleted series and events, not an instance's cancellation.
                    items = [json.loads(text) for text in current.values()]
                    items = [e for e in items if e.get("status") != "cancelled" or "recurringEventId" in e]
                page = {"items": items, "offset": 0, "snapshot": current}
            chunk = page["items"][page["offset"]:page["offset"] + size]
            page["offset"] += size
            body = {"kind": "calendar#events", "etag": "\"e1\"", "summary": calendar.get("summary"),
                    "timeZone": "UTC", "accessRole": "owner",
                    "defaultReminders": calendar.get("defaultReminders", []), "items": chunk}
            if page["offset"] < len(page["items"]):
                token = "page-" + secrets.token_hex(8)
                STATE["pages"][token] = page
                body["nextPageToken"] = token
            else:
                token = "sync-" + secrets.token_hex(8)
                STATE["syncs"][token] = page["snapshot"]
                body["nextSyncToken"] = token
        return self.answer(200, body)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
