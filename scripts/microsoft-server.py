#!/usr/bin/env python3
"""A stand-in for the Microsoft identity platform (v2.0 endpoints) and Microsoft Graph's calendars, for calwatch's
tests, on loopback. It answers in the documented shapes:

- identity: https://learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code (devicecode, token polling:
  authorization_pending, expired_token), v2-oauth2-auth-code-flow (authorize with PKCE S256, the code redeemed),
  refresh-token grants (every refresh rotates the refresh token; the one used stops working, stricter than the
  service so that a rotated token never saved shows), and the OpenID discovery document MSAL reads first;
- Graph: GET /v1.0/me, /v1.0/me/calendars, and /v1.0/me/calendars/{id}/calendarView/delta with startDateTime and
  endDateTime, `Prefer: odata.maxpagesize` pages through @odata.nextLink to an @odata.deltaLink, deleted events as
  `{"id": ..., "@removed": {"reason": "deleted"}}`, and 410 `syncStateNotFound` for a delta token it forgot;
  errors as Graph's `{"error": {"code", "message"}}`.

Usage: microsoft-server.py FOLDER [--tls CERT KEY]; it prints its port on the first line of standard output.
The test drives it through files in FOLDER, read again at each request:

- `calendars.json`: {"user": {...}, "calendars": [{"id", "name", "events": [Graph event, ...]}]};
- `revoked`: every refresh token is refused (invalid_grant, AADSTS50173, as after a password change);
- `forget-deltas`: the delta tokens issued so far are forgotten (410 syncStateNotFound), once;
- `throttle`: holds a number N; the next N Graph requests get 429 with Retry-After: 1;
- `expires-in`: the lifetime in seconds of the access tokens issued from then on (default 3600);
- `delay`: seconds each calendarView/delta answer waits; FOLDER/most-at-once then holds the most answered at once.

Each request is logged to FOLDER/requests.log as `METHOD PATH STATUS AUTH`, where AUTH is `bearer` when an
Authorization header came (its value is never written). Device codes are approved when FOLDER/approve exists or
when someone opens /devicelogin?otc=USER_CODE.
"""
import base64
import hashlib
import json
import os
import secrets
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FOLDER = sys.argv[1]
LOCK = threading.Lock()
STATE = {
    "device": {},  # device_code -> {"user_code", "approved", "client_id", "polls"}
    "codes": {},  # authorization code -> {"challenge", "redirect_uri", "client_id"}
    "refresh": set(),  # refresh tokens that work
    "access": set(),  # access tokens that work
    "deltas": {},  # delta token -> {"calendar", "start", "end", "seen": {id: json}}
    "pages": {},  # skip token -> {"calendar", "items", "offset", "start", "end", "snapshot", "size"}
    "issued": 0,
    "in_flight": 0,  # calendarView/delta requests being answered now
    "most": 0,  # the most of them at once
}


def path_in_folder(name):
    return os.path.join(FOLDER, name)


PARSED = {}  # name -> (inode, mtime_ns, size, value): a big calendars.json is parsed once per change, not per page


def read_json(name, default):
    try:
        status = os.stat(path_in_folder(name))
        kept = PARSED.get(name)
        if kept and kept[:3] == (status.st_ino, status.st_mtime_ns, status.st_size):
            return kept[3]
        with open(path_in_folder(name), encoding="utf-8") as handle:
            value = json.load(handle)
        PARSED[name] = (status.st_ino, status.st_mtime_ns, status.st_size, value)
        return value
    except (OSError, ValueError):
        return default


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def id_token(client_id, user, tenant, nonce=None):
    header = b64url(json.dumps({"typ": "JWT", "alg": "none"}).encode())
    claims = {
        "aud": client_id,
        "iss": f"https://login.microsoftonline.com/{tenant}/v2.0",
        "iat": 1700000000,
        "nbf": 1700000000,
        "exp": 4102444800,
        "name": user.get("displayName", ""),
        "oid": user.get("id", "00000000-0000-0000-0000-000000000001"),
        "preferred_username": user.get("userPrincipalName", ""),
        "sub": "stand-in-subject",
        "tid": "00000000-0000-0000-0000-0000000000aa",
        "ver": "2.0",
    }
    if nonce:
        claims["nonce"] = nonce
    return header + "." + b64url(json.dumps(claims).encode()) + "."


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def base(self):
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_port}"

    def answer(self, status, body, headers=None):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        auth = "bearer" if self.headers.get("Authorization") else "-"
        with open(path_in_folder("requests.log"), "a", encoding="utf-8") as log:
            log.write(f"{self.command} {self.path.split('?')[0]} {status} {auth}\n")

    def identity_error(self, status, error, code, description):
        self.answer(
            status,
            {
                "error": error,
                "error_description": f"AADSTS{code}: {description}\r\nTrace ID: 0000\r\nCorrelation ID: 0000",
                "error_codes": [code],
                "timestamp": "2026-11-29 10:00:00Z",
                "trace_id": "0000",
                "correlation_id": "0000",
            },
        )

    def graph_error(self, status, code, message, headers=None):
        self.answer(status, {"error": {"code": code, "message": message}}, headers)

    # Identity ---------------------------------------------------------------------------------------------------

    def tokens(self, client_id, tenant, nonce=None):
        lifetime = int(read_json("expires-in", 3600))
        with LOCK:
            STATE["issued"] += 1
            access = f"at-{STATE['issued']}-{secrets.token_hex(8)}"
            refresh = f"rt-{STATE['issued']}-{secrets.token_hex(16)}"
            STATE["access"].add(access)
            STATE["refresh"].add(refresh)
        user = read_json("calendars.json", {}).get("user", {})
        client_info = b64url(json.dumps({"uid": user.get("id", "1"), "utid": "aa"}).encode())
        return {
            "token_type": "Bearer",
            "scope": "Calendars.Read User.Read openid profile offline_access",
            "expires_in": lifetime,
            "ext_expires_in": lifetime,
            "access_token": access,
            "refresh_token": refresh,
            "id_token": id_token(client_id, user, tenant, nonce),
            "client_info": client_info,
        }

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        parts = url.path.strip("/").split("/")
        if len(parts) == 4 and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            tenant = parts[0]
            base = self.base() + "/" + tenant
            return self.answer(
                200,
                {
                    "authorization_endpoint": base + "/oauth2/v2.0/authorize",
                    "token_endpoint": base + "/oauth2/v2.0/token",
                    "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode",
                    "end_session_endpoint": base + "/oauth2/v2.0/logout",
                    "issuer": f"https://login.microsoftonline.com/{tenant}/v2.0",
                    "jwks_uri": base + "/discovery/v2.0/keys",
                    "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
                    "scopes_supported": ["openid", "profile", "email", "offline_access"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                },
            )
        if len(parts) == 4 and parts[1:] == ["oauth2", "v2.0", "authorize"]:
            # The user signs in and consents at once: redirected back with a code and the state.
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                return self.identity_error(400, "invalid_request", 50011, "PKCE with S256 is required.")
            code = "code-" + secrets.token_hex(12)
            with LOCK:
                STATE["codes"][code] = {
                    "challenge": query["code_challenge"],
                    "redirect_uri": query.get("redirect_uri", ""),
                    "client_id": query.get("client_id", ""),
                    "nonce": query.get("nonce"),
                }
            back = query.get("redirect_uri", "") + "?" + urllib.parse.urlencode(
                {"code": code, "state": query.get("state", ""), "session_state": "stand-in"}
            )
            self.send_response(302)
            self.send_header("Location", back)
            self.send_header("Content-Length", "0")
            self.end_headers()
            with open(path_in_folder("requests.log"), "a", encoding="utf-8") as log:
                log.write(f"GET {url.path} 302 -\n")
            return None
        if url.path == "/devicelogin":
            with LOCK:
                for device in STATE["device"].values():
                    if device["user_code"] == query.get("otc"):
                        device["approved"] = True
                        return self.answer(200, b'{"signedIn": true}')
            return self.answer(404, b'{"signedIn": false}')
        if url.path.startswith("/v1.0/"):
            return self.graph(url, query)
        return self.answer(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        if len(parts) != 4 or parts[1:3] != ["oauth2", "v2.0"]:
            return self.answer(404, {"error": "not found"})
        tenant, endpoint = parts[0], parts[3]
        client_id = form.get("client_id", "")
        if endpoint == "devicecode":
            if tenant == "consumers-blocked":
                return self.identity_error(
                    400, "invalid_grant", 53003, "Access has been blocked by Conditional Access policies. The access policy does not allow token issuance."
                )
            device_code = "dc-" + secrets.token_hex(16)
            user_code = secrets.choice("BCDFGHJKLMNPQRSTVWXZ") * 4 + "-" + secrets.token_hex(2).upper()
            with LOCK:
                STATE["device"][device_code] = {"user_code": user_code, "approved": False, "client_id": client_id}
            return self.answer(
                200,
                {
                    "device_code": device_code,
                    "user_code": user_code,
                    "verification_uri": self.base() + "/devicelogin",
                    "expires_in": 900,
                    "interval": 1,
                    "message": f"To sign in, use a web browser to open the page {self.base()}/devicelogin and "
                    f"enter the code {user_code} to authenticate.",
                },
            )
        if endpoint != "token":
            return self.answer(404, {"error": "not found"})
        grant = form.get("grant_type")
        if grant in ("urn:ietf:params:oauth:grant-type:device_code", "device_code"):
            with LOCK:
                device = STATE["device"].get(form.get("device_code", ""))
                approved = device is not None and (device["approved"] or os.path.exists(path_in_folder("approve")))
                if approved:
                    del STATE["device"][form["device_code"]]
            if device is None:
                return self.identity_error(400, "expired_token", 70020, "The provided value for device_code expired.")
            if not approved:
                return self.identity_error(
                    400, "authorization_pending", 70016, "OAuth 2.0 device flow error. Authorization is pending."
                )
            return self.answer(200, self.tokens(client_id, tenant))
        if grant == "authorization_code":
            with LOCK:
                code = STATE["codes"].pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            if code is None or code["redirect_uri"] != form.get("redirect_uri"):
                return self.identity_error(400, "invalid_grant", 70008, "The provided authorization code is invalid.")
            if b64url(hashlib.sha256(verifier.encode()).digest()) != code["challenge"]:
                return self.identity_error(
                    400, "invalid_grant", 501481, "The Code_Verifier does not match the code_challenge."
                )
            return self.answer(200, self.tokens(client_id, tenant, code.get("nonce")))
        if grant == "refresh_token":
            token = form.get("refresh_token", "")
            if os.path.exists(path_in_folder("revoked")):
                return self.identity_error(
                    400,
                    "invalid_grant",
                    50173,
                    "The provided grant has expired due to it being revoked, a fresh auth token is needed. "
                    "The user might have changed or reset their password.",
                )
            with LOCK:
                known = token in STATE["refresh"]
                STATE["refresh"].discard(token)
            if not known:
                return self.identity_error(400, "invalid_grant", 70000, "The provided grant is invalid or malformed.")
            return self.answer(200, self.tokens(client_id, tenant))
        return self.identity_error(400, "unsupported_grant_type", 70003, "The grant type is not supported.")

    # Graph --------------------------------------------------------------------------------------------------------

    def graph(self, url, query):
        throttle = int(read_json("throttle", 0))
        if throttle > 0:
            with open(path_in_folder("throttle"), "w", encoding="utf-8") as handle:
                handle.write(str(throttle - 1))
            return self.graph_error(
                429, "TooManyRequests", "Please retry after 1 seconds.", {"Retry-After": "1"}
            )
        bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        with LOCK:
            allowed = bearer in STATE["access"]
        if not allowed:
            return self.graph_error(401, "InvalidAuthenticationToken", "Access token is empty or expired.")
        if "/calendarView/delta" in url.path and os.path.exists(path_in_folder("delay")):
            with LOCK:
                STATE["in_flight"] += 1
                STATE["most"] = most = max(STATE["most"], STATE["in_flight"])
            with open(path_in_folder("most-at-once"), "w", encoding="utf-8") as handle:
                handle.write(str(most))
            time.sleep(float(read_json("delay", 0)))
            with LOCK:
                STATE["in_flight"] -= 1
        data = read_json("calendars.json", {"user": {}, "calendars": []})
        parts = url.path.strip("/").split("/")
        if parts == ["v1.0", "me"]:
            return self.answer(200, dict(data.get("user", {}), **{"@odata.context": self.base() + "/v1.0/$metadata#users/$entity"}))
        if parts == ["v1.0", "me", "calendars"]:
            calendars = [
                {key: value for key, value in calendar.items() if key != "events"} for calendar in data["calendars"]
            ]
            return self.answer(200, {"@odata.context": self.base() + "/v1.0/$metadata#me/calendars", "value": calendars})
        if len(parts) == 6 and parts[:3] == ["v1.0", "me", "calendars"] and parts[4:] == ["calendarView", "delta"]:
            return self.delta(data, parts[3], query)
        return self.graph_error(404, "ResourceNotFound", "Resource not found for the segment.")

    def delta(self, data, calendar_id, query):
        calendar = next((c for c in data["calendars"] if c["id"] == calendar_id), None)
        if calendar is None:
            return self.graph_error(404, "ErrorItemNotFound", "The specified object was not found in the store.")
        prefer = self.headers.get("Prefer") or ""
        size = 10
        for part in prefer.split(","):
            if part.strip().startswith("odata.maxpagesize="):
                size = int(part.strip().split("=")[1])
        if os.path.exists(path_in_folder("forget-deltas")):
            os.remove(path_in_folder("forget-deltas"))
            with LOCK:
                STATE["deltas"].clear()
                STATE["pages"].clear()
        link = self.base() + f"/v1.0/me/calendars/{calendar_id}/calendarView/delta"
        with LOCK:
            if "$skiptoken" in query:
                page = STATE["pages"].pop(query["$skiptoken"], None)
                if page is None:
                    return self.graph_error(410, "syncStateNotFound", "The sync state generation is not found.")
            else:
                if "$deltatoken" in query:
                    before = STATE["deltas"].pop(query["$deltatoken"], None)
                    if before is None:
                        return self.graph_error(410, "syncStateNotFound", "The sync state generation is not found.")
                    start, end, seen = before["start"], before["end"], before["seen"]
                else:
                    start, end, seen = query.get("startDateTime"), query.get("endDateTime"), {}
                    if not start or not end:
                        return self.graph_error(
                            400, "ErrorInvalidParameter", "This request requires a time window specified by the "
                            "query string parameters StartDateTime and EndDateTime."
                        )
                now = {}
                for event in calendar["events"]:
                    if event["start"]["dateTime"][:19] < end[:19] and event["end"]["dateTime"][:19] > start[:19]:
                        now[event["id"]] = json.dumps(event, sort_keys=True)
                items = [json.loads(text) for key, text in now.items() if seen.get(key) != text]
                items += [{"@odata.type": "#microsoft.graph.event", "id": key, "@removed": {"reason": "deleted"}}
                          for key in seen if key not in now]
                page = {"calendar": calendar_id, "items": items, "offset": 0, "start": start, "end": end,
                        "snapshot": now}
            chunk = page["items"][page["offset"]:page["offset"] + size]
            page["offset"] += size
            body = {"@odata.context": self.base() + "/v1.0/$metadata#Collection(event)", "value": chunk}
            if page["offset"] < len(page["items"]):
                token = "skip-" + secrets.token_hex(8)
                STATE["pages"][token] = page
                body["@odata.nextLink"] = link + "?$skiptoken=" + token
            else:
                token = "delta-" + secrets.token_hex(8)
                STATE["deltas"][token] = {"start": page["start"], "end": page["end"], "seen": page["snapshot"]}
                body["@odata.deltaLink"] = link + "?$deltatoken=" + token
        return self.answer(200, body, {"Preference-Applied": f"odata.maxpagesize={size}"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if len(sys.argv) >= 5 and sys.argv[2] == "--tls":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
