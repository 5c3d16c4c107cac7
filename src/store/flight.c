/* The flight recorder ring and its background saver (which uses rec). */
#include "store/flight.h"
#include "core/htab.h"
#include "store/rec.h"

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

struct name {
	uint32_t pid;
	uint8_t node;
	char comm[IG_COMM_LEN];
	char container[IG_CONTAINER_LEN]; /* "" unknown */
};

/* What one save writes: owned by the saver thread while it runs. */
struct stack_json {
	uint64_t id;
	char *ips, *frames;
};

struct job {
	char path[PATH_MAX];
	struct stack_json *stacks;
	size_t nstacks;
	struct ig_event *ev;
	size_t n;
	struct name *names;
	size_t nnames;
	struct rec_chain *chains; /* copies */
	size_t nchains;
	struct rec_session ses; /* a copy; own NULL when none */
	int err;
	char msg[PATH_MAX + 200];
};

struct flight {
	uint64_t span_ns;
	size_t cap_max;
	struct ig_event *ring;
	size_t cap, head, len; /* head = oldest */
	uint64_t newest;
	uint64_t capped;
	struct name names[NAME_SLOTS];
	struct rec_chain chains[FLIGHT_MAX_CHAINS]; /* copies */
	size_t nchains, chain_next;
	struct rec_session ses; /* a copy; own NULL when none */
	/* saver */
	pthread_t thr;
	int running;
	pthread_mutex_t mu;
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
	f->span_ns = (uint64_t)(seconds * 1e9);
	f->cap_max = max_events ? max_events : FLIGHT_DEFAULT_MAX_EVENTS;
	pthread_mutex_init(&f->mu, NULL);
	return f;
}

static void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->ev);
	free(j->names);
	for (size_t i = 0; i < j->nstacks; i++) {
		free(j->stacks[i].ips);
		free(j->stacks[i].frames);
	}
	free(j->stacks);
	for (size_t i = 0; i < j->nchains; i++)
		rec_chain_clear(&j->chains[i]);
	free(j->chains);
	rec_session_clear(&j->ses);
	free(j);
}

static void join_saver(struct flight *f)
{
	if (f->running) {
		pthread_join(f->thr, NULL);
		f->running = 0;
	}
}

void flight_free(struct flight *f)
{
	if (!f)
		return;
	join_saver(f);
	job_free(f->job);
	for (size_t i = 0; i < f->nchains; i++)
		rec_chain_clear(&f->chains[i]);
	rec_session_clear(&f->ses);
	pthread_mutex_destroy(&f->mu);
	free(f->ring);
	free(f);
}

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

void flight_push(struct flight *f, const struct ig_event *e)
{
	remember_name(f, e);
	if (e->kind == IG_EV_COMM)
		return; /* names are kept apart and written at the start of a save */
	if (f->len == f->cap) {
		if (f->cap < f->cap_max) {
			size_t ncap = f->cap ? f->cap * 2 : 4096;
			if (ncap > f->cap_max)
				ncap = f->cap_max;
			struct ig_event *n = malloc(ncap * sizeof(*n));
			if (n) {
				/* unwrap into the new array */
				size_t first =
				    f->cap - f->head < f->len ? f->cap - f->head : f->len;
				if (f->len) {
					memcpy(n, f->ring + f->head, first * sizeof(*n));
					memcpy(n + first, f->ring, (f->len - first) * sizeof(*n));
				}
				free(f->ring);
				f->ring = n;
				f->cap = ncap;
				f->head = 0;
			}
		}
		if (f->len == f->cap) { /* at the cap: drop the oldest */
			if (!f->cap)
				return;
			f->head = (f->head + 1) % f->cap;
			f->len--;
			f->capped++;
		}
	}
	f->ring[(f->head + f->len) % f->cap] = *e;
	f->len++;
	uint64_t k = key(e);
	if (k > f->newest)
		f->newest = k;
	while (f->len && f->newest - key(&f->ring[f->head]) > f->span_ns &&
	       key(&f->ring[f->head]) < f->newest) {
		f->head = (f->head + 1) % f->cap;
		f->len--;
	}
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

int flight_span(const struct flight *f, uint64_t *oldest, uint64_t *newest)
{
	if (!f->len)
		return -ENODATA;
	*oldest = key(&f->ring[f->head]);
	*newest = f->newest;
	return 0;
}

uint64_t flight_capped(const struct flight *f)
{
	return f->capped;
}

static void *saver_main(void *arg)
{
	struct flight *f = arg;
	struct job *j = f->job;
	const char *err = NULL;
	if (f->save_hook)
		f->save_hook(f->save_hook_ctx);
	struct rec_opts o = {.synchronous = 1, .exclusive = 1, .batch_events = 8192};
	struct rec *r = rec_open(j->path, &o, &err);
	int rc = 0;
	if (!r) {
		snprintf(j->msg, sizeof(j->msg), "flight recorder: %s", err ? err : "cannot save");
		j->err = -EIO;
		unlink(j->path); /* the empty placeholder */
		goto out;
	}
	if (j->ses.own)
		rc = rec_session_info(r, &j->ses);
	uint64_t first = j->n ? key(&j->ev[0]) : 0;
	for (size_t i = 0; !rc && i < j->nnames; i++) {
		struct ig_event e = {0};
		e.kind = IG_EV_COMM;
		e.ts_ns = first;
		e.pid = e.tid = j->names[i].pid;
		e.node = j->names[i].node;
		memcpy(e.comm, j->names[i].comm, IG_COMM_LEN);
		e.container = j->names[i].container;
		rc = rec_event(r, &e);
	}
	for (size_t i = 0; !rc && i < j->n; i++)
		rc = rec_event(r, &j->ev[i]);
	for (size_t i = 0; !rc && i < j->nchains; i++)
		rc = rec_chain(r, &j->chains[i]);
	for (size_t i = 0; !rc && i < j->nstacks; i++)
		rc = rec_stack(r, j->stacks[i].id, j->stacks[i].ips, j->stacks[i].frames);
	const char *why = rec_error(r);
	char whybuf[1024] = "";
	if (why)
		snprintf(whybuf, sizeof(whybuf), "%s", why);
	int crc = rec_close(r);
	if (!rc)
		rc = crc;
	if (rc) {
		snprintf(j->msg, sizeof(j->msg), "flight recorder: %s",
			 whybuf[0] ? whybuf : strerror(-rc));
		j->err = rc;
	} else {
		double secs = j->n ? (double)(key(&j->ev[j->n - 1]) - first) / 1e9 : 0;
		snprintf(j->msg, sizeof(j->msg), "saved %zu events (%.0f s) to %s", j->n, secs,
			 j->path);
	}
out:
	pthread_mutex_lock(&f->mu);
	f->done = 1;
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

/* Creates an empty placeholder with a unique timestamped name. */
static int reserve_path(const char *dir, char *out, size_t len)
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
			snprintf(out, len, "%s/ingero-top-flight-%s.db", dir, stamp);
		else
			snprintf(out, len, "%s/ingero-top-flight-%s-%d.db", dir, stamp, i);
		int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
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

/* The frames of every distinct stack id among the job's calls. */
static int job_stacks(struct flight *f, struct job *j)
{
	struct htab seen;
	size_t cap = 0, nseen = 0;

	if (!f->stack_fn)
		return 0;
	if (ht_init(&seen, FLIGHT_MAX_STACKS))
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++) {
		uint64_t id = j->ev[i].stack_id;
		char *ips = NULL, *frames = NULL;
		if (j->ev[i].kind != IG_EV_CALL || !id || ht_get(&seen, id) >= 0)
			continue;
		if (nseen++ == FLIGHT_MAX_STACKS)
			break; /* the stacks module keeps no more than this anyway */
		ht_put(&seen, id, 1);
		if (f->stack_fn(f->stack_ctx, id, &ips, &frames))
			continue;
		if (j->nstacks == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct stack_json *n = realloc(j->stacks, ncap * sizeof(*n));
			if (!n) {
				free(ips);
				free(frames);
				ht_free(&seen);
				return -ENOMEM;
			}
			j->stacks = n;
			cap = ncap;
		}
		j->stacks[j->nstacks++] =
		    (struct stack_json){.id = id, .ips = ips, .frames = frames};
	}
	ht_free(&seen);
	return 0;
}

int flight_save(struct flight *f, const char *dir, char *path_out, size_t len)
{
	pthread_mutex_lock(&f->mu);
	int busy = f->running && !f->done;
	pthread_mutex_unlock(&f->mu);
	if (busy)
		return -EBUSY;
	if (f->running) { /* finished but not polled: keep its message for poll */
		join_saver(f);
	}
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	int rc = reserve_path(dir, j->path, sizeof(j->path));
	if (rc) {
		free(j);
		return rc;
	}
	j->n = f->len;
	j->ev = malloc((j->n ? j->n : 1) * sizeof(*j->ev));
	j->names = malloc(NAME_SLOTS * sizeof(*j->names));
	j->chains = calloc(f->nchains ? f->nchains : 1, sizeof(*j->chains));
	if (!j->ev || !j->names || !j->chains) {
		unlink(j->path);
		job_free(j);
		return -ENOMEM;
	}
	size_t first = f->cap - f->head < f->len ? f->cap - f->head : f->len;
	if (f->len) {
		memcpy(j->ev, f->ring + f->head, first * sizeof(*j->ev));
		memcpy(j->ev + first, f->ring, (f->len - first) * sizeof(*j->ev));
	}
	for (size_t i = 0; i < NAME_SLOTS; i++)
		if (f->names[i].pid)
			j->names[j->nnames++] = f->names[i];
	for (size_t i = 0; i < f->nchains; i++)
		if (rec_chain_copy(&j->chains[j->nchains], &f->chains[i]) == 0)
			j->nchains++;
	if (f->ses.own)
		rec_session_copy(&j->ses, &f->ses);
	job_stacks(f, j); /* without them the file still has every event */
	if (path_out && len)
		snprintf(path_out, len, "%s", j->path);
	/* a previous unpolled result is replaced */
	job_free(f->job);
	f->job = j;
	f->done = 0;
	if (pthread_create(&f->thr, NULL, saver_main, f)) {
		unlink(j->path);
		f->job = NULL;
		job_free(j);
		return -EAGAIN;
	}
	f->running = 1;
	return 0;
}

int flight_poll(struct flight *f, char *msg, size_t len)
{
	pthread_mutex_lock(&f->mu);
	int done = f->running && f->done;
	pthread_mutex_unlock(&f->mu);
	if (!done)
		return 0;
	join_saver(f);
	if (msg && len)
		snprintf(msg, len, "%s", f->job ? f->job->msg : "");
	job_free(f->job);
	f->job = NULL;
	return 1;
}
