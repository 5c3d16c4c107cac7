/* SQLite helpers of the store layer. See db.h. */
#include "store/db.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DB_STEP_LIMIT_MS_DEFAULT 20000u
/* VM instructions between two looks at the flag and the clock: a few
 * microseconds of work, so a stop takes effect at once. */
#define DB_PROGRESS_OPS 4096

static volatile sig_atomic_t interrupted;
static unsigned step_limit_ms = DB_STEP_LIMIT_MS_DEFAULT;
/* The running db_step of this thread: armed while it runs; its deadline,
 * taken by the handler at its first call (so a step that returns quickly
 * never reads the clock); whether the handler stopped it for time. */
static __thread int armed;
static __thread uint64_t deadline_ms;
static __thread int timed_out;

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void (*progress_hook)(void *ctx);
static void *progress_hook_ctx;

void db_set_progress_hook(void (*fn)(void *ctx), void *ctx)
{
	progress_hook = fn;
	progress_hook_ctx = ctx;
}

static int progress(void *ctx)
{
	if (progress_hook)
		progress_hook(progress_hook_ctx);
	if (interrupted)
		return 1;
	if (!armed)
		return 0;
	uint64_t now = mono_ms();
	if (!deadline_ms)
		deadline_ms = now + step_limit_ms;
	if (now > deadline_ms) {
		timed_out = 1;
		return 1;
	}
	return 0;
}

void db_guard(sqlite3 *db)
{
	sqlite3_progress_handler(db, DB_PROGRESS_OPS, progress, NULL);
}

int db_step(sqlite3_stmt *st)
{
	if (interrupted)
		return SQLITE_INTERRUPT;
	int outer = !armed;
	if (outer) {
		armed = 1;
		deadline_ms = 0;
		timed_out = 0;
	}
	int rc = sqlite3_step(st);
	if (outer)
		armed = 0;
	return rc;
}

void db_interrupt(void)
{
	interrupted = 1;
}

void db_interrupt_clear(void)
{
	interrupted = 0;
}

int db_interrupted(void)
{
	return interrupted != 0;
}

void db_set_step_limit_ms(unsigned ms)
{
	step_limit_ms = ms ? ms : DB_STEP_LIMIT_MS_DEFAULT;
}

unsigned db_step_limit_ms(void)
{
	return step_limit_ms;
}

const char *db_errmsg(sqlite3 *db, int rc)
{
	static __thread char buf[96];
	if (interrupted) /* whatever failed, the user asked to stop */
		return "interrupted";
	if ((rc & 0xff) == SQLITE_INTERRUPT) {
		if (timed_out) {
			snprintf(buf, sizeof(buf),
				 "a query ran longer than %.0f s (a damaged or hostile file?)",
				 step_limit_ms / 1000.0);
			return buf;
		}
	}
	return db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

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
	int rc = db_step(st);
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
	found = db_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int db_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int found = 0;
	char *q = sqlite3_mprintf("PRAGMA table_info(%Q)", table);
	if (q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		while (!found && db_step(st) == SQLITE_ROW) {
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
	case SQLITE_INTERRUPT:
		return -EINTR;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EILSEQ;
	default:
		return -EIO;
	}
}
