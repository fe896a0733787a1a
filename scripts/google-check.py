#!/usr/bin/env python3
"""Drives calwatch's Google stand-in (scripts/google-server.py) with Google's own client libraries,
google-auth-oauthlib and google-auth, as an installed app uses them: the authorization code flow with PKCE, the
code redeemed with the client secret, a refresh, and the Calendar API read through an AuthorizedSession: the
calendar list, every page of a calendar's events to a sync token, and an incremental read from it. Prints one JSON
object of what each step gave; any step the libraries cannot complete raises.

Usage: google-check.py BASE CLIENT_SECRET   (BASE like http://127.0.0.1:PORT)
"""
import json
import os
import sys

# The stand-in speaks plain http on loopback; oauthlib refuses that unless told.
os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"

import google.auth.transport.requests  # noqa: E402
import requests  # noqa: E402
from google_auth_oauthlib.flow import Flow  # noqa: E402

BASE, SECRET = sys.argv[1], sys.argv[2]
SCOPES = ["https://www.googleapis.com/auth/calendar.readonly"]
config = {"installed": {"client_id": "1234-abc.apps.googleusercontent.com", "client_secret": SECRET,
                        "auth_uri": BASE + "/o/oauth2/v2/auth", "token_uri": BASE + "/token",
                        "redirect_uris": ["http://localhost"]}}
flow = Flow.from_client_config(config, scopes=SCOPES, redirect_uri="http://localhost:8400",
                               autogenerate_code_verifier=True)
address, state = flow.authorization_url(access_type="offline", prompt="consent")
back = requests.get(address, allow_redirects=False, timeout=10).headers["Location"]
flow.fetch_token(authorization_response=back)
credentials = flow.credentials
summary = {"pkce": flow.code_verifier is not None, "refreshToken": credentials.refresh_token is not None}
first = credentials.token
credentials.refresh(google.auth.transport.requests.Request())
summary["refreshed"] = credentials.token != first

session = google.auth.transport.requests.AuthorizedSession(credentials)
calendars = session.get(BASE + "/calendar/v3/users/me/calendarList").json()["items"]
primary = next(calendar for calendar in calendars if calendar.get("primary"))
events, pages, params = [], 0, {"singleEvents": "false", "maxResults": 2, "timeZone": "UTC"}
address = BASE + "/calendar/v3/calendars/" + requests.utils.quote(primary["id"], safe="@") + "/events"
while True:
    page = session.get(address, params=params).json()
    pages += 1
    events += page["items"]
    if "nextPageToken" not in page:
        break
    params = dict(params, pageToken=page["nextPageToken"])
again = session.get(address, params={"singleEvents": "false", "syncToken": page["nextSyncToken"]}).json()
summary["calendar"] = {"calendars": len(calendars), "events": len(events), "pages": pages,
                       "unchanged": len(again["items"]), "syncToken": "nextSyncToken" in again}
print(json.dumps(summary))
