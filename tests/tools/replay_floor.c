/* What SQLite alone costs a replay, for tests/bench/bench_replay.sh: the
 * events of an ingero-top recording read as the replay reads them (the
 * file through the read-only VFS, the same query in end order, every row
 * decoded by recfmt_event_read into a struct ig_event), with no model, no
 * detector and no output. The replay's events per CPU second cannot
 * exceed this one's.
 *
 *   replay_floor FILE      prints "rows N cpu_s S"
 */
#include "store/recfmt.h"
#include "store/rofile.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "core/event.h"
#include "store/db.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: replay_floor FILE\n");
		return 2;
	}
	double t0 = cpu_s();
	struct rofile *ro;
	char why[256];
	sqlite3 *db = NULL;
	if (rofile_open(argv[1], &ro, why, sizeof(why))) {
		fprintf(stderr, "replay_floor: %s: %s\n", argv[1], why);
		return 1;
	}
	if (sqlite3_open_v2(rofile_db_name(ro), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    rofile_vfs()) != SQLITE_OK) {
		fprintf(stderr, "replay_floor: %s: cannot open\n", argv[1]);
		return 1;
	}
	db_exec(db, "PRAGMA cell_size_check=ON");
	const char *sql = recfmt_event_select_sql(db_has_column(db, "events", "arg2"),
						  db_has_column(db, "events", "detail"));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "replay_floor: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	sqlite3_bind_int64(st, 1, INT64_MIN);
	uint64_t rows = 0, sum = 0;
	int rc;
	while ((rc = db_step(st)) == SQLITE_ROW) {
		struct ig_event e;
		int64_t src, op;
		const char *node, *detail;
		if (!recfmt_event_read(st, &e, &src, &op, &node, &detail, INT64_MAX))
			sum += e.dur_ns; /* used, so the decoding is not optimised away */
		rows++;
	}
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "replay_floor: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	printf("rows %llu cpu_s %.3f (%llu)\n", (unsigned long long)rows, cpu_s() - t0,
	       (unsigned long long)(sum & 1));
	return 0;
}
