/* What a query result may hold and what a refusal says (store/query.h,
 * report/qout.h): the byte cap counts the memory the rows take (16 bytes
 * a value plus its text), so values that cost nothing by their length (an
 * integer, an empty string) still fill it; the table-valued pragmas that
 * are not allowed are named in the refusal ("refused: SELECT * FROM:"
 * named nothing), and those that only report are usable; the JSON output,
 * written a row at a time, is byte for byte the tree of qout_json. */
#include "check.h"
#include "core/json.h"
#include "report/qout.h"
#include "store/query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define MANY "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) "

/* Runs sql with a 1 MiB byte cap and no row cap to speak of. */
static struct query_result *capped(struct query *q, const char *sql)
{
	struct query_limits lim = {.max_rows = 100000000, .max_bytes = 1 << 20};
	struct query_result *r = NULL;
	char err[512];
	int rc = query_run(q, sql, NULL, &lim, &r, err, sizeof(err));
	CHECKF(rc == 0 && r, "%s: %d %s", sql, rc, err);
	return r;
}

static void test_bytes(struct query *q)
{
	const uint64_t cap = 1 << 20, cell = sizeof(struct query_cell);
	CHECK(cell == 16);
	/* integers: 16 bytes each, so 65536 of them in 1 MiB (the 8 bytes of
	 * their values let 131072 in, and ten times that in memory) */
	struct query_result *r = capped(q, MANY "SELECT x FROM c");
	CHECKF(r && r->cut == QUERY_CUT_BYTES && r->nrows == cap / cell && r->bytes == cap,
	       "%llu rows, %llu bytes", r ? (unsigned long long)r->nrows : 0,
	       r ? (unsigned long long)r->bytes : 0);
	CHECK(r && r->nrows && r->cells[r->nrows - 1].i == (int64_t)r->nrows);
	query_result_free(r);
	/* empty strings: 17 bytes each (the cell and a NUL); they counted 0 */
	r = capped(q, MANY "SELECT '' FROM c");
	CHECKF(r && r->cut == QUERY_CUT_BYTES && r->nrows == cap / (cell + 1), "%llu rows",
	       r ? (unsigned long long)r->nrows : 0);
	query_result_free(r);
	/* two columns of short text and a NULL */
	r = capped(q, MANY "SELECT 'cudaLaunchKernel', x, NULL FROM c");
	uint64_t row = 3 * cell + 17;
	CHECKF(r && r->cut == QUERY_CUT_BYTES && r->nrows == cap / row && r->bytes <= cap,
	       "%llu rows", r ? (unsigned long long)r->nrows : 0);
	CHECK(r && r->nrows > 1 && r->cells[3].type == QV_TEXT && r->cells[3].n == 16 &&
	      !strcmp(r->cells[3].s, "cudaLaunchKernel") && r->cells[4].i == 2 &&
	      r->cells[5].type == QV_NULL);
	query_result_free(r);
}

static const struct {
	const char *sql, *says;
} vt_refusals[] = {
    {"SELECT * FROM pragma_journal_mode('wal')",
     "refused: pragma_journal_mode(): journal_mode is not one of the pragmas a query may use"},
    {"SELECT * FROM pragma_journal_mode", "refused: pragma_journal_mode(): journal_mode"},
    {"SELECT * FROM main.pragma_writable_schema", "refused: pragma_writable_schema(): "},
    {"SELECT 'pragma_journal_mode', x.* FROM events, \"pragma_cache_size\" AS x",
     "refused: pragma_cache_size(): cache_size"},
    {"select 1 from events, /* pragma_foo */ pragma_integrity_check",
     "refused: pragma_integrity_check(): integrity_check"},
};

static void test_refusals(struct query *q)
{
	char err[512];
	for (size_t i = 0; i < sizeof(vt_refusals) / sizeof(vt_refusals[0]); i++) {
		struct query_result *r = NULL;
		int rc = query_run(q, vt_refusals[i].sql, NULL, NULL, &r, err, sizeof(err));
		CHECKF(rc == -EPERM && !r && strstr(err, vt_refusals[i].says) &&
			   !strstr(err, "FROM:") && !strchr(err, '\n'),
		       "%s: %d %s", vt_refusals[i].sql, rc, err);
		query_result_free(r);
	}
	/* the pragmas that only report, as table-valued functions too */
	const char *ok[] = {"SELECT * FROM pragma_page_count", "SELECT * FROM pragma_user_version",
			    "SELECT name FROM pragma_table_info('events')"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct query_result *r = NULL;
		int rc = query_run(q, ok[i], NULL, NULL, &r, err, sizeof(err));
		CHECKF(rc == 0 && r && r->nrows >= 1, "%s: %d %s", ok[i], rc, err);
		query_result_free(r);
	}
}

/* qout_write's JSON equals qout_json's tree written at once. */
static void test_json(struct query *q)
{
	const char *sql[] = {
	    "SELECT * FROM events LIMIT 300",
	    "SELECT x'00ff10', NULL, 1.5, -3, 'a,b\"c', char(27) || 'x', char(8232)",
	    "SELECT * FROM process_names",
	    MANY "SELECT x, 'v' || x FROM c",
	    "SELECT 1 WHERE 0",
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		struct query_limits lim = {.max_rows = 5000};
		struct query_result *r = NULL;
		char err[512], *got = NULL, *want = NULL;
		size_t ng = 0;
		CHECKF(query_run(q, sql[i], NULL, &lim, &r, err, sizeof(err)) == 0, "%s", err);
		if (!r)
			continue;
		FILE *f = open_memstream(&got, &ng);
		CHECK(f && qout_write(f, r, QOUT_JSON) == 0);
		if (f)
			fclose(f);
		json_t *o = qout_json(r, NULL);
		char *w = o ? ig_json_dumps(o) : NULL;
		if (w && asprintf(&want, "%s\n", w) < 0)
			want = NULL;
		CHECKF(got && want && !strcmp(got, want), "%s:\n%.300s\n%.300s", sql[i],
		       got ? got : "", want ? want : "");
		json_decref(o);
		free(w);
		free(want);
		free(got);
		query_result_free(r);
	}
}

int main(void)
{
	const char *path = find("tests/scenarios/memcpy.db");
	char err[512];
	struct query *q = path ? query_open(&path, 1, err, sizeof(err)) : NULL;
	CHECKF(q != NULL, "%s", path ? err : "tests/scenarios/memcpy.db not found");
	if (q) {
		test_bytes(q);
		test_refusals(q);
		test_json(q);
	}
	query_free(q);
	return check_done("test_query_caps");
}
