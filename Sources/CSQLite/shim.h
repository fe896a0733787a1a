#include <sqlite3.h>

/// Turns off SQLite's allocation statistics, which take one process-wide mutex on every allocation: with the
/// journal and a SQLite sink writing on two threads, that lock was a tenth of the time. `sqlite3_config` is
/// variadic, which Swift cannot call, hence this wrapper. Must run before the first connection is opened.
static inline int calwatch_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
