/* The flight recorder: a ring of fixed-size chunks of events, and its
 * background saver (which uses rec). A save takes a reference on each chunk
 * of the ring (O(chunks) on the caller, no event is copied) and hands them
 * to the saver thread; the ring goes on filling new chunks while the old
 * ones are written. References are only ever changed on the caller's
 * thread (the saver only reads), so they need no atomics. */
#include "store/flight.h"
#include "core/clock.h"
#include "core/htab.h"
#include "store/rec.h"
#include "store/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAME_SLOTS 4096
#define CHUNK_EVENTS 4096	   /* ~600 KB a chunk */
#define SPARE_CHUNKS 8		   /* released chunks kept for reuse */
#define STACK_BUDGET_NS 5000000ull /* stacks asked per flight_poll: 5 ms of work */
/* a stack still being resolved (the resolver thread reads the process's maps
 * and its binaries' symbols) is waited for this long from the ask, by
 * flight_poll; then, or at flight_free, it is saved without frames */
#define STACK_WAIT_NS 3000000000ull

struct name {
	uint32_t pid;
	uint8_t node;
	char comm[IG_COMM_LEN];
	char container[IG_CONTAINER_LEN]; /* "" unknown */
};

/* The cgroup directory of a process's CPU quota events (IG_EV_CGROUP): kept
 * here, the ring's copies of those events point nowhere. */
#define CGDIR_SLOTS 64
struct cgdir {
	uint32_t pid;
	uint8_t node;
	char dir[IG_DETAIL_LEN];
};

struct chunk {
	int refs; /* the ring's, plus one per job holding it */
	struct ig_event ev[CHUNK_EVENTS];
};

struct stack_json {
	uint64_t id;
	char *ips, *frames;
};

enum stack_state { ST_NONE = 0, ST_ASKED, ST_SERVED };

/* What one save writes: the chunks are shared (read-only) with the ring;
 * the rest is owned by the job. */
struct job {
	struct safefile *sf; /* the reserved file, until the saver takes it */
	char path[PATH_MAX];
	struct chunk **chunks;
	size_t nchunks, first_off, last_len, n;
	uint64_t first_key, last_key;
	struct name *names;
	size_t nnames;
	struct cgdir cgdirs[CGDIR_SLOTS];
	struct rec_chain *chains; /* copies */
	size_t nchains;
	struct rec_session ses; /* a copy; own NULL when none */
	/* stacks: ids found by the saver, frames filled on the caller's thread
	 * by flight_poll (the stacks module is not thread-safe) */
	uint64_t *stack_ids;
	size_t nstack_ids, stack_next;
	struct stack_json *stacks;
	size_t nstacks;
	int stack_state;   /* enum stack_state, guarded by flight.mu */
	uint64_t asked_ns; /* CLOCK_MONOTONIC of the ask */
	int err;
	char msg[PATH_MAX + 200];
};

struct flight {
	uint64_t span_ns;
	size_t cap_max;
	struct chunk **ring; /* ccap slots, a ring of chunk pointers */
	size_t ccap, chead, ccount;
	size_t head_off; /* oldest event in ring[chead] */
	size_t tail_len; /* events in the newest chunk */
	size_t len;
	uint64_t newest;
	uint64_t capped;
	struct chunk *spare[SPARE_CHUNKS];
	int nspare;
	struct name names[NAME_SLOTS];
	struct cgdir cgdirs[CGDIR_SLOTS];
	struct rec_chain chains[FLIGHT_MAX_CHAINS]; /* copies */
	size_t nchains, chain_next;
	struct rec_session ses; /* a copy; own NULL when none */
	char why[PATH_MAX + 200];
	/* saver */
	pthread_t thr;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* stack_state changes */
	int done;
	struct job *job;
	flight_stack_fn stack_fn;
	void *stack_ctx;
	void (*save_hook)(void *ctx);
	void *save_hook_ctx;
};

static uint64_t key(const struct ig_event *e)
{
	return e->ts_ns + e->dur_ns;
}

struct flight *flight_new(double seconds, size_t max_events)
{
	if (!(seconds > 0))
		return NULL;
	struct flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->span_ns = seconds > 1e9 ? UINT64_MAX : (uint64_t)(seconds * 1e9);
	f->cap_max = max_events ? max_events : FLIGHT_DEFAULT_MAX_EVENTS;
	/* every chunk a full ring can touch, plus a partly filled one at each end */
	f->ccap = f->cap_max / CHUNK_EVENTS + 3;
	f->ring = calloc(f->ccap, sizeof(*f->ring));
	if (!f->ring) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	return f;
}

/* --- chunks ------------------------------------------------------------------ */

static void chunk_unref(struct flight *f, struct chunk *c)
{
	if (--c->refs > 0)
		return;
	if (f->nspare < SPARE_CHUNKS)
		f->spare[f->nspare++] = c;
	else
		free(c);
}

static struct chunk *chunk_get(struct flight *f)
{
	struct chunk *c = f->nspare ? f->spare[--f->nspare] : malloc(sizeof(*c));
	if (c)
		c->refs = 1;
	return c;
}

static struct ig_event *oldest(const struct flight *f)
{
	return &f->ring[f->chead]->ev[f->head_off];
}

static void drop_oldest(struct flight *f)
{
	f->len--;
	if (++f->head_off < CHUNK_EVENTS && f->ccount > 1)
		return;
	if (f->head_off < CHUNK_EVENTS && f->head_off < f->tail_len)
		return; /* the only chunk still has events */
	if (f->ccount == 1 && f->head_off < CHUNK_EVENTS)
		return; /* empty, but the newest chunk goes on filling */
	chunk_unref(f, f->ring[f->chead]);
	f->ring[f->chead] = NULL;
	f->chead = (f->chead + 1) % f->ccap;
	f->ccount--;
	f->head_off = 0;
	if (!f->ccount)
		f->tail_len = 0;
}

/* --- jobs ------------------------------------------------------------------------ */

static void job_free(struct flight *f, struct job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nchunks; i++)
		chunk_unref(f, j->chunks[i]);
	free(j->chunks);
	free(j->names);
	for (size_t i = 0; i < j->nstacks; i++) {
		free(j->stacks[i].ips);
		free(j->stacks[i].frames);
	}
	free(j->stacks);
	free(j->stack_ids);
	for (size_t i = 0; i < j->nchains; i++)
		rec_chain_clear(&j->chains[i]);
	free(j->chains);
	rec_session_clear(&j->ses);
	if (j->sf) { /* reserved but never handed to the saver */
		safefile_unlink(j->sf);
		safefile_close(j->sf);
	}
	free(j);
}

/* Gives the saver the frames of the stacks it asked for, at most about
 * budget_ns of work (UINT64_MAX: all of them, none waited for). A stack
 * still being resolved stops the round until STACK_WAIT_NS after the ask.
 * Caller's thread. */
static void serve_stacks(struct flight *f, uint64_t budget_ns)
{
	pthread_mutex_lock(&f->mu);
	struct job *j = f->job;
	int asked = j && f->running && j->stack_state == ST_ASKED;
	pthread_mutex_unlock(&f->mu);
	if (!asked)
		return;
	uint64_t t0 = ig_mono_ns(), t1 = t0;
	int wait = budget_ns != UINT64_MAX;
	while (j->stack_next < j->nstack_ids) {
		uint64_t id = j->stack_ids[j->stack_next];
		char *ips = NULL, *frames = NULL;
		int rc = f->stack_fn(f->stack_ctx, id, &ips, &frames);
		if (rc > 0 && wait && t1 < j->asked_ns + STACK_WAIT_NS) {
			free(ips);
			free(frames);
			return; /* the next flight_poll asks again */
		}
		j->stack_next++;
		if (rc >= 0)
			j->stacks[j->nstacks++] =
			    (struct stack_json){.id = id, .ips = ips, .frames = frames};
		t1 = ig_mono_ns();
		if (t1 - t0 >= budget_ns)
			break;
	}
	if (j->stack_next < j->nstack_ids)
		return;
	pthread_mutex_lock(&f->mu);
	j->stack_state = ST_SERVED;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Waits for the saver, serving the stacks it may ask for meanwhile. */
static void join_saver(struct flight *f)
{
	if (!f->running)
		return;
	pthread_mutex_lock(&f->mu);
	while (!f->done) {
		if (f->job && f->job->stack_state == ST_ASKED) {
			pthread_mutex_unlock(&f->mu);
			serve_stacks(f, UINT64_MAX);
			pthread_mutex_lock(&f->mu);
			continue;
		}
		pthread_cond_wait(&f->cv, &f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thr, NULL);
	f->running = 0;
}

void flight_free(struct flight *f)
{
	if (!f)
		return;
	join_saver(f);
	job_free(f, f->job);
	for (size_t i = 0; i < f->ccount; i++)
		chunk_unref(f, f->ring[(f->chead + i) % f->ccap]);
	for (int i = 0; i < f->nspare; i++)
		free(f->spare[i]);
	for (size_t i = 0; i < f->nchains; i++)
		rec_chain_clear(&f->chains[i]);
	rec_session_clear(&f->ses);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f->ring);
	free(f);
}

/* --- the ring ---------------------------------------------------------------------- */

static void remember_name(struct flight *f, const struct ig_event *e)
{
	if (!e->comm[0] || !e->pid)
		return;
	struct name *n = &f->names[(e->pid * 2654435761u) % NAME_SLOTS];
	if (n->pid != e->pid || n->node != e->node)
		n->container[0] = 0; /* another process: its container is not known yet */
	n->pid = e->pid;
	n->node = e->node;
	memcpy(n->comm, e->comm, IG_COMM_LEN);
	if (e->kind == IG_EV_COMM && e->container && e->container[0])
		snprintf(n->container, sizeof(n->container), "%s", e->container);
}

static struct cgdir *cgdir_slot(struct cgdir *t, uint32_t pid, uint8_t node)
{
	return &t[(pid * 2654435761u + node) % CGDIR_SLOTS];
}

void flight_push(struct flight *f, const struct ig_event *e)
{
	remember_name(f, e);
	if (e->kind == IG_EV_COMM)
		return; /* names are kept apart and written at the start of a save */
	if (e->kind == IG_EV_CGROUP) {
		struct cgdir *d = cgdir_slot(f->cgdirs, e->pid, e->node);
		d->pid = e->pid;
		d->node = e->node;
		snprintf(d->dir, sizeof(d->dir), "%s", e->container ? e->container : "");
	}
	if (f->len == f->cap_max) {
		drop_oldest(f);
		f->capped++;
	}
	if (!f->ccount || f->tail_len == CHUNK_EVENTS) {
		struct chunk *c = f->ccount < f->ccap ? chunk_get(f) : NULL;
		if (!c) { /* out of memory: the event is lost, and counted */
			f->capped++;
			return;
		}
		f->ring[(f->chead + f->ccount) % f->ccap] = c;
		if (!f->ccount)
			f->head_off = 0;
		f->ccount++;
		f->tail_len = 0;
	}
	struct chunk *t = f->ring[(f->chead + f->ccount - 1) % f->ccap];
	t->ev[f->tail_len] = *e;
	t->ev[f->tail_len++].container = NULL; /* the caller's text: gone after this call */
	f->len++;
	uint64_t k = key(e);
	if (k > f->newest)
		f->newest = k;
	while (f->len && f->newest - key(oldest(f)) > f->span_ns && key(oldest(f)) < f->newest)
		drop_oldest(f);
}

int flight_chain(struct flight *f, const struct rec_chain *c)
{
	size_t slot = f->nchains;
	for (size_t i = 0; i < f->nchains; i++)
		if (c->id && f->chains[i].id && !strcmp(f->chains[i].id, c->id))
			slot = i;
	if (slot == f->nchains) {
		if (f->nchains < FLIGHT_MAX_CHAINS) {
			f->nchains++;
		} else {
			slot = f->chain_next;
			f->chain_next = (f->chain_next + 1) % FLIGHT_MAX_CHAINS;
		}
	}
	if (slot < f->nchains)
		rec_chain_clear(&f->chains[slot]);
	int rc = rec_chain_copy(&f->chains[slot], c);
	if (rc && slot == f->nchains - 1)
		f->nchains--;
	return rc;
}

int flight_set_session(struct flight *f, const struct rec_session *s)
{
	rec_session_clear(&f->ses);
	return rec_session_copy(&f->ses, s);
}

size_t flight_count(const struct flight *f)
{
	return f->len;
}

int flight_span(const struct flight *f, uint64_t *oldest_ns, uint64_t *newest_ns)
{
	if (!f->len)
		return -ENODATA;
	*oldest_ns = key(oldest(f));
	*newest_ns = f->newest;
	return 0;
}

uint64_t flight_capped(const struct flight *f)
{
	return f->capped;
}

/* --- the saver thread -------------------------------------------------------------- */

/* The distinct stack ids of the job's calls (at most FLIGHT_MAX_STACKS). */
static void collect_stack(struct htab *seen, struct job *j, const struct ig_event *e)
{
	if (!j->stack_ids || (e->kind != IG_EV_CALL && e->kind != IG_EV_OFFCPU) || !e->stack_id ||
	    j->nstack_ids == FLIGHT_MAX_STACKS || ht_get(seen, e->stack_id) >= 0)
		return;
	ht_put(seen, e->stack_id, 1);
	j->stack_ids[j->nstack_ids++] = e->stack_id;
}

/* Names first (at the time of the first event), then every event of the
 * chunks, in order. */
static int write_events(struct rec *r, struct job *j, struct htab *seen)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < j->nnames; i++) {
		struct ig_event e = {0};
		e.kind = IG_EV_COMM;
		e.ts_ns = j->first_key;
		e.pid = e.tid = j->names[i].pid;
		e.node = j->names[i].node;
		memcpy(e.comm, j->names[i].comm, IG_COMM_LEN);
		e.container = j->names[i].container;
		rc = rec_event(r, &e);
	}
	for (size_t c = 0; !rc && c < j->nchunks; c++) {
		size_t from = c == 0 ? j->first_off : 0;
		size_t to = c == j->nchunks - 1 ? j->last_len : CHUNK_EVENTS;
		for (size_t i = from; !rc && i < to; i++) {
			const struct ig_event *e = &j->chunks[c]->ev[i];
			if (e->kind == IG_EV_CGROUP) {
				struct ig_event g = *e;
				struct cgdir *d = cgdir_slot(j->cgdirs, e->pid, e->node);
				g.container =
				    d->pid == e->pid && d->node == e->node ? d->dir : NULL;
				rc = rec_event(r, &g);
				continue;
			}
			rc = rec_event(r, e);
			collect_stack(seen, j, e);
		}
	}
	return rc;
}

/* Asks the caller's thread (flight_poll) for the frames of the stacks and
 * waits for them. */
static void ask_stacks(struct flight *f, struct job *j)
{
	pthread_mutex_lock(&f->mu);
	j->stack_state = ST_ASKED;
	j->asked_ns = ig_mono_ns();
	pthread_cond_broadcast(&f->cv); /* a flight_free waiting for the saver */
	while (j->stack_state == ST_ASKED)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

static void *saver_main(void *arg)
{
	struct flight *f = arg;
	struct job *j = f->job;
	const char *err = NULL;
	struct htab seen;
	if (f->save_hook)
		f->save_hook(f->save_hook_ctx);
	struct rec_opts o = {.synchronous = 1, .exclusive = 1, .no_wal = 1, .batch_events = 8192};
	struct safefile *sf = j->sf;
	j->sf = NULL; /* rec_open_file takes it, and removes the file on failure */
	struct rec *r = rec_open_file(sf, &o, &err);
	int rc = 0;
	if (!r) {
		snprintf(j->msg, sizeof(j->msg), "flight recorder: %s", err ? err : "cannot save");
		j->err = -EIO;
		goto out;
	}
	if (j->ses.own)
		rc = rec_session_info(r, &j->ses);
	if (ht_init(&seen, FLIGHT_MAX_STACKS))
		rc = -ENOMEM;
	if (!rc)
		rc = write_events(r, j, &seen);
	ht_free(&seen);
	for (size_t i = 0; !rc && i < j->nchains; i++)
		rc = rec_chain(r, &j->chains[i]);
	if (!rc && f->stack_fn && j->nstack_ids)
		ask_stacks(f, j);
	for (size_t i = 0; !rc && i < j->nstacks; i++)
		rc = rec_stack(r, j->stacks[i].id, j->stacks[i].ips, j->stacks[i].frames);
	const char *why = rec_error(r);
	char whybuf[1024] = "";
	if (why)
		snprintf(whybuf, sizeof(whybuf), "%s", why);
	int crc = rec_close(r);
	if (!rc)
		rc = crc;
	if (rc == -ESTALE) {
		snprintf(j->msg, sizeof(j->msg),
			 "flight recorder: %s was removed or replaced while it was being saved "
			 "(not saved)",
			 j->path);
		j->err = rc;
	} else if (rc) {
		snprintf(j->msg, sizeof(j->msg), "flight recorder: %s",
			 whybuf[0] ? whybuf : strerror(-rc));
		j->err = rc;
	} else {
		double secs = j->n ? (double)(j->last_key - j->first_key) / 1e9 : 0;
		snprintf(j->msg, sizeof(j->msg), "saved %zu events (%.0f s) to %s", j->n, secs,
			 j->path);
	}
out:
	pthread_mutex_lock(&f->mu);
	f->done = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int flight_busy(struct flight *f)
{
	pthread_mutex_lock(&f->mu);
	int busy = f->running && !f->done;
	pthread_mutex_unlock(&f->mu);
	return busy;
}

/* Creates the file with a unique timestamped name, safely (safefile.h);
 * it stays open for the saver. */
static int reserve_path(struct flight *f, const char *dir, struct job *j)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (!dir || !*dir)
		dir = ".";
	for (int i = 1; i < 1000; i++) {
		if (i == 1)
			snprintf(j->path, sizeof(j->path), "%s/ingero-top-flight-%s.db", dir,
				 stamp);
		else
			snprintf(j->path, sizeof(j->path), "%s/ingero-top-flight-%s-%d.db", dir,
				 stamp, i);
		int rc = safefile_open(j->path, SAFEFILE_CREATE, &j->sf, f->why, sizeof(f->why));
		if (rc != -EEXIST)
			return rc;
	}
	return -EEXIST;
}

void flight_set_save_hook(struct flight *f, void (*fn)(void *ctx), void *ctx)
{
	f->save_hook = fn;
	f->save_hook_ctx = ctx;
}

void flight_set_stacks(struct flight *f, flight_stack_fn fn, void *ctx)
{
	f->stack_fn = fn;
	f->stack_ctx = ctx;
}

const char *flight_error(const struct flight *f)
{
	return f->why;
}

/* The job's share of the ring: a reference on every chunk, and the bounds
 * of the events in the first and last. */
static int take_ring(struct flight *f, struct job *j)
{
	j->chunks = calloc(f->ccount ? f->ccount : 1, sizeof(*j->chunks));
	if (!j->chunks)
		return -ENOMEM;
	j->n = f->len;
	if (!f->len)
		return 0; /* nothing to hold */
	for (size_t i = 0; i < f->ccount; i++) {
		j->chunks[i] = f->ring[(f->chead + i) % f->ccap];
		j->chunks[i]->refs++;
	}
	j->nchunks = f->ccount;
	j->first_off = f->head_off;
	j->last_len = f->tail_len;
	j->first_key = key(oldest(f));
	j->last_key = key(&j->chunks[j->nchunks - 1]->ev[j->last_len - 1]);
	return 0;
}

/* Everything a save writes besides the events: names, chains, session. */
static int take_rest(struct flight *f, struct job *j)
{
	j->names = malloc(NAME_SLOTS * sizeof(*j->names));
	j->chains = calloc(f->nchains ? f->nchains : 1, sizeof(*j->chains));
	j->stack_ids = f->stack_fn ? calloc(FLIGHT_MAX_STACKS, sizeof(*j->stack_ids)) : NULL;
	j->stacks = f->stack_fn ? calloc(FLIGHT_MAX_STACKS, sizeof(*j->stacks)) : NULL;
	if (!j->names || !j->chains || (f->stack_fn && (!j->stack_ids || !j->stacks)))
		return -ENOMEM;
	for (size_t i = 0; i < NAME_SLOTS; i++)
		if (f->names[i].pid)
			j->names[j->nnames++] = f->names[i];
	memcpy(j->cgdirs, f->cgdirs, sizeof(j->cgdirs));
	for (size_t i = 0; i < f->nchains; i++)
		if (rec_chain_copy(&j->chains[j->nchains], &f->chains[i]) == 0)
			j->nchains++;
	if (f->ses.own)
		rec_session_copy(&j->ses, &f->ses);
	return 0;
}

int flight_save(struct flight *f, const char *dir, char *path_out, size_t len)
{
	pthread_mutex_lock(&f->mu);
	int busy = f->running && !f->done;
	pthread_mutex_unlock(&f->mu);
	snprintf(f->why, sizeof(f->why), "%s", busy ? "a save is already running" : "");
	if (busy)
		return -EBUSY;
	join_saver(f); /* finished but not polled: its message is replaced */
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	int rc = reserve_path(f, dir, j);
	if (!rc)
		rc = take_ring(f, j);
	if (!rc)
		rc = take_rest(f, j);
	if (rc) {
		if (!f->why[0])
			snprintf(f->why, sizeof(f->why), "%s", strerror(-rc));
		job_free(f, j);
		return rc;
	}
	if (path_out && len)
		snprintf(path_out, len, "%s", j->path);
	job_free(f, f->job);
	f->job = j;
	f->done = 0;
	if (pthread_create(&f->thr, NULL, saver_main, f)) {
		f->job = NULL;
		job_free(f, j);
		snprintf(f->why, sizeof(f->why), "cannot start the saver thread");
		return -EAGAIN;
	}
	f->running = 1;
	return 0;
}

int flight_poll(struct flight *f, char *msg, size_t len)
{
	if (f->stack_fn)
		serve_stacks(f, STACK_BUDGET_NS);
	pthread_mutex_lock(&f->mu);
	int done = f->running && f->done;
	pthread_mutex_unlock(&f->mu);
	if (!done)
		return 0;
	join_saver(f);
	if (msg && len)
		snprintf(msg, len, "%s", f->job ? f->job->msg : "");
	job_free(f, f->job);
	f->job = NULL;
	return 1;
}
