/* Small SQLite helpers shared by the recorder and the replay reader:
 * running a statement, one integer from a query, what a file has, SQLite
 * result codes as -errno. */
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

#endif
