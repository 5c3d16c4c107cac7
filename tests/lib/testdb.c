/* Files for the replay tests (testdb.h). */
#include "testdb.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int testdb_find(char *out, size_t len, const char *rel)
{
	const char *up[] = {"", "../", "../../", "../../../"};
	for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		snprintf(out, len, "%s%s", up[i], rel);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

int testdb_copy(const char *from, const char *to)
{
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd);
}

int testdb_run(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: %s: %s\n", path, sql, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
	return rc;
}

int64_t testdb_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}
