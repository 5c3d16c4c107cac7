/* Small SQLite helpers shared by the recorder and the replay reader:
 * running a statement, one integer from a query, what a file has, SQLite
 * result codes as -errno, and the guard every statement on a file we did
 * not write runs under (a signal flag and a time limit per step). */
#ifndef IG_DB_H
#define IG_DB_H

#include <sqlite3.h>
#include <stdint.h>

/* sqlite3_exec without callback; returns the SQLite result code. */
int db_exec(sqlite3 *db, const char *sql);
/* Steps st once and resets it: SQLITE_OK for a row or done, else the code. */
int db_step_reset(sqlite3_stmt *st);
/* The first column of the first row of sql, or dflt when there is none or
 * it is NULL. A failure (prepare or step) also gives dflt and clears *ok
 * (ok may be NULL). */
int64_t db_query_int(sqlite3 *db, const char *sql, int64_t dflt, int *ok);
/* 1 when db has the table, or the table has the column. */
int db_has_table(sqlite3 *db, const char *table);
int db_has_column(sqlite3 *db, const char *table, const char *column);
/* An SQLite result code as -errno (-ENOSPC for a full disk, -EIO when
 * nothing closer fits). */
int db_errno(int rc);

/* --- the guard -------------------------------------------------------------------
 * A replayed file may be built to make SQLite work forever (a recursive
 * view, a damaged b-tree). db_guard() installs a progress handler on db
 * that stops the running statement (SQLITE_INTERRUPT) when db_interrupt()
 * was called (from a SIGINT/SIGTERM handler) or when one db_step() has run
 * longer than the step limit. db_step() is sqlite3_step under that limit;
 * every step of the store's readers goes through it. */
void db_guard(sqlite3 *db);
int db_step(sqlite3_stmt *st);
/* Async-signal-safe: sets the flag every guarded statement checks. */
void db_interrupt(void);
/* Clears the flag (tests, and a viewer that goes on after a cancelled
 * query). */
void db_interrupt_clear(void);
int db_interrupted(void);
/* Longest time one db_step() may run, in ms (0 = the default, 20 s).
 * Process-wide; the fuzzing harness lowers it. */
void db_set_step_limit_ms(unsigned ms);
unsigned db_step_limit_ms(void);
/* fn(ctx) runs at every call of the progress handler, in the middle of a
 * statement: tests raise the interrupt flag there to see a running
 * statement stop. NULL = none. */
void db_set_progress_hook(void (*fn)(void *ctx), void *ctx);
/* Why a guarded statement failed: "interrupted", "a query ran longer than
 * N s", or SQLite's message for db. Static or owned by db. */
const char *db_errmsg(sqlite3 *db, int rc);

#endif
