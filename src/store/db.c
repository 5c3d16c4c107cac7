/* SQLite helpers of the store layer. See db.h. */
#include "store/db.h"

#include <errno.h>
#include <string.h>

int db_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int db_step_reset(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int64_t db_query_int(sqlite3 *db, const char *sql, int64_t dflt, int *ok)
{
	sqlite3_stmt *st;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		if (ok)
			*ok = 0;
		return dflt;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE && ok)
		*ok = 0;
	sqlite3_finalize(st);
	return v;
}

int db_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1,
			       &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int db_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int found = 0;
	char *q = sqlite3_mprintf("PRAGMA table_info(%Q)", table);
	if (q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		while (!found && sqlite3_step(st) == SQLITE_ROW) {
			const char *n = (const char *)sqlite3_column_text(st, 1);
			found = n && !strcmp(n, column);
		}
		sqlite3_finalize(st);
	}
	sqlite3_free(q);
	return found;
}

int db_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_TOOBIG:
		return -EFBIG;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EILSEQ;
	default:
		return -EIO;
	}
}
