/* The recorder's public side: opening (or appending to) a recording, the
 * bounded queue the main loop feeds, flushing and closing into one
 * self-contained file. The writer is rec_write.c, the format recfmt.c. */
#include "store/rec_int.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/db.h"

#ifndef IG_VERSION
#define IG_VERSION "dev"
#endif

static __thread char errbuf[512];

static const char *set_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return errbuf;
}

/* --- the queue ------------------------------------------------------------------ */

/* Waits (mu held) while the queue is full and the writer is working, at most
 * wait_ms: the writer is slower than the events come (a slow disk, or a CPU
 * shared with the reader), and the caller's pause lets it catch up; what the
 * kernel cannot buffer meanwhile is counted there (drops_kernel). */
static void wait_for_room(struct rec *r)
{
	uint64_t t0 = ig_mono_ns(), deadline = t0 + (uint64_t)r->o.wait_ms * 1000000ULL;
	struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ULL),
			      .tv_nsec = (long)(deadline % 1000000000ULL)};

	r->st.waits++;
	r->room_waiters++;
	pthread_cond_signal(&r->cv_work);
	while (r->qlen == r->qcap && !r->err && !r->quit &&
	       pthread_cond_timedwait(&r->cv_room, &r->mu, &ts) != ETIMEDOUT)
		;
	/* no room in wait_ms: until the writer takes something again, full
	 * means dropped at once (a stuck disk must not freeze the viewer) */
	r->stuck = r->qlen == r->qcap;
	r->room_waiters--;
	r->st.wait_ns += ig_mono_ns() - t0;
}

/* Queues it (taking its data), or writes it inline when synchronous. A full
 * queue makes the caller wait for room (wait_for_room); an event is dropped
 * (and counted) only when the writer made none in wait_ms. */
static int enqueue(struct rec *r, struct rec_item *it)
{
	if (r->o.synchronous) {
		if (!r->err) {
			rec_write_batch(r, it, 1);
			if (!r->err)
				rec_commit_by_time(r);
		}
		rec_item_free(it);
		return r->err;
	}
	pthread_mutex_lock(&r->mu);
	if (!r->err && r->qlen == r->qcap && r->have_thr && !r->stuck)
		wait_for_room(r);
	int err = r->err;
	if (!err && r->qlen == r->qcap) {
		r->st.dropped++;
		err = -ENOBUFS;
	}
	if (!err) {
		r->q[(r->qhead + r->qlen) % r->qcap] = *it;
		r->qlen++;
		/* wake the writer once per half batch, not per event */
		if (r->qlen == 1 || r->qlen % (r->o.batch_events / 2 + 1) == 0)
			pthread_cond_signal(&r->cv_work);
	}
	pthread_mutex_unlock(&r->mu);
	if (err)
		rec_item_free(it);
	return err;
}

int rec_enqueue_summary(struct rec *r, struct rec_summary *s)
{
	struct rec_item it = {.type = IT_SUMMARY, .p = s};
	return enqueue(r, &it);
}

/* The error that stopped the recorder, 0 while it works. */
static int stopped(struct rec *r)
{
	pthread_mutex_lock(&r->mu);
	int err = r->err;
	pthread_mutex_unlock(&r->mu);
	return err;
}

int rec_event(struct rec *r, const struct ig_event *e)
{
	if (rec_sum_event(r, e))
		return stopped(r);
	return rec_enqueue_event(r, e);
}

void rec_tick(struct rec *r, uint64_t now_ns)
{
	if (r->o.run_ms) /* asked for a bound (the service); --record as it was */
		rec_sum_tick(r, now_ns);
}

int rec_enqueue_event(struct rec *r, const struct ig_event *e)
{
	struct rec_item it = {.type = IT_EVENT, .e = *e};
	it.e.container = NULL;
	/* the writer runs later: it gets its own copy of the container */
	if ((e->kind == IG_EV_COMM || e->kind == IG_EV_CGROUP) && e->container && e->container[0]) {
		if (!(it.p = strdup(e->container)))
			return -ENOMEM;
		it.e.container = it.p;
	}
	return enqueue(r, &it);
}

int rec_chain(struct rec *r, const struct rec_chain *c)
{
	struct rec_chain *cc = malloc(sizeof(*cc));
	if (!cc || rec_chain_copy(cc, c)) {
		free(cc);
		return -ENOMEM;
	}
	return enqueue(r, &(struct rec_item){.type = IT_CHAIN, .p = cc});
}

int rec_session_info(struct rec *r, const struct rec_session *s)
{
	struct rec_session *sc = malloc(sizeof(*sc));
	if (!sc || rec_session_copy(sc, s)) {
		free(sc);
		return -ENOMEM;
	}
	return enqueue(r, &(struct rec_item){.type = IT_SESSION, .p = sc});
}

int rec_stack(struct rec *r, uint64_t hash, const char *ips_json, const char *frames_json)
{
	struct rec_stack_cmd *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->hash = hash;
	sc->ips = strdup(ips_json ? ips_json : "");
	sc->frames = strdup(frames_json ? frames_json : "");
	struct rec_item it = {.type = IT_STACK, .p = sc};
	if (!sc->ips || !sc->frames) {
		rec_item_free(&it);
		return -ENOMEM;
	}
	return enqueue(r, &it);
}

int rec_set_node_name(struct rec *r, unsigned idx, const char *name)
{
	if (idx > 255)
		return -EINVAL;
	struct rec_node_cmd *nc = calloc(1, sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	nc->idx = idx;
	struct rec_item it = {.type = IT_NODE, .p = nc};
	if (!(nc->name = strdup(name ? name : ""))) {
		rec_item_free(&it);
		return -ENOMEM;
	}
	return enqueue(r, &it);
}

int rec_flush(struct rec *r)
{
	rec_sum_flush(r);
	if (r->o.synchronous) {
		rec_commit_now(r);
		return r->err;
	}
	pthread_mutex_lock(&r->mu);
	uint64_t want = ++r->flush_req;
	pthread_cond_signal(&r->cv_work);
	while (r->flush_done < want)
		pthread_cond_wait(&r->cv_done, &r->mu);
	int err = r->err;
	pthread_mutex_unlock(&r->mu);
	return err;
}

const char *rec_error(const struct rec *r)
{
	struct rec *m = (struct rec *)r;
	pthread_mutex_lock(&m->mu);
	const char *e = m->err ? m->errmsg : NULL;
	pthread_mutex_unlock(&m->mu);
	return e;
}

const char *rec_path(const struct rec *r)
{
	return r->path;
}

void rec_get_stats(struct rec *r, struct rec_stats *st)
{
	pthread_mutex_lock(&r->mu);
	*st = r->st;
	pthread_mutex_unlock(&r->mu);
	rec_sum_counts(r->sum, &st->summarised, &st->summaries);
	st->dropped += r->sum_lost; /* calls of runs the queue or memory refused */
}

static void finalize_all(struct rec *r)
{
	sqlite3_stmt **sts[] = {&r->st_event,  &r->st_snap,	&r->st_name,	&r->st_chain,
				&r->st_stack,  &r->st_node,	&r->st_session, &r->st_begin,
				&r->st_commit, &r->st_rollback, &r->st_summary};
	for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		sqlite3_finalize(*sts[i]);
		*sts[i] = NULL;
	}
}

static void rec_destroy(struct rec *r)
{
	finalize_all(r);
	if (r->db)
		sqlite3_close_v2(r->db);
	for (int i = 0; i < 256; i++)
		free(r->node_names[i]);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv_work);
	pthread_cond_destroy(&r->cv_done);
	pthread_cond_destroy(&r->cv_room);
	free(r->q);
	free(r->batch);
	rec_sum_free(r->sum);
	free(r->path);
	safefile_close(r->sf); /* after SQLite let go of it: closing drops its locks */
	free(r);
}

/* Stops the writer thread after it wrote everything queued. */
static void stop_writer(struct rec *r)
{
	rec_flush(r);
	if (!r->have_thr)
		return;
	pthread_mutex_lock(&r->mu);
	r->quit = 1;
	pthread_cond_signal(&r->cv_work);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thr, NULL);
	r->have_thr = 0;
}

int rec_close(struct rec *r)
{
	if (!r)
		return 0;
	stop_writer(r);
	/* anything left (after a stop) is discarded */
	for (; r->qlen; r->qlen--) {
		rec_item_free(&r->q[r->qhead]);
		r->qhead = (r->qhead + 1) % r->qcap;
	}
	int err = r->err;
	if (!r->err) {
		char sql[160];
		snprintf(sql, sizeof(sql),
			 "UPDATE sessions SET stopped_at=%" PRIu64 " WHERE id=%" PRId64,
			 rec_wall_ns(), r->session_id);
		int rc = db_exec(r->db, sql);
		if (rc == SQLITE_OK)
			rc = rec_build_query_indexes(r);
		if (rc != SQLITE_OK)
			err = db_errno(rc);
	}
	finalize_all(r);
	/* a single self-contained file: fold the WAL in and drop it; after a
	 * failure (disk full) leave the WAL alone: file + WAL are valid and
	 * replay recovers them, a half-done checkpoint would not help */
	if (!r->err && !r->o.no_wal) {
		db_exec(r->db, "PRAGMA wal_checkpoint(TRUNCATE)");
		db_exec(r->db, "PRAGMA journal_mode=DELETE");
	}
	if (sqlite3_close(r->db) != SQLITE_OK && !err)
		err = -EIO;
	r->db = NULL;
	if (!err && !safefile_still_there(r->sf))
		err = -ESTALE; /* written to a file someone removed or replaced */
	rec_destroy(r);
	return err;
}

/* --- opening ------------------------------------------------------------------- */

/* An existing, non-empty file: may we append to it? It must be an
 * ingero-top recording of a schema this writer knows. Read through a
 * read-only connection on the held descriptor, under the guard (the file
 * is the caller's, but it may still be hostile). 0, or -errno and *err. */
static int check_existing(struct safefile *sf, const char **err)
{
	const char *path = safefile_path(sf);
	sqlite3 *db = NULL;
	int ret = 0;
	if (sqlite3_open_v2(safefile_db_name(sf), &db, SQLITE_OPEN_READONLY, safefile_vfs(NULL)) !=
	    SQLITE_OK) {
		*err = set_err("cannot record to %s: exists and cannot be opened: %s", path,
			       db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	db_guard(db);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_stmt *st = NULL;
	const char *writer = NULL;
	int64_t schema = 0;
	int rc = sqlite3_prepare_v2(db,
				    "SELECT key, value FROM schema_info WHERE key IN "
				    "('writer','ingero_top_schema')",
				    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		while ((rc = db_step(st)) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			if (k && !strcmp(k, "writer")) {
				const char *v = (const char *)sqlite3_column_text(st, 1);
				writer = v && !strcmp(v, "ingero-top") ? "ingero-top" : "other";
			} else if (k) {
				schema = sqlite3_column_int64(st, 1);
			}
		}
		sqlite3_finalize(st);
	}
	const char *refused = safefile_refusal(sf);
	if (*refused) { /* a companion we will not use: say which */
		*err = set_err("cannot record to %s: %s", path, refused);
		ret = -EPERM;
	} else if (!writer && rc != SQLITE_DONE && db_has_table(db, "schema_info")) {
		*err = set_err("cannot record to %s: exists and cannot be read: %s", path,
			       db_errmsg(db, rc));
		ret = -EIO;
	} else if (!writer || strcmp(writer, "ingero-top")) {
		*err = set_err("cannot record to %s: file exists and is not an ingero-top "
			       "recording (not appending to it)",
			       path);
		ret = -EEXIST;
	} else if (schema > REC_SCHEMA) {
		*err = set_err("cannot record to %s: written by a newer ingero-top (schema %" PRId64
			       ", this one writes %d)",
			       path, schema, REC_SCHEMA);
		ret = -EPROTO;
	}
	sqlite3_close(db);
	return ret;
}

/* The tables, and this session's row, in one transaction. */
static int setup_schema(struct rec *r)
{
	int rc = db_exec(r->db, "BEGIN");
	if (rc == SQLITE_OK)
		rc = recfmt_create(r->db, IG_VERSION);
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO sessions (started_at, ingero_ver) VALUES (%" PRIu64
		 ", 'ingero-top %s');",
		 rec_wall_ns(), IG_VERSION);
	if (rc == SQLITE_OK)
		rc = db_exec(r->db, sql);
	if (rc == SQLITE_OK)
		r->session_id = sqlite3_last_insert_rowid(r->db);
	if (rc == SQLITE_OK)
		rc = db_exec(r->db, "COMMIT");
	else
		db_exec(r->db, "ROLLBACK");
	return rc;
}

static struct rec *rec_alloc(struct safefile *sf, const struct rec_opts *o)
{
	struct rec *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *o;
	r->sf = sf;
	r->path = strdup(safefile_path(sf));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv_work, NULL);
	pthread_cond_init(&r->cv_done, NULL);
	pthread_condattr_t ca; /* cv_room waits on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv_room, &ca);
	pthread_condattr_destroy(&ca);
	r->qcap = o->queue_events;
	r->q = calloc(r->qcap, sizeof(*r->q));
	r->batch = calloc(o->batch_events, sizeof(*r->batch));
	if (o->sum_rate)
		r->sum = rec_sum_new(o->sum_rate, o->run_ms);
	if (!r->path || !r->q || !r->batch || (o->sum_rate && !r->sum)) {
		r->sf = NULL; /* the caller's still */
		rec_destroy(r);
		return NULL;
	}
	return r;
}

/* SQLite's message, with the reason a companion file was refused when
 * there is one (SQLite only says "unable to open database file"). */
static const char *db_why(struct rec *r)
{
	static __thread char buf[PATH_MAX + 160];
	const char *m = r->db ? sqlite3_errmsg(r->db) : "out of memory";
	const char *why = safefile_refusal(r->sf);
	if (!*why)
		return m;
	snprintf(buf, sizeof(buf), "%s: %s", m, why);
	return buf;
}

/* Opens the held file in WAL mode (or, with no_wal, with the journal in
 * memory) with the pragmas of a recording; the WAL is bounded to 1/8 of
 * --max-db (at least 16 pages, at most 1000). */
static const char *open_db(struct rec *r)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(safefile_db_name(r->sf), &r->db, flags, safefile_vfs(NULL)) !=
	    SQLITE_OK)
		return db_why(r);
	sqlite3_busy_timeout(r->db, 2000);
	sqlite3_stmt *st;
	char mode[16] = "";
	const char *want = r->o.no_wal ? "memory" : "wal";
	if (sqlite3_prepare_v2(
		r->db, r->o.no_wal ? "PRAGMA journal_mode=MEMORY" : "PRAGMA journal_mode=WAL", -1,
		&st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(mode, sizeof(mode), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (strcmp(mode, want))
		return mode[0] ? "cannot switch to its journal mode" : db_why(r);
	r->page_size = (uint64_t)db_query_int(r->db, "PRAGMA page_size", 4096, NULL);
	unsigned ckpt = 1000;
	if (r->o.max_db_bytes && r->o.max_db_bytes / 8 / r->page_size < ckpt)
		ckpt = (unsigned)(r->o.max_db_bytes / 8 / r->page_size);
	if (ckpt < 16)
		ckpt = 16;
	char pragmas[256];
	snprintf(pragmas, sizeof(pragmas),
		 "PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=%u;"
		 "PRAGMA journal_size_limit=%" PRIu64 "; PRAGMA cache_size=-16384;",
		 ckpt, (uint64_t)ckpt * r->page_size);
	if (db_exec(r->db, pragmas) != SQLITE_OK || setup_schema(r) != SQLITE_OK)
		return db_why(r);
	return NULL;
}

static int prepare_all(struct rec *r)
{
	const struct {
		sqlite3_stmt **st;
		const char *sql;
	} s[] = {
	    {&r->st_event, recfmt_event_insert_sql},
	    {&r->st_snap, recfmt_snapshot_insert_sql},
	    {&r->st_name, recfmt_name_insert_sql},
	    {&r->st_chain, recfmt_chain_insert_sql},
	    {&r->st_stack, recfmt_stack_insert_sql},
	    {&r->st_node, recfmt_node_insert_sql},
	    {&r->st_session, recfmt_session_update_sql},
	    {&r->st_begin, "BEGIN"},
	    {&r->st_commit, "COMMIT"},
	    {&r->st_rollback, "ROLLBACK"},
	    {&r->st_summary, recfmt_summary_insert_sql},
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (sqlite3_prepare_v3(r->db, s[i].sql, -1, SQLITE_PREPARE_PERSISTENT, s[i].st,
				       NULL) != SQLITE_OK)
			return -1;
	return 0;
}

/* Node names: those already in the file (appending), node 0's from the
 * options, "node<i>" for the others. */
static int setup_nodes(struct rec *r)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, "SELECT idx, name FROM ingero_top_nodes", -1, &st, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			int idx = sqlite3_column_int(st, 0);
			const char *nm = (const char *)sqlite3_column_text(st, 1);
			if (idx >= 0 && idx < 256 && !r->node_names[idx])
				r->node_names[idx] = strdup(nm ? nm : "");
		}
		sqlite3_finalize(st);
	}
	if (r->o.node_name && rec_write_node(r, 0, r->o.node_name) != SQLITE_OK)
		return -1;
	for (int i = 1; i < 256; i++) {
		if (!r->node_names[i]) {
			char nm[16];
			snprintf(nm, sizeof(nm), "node%d", i);
			r->node_names[i] = strdup(nm);
		}
	}
	return 0;
}

static void rec_defaults(struct rec_opts *o, const struct rec_opts *opts)
{
	*o = opts ? *opts : (struct rec_opts){0};
	if (!o->batch_events)
		o->batch_events = 4096;
	if (!o->commit_ms)
		o->commit_ms = 500;
	if (!o->queue_events)
		o->queue_events = 131072;
	if (!o->wait_ms)
		o->wait_ms = 2000;
}

struct rec *rec_open(const char *path, const struct rec_opts *opts, const char **err)
{
	const char *dummy;
	char why[PATH_MAX + 400];
	struct safefile *sf;
	if (!err)
		err = &dummy;
	*err = NULL;
	if (!path || !*path) {
		*err = set_err("cannot record: no file name");
		return NULL;
	}
	int mode = opts && opts->exclusive ? SAFEFILE_CREATE : SAFEFILE_APPEND;
	if (safefile_open(path, mode, &sf, why, sizeof(why))) {
		*err = set_err("%s", why);
		return NULL;
	}
	return rec_open_file(sf, opts, err);
}

struct rec *rec_open_file(struct safefile *sf, const struct rec_opts *opts, const char **err)
{
	const char *dummy, *why;
	if (!err)
		err = &dummy;
	*err = NULL;
	struct rec_opts o;
	rec_defaults(&o, opts);
	const char *path = safefile_path(sf);
	if (!safefile_created(sf) && safefile_size(sf) > 0 && check_existing(sf, err)) {
		safefile_close(sf);
		return NULL;
	}
	struct rec *r = rec_alloc(sf, &o);
	if (!r) {
		*err = set_err("cannot record to %s: out of memory", path);
		if (safefile_created(sf))
			safefile_unlink(sf);
		safefile_close(sf);
		return NULL;
	}
	if ((why = open_db(r))) {
		*err = set_err("cannot record to %s: %s", path, why);
		goto fail;
	}
	r->rows_in_file = (uint64_t)db_query_int(r->db, "SELECT COUNT(*) FROM events", 0, NULL);
	if (prepare_all(r) || setup_nodes(r)) {
		*err = set_err("cannot record to %s: %s", path, sqlite3_errmsg(r->db));
		goto fail;
	}
	r->st.db_bytes = rec_used_bytes(r);
	if (!o.synchronous) {
		if (pthread_create(&r->thr, NULL, rec_writer_main, r)) {
			*err = set_err("cannot record to %s: cannot start the writer thread", path);
			goto fail;
		}
		r->have_thr = 1;
	}
	return r;
fail:
	finalize_all(r);
	sqlite3_close_v2(r->db);
	r->db = NULL;
	if (safefile_created(sf))
		safefile_unlink(sf);
	rec_destroy(r);
	return NULL;
}

int rec_parse_size(const char *s, uint64_t *bytes)
{
	if (!s)
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	while (*end == ' ')
		end++;
	uint64_t mult = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		end++;
		break;
	case 't':
	case 'T':
		mult = 1ull << 40;
		end++;
		break;
	case 'b':
	case 'B':
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	double b = v * (double)mult;
	if (b >= 1.8e19)
		return -EINVAL;
	*bytes = (uint64_t)b;
	return 0;
}
