#!/usr/bin/env python3
"""Drives calwatch's Microsoft stand-in (scripts/microsoft-server.py, over TLS) with Microsoft's own client library,
MSAL for Python, and the requests library as Graph's clients use it: the OpenID discovery, the device code flow, the
authorization code flow with PKCE, a refresh, and Graph's calendarView/delta pages to a delta link. Prints one JSON
object of what each step gave; any step MSAL cannot complete raises.

Usage: msal-check.py BASE CLIENT_ID (BASE like https://127.0.0.1:PORT; REQUESTS_CA_BUNDLE names the test's CA).
"""
import json
import sys
import urllib.parse

import msal
import requests

BASE, CLIENT_ID = sys.argv[1], sys.argv[2]
SCOPES = ["Calendars.Read", "User.Read"]
app = msal.PublicClientApplication(
    CLIENT_ID, authority=BASE + "/organizations", validate_authority=False, instance_discovery=False
)
summary = {"msal": msal.__version__}

# The device code flow, the user approving on "another device".
flow = app.initiate_device_flow(scopes=SCOPES)
if "user_code" not in flow:
    raise SystemExit("no device flow: " + json.dumps(flow))
requests.get(BASE + "/devicelogin", params={"otc": flow["user_code"]}, timeout=10).raise_for_status()
result = app.acquire_token_by_device_flow(flow)
if "access_token" not in result:
    raise SystemExit("device flow failed: " + json.dumps(result))
summary["deviceCode"] = {"user": result.get("id_token_claims", {}).get("preferred_username"),
                         "refresh": "refresh_token" in result}

# A refresh with the refresh token the device flow gave.
refreshed = app.acquire_token_by_refresh_token(result["refresh_token"], scopes=SCOPES)
if "access_token" not in refreshed:
    raise SystemExit("refresh failed: " + json.dumps(refreshed))
summary["refresh"] = refreshed["refresh_token"] != result["refresh_token"]

# The authorization code flow with PKCE: the stand-in signs in at once and redirects back with the code.
code_flow = app.initiate_auth_code_flow(SCOPES, redirect_uri="http://localhost:8400")
answer = requests.get(code_flow["auth_uri"], allow_redirects=False, timeout=10)
back = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(answer.headers["Location"]).query))
by_code = app.acquire_token_by_auth_code_flow(code_flow, back)
if "access_token" not in by_code:
    raise SystemExit("auth code flow failed: " + json.dumps(by_code))
summary["authorizationCode"] = {"pkce": code_flow.get("code_verifier") is not None}

# Graph as its clients read it: the calendars, then every page of a delta round.
headers = {"Authorization": "Bearer " + by_code["access_token"], "Prefer": "odata.maxpagesize=2"}
calendars = requests.get(BASE + "/v1.0/me/calendars", headers=headers, timeout=10).json()["value"]
link = BASE + f"/v1.0/me/calendars/{calendars[0]['id']}/calendarView/delta"
params = {"startDateTime": "2026-11-01T00:00:00Z", "endDateTime": "2027-12-01T00:00:00Z"}
pages, events = 0, 0
while True:
    page = requests.get(link, headers=headers, params=params, timeout=10).json()
    params = None
    pages += 1
    events += len(page["value"])
    if "@odata.deltaLink" in page:
        break
    link = page["@odata.nextLink"]
summary["graph"] = {"calendars": len(calendars), "pages": pages, "events": events}
print(json.dumps(summary))
