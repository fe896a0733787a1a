public import CalWatchCore

extension FleetDatabase {
    /// An account's tokens as the database keeps them: sealed (`SealedTokens`), with the version a refresh keeps
    /// its tokens over, and who signed in when (nothing secret).
    public struct AccountTokenRow: Sendable, Hashable {
        public var sealed: String
        public var version: Int64
        public var user: String?
        public var signedIn: Timestamp?
        public var saved: Timestamp?
        public var savedBy: String?
    }

    /// Keeps a sign-in's sealed tokens for the account calendar `calendar` (`calwatch fleet sign-in`), over any
    /// kept before; the calendar's `person` becomes the address signed in with when it names nobody.
    public func signIn(_ calendar: String, sealed: String, user: String?, at: Timestamp) throws {
        do {
            try transaction {
                let rows = try connection.execute(
                    "SELECT kind FROM calendars WHERE name = $1 FOR UPDATE", [calendar])
                guard let kind = rows.first?[0] else {
                    throw Failure(
                        description: "the fleet has no calendar named \(calendar); add it first (calwatch fleet add "
                            + "--account NAME --name \(calendar))", isRefusal: true)
                }
                guard kind == "account" else {
                    throw Failure(
                        description: "\(calendar) is a \(kind) calendar, not an account's; only calendars added "
                            + "with --account are signed in to", isRefusal: true)
                }
                try connection.execute(
                    """
                    INSERT INTO fleet_account_tokens (calendar, sealed, version, signed_in_as, signed_in, saved, saved_by)
                    VALUES ($1, $2, 1, $3, to_timestamp($4::double precision), to_timestamp($4::double precision),
                        'sign-in')
                    ON CONFLICT (calendar) DO UPDATE SET sealed = EXCLUDED.sealed,
                        version = fleet_account_tokens.version + 1, signed_in_as = EXCLUDED.signed_in_as,
                        signed_in = EXCLUDED.signed_in, saved = EXCLUDED.saved, saved_by = EXCLUDED.saved_by
                    """, [calendar, sealed, user, Self.seconds(at)])
                if let user {
                    try connection.execute(
                        "UPDATE calendars SET person = $2 WHERE name = $1 AND person IS NULL", [calendar, user])
                }
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// The sealed tokens of `calendar` for `watcher`, which must hold its lease at `at` (only the holder refreshes);
    /// `nil` when nobody signed in to it.
    public func accountTokens(of calendar: String, watcher: String, at: Timestamp) throws -> AccountTokenRow? {
        let rows: [[String?]]
        do {
            rows = try connection.execute(
                """
                SELECT c.watcher = $2 AND c.lease_until > to_timestamp($3::double precision), t.sealed,
                    t.version::text, t.signed_in_as, extract(epoch FROM t.signed_in) * 1000,
                    extract(epoch FROM t.saved) * 1000, t.saved_by
                FROM calendars c LEFT JOIN fleet_account_tokens t ON t.calendar = c.name WHERE c.name = $1
                """, [calendar, watcher, Self.seconds(at)])
        } catch let error as PostgresError {
            throw failure(error)
        }
        guard let row = rows.first else {
            throw Failure(description: "the fleet no longer has a calendar named \(calendar)", isRefusal: true)
        }
        guard row[0] == "t" else {
            throw Failure(
                description: "\(watcher) does not hold the lease of \(calendar) now: only the watcher holding it reads "
                    + "and refreshes its tokens", isRefusal: true)
        }
        return Self.tokenRow(row.dropFirst())
    }

    /// Keeps refreshed tokens over those of `version`: whether they were (not when a sign-in or another refresh
    /// came between: the tokens kept then are the ones that work). The lease is not asked again: a refresh made is
    /// kept, or its rotated refresh token would be lost.
    public func keepAccountTokens(
        of calendar: String, sealed: String, replacing version: Int64, watcher: String, at: Timestamp
    ) throws -> Bool {
        do {
            return try !connection.execute(
                """
                UPDATE fleet_account_tokens SET sealed = $2, version = version + 1,
                    saved = to_timestamp($4::double precision), saved_by = $5
                WHERE calendar = $1 AND version = $3::bigint RETURNING version
                """, [calendar, sealed, String(version), Self.seconds(at), watcher]
            ).isEmpty
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// Who signed in to each account calendar named and when its tokens were last kept, by calendar (for `show`).
    public func accountSignIns(_ calendars: [String]) throws -> [String: AccountTokenRow] {
        do {
            let rows = try connection.execute(
                """
                SELECT calendar, '', version::text, signed_in_as, extract(epoch FROM signed_in) * 1000,
                    extract(epoch FROM saved) * 1000, saved_by
                FROM fleet_account_tokens WHERE calendar = ANY($1::text[])
                """, [Self.array(calendars)])
            var found: [String: AccountTokenRow] = [:]
            for row in rows {
                if let name = row[0], let kept = Self.tokenRow(row.dropFirst()) { found[name] = kept }
            }
            return found
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// sealed, version, signed_in_as, signed_in (ms), saved (ms), saved_by.
    private static func tokenRow(_ columns: ArraySlice<String?>) -> AccountTokenRow? {
        let values = Array(columns)
        guard values.count == 6, let sealed = values[0], let version = values[1].flatMap({ Int64($0) }) else {
            return nil
        }
        func time(_ text: String?) -> Timestamp? {
            text.flatMap(Double.init).map { Timestamp(millisecondsSinceEpoch: Int64($0)) }
        }
        return AccountTokenRow(
            sealed: sealed, version: version, user: values[2], signedIn: time(values[3]), saved: time(values[4]),
            savedBy: values[5])
    }
}
