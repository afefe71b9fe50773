#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
   the statement copies a bound value before the call returns. */
static inline void (*threeds_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
