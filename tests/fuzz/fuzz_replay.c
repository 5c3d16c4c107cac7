/* libFuzzer harness over the replay reader and the recording opener
 * (tests/fuzz/README.md). Each input is written to a file (split into the
 * file and its -wal when it holds a WAL header at a 512-byte boundary),
 * opened with replay_open, drained with at most MAX_EVENTS events into a
 * model with the detector hooked, and every table reader, the span, a seek
 * and a merge of the file with itself are exercised; then the same bytes
 * are handed to rec_open (append), which must refuse them or append a few
 * events, and the result is replayed again. Errors are expected; crashes,
 * sanitizer reports and hangs are not (every SQLite step is limited to one
 * second, store/db.h). */
#include "detect/detect.h"
#include "model/model.h"
#include "store/db.h"
#include "store/rec.h"
#include "store/replay.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EVENTS 20000

static char dir[64], db[96], wal[100], rec_db[96], rec_wal[100];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(dir, sizeof(dir), "%s/ig-fuzz.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(db, sizeof(db), "%s/in.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", db);
	snprintf(rec_db, sizeof(rec_db), "%s/rec.db", dir);
	snprintf(rec_wal, sizeof(rec_wal), "%s-wal", rec_db);
	db_set_step_limit_ms(1000);
	return 0;
}

static void put(const char *path, const uint8_t *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w <= 0)
			abort();
		b += w;
		n -= (size_t)w;
	}
	close(fd);
}

/* The file and its WAL: a WAL header (magic 0x377f0682/3) at a 512-byte
 * boundary splits the input. */
static void write_input(const char *path, const char *walpath, const uint8_t *d, size_t n)
{
	size_t cut = n;
	for (size_t off = 512; off + 4 <= n; off += 512)
		if (d[off] == 0x37 && d[off + 1] == 0x7f && d[off + 2] == 0x06 &&
		    (d[off + 3] & 0xfe) == 0x82) {
			cut = off;
			break;
		}
	put(path, d, cut);
	unlink(walpath);
	if (cut < n)
		put(walpath, d + cut, n - cut);
}

struct sink {
	struct ig_model *m;
	uint64_t n, last;
};

static void on_event(void *ctx, const struct ig_event *e)
{
	struct sink *k = ctx;
	uint64_t key = e->ts_ns + e->dur_ns;
	if (key < k->last) /* the stream promises completion order */
		abort();
	k->last = key;
	k->n++;
	model_ingest(k->m, e);
}

static int on_stack(void *ctx, uint64_t hash, const char *ips, const char *frames)
{
	return strlen(ips) + strlen(frames) > 0 ? 0 : 1;
}

static void on_name(void *ctx, uint32_t pid, const char *name, uint64_t seen, unsigned node)
{
	(*(size_t *)ctx) += strlen(name) + node;
}

static void drain(struct ig_source *s, struct sink *k, uint64_t max)
{
	int rc;
	while (k->n < max && (rc = s->ops->poll(s, on_event, k, 512)) > 0)
		;
}

/* Everything a session asks of a replay, bounded. */
static void exercise(const char *const *paths, int n)
{
	const char *err = NULL;
	struct ig_source *s = replay_open(paths, n, &err);
	if (!s) {
		if (!err || !*err || strchr(err, '\n'))
			abort(); /* failures are one line */
		return;
	}
	/* small tables: cheaper to build per input, and their eviction runs */
	struct ig_model_cfg cfg;
	model_cfg_default(&cfg);
	cfg.max_procs = cfg.max_op_procs = cfg.max_op_threads = 16;
	cfg.max_threads = 32;
	struct ig_detect *d = detect_new(NULL);
	struct sink k = {.m = model_new(&cfg)};
	if (!k.m || !d)
		abort();
	model_set_window_hook(k.m, detect_window, d);
	uint64_t a = 0, b = 0;
	int has_span = replay_span(s, &a, &b) == 0;
	drain(s, &k, MAX_EVENTS);
	model_advance(k.m, k.last + 2000000000ull);
	struct rec_chain *c;
	size_t nc;
	if (replay_chains(s, &c, &nc) == 0)
		replay_chains_free(c, nc);
	struct rec_session *ss;
	if (replay_sessions(s, &ss, &nc) == 0)
		replay_sessions_free(ss, nc);
	replay_stacks(s, on_stack, NULL);
	size_t sum = 0;
	replay_process_names(s, on_name, &sum);
	for (int i = 0; i < replay_node_count(s); i++)
		if (replay_node_name(s, (unsigned)i))
			sum += strlen(replay_node_name(s, (unsigned)i));
	struct replay_file_info fi;
	for (int i = 0; i < replay_file_count(s); i++)
		replay_file_info(s, i, &fi);
	if (has_span && replay_seek(s, a + (b - a) / 2) == 0) {
		k.last = 0;
		drain(s, &k, k.n + 2000);
	}
	struct replay_stats st;
	replay_get_stats(s, &st);
	s->ops->free(s);
	detect_free(d);
	model_free(k.m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_input(db, wal, data, size);
	const char *one[] = {db}, *two[] = {db, db};
	exercise(one, 1);
	if (size % 4 == 0)
		exercise(two, 2); /* the k-way merge and node tables */
	/* the recording opener: refuse, or append and replay */
	write_input(rec_db, rec_wal, data, size);
	const char *err = NULL;
	struct rec_opts o = {.synchronous = 1};
	struct rec *r = rec_open(rec_db, &o, &err);
	if (r) {
		struct ig_event e = {.kind = IG_EV_CALL, .op = 5, .pid = 7, .tid = 7, .dur_ns = 10};
		for (int i = 0; i < 8; i++) {
			e.ts_ns = 1700000000000000000ull + (uint64_t)i;
			rec_event(r, &e);
		}
		rec_close(r);
		const char *rp[] = {rec_db};
		exercise(rp, 1);
	} else if (!err || !*err) {
		abort();
	}
	static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
	for (int i = 0; i < 4; i++) {
		char p[120];
		snprintf(p, sizeof(p), "%s%s", rec_db, sfx[i]);
		unlink(p);
	}
	return 0;
}
