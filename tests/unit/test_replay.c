/* Replay of the Ingero fixtures in tests/fixtures/ingero: per-op counts equal
 * SQL counts on the files, p50/p99 through the histograms are within 1 % of
 * exact percentiles, the stream is ordered, nodes are named, files are never
 * touched; and a mutation test: corrupted copies give a clear error or a
 * clean replay, never a crash (tests/integration/test_replay_fixtures.sh
 * also runs this under ASan/UBSan). */
#include "check.h"
#include "core/hist.h"
#include "core/ops.h"
#include "store/rec.h"
#include "store/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char traces[4096];
static char tmpdir[256];

static const char *fixtures[] = {"pytorch-dataloader-starvation.db", "sample-cluster.db",
				 "sample-gpu-node-01.db", "sample-gpu-node-02.db",
				 "sample-gpu-node-03.db"};
#define NFIX (int)(sizeof(fixtures) / sizeof(fixtures[0]))

static void find_traces(void)
{
	const char *env = getenv("IG_TRACES");
	/* the repository's copies, from the checkout root or a build directory */
	const char *cands[] = {env, "tests/fixtures/ingero", "../tests/fixtures/ingero",
			       "../../tests/fixtures/ingero", "../../../tests/fixtures/ingero"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (!cands[i])
			continue;
		char p[4200];
		snprintf(p, sizeof(p), "%s/%s", cands[i], fixtures[0]);
		if (access(p, R_OK) == 0) {
			snprintf(traces, sizeof(traces), "%s", cands[i]);
			return;
		}
	}
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	if (!in || !out) {
		if (in)
			fclose(in);
		return -1;
	}
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	*len = fread(b, 1, (size_t)n, f);
	fclose(f);
	return b;
}

static sqlite3 *open_ro(const char *path)
{
	char uri[4300];
	snprintf(uri, sizeof(uri), "file:%s?immutable=1", path);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* --- collecting a replay ------------------------------------------------- */

#define MAXKEY 64

struct opcount {
	int src;
	char name[48];
	uint64_t n;
	struct hist h;
	uint64_t *durs;
	size_t ndurs, cap;
};

struct collect {
	struct opcount ops[MAXKEY];
	int nops;
	uint64_t by_kind[IG_EV_KIND_MAX];
	uint64_t events;
	uint64_t last_key;
	int ordered;
	uint64_t page_bytes;
	uint64_t node_counts[8];
	struct ig_event first_switch;
	int have_first_switch;
	struct ig_event *all;
	size_t nall, capall;
	int keep_all;
};

static struct opcount *opc(struct collect *c, int src, const char *name)
{
	for (int i = 0; i < c->nops; i++)
		if (c->ops[i].src == src && !strcmp(c->ops[i].name, name))
			return &c->ops[i];
	if (c->nops == MAXKEY)
		return NULL;
	struct opcount *o = &c->ops[c->nops++];
	memset(o, 0, sizeof(*o));
	o->src = src;
	snprintf(o->name, sizeof(o->name), "%s", name);
	hist_clear(&o->h);
	return o;
}

static void on_event(void *ctx, const struct ig_event *e)
{
	struct collect *c = ctx;
	uint64_t k = e->ts_ns + e->dur_ns;
	if (c->events && k < c->last_key)
		c->ordered = 0;
	c->last_key = k;
	c->events++;
	if (e->kind < IG_EV_KIND_MAX)
		c->by_kind[e->kind]++;
	if (e->node < 8)
		c->node_counts[e->node]++;
	if (e->kind == IG_EV_PAGE_ALLOC)
		c->page_bytes += e->arg0;
	if (e->kind == IG_EV_OFFCPU && !c->have_first_switch) {
		c->first_switch = *e;
		c->have_first_switch = 1;
	}
	if (c->keep_all) {
		if (c->nall == c->capall) {
			c->capall = c->capall ? c->capall * 2 : 1024;
			c->all = realloc(c->all, c->capall * sizeof(*c->all));
		}
		c->all[c->nall++] = *e;
	}
	const char *name;
	int src = recfmt_ingero_op(e->kind, e->op, &name, NULL);
	if (!src)
		return;
	struct opcount *o = opc(c, src, name);
	if (!o)
		return;
	o->n++;
	hist_add(&o->h, e->dur_ns);
}

static void collect_init(struct collect *c)
{
	memset(c, 0, sizeof(*c));
	c->ordered = 1;
}

static int drain(struct ig_source *s, struct collect *c)
{
	int rc;
	while ((rc = s->ops->poll(s, on_event, c, 1000)) > 0)
		;
	return rc;
}

/* --- fixtures: counts, percentiles, order ---------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t exact_pct(uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/* Nothing written next to the input, not one byte changed, same mtime;
 * frees bytes0. */
static void check_untouched(const char *path, const struct stat *before, unsigned char *bytes0,
			    size_t len0)
{
	struct stat after;
	size_t len1;
	char side[4500];
	const char *sfx[] = {"-wal", "-shm", "-journal"};
	for (int i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", path, sfx[i]);
		CHECKF(access(side, F_OK) != 0, "%s was created", side);
	}
	stat(path, &after);
	unsigned char *bytes1 = slurp(path, &len1);
	CHECK(len0 == len1 && !memcmp(bytes0, bytes1, len0));
	CHECK(before->st_mtim.tv_sec == after.st_mtim.tv_sec &&
	      before->st_mtim.tv_nsec == after.st_mtim.tv_nsec);
	free(bytes0);
	free(bytes1);
}

/* p50 and p99 of the replayed op within 1 % of the exact percentiles of
 * the file's durations. */
static void check_percentiles(sqlite3 *db, int src, const char *op, uint64_t n, struct opcount *o,
			      const char *name)
{
	sqlite3_stmt *d;
	CHECK(sqlite3_prepare_v2(db,
				 "SELECT duration FROM events e JOIN ops o ON o.source_id = "
				 "e.source AND o.op_id = e.op WHERE e.source = ?1 AND o.name = "
				 "?2 ORDER BY duration",
				 -1, &d, NULL) == SQLITE_OK);
	sqlite3_bind_int(d, 1, src);
	sqlite3_bind_text(d, 2, op, -1, SQLITE_TRANSIENT);
	uint64_t *v = malloc(n * sizeof(*v));
	size_t k = 0;
	while (sqlite3_step(d) == SQLITE_ROW && k < n) {
		int64_t x = sqlite3_column_int64(d, 0);
		v[k++] = x > 0 ? (uint64_t)x : 0;
	}
	sqlite3_finalize(d);
	qsort(v, k, sizeof(*v), cmp_u64);
	double qs[] = {0.5, 0.99};
	for (int qi = 0; o && k && qi < 2; qi++) {
		uint64_t want = exact_pct(v, k, qs[qi]);
		uint64_t got = hist_percentile(&o->h, qs[qi]);
		double rel = want ? ((double)got - (double)want) / (double)want : (double)got;
		if (rel < 0)
			rel = -rel;
		CHECKF(rel <= 0.01, "%s: %s p%.0f: replay %" PRIu64 " exact %" PRIu64, name, op,
		       qs[qi] * 100, got, want);
	}
	free(v);
}

static void test_fixture(const char *name)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	char orig[4400];
	snprintf(orig, sizeof(orig), "%s/%s", traces, name);
	CHECK(copy_file(orig, path) == 0);
	chmod(path, 0444);
	struct stat before;
	stat(path, &before);
	size_t len0;
	unsigned char *bytes0 = slurp(path, &len0);

	const char *err = NULL;
	const char *paths[] = {path};
	struct replay_opts ro = {.no_aggregates = 1};
	struct ig_source *s = replay_open_opts(paths, 1, &ro, &err);
	CHECKF(s, "%s: %s", name, err ? err : "?");
	if (!s)
		return;
	uint64_t span0 = 0, span1 = 0, peek = 0;
	CHECK(replay_span(s, &span0, &span1) == 0);
	CHECK(s->ops->peek_ts(s, &peek) == 0);
	CHECKF(peek == span0, "%s: first %" PRIu64 " span start %" PRIu64, name, peek, span0);
	struct collect c;
	collect_init(&c);
	CHECK(drain(s, &c) == -ENODATA);
	CHECKF(c.ordered, "%s: stream not ordered by completion time", name);
	CHECKF(c.last_key == span1, "%s: last %" PRIu64 " span end %" PRIu64, name, c.last_key,
	       span1);
	struct replay_stats rs;
	replay_get_stats(s, &rs);

	/* exact per-op counts and percentiles from SQL on the file */
	sqlite3 *db = open_ro(path);
	CHECK(db);
	sqlite3_stmt *st;
	CHECK(
	    sqlite3_prepare_v2(db,
			       "SELECT e.source, o.name, COUNT(*) FROM events e LEFT JOIN ops o ON "
			       "o.source_id = e.source AND o.op_id = e.op GROUP BY 1, 2",
			       -1, &st, NULL) == SQLITE_OK);
	uint64_t total = 0, mapped = 0;
	int groups = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int src = sqlite3_column_int(st, 0);
		const char *op = (const char *)sqlite3_column_text(st, 1);
		uint64_t n = (uint64_t)sqlite3_column_int64(st, 2);
		total += n;
		int kind, igop;
		if (!op || recfmt_ingero_kind(src, op, &kind, &igop))
			continue;
		mapped += n;
		groups++;
		const char *canon;
		int csrc = recfmt_ingero_op(kind, igop, &canon, NULL);
		struct opcount *o = opc(&c, csrc, canon);
		CHECKF(o && o->n == n, "%s: %s: replayed %" PRIu64 ", SQL %" PRIu64, name, op,
		       o ? o->n : 0, n);
		check_percentiles(db, src, op, n, o, name);
	}
	sqlite3_finalize(st);
	CHECKF(groups > 0, "%s: no op groups", name);
	CHECKF(rs.rows == total, "%s: rows read %" PRIu64 " of %" PRIu64, name, rs.rows, total);
	CHECKF(rs.skipped == total - mapped, "%s: skipped %" PRIu64, name, rs.skipped);
	int64_t snaps = 0, names = 0;
	sqlite3_prepare_v2(db,
			   "SELECT (SELECT COUNT(*) FROM system_snapshots), (SELECT COUNT(*) "
			   "FROM process_names)",
			   -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW) {
		snaps = sqlite3_column_int64(st, 0);
		names = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	CHECKF(c.by_kind[IG_EV_SNAPSHOT] == (uint64_t)snaps, "%s: snapshots %" PRIu64, name,
	       c.by_kind[IG_EV_SNAPSHOT]);
	CHECKF(c.by_kind[IG_EV_COMM] == (uint64_t)names, "%s: names %" PRIu64, name,
	       c.by_kind[IG_EV_COMM]);
	CHECK(c.events == mapped + (uint64_t)snaps + (uint64_t)names);

	/* sched_switch: ts = timestamp - duration, state unknown */
	if (c.have_first_switch) {
		sqlite3_prepare_v2(db,
				   "SELECT COUNT(*) FROM events WHERE source = 3 AND op = 1 AND "
				   "timestamp = ?1 AND duration = ?2 AND tid = ?3",
				   -1, &st, NULL);
		sqlite3_bind_int64(st, 1, (int64_t)(c.first_switch.ts_ns + c.first_switch.dur_ns));
		sqlite3_bind_int64(st, 2, (int64_t)c.first_switch.dur_ns);
		sqlite3_bind_int64(st, 3, c.first_switch.tid);
		CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) >= 1);
		sqlite3_finalize(st);
		CHECK(c.first_switch.state == IG_OFF_UNKNOWN);
	}
	sqlite3_close(db);
	for (int i = 0; i < c.nops; i++)
		free(c.ops[i].durs);
	s->ops->free(s);

	check_untouched(path, &before, bytes0, len0);
}

/* The DataLoader file: the known figures from the README, page-alloc
 * aggregates, process names in comm. */
static void test_dataloader(void)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/pytorch-dataloader-starvation.db", traces);
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	CHECKF(s, "%s", err ? err : "?");
	if (!s)
		return;
	struct collect c;
	collect_init(&c);
	c.keep_all = 1;
	CHECK(drain(s, &c) == -ENODATA);
	CHECK(c.ordered);
	struct opcount *o = opc(&c, 1, "cudaMemcpyAsync");
	CHECK(o && o->n == 14);
	CHECK(o && o->h.max_ns == 65000369);
	o = opc(&c, 3, "sched_switch");
	CHECK(o && o->n == 3676);
	/* mm_page_alloc exists only as per-minute sums: spread, total kept */
	sqlite3 *db = open_ro(path);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db,
			   "SELECT SUM(sum_arg0) FROM event_aggregates WHERE source = 3 AND op = 3 "
			   "AND stored = 0",
			   -1, &st, NULL);
	sqlite3_step(st);
	uint64_t want = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	CHECKF(want > 0 && c.page_bytes == want, "page bytes %" PRIu64 " want %" PRIu64,
	       c.page_bytes, want);
	struct replay_stats rs;
	replay_get_stats(s, &rs);
	CHECK(rs.synthesized == c.by_kind[IG_EV_PAGE_ALLOC]);
	uint64_t a, b;
	replay_span(s, &a, &b);
	int in_span = 1, calls_no_split = 1, named = 0, forks_ok = 1;
	for (size_t i = 0; i < c.nall; i++) {
		const struct ig_event *e = &c.all[i];
		if (e->kind == IG_EV_PAGE_ALLOC && (e->ts_ns < a || e->ts_ns > b))
			in_span = 0;
		if (e->kind == IG_EV_CALL && !(e->flags & IG_F_NO_SPLIT))
			calls_no_split = 0;
		if (e->kind == IG_EV_CALL && e->pid == 2233 && !strcmp(e->comm, "python3"))
			named++;
		if (e->kind == IG_EV_FORK && (e->arg0 < 2254 || e->arg0 > 2300))
			forks_ok = 0;
	}
	CHECK(in_span);
	CHECK(calls_no_split);
	CHECK(named > 100);
	CHECK(forks_ok);
	/* the node of a single 0.8 file is named after it */
	CHECK(replay_node_name(s, 0) &&
	      !strcmp(replay_node_name(s, 0), "pytorch-dataloader-starvation"));
	/* chains and sessions */
	struct rec_chain *ch;
	size_t nch;
	CHECK(replay_chains(s, &ch, &nch) == 0);
	CHECK(nch == 316);
	CHECK(nch && !strcmp(ch[0].id, "chain-001") && !strcmp(ch[0].severity, "MEDIUM") &&
	      ch[0].p99_us == 25799 && ch[0].tail_ratio > 352);
	/* the JSON columns, parsed: two recommendations; Ingero's timeline
	 * entries as "LAYER op: detail" */
	CHECK(nch && ch[0].nrecs == 2 &&
	      !strcmp(ch[0].recs[0], "Pin training process to dedicated cores with taskset"));
	CHECKF(nch && ch[0].ntimeline == 2 &&
		   !strcmp(ch[0].timeline[0].text,
			   "HOST sched_switch: 34 context switches (1ms off-CPU)") &&
		   ch[0].timeline[0].ts_ns == 0,
	       "%s", nch && ch[0].ntimeline ? ch[0].timeline[0].text : "");
	for (size_t i = 1; i < nch; i++)
		CHECK(ch[i - 1].detected_at_ns <= ch[i].detected_at_ns);
	replay_chains_free(ch, nch);
	struct rec_session *ss;
	size_t nss;
	CHECK(replay_sessions(s, &ss, &nss) == 0 && nss == 1);
	CHECK(nss == 1 && ss[0].cpu_cores == 4 && strstr(ss[0].gpu_model, "RTX 4090"));
	replay_sessions_free(ss, nss);

	/* seek: the stream restarts at the first completion >= T */
	size_t mid = c.nall / 2;
	uint64_t t = c.all[mid].ts_ns + c.all[mid].dur_ns;
	CHECK(replay_seek(s, t) == 0);
	struct collect c2;
	collect_init(&c2);
	c2.keep_all = 1;
	CHECK(drain(s, &c2) == -ENODATA);
	size_t first = 0;
	while (first < c.nall && c.all[first].ts_ns + c.all[first].dur_ns < t)
		first++;
	CHECKF(c2.nall == c.nall - first, "after seek %zu, want %zu", c2.nall, c.nall - first);
	int same = c2.nall == c.nall - first;
	for (size_t i = 0; same && i < c2.nall; i++)
		same = !memcmp(&c2.all[i], &c.all[first + i], sizeof(struct ig_event));
	CHECK(same);
	/* back to the start gives the whole stream again */
	CHECK(replay_seek(s, 0) == 0);
	struct collect c3;
	collect_init(&c3);
	CHECK(drain(s, &c3) == -ENODATA && c3.events == c.events);
	free(c.all);
	free(c2.all);
	s->ops->free(s);
}

/* Three node files merged by time equal the cluster file, node by node. */
static void test_merge(void)
{
	char p[3][4400], cl[4400];
	for (int i = 0; i < 3; i++)
		snprintf(p[i], sizeof(p[i]), "%s/sample-gpu-node-0%d.db", traces, i + 1);
	snprintf(cl, sizeof(cl), "%s/sample-cluster.db", traces);
	const char *paths[] = {p[2], p[0], p[1]}, *err = NULL;
	struct replay_opts ro = {.no_aggregates = 1};
	struct ig_source *s = replay_open_opts(paths, 3, &ro, &err);
	CHECKF(s, "%s", err ? err : "?");
	const char *cp[] = {cl};
	struct ig_source *c = replay_open_opts(cp, 1, &ro, &err);
	CHECKF(c, "%s", err ? err : "?");
	if (!s || !c)
		return;
	struct collect a, b;
	collect_init(&a);
	collect_init(&b);
	a.keep_all = b.keep_all = 1;
	CHECK(drain(s, &a) == -ENODATA);
	CHECK(drain(c, &b) == -ENODATA);
	CHECK(a.ordered && b.ordered);
	/* events (not the per-file names and snapshots) match one by one */
	size_t i = 0, j = 0, matched = 0;
	int same = 1;
	while (same) {
		while (i < a.nall &&
		       (a.all[i].kind == IG_EV_COMM || a.all[i].kind == IG_EV_SNAPSHOT))
			i++;
		while (j < b.nall &&
		       (b.all[j].kind == IG_EV_COMM || b.all[j].kind == IG_EV_SNAPSHOT))
			j++;
		if (i == a.nall || j == b.nall) {
			same = i == a.nall && j == b.nall;
			break;
		}
		const struct ig_event *x = &a.all[i++], *y = &b.all[j++];
		const char *nx = replay_node_name(s, x->node), *ny = replay_node_name(c, y->node);
		same = x->ts_ns == y->ts_ns && x->dur_ns == y->dur_ns && x->kind == y->kind &&
		       x->op == y->op && x->pid == y->pid && nx && ny && !strcmp(nx, ny);
		matched++;
	}
	CHECKF(same && matched == 600, "merged %zu events equal the cluster file", matched);
	/* every event keeps its node */
	int nodes_ok = 1;
	for (size_t k = 0; k < a.nall; k++) {
		const char *n = replay_node_name(s, a.all[k].node);
		if (!n || strncmp(n, "gpu-node-0", 10))
			nodes_ok = 0;
	}
	CHECK(nodes_ok);
	CHECK(replay_node_count(s) >= 3);
	struct rec_chain *ch;
	size_t nch;
	CHECK(replay_chains(s, &ch, &nch) == 0 && nch == 6);
	for (size_t k = 0; k < nch; k++)
		CHECK(!strncmp(ch[k].node, "gpu-node-0", 10) && !strncmp(ch[k].id, ch[k].node, 11));
	replay_chains_free(ch, nch);
	uint64_t s0, s1, c0, c1;
	CHECK(replay_span(s, &s0, &s1) == 0 && replay_span(c, &c0, &c1) == 0);
	CHECK(replay_file_count(s) == 3);
	struct replay_file_info fi;
	CHECK(replay_file_info(s, 0, &fi) == 0 && !strcmp(fi.writer, "ingero") &&
	      !strcmp(fi.version, "0.9") && !fi.recovered);
	free(a.all);
	free(b.all);
	s->ops->free(s);
	c->ops->free(c);
}

/* Ingero file -> replay -> record -> replay gives the same stream, event by
 * event and node by node: what the live view of a replay would record. */
static void fwd(void *ctx, const struct ig_event *e)
{
	rec_event(ctx, e);
}

static void test_rerecord(const char *name)
{
	char orig[4400], own[4400];
	snprintf(orig, sizeof(orig), "%s/%s", traces, name);
	snprintf(own, sizeof(own), "%s/rerecord-%s", tmpdir, name);
	const char *p1[] = {orig}, *p2[] = {own}, *err = NULL;
	struct ig_source *s = replay_open(p1, 1, &err);
	struct rec_opts o = {.synchronous = 1};
	struct rec *r = rec_open(own, &o, &err);
	CHECKF(s && r, "%s", err ? err : "?");
	if (!s || !r)
		return;
	for (int i = 0; i < replay_node_count(s); i++)
		if (replay_node_name(s, (unsigned)i))
			rec_set_node_name(r, (unsigned)i, replay_node_name(s, (unsigned)i));
	while (s->ops->poll(s, fwd, r, 4096) > 0)
		;
	CHECK(rec_close(r) == 0);
	replay_seek(s, 0);
	struct collect a, b;
	collect_init(&a);
	collect_init(&b);
	a.keep_all = b.keep_all = 1;
	drain(s, &a);
	struct ig_source *t = replay_open(p2, 1, &err);
	CHECKF(t, "%s", err ? err : "?");
	if (t)
		drain(t, &b);
	int same = a.nall == b.nall;
	for (size_t i = 0; same && i < a.nall; i++) {
		same = !memcmp(&a.all[i], &b.all[i], sizeof(struct ig_event));
		if (!same)
			fprintf(stderr,
				"%s: event %zu differs (kind %d/%d ts %" PRIu64 "/%" PRIu64 ")\n",
				name, i, a.all[i].kind, b.all[i].kind, a.all[i].ts_ns,
				b.all[i].ts_ns);
	}
	CHECKF(same, "%s: re-recorded stream differs (%zu vs %zu events)", name, a.nall, b.nall);
	for (int i = 0; t && i < replay_node_count(s); i++) {
		const char *x = replay_node_name(s, (unsigned)i),
			   *y = replay_node_name(t, (unsigned)i);
		CHECKF((!x && !y) || (x && y && !strcmp(x, y)), "%s node %d: %s / %s", name, i,
		       x ? x : "-", y ? y : "-");
	}
	free(a.all);
	free(b.all);
	s->ops->free(s);
	if (t)
		t->ops->free(t);
}

/* --- mutation test ------------------------------------------------------------ */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int opened, refused;

/* Opens path; must give a one-line error or a stream that drains cleanly. */
static void try_replay(const char *path, const char *what)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	if (!s) {
		refused++;
		CHECKF(err && *err && !strchr(err, 10) && strlen(err) < 600, "%s: bad error: %s",
		       what, err ? err : "(null)");
		return;
	}
	opened++;
	struct collect c;
	collect_init(&c);
	int rc;
	int rounds = 0;
	while ((rc = s->ops->poll(s, on_event, &c, 512)) > 0 && rounds++ < 100000)
		;
	CHECKF(rc == -ENODATA || (rc == -EIO && replay_error(s) && !strchr(replay_error(s), '\n')),
	       "%s: poll ended with %d", what, rc);
	uint64_t a, b;
	replay_span(s, &a, &b);
	struct rec_chain *ch;
	size_t n;
	if (replay_chains(s, &ch, &n) == 0)
		replay_chains_free(ch, n);
	struct rec_session *ss;
	if (replay_sessions(s, &ss, &n) == 0)
		replay_sessions_free(ss, n);
	replay_seek(s, a + (b - a) / 2);
	while (s->ops->poll(s, on_event, &c, 512) > 0)
		;
	s->ops->free(s);
}

static void write_bytes(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
}

static void sql_on_copy(const char *src, const char *dst, const char *sql)
{
	copy_file(src, dst);
	sqlite3 *db;
	sqlite3_open(dst, &db);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
}

static void expect_error(const char *path, const char *needle)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	CHECKF(!s && err && strstr(err, needle), "%s: want error with '%s', got '%s'", path, needle,
	       err ? err : "(opened)");
	if (s)
		s->ops->free(s);
}

static void test_mutations(int rounds)
{
	char m[4400];
	snprintf(m, sizeof(m), "%s/mutant.db", tmpdir);
	/* named failures */
	expect_error("/nonexistent/x.db", "No such file");
	write_bytes(m, (const unsigned char *)"", 0);
	expect_error(m, "empty file");
	write_bytes(m, (const unsigned char *)"hello, this is text\n", 20);
	expect_error(m, "not an SQLite database");
	expect_error(tmpdir, "not a regular file");
	for (int f = 0; f < NFIX; f++) {
		char orig[4400];
		snprintf(orig, sizeof(orig), "%s/%s", traces, fixtures[f]);
		size_t len;
		unsigned char *b = slurp(orig, &len);
		unsigned char *w = malloc(len);
		/* truncations */
		size_t cuts[] = {1, 16, 50, 99, 100, 4096, len / 2, len - 4096, len - 1};
		for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
			write_bytes(m, b, cuts[k]);
			try_replay(m, "truncated");
			if (cuts[k] >= 100)
				expect_error(m, "truncated");
		}
		/* flipped bytes in the header, then anywhere */
		for (int k = 0; k < rounds; k++) {
			memcpy(w, b, len);
			int nflip = 1 + (int)(rnd() % 8);
			for (int x = 0; x < nflip; x++) {
				size_t off = k < rounds / 4 ? rnd() % 100 : rnd() % len;
				w[off] ^= (unsigned char)(1 + rnd() % 255);
			}
			write_bytes(m, w, len);
			try_replay(m, "flipped");
		}
		/* a whole page zeroed or filled with noise */
		for (size_t pg = 0; pg < len / 4096; pg += 1 + len / 4096 / 12) {
			memcpy(w, b, len);
			for (size_t x = 0; x < 4096; x++)
				w[pg * 4096 + x] = pg % 2 ? (unsigned char)rnd() : 0;
			write_bytes(m, w, len);
			try_replay(m, "page");
		}
		free(w);
		free(b);
		/* schema damage */
		const char *ddl[] = {
		    "DROP TABLE events",
		    "DROP TABLE ops",
		    "DROP TABLE schema_info",
		    "DROP TABLE system_snapshots",
		    "DROP TABLE process_names",
		    "DROP TABLE causal_chains",
		    "DROP TABLE sessions",
		    "DELETE FROM ops",
		    "DELETE FROM events",
		    "UPDATE events SET duration = -5, timestamp = 0 WHERE rowid % 7 = 0",
		    "UPDATE events SET pid = 'x', duration = 'y' WHERE rowid % 5 = 0",
		    "UPDATE ops SET name = NULL",
		    "UPDATE process_names SET name = NULL",
		    "ALTER TABLE events DROP COLUMN arg1"};
		for (size_t k = 0; k < sizeof(ddl) / sizeof(ddl[0]); k++) {
			sql_on_copy(orig, m, ddl[k]);
			try_replay(m, ddl[k]);
		}
		sql_on_copy(orig, m, "DROP TABLE events");
		expect_error(m, "no events table");
		sql_on_copy(orig, m, "DROP TABLE schema_info");
		expect_error(m, "no schema_info table");
		sql_on_copy(orig, m, "UPDATE schema_info SET value = '0.11' WHERE key = 'version'");
		expect_error(m, "newer");
		sql_on_copy(orig, m, "UPDATE schema_info SET value = '1.0' WHERE key = 'version'");
		expect_error(m, "newer");
		sql_on_copy(orig, m, "UPDATE schema_info SET value = '0.7' WHERE key = 'version'");
		expect_error(m, "older");
		sql_on_copy(orig, m, "UPDATE schema_info SET value = 'abc' WHERE key = 'version'");
		expect_error(m, "unknown schema version");
		sql_on_copy(orig, m, "DELETE FROM schema_info WHERE key = 'version'");
		expect_error(m, "unknown schema version");
		sql_on_copy(orig, m,
			    "INSERT INTO schema_info VALUES ('writer', 'ingero-top');"
			    "INSERT INTO schema_info VALUES ('ingero_top_schema', '3')");
		expect_error(m, "newer ingero-top");
		/* 0.10 (Ingero adds events.comm) opens, with comm taken from the row */
		sql_on_copy(orig, m,
			    "ALTER TABLE events ADD COLUMN comm TEXT NOT NULL DEFAULT '';"
			    "UPDATE events SET comm = 'fromrow';"
			    "UPDATE schema_info SET value = '0.10' WHERE key = 'version'");
		const char *pp[] = {m}, *err = NULL;
		struct ig_source *s = replay_open(pp, 1, &err);
		CHECKF(s, "0.10: %s", err ? err : "?");
		if (s) {
			struct collect c;
			collect_init(&c);
			c.keep_all = 1;
			drain(s, &c);
			int all = 1;
			for (size_t k = 0; k < c.nall; k++)
				if (c.all[k].kind != IG_EV_COMM &&
				    c.all[k].kind != IG_EV_SNAPSHOT &&
				    c.all[k].kind != IG_EV_PAGE_ALLOC &&
				    strcmp(c.all[k].comm, "fromrow"))
					all = 0;
			CHECK(all && c.nall > 0);
			free(c.all);
			s->ops->free(s);
		}
	}
	unlink(m);
	printf("mutations: %d opened and drained, %d refused with an error\n", opened, refused);
	CHECK(opened > 0 && refused > 0);
}

/* Recordings made before the JSON columns were valid JSON (the shipped
 * scenario recordings): each column comes back as one entry holding its
 * text. */
static void test_old_chains(void)
{
	const char *p[] = {"tests/fixtures/tui/cpu-contention.db"}, *err = NULL; /* made before */
	struct ig_source *s = replay_open(p, 1, &err);
	CHECKF(s, "%s", err ? err : "?");
	if (!s)
		return;
	struct rec_chain *ch = NULL;
	size_t n = 0, ok = 0;
	CHECK(replay_chains(s, &ch, &n) == 0 && n > 0);
	for (size_t i = 0; i < n; i++)
		ok += ch[i].nrecs == 1 && ch[i].recs[0][0] == '[' && ch[i].ntimeline == 1 &&
		      !strncmp(ch[i].timeline[0].text, "[{\"t\":", 6) &&
		      ch[i].timeline[0].ts_ns == 0;
	CHECKF(ok == n, "%zu of %zu old chains read as one entry per column", ok, n);
	replay_chains_free(ch, n);
	s->ops->free(s);
}

int main(int argc, char **argv)
{
	find_traces();
	if (!traces[0]) {
		char cwd[1024];
		printf("test_replay: tests/fixtures/ingero not found from %s (run from the "
		       "checkout or set IG_TRACES)\n",
		       getcwd(cwd, sizeof(cwd)) ? cwd : "?");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ig-test-replay.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	for (int i = 0; i < NFIX; i++)
		test_fixture(fixtures[i]);
	test_dataloader();
	test_old_chains();
	test_merge();
	for (int i = 0; i < NFIX; i++)
		test_rerecord(fixtures[i]);
	test_mutations(rounds);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", tmpdir, tmpdir);
	if (system(cmd)) {
	}
	return check_done("test_replay");
}
