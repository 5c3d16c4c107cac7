/* The read-only query module (store/query.h) on real recordings: results
 * equal SQLite's own answers, the shortcuts on ingero-top's and Ingero's
 * files, several files as one view with a node column, and the guard: every
 * kind of write, ATTACH, pragmas that set, load_extension, several
 * statements, a query that never ends, a million rows, a huge value; each
 * refused or cut with its message, and the files unchanged byte for byte
 * with nothing created beside them. */
#include "check.h"
#include "report/qout.h"
#include "store/query.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/ig-query.XXXXXX";
static char scen[512], nodes[3][512], dl[512];

static const char *find(const char *rel)
{
	static char p[1024];
	const char *pre[] = {"", "../", "../../", "../../../"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", pre[i], rel);
		if (!access(p, R_OK))
			return p;
	}
	return NULL;
}

static int copy(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	if (!out) {
		if (in)
			fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out);
}

/* The whole file, malloc'd, for before/after comparisons. */
static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long l = ftell(f);
	rewind(f);
	char *b = malloc((size_t)l + 1);
	*n = b && fread(b, 1, (size_t)l, f) == (size_t)l ? (size_t)l : 0;
	fclose(f);
	return b;
}

static int64_t sql_int(const char *path, const char *sql)
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

static int64_t one_int(struct query *q, const char *sql)
{
	char err[512];
	struct query_result *r = NULL;
	int64_t v = -1;
	if (!query_run(q, sql, NULL, NULL, &r, err, sizeof(err)) && r->nrows == 1 && r->ncol >= 1 &&
	    r->cells[0].type == QV_INT)
		v = r->cells[0].i;
	query_result_free(r);
	return v;
}

static int col_of(const struct query_result *r, const char *name)
{
	for (int c = 0; c < r->ncol; c++)
		if (!strcmp(r->cols[c], name))
			return c;
	return -1;
}

static const struct query_cell *cell(const struct query_result *r, uint64_t row, const char *col)
{
	int c = col_of(r, col);
	return c < 0 || row >= r->nrows ? NULL : &r->cells[row * (uint64_t)r->ncol + (uint64_t)c];
}

/* Nearest-rank percentile of the op's durations, from SQLite directly. */
static int64_t exact_pct(const char *path, const char *op, int pct)
{
	char sql[512];
	int64_t n = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id = "
		 "e.op WHERE o.name = '%s' AND e.source IN (1, 4)",
		 op);
	n = sql_int(path, sql);
	int64_t rank = (n * pct + 99) / 100;
	snprintf(sql, sizeof(sql),
		 "SELECT e.duration FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id "
		 "= e.op WHERE o.name = '%s' AND e.source IN (1, 4) ORDER BY e.duration LIMIT 1 "
		 "OFFSET %" PRId64,
		 op, rank - 1);
	return sql_int(path, sql);
}

static void test_single(void)
{
	char err[512];
	const char *p[] = {scen};
	struct query *q = query_open(p, 1, err, sizeof(err));
	CHECKF(q != NULL, "%s", err);
	if (!q)
		return;
	CHECK(one_int(q, "SELECT COUNT(*) FROM events") ==
	      sql_int(scen, "SELECT COUNT(*) FROM events"));
	CHECK(query_has_column(q, "events", "preempt_ns") == 1);
	CHECK(query_has_column(q, "events", "nonesuch") == 0);
	/* table-valued functions work under the guard */
	CHECK(one_int(q, "SELECT COUNT(*) FROM pragma_table_info('events')") ==
	      sql_int(scen, "SELECT COUNT(*) FROM pragma_table_info('events')"));
	CHECK(one_int(q, "SELECT COUNT(*) FROM json_each('[1,2,3]')") == 3);
	CHECK(one_int(q, "SELECT 7; -- a comment after it") == 7);

	/* --ops: calls and exact percentiles of every op */
	char *sql = query_shortcut_sql(q, QS_OPS, NULL);
	struct query_result *r = NULL;
	CHECK(sql && !query_run(q, sql, NULL, NULL, &r, err, sizeof(err)));
	free(sql);
	int seen = 0;
	for (uint64_t i = 0; r && i < r->nrows; i++) {
		/* named as explain names it; the file stores two by short names */
		const char *name = cell(r, i, "op")->s;
		CHECKF(strcmp(name, "cudaStreamSync") && strcmp(name, "cudaDeviceSync"), "%s", name);
		const char *op = !strcmp(name, "cudaStreamSynchronize")	  ? "cudaStreamSync"
				 : !strcmp(name, "cudaDeviceSynchronize") ? "cudaDeviceSync"
									  : name;
		char c[512];
		snprintf(c, sizeof(c),
			 "SELECT COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source AND "
			 "o.op_id = e.op WHERE o.name = '%s' AND e.source IN (1, 4)",
			 op);
		CHECKF(cell(r, i, "calls")->i == sql_int(scen, c), "%s calls", op);
		int64_t p99 = exact_pct(scen, op, 99);
		CHECKF(llabs((int64_t)(cell(r, i, "p99_us")->r * 1000 + 0.5) - p99) <= 50,
		       "%s p99 %g us, exact %" PRId64 " ns", op, cell(r, i, "p99_us")->r, p99);
		seen += !strcmp(op, "cudaLaunchKernel");
	}
	CHECK(seen == 1);
	query_result_free(r);

	/* --slowest by ingero-top's name and by Ingero's give the same rows */
	struct query_result *a = NULL, *b = NULL;
	sql = query_shortcut_sql(q, QS_SLOWEST, "cudaStreamSynchronize");
	CHECK(!query_run(q, sql, "cudaStreamSynchronize", NULL, &a, err, sizeof(err)));
	free(sql);
	sql = query_shortcut_sql(q, QS_SLOWEST, "cudaStreamSync");
	CHECK(!query_run(q, sql, "cudaStreamSync", NULL, &b, err, sizeof(err)));
	free(sql);
	CHECK(a && b && a->nrows == 20 && b->nrows == 20);
	for (uint64_t i = 0; a && b && i < a->nrows && i < b->nrows; i++)
		CHECK(cell(a, i, "dur_us")->r == cell(b, i, "dur_us")->r);
	for (uint64_t i = 1; a && i < a->nrows; i++)
		CHECK(cell(a, i - 1, "dur_us")->r >= cell(a, i, "dur_us")->r);
	query_result_free(a);
	query_result_free(b);

	/* --timeline PID: every event of the process, in time order */
	int64_t pid = sql_int(scen, "SELECT pid FROM events WHERE source = 1 LIMIT 1");
	char ps[32], cnt[128];
	snprintf(ps, sizeof(ps), "%" PRId64, pid);
	snprintf(cnt, sizeof(cnt), "SELECT COUNT(*) FROM events WHERE pid = %" PRId64, pid);
	sql = query_shortcut_sql(q, QS_TIMELINE, ps);
	CHECK(!query_run(q, sql, ps, NULL, &r, err, sizeof(err)));
	free(sql);
	CHECK(r && (int64_t)r->nrows == sql_int(scen, cnt));
	query_result_free(r);

	/* --chains: every recorded chain */
	sql = query_shortcut_sql(q, QS_CHAINS, NULL);
	CHECK(!query_run(q, sql, NULL, NULL, &r, err, sizeof(err)));
	free(sql);
	CHECK(r && (int64_t)r->nrows == sql_int(scen, "SELECT COUNT(*) FROM causal_chains"));
	query_result_free(r);
	query_free(q);
}

struct refusal {
	const char *sql;
	int rc;
	const char *says;
};

static const struct refusal refusals[] = {
    {"INSERT INTO events(timestamp, pid, tid, source, op, duration) VALUES (1, 1, 1, 1, 1, 1)",
     -EPERM, "refused: INSERT into events"},
    {"UPDATE events SET pid = 1", -EPERM, "refused: UPDATE of events"},
    {"DELETE FROM events", -EPERM, "refused: DELETE from events"},
    {"REPLACE INTO schema_info VALUES ('a', 'b')", -EPERM, "refused: INSERT into schema_info"},
    {"DROP TABLE events", -EPERM, "refused: DROP TABLE events"},
    {"CREATE TABLE x(a)", -EPERM, "refused: CREATE TABLE x"},
    {"CREATE TEMP VIEW v AS SELECT 1", -EPERM, "refused: CREATE TEMP VIEW"},
    {"CREATE INDEX i ON events(pid)", -EPERM, "refused: CREATE INDEX i"},
    {"ALTER TABLE events ADD COLUMN z", -EPERM, "refused: ALTER TABLE events"},
    {"ATTACH DATABASE '/tmp/ig-query-evil.db' AS evil", -EPERM, "refused: ATTACH of"},
    {"ATTACH 'file:x?mode=rw' AS w", -EPERM, "refused: ATTACH of"},
    {"DETACH main", -EPERM, "refused: DETACH of main"},
    {"PRAGMA writable_schema = 1", -EPERM, "refused: PRAGMA writable_schema = 1"},
    {"PRAGMA writable_schema", -EPERM, "refused: PRAGMA writable_schema"},
    {"PRAGMA journal_mode = WAL", -EPERM, "refused: PRAGMA journal_mode = WAL"},
    {"PRAGMA query_only = 0", -EPERM, "refused: PRAGMA query_only = 0"},
    {"PRAGMA main.user_version = 3", -EPERM, "refused: PRAGMA user_version = 3"},
    {"SELECT load_extension('/tmp/x.so')", -EPERM, "refused: function load_extension()"},
    {"SELECT fts3_tokenizer('simple')", -EPERM, "refused: function fts3_tokenizer()"},
    {"SELECT 1; DROP TABLE events", -EPERM, "refused: several statements"},
    {"SELECT 1; SELECT 2", -EPERM, "refused: several statements"},
    {"BEGIN", -EPERM, "refused: BEGIN transaction"},
    {"SAVEPOINT a", -EPERM, "refused: BEGIN SAVEPOINT"},
    {"VACUUM", -EPERM, "refused: the statement would write"},
    {"VACUUM INTO '/tmp/ig-query-vacuum.db'", -EPERM, "refused: the statement would write"},
    {"REINDEX", -EPERM, "refused: REINDEX"},
    {"ANALYZE", -EPERM, "refused: ANALYZE"},
    {"   -- only a comment", -EINVAL, "no SQL statement"},
    {"SELEKT 1", -EINVAL, "SQL error: near \"SELEKT\""},
    {"SELECT zeroblob(100000000)", -EINVAL, "string or blob too big"},
};

static void test_guard(void)
{
	char err[512];
	const char *p[] = {scen};
	size_t n0, n1;
	struct stat s0, s1;
	char *before = slurp(scen, &n0);
	CHECK(!stat(scen, &s0));
	struct query *q = query_open(p, 1, err, sizeof(err));
	CHECK(q != NULL);
	for (size_t i = 0; q && i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		struct query_result *r = NULL;
		int rc = query_run(q, refusals[i].sql, NULL, NULL, &r, err, sizeof(err));
		CHECKF(rc == refusals[i].rc && !r && strstr(err, refusals[i].says) &&
			   !strchr(err, '\n'),
		       "%s: rc %d: %s", refusals[i].sql, rc, err);
	}
	/* a query that never ends stops at the time limit */
	struct query_limits lim = {.timeout_s = 0.3};
	struct query_result *r = NULL;
	int rc = query_run(q,
			   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT "
			   "count(*) FROM c",
			   NULL, &lim, &r, err, sizeof(err));
	CHECKF(rc == -ETIMEDOUT && !r && strstr(err, "time limit"), "%d %s", rc, err);
	/* a million rows: cut at the row cap, the rows before it kept */
	lim = (struct query_limits){.max_rows = 1000};
	rc = query_run(
	    q,
	    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) "
	    "SELECT x FROM c",
	    NULL, &lim, &r, err, sizeof(err));
	CHECK(rc == 0 && r && r->cut == QUERY_CUT_ROWS && r->nrows == 1000 &&
	      r->cells[999].i == 1000);
	char msg[256];
	CHECK(r && strstr(qout_cut_msg(msg, sizeof(msg), r), "cut at 1000 rows"));
	query_result_free(r);
	/* the byte cap: 100 values of 64 KiB stop before 1 MiB */
	lim = (struct query_limits){.max_bytes = 1 << 20};
	rc = query_run(q,
		       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100) "
		       "SELECT x, randomblob(65536) FROM c",
		       NULL, &lim, &r, err, sizeof(err));
	CHECK(rc == 0 && r && r->cut == QUERY_CUT_BYTES && r->nrows == 15 &&
	      r->bytes <= (1u << 20));
	query_result_free(r);
	/* after all that the handle still answers */
	CHECK(one_int(q, "SELECT COUNT(*) FROM ops") == sql_int(scen, "SELECT COUNT(*) FROM ops"));
	query_free(q);

	char *after = slurp(scen, &n1);
	CHECK(!stat(scen, &s1));
	CHECK(before && after && n0 == n1 && n0 > 0 && !memcmp(before, after, n0));
	CHECK(s0.st_mtim.tv_sec == s1.st_mtim.tv_sec && s0.st_mtim.tv_nsec == s1.st_mtim.tv_nsec);
	char side[600];
	const char *sfx[] = {"-wal", "-shm", "-journal"};
	for (int i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", scen, sfx[i]);
		CHECKF(access(side, F_OK) != 0, "%s exists", side);
	}
	CHECK(access("/tmp/ig-query-evil.db", F_OK) != 0 &&
	      access("/tmp/ig-query-vacuum.db", F_OK) != 0);
	free(before);
	free(after);
}

static void test_multi(void)
{
	char err[512];
	const char *p[] = {nodes[0], nodes[1], nodes[2]};
	struct query *q = query_open(p, 3, err, sizeof(err));
	CHECKF(q != NULL, "%s", err);
	if (!q)
		return;
	int64_t sum = 0;
	for (int i = 0; i < 3; i++)
		sum += sql_int(nodes[i], "SELECT COUNT(*) FROM events");
	CHECK(one_int(q, "SELECT COUNT(*) FROM events") == sum);
	CHECK(one_int(q, "SELECT COUNT(DISTINCT node) FROM events") == 3);
	CHECK(one_int(q, "SELECT COUNT(DISTINCT _file) FROM sources") == 3);
	CHECK(!strcmp(query_node(q, 1), "gpu-node-02"));
	struct query_result *r = NULL;
	CHECK(!query_run(q, "SELECT node, COUNT(*) AS n FROM events GROUP BY node ORDER BY node",
			 NULL, NULL, &r, err, sizeof(err)));
	CHECK(r && r->nrows == 3 && !strcmp(cell(r, 0, "node")->s, "gpu-node-01") &&
	      cell(r, 0, "n")->i == sql_int(nodes[0], "SELECT COUNT(*) FROM events"));
	query_result_free(r);
	/* the shortcuts name the node; per node the calls equal the file's */
	char *sql = query_shortcut_sql(q, QS_OPS, NULL);
	CHECK(!query_run(q, sql, NULL, NULL, &r, err, sizeof(err)));
	free(sql);
	int64_t calls = 0, want = 0;
	for (uint64_t i = 0; r && i < r->nrows; i++)
		calls += cell(r, i, "calls")->i;
	for (int i = 0; i < 3; i++)
		want += sql_int(nodes[i], "SELECT COUNT(*) FROM events WHERE source IN (1, 4)");
	CHECK(r && col_of(r, "node") == 0 && calls == want);
	query_result_free(r);
	/* the guard holds over the views too */
	/* (a view cannot be written: SQLite says so before the guard is asked) */
	CHECK(query_run(q, "DELETE FROM events", NULL, NULL, &r, err, sizeof(err)) < 0 && !r);
	CHECK(query_run(q, "DELETE FROM main.events", NULL, NULL, &r, err, sizeof(err)) == -EPERM);
	CHECK(query_run(q, "DETACH f1", NULL, NULL, &r, err, sizeof(err)) == -EPERM);
	CHECK(query_run(q, "SELECT * FROM f3.events", NULL, NULL, &r, err, sizeof(err)) == -EINVAL);
	query_free(q);
}

static void test_open_errors(void)
{
	char err[512], p[600], w[620];
	struct query *q;
	snprintf(p, sizeof(p), "%s/text.db", dir);
	FILE *f = fopen(p, "w");
	fputs("not a database at all, just text that is long enough\n", f);
	fclose(f);
	const char *one[] = {p};
	CHECK(!(q = query_open(one, 1, err, sizeof(err))) && strstr(err, "not an SQLite database"));
	snprintf(p, sizeof(p), "%s/missing.db", dir);
	CHECK(!(q = query_open(one, 1, err, sizeof(err))) && strstr(err, "No such file"));
	/* a WAL beside the file: its newest rows are not in the file */
	snprintf(p, sizeof(p), "%s/hot.db", dir);
	copy(scen, p);
	snprintf(w, sizeof(w), "%s-wal", p);
	f = fopen(w, "w");
	fputs("wal bytes", f);
	fclose(f);
	CHECK(!(q = query_open(one, 1, err, sizeof(err))) && strstr(err, "unfinished WAL"));
	unlink(w);
	CHECK((q = query_open(one, 1, err, sizeof(err))) != NULL);
	query_free(q);
	/* Ingero's file: --slowest and --timeline work on its columns */
	const char *ing[] = {dl};
	q = query_open(ing, 1, err, sizeof(err));
	CHECKF(q != NULL, "%s", err);
	char *sql = q ? query_shortcut_sql(q, QS_SLOWEST, "cudaStreamSynchronize") : NULL;
	struct query_result *r = NULL;
	CHECK(sql && !query_run(q, sql, "cudaStreamSynchronize", NULL, &r, err, sizeof(err)));
	CHECKF(r && r->nrows > 0 && col_of(r, "preempted_us") < 0, "%s", err);
	free(sql);
	query_result_free(r);
	query_free(q);
}

int main(void)
{
	const char *s = find("tests/scenarios/cpu-contention.db");
	const char *f[3] = {"tests/fixtures/ingero/sample-gpu-node-01.db",
			    "tests/fixtures/ingero/sample-gpu-node-02.db",
			    "tests/fixtures/ingero/sample-gpu-node-03.db"};
	if (!s || !mkdtemp(dir)) {
		printf("skip: tests/scenarios/cpu-contention.db not found\n");
		return 77;
	}
	snprintf(scen, sizeof(scen), "%s/cpu-contention.db", dir);
	CHECK(!copy(s, scen));
	for (int i = 0; i < 3; i++) {
		snprintf(nodes[i], sizeof(nodes[i]), "%s/node-%d.db", dir, i + 1);
		CHECK(find(f[i]) && !copy(find(f[i]), nodes[i]));
	}
	snprintf(dl, sizeof(dl), "%s/dl.db", dir);
	CHECK(find("tests/fixtures/ingero/pytorch-dataloader-starvation.db") &&
	      !copy(find("tests/fixtures/ingero/pytorch-dataloader-starvation.db"), dl));
	test_single();
	test_guard();
	test_multi();
	test_open_errors();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_done("test_query");
}
