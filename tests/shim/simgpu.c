/* The simulated GPU of the shim libraries: per-stream timelines with CUDA's
 * legacy default stream semantics, fake device memory, graphs, events, and
 * stream items whose end is posted later (NCCL), plus the spin-then-sleep
 * wait of CUDA's default "auto" schedule. Timing model: docs/shim.md. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "simgpu.h"

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u

enum { SYNC_AUTO, SYNC_BLOCK, SYNC_SPIN, SYNC_YIELD };
enum { EXT_POSTED, EXT_EVENT };

/* A stream item whose end is not known when it is queued. EXT_POSTED: its
 * end is posted by sim_ext_complete (an NCCL collective). EXT_EVENT: a
 * stream waiting for an event whose own work is such an item. */
struct sim_ext {
	int kind;
	int start_known, resolved;
	u64 start, end;
	u64 after_ns;	     /* fixed work queued after it on its stream meanwhile */
	struct sim_ext *dep; /* EXT_EVENT: the event's item, or NULL: dep_t */
	u64 dep_after, dep_t;
	int refs;
	struct sim_ext *next;
};

struct sim_config sim_cfg;
static _Atomic u64 cfg_launch_ns, cfg_kernel_ns, cfg_malloc_ns;

/* The device. Everything below is under sim_lock. */
pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sim_cond = PTHREAD_COND_INITIALIZER; /* an item resolved */
static struct sim_stream sim_legacy = {.magic = STREAM_MAGIC, .legacy = 1, .blocking = 1};
static u64 dev_busy;	  /* end of all known queued work */
static u64 blocking_busy; /* end of known work on blocking streams */
static struct sim_stream *pending; /* streams with unresolved items */
static unsigned int n_unresolved;
static atomic_int module_loads;

static __thread struct sim_stream ptds; /* the per-thread default stream */
static __thread u64 tl_kernel_ns = SIM_TIME_UNSET;
static __thread u64 tl_malloc_ns = SIM_TIME_UNSET;
static __thread u64 tl_launch_ns = SIM_TIME_UNSET;
static __thread int tl_slack_set;

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

u64 sim_env_us(const char *name, double def_us)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return (u64)(def_us * 1000.0);
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < 0 || v > 1e9) {
		fprintf(stderr, "shim: ignoring %s=%s: not a number of microseconds\n", name, s);
		return (u64)(def_us * 1000.0);
	}
	return (u64)(v * 1000.0 + 0.5);
}

/* The device lock across fork(). tests/unit/test_symbolize.c looks up
 * drv_atfork_prepare by name as a static function of libcuda.so.1. */
static void drv_atfork_prepare(void)
{
	pthread_mutex_lock(&sim_lock);
}

static void drv_atfork_parent(void)
{
	pthread_mutex_unlock(&sim_lock);
}

static void drv_atfork_unlock(void)
{
	pthread_mutex_unlock(&sim_lock);
}

static void init_once(void)
{
	const char *s;

	cfg_launch_ns = sim_env_us("SHIM_LAUNCH_US", 5);
	cfg_kernel_ns = sim_env_us("SHIM_KERNEL_US", 100);
	cfg_malloc_ns = sim_env_us("SHIM_MALLOC_US", 20);
	sim_cfg.free_ns = sim_env_us("SHIM_FREE_US", 5);
	sim_cfg.copy_fixed_ns = sim_env_us("SHIM_COPY_US", 10);
	sim_cfg.spin_ns = sim_env_us("SHIM_SPIN_US", 200);
	sim_cfg.module_ns = sim_env_us("SHIM_MODULE_US", 1000);
	sim_cfg.module_cold_ns = sim_env_us("SHIM_MODULE_COLD_US", 10000);
	sim_cfg.copy_gbps = 10.0;
	s = getenv("SHIM_COPY_GBPS");
	if (s && *s) {
		char *end;
		double v = strtod(s, &end);

		if (*end || !(v > 0))
			fprintf(stderr, "shim: ignoring SHIM_COPY_GBPS=%s: not a positive number\n",
				s);
		else
			sim_cfg.copy_gbps = v;
	}
	sim_cfg.mem_limit = 16ULL << 30;
	s = getenv("SHIM_MEM_MB");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || !v)
			fprintf(stderr, "shim: ignoring SHIM_MEM_MB=%s: not a positive integer\n",
				s);
		else
			sim_cfg.mem_limit = v << 20;
	}
	sim_cfg.sync_mode = SYNC_AUTO;
	s = getenv("SHIM_SYNC");
	if (s && *s) {
		if (!strcmp(s, "block"))
			sim_cfg.sync_mode = SYNC_BLOCK;
		else if (!strcmp(s, "spin"))
			sim_cfg.sync_mode = SYNC_SPIN;
		else if (!strcmp(s, "yield"))
			sim_cfg.sync_mode = SYNC_YIELD;
		else if (strcmp(s, "auto"))
			fprintf(stderr,
				"shim: ignoring SHIM_SYNC=%s: want auto, block, spin or yield\n",
				s);
	}
	s = getenv("CUDA_LAUNCH_BLOCKING");
	sim_cfg.launch_blocking = s && !strcmp(s, "1");
	pthread_atfork(drv_atfork_prepare, drv_atfork_parent, drv_atfork_unlock);
}

void sim_init(void)
{
	pthread_once(&sim_once, init_once);
}

u64 sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline u64 max64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* Burns CPU like the driver does while it builds a launch or an allocation:
 * the caller stays runnable, so a CPU hog shows up as preemption. */
void sim_spin(u64 ns)
{
	u64 deadline;

	if (!ns)
		return;
	deadline = sim_now() + ns;
	while (sim_now() < deadline)
		relax();
}

/*
 * Waits for the device the way CUDA's auto schedule does: sleep while the end
 * is far away, spin through the last SHIM_SPIN_US. The thread is then mostly
 * blocked during a long wait, and runnable (preemptible) near its end.
 * Absolute-time sleeps keep the total exact: a timer never fires early, and
 * the spin absorbs the wake-up latency.
 */
void sim_wait_until(u64 deadline)
{
	u64 spin = sim_cfg.spin_ns;
	u64 now = sim_now();

	if (now >= deadline)
		return;
	if (sim_cfg.sync_mode == SYNC_BLOCK) {
		spin = 0;
		/* With nothing to absorb the default 50 us timer slack, a pure
		 * sleep would end late by that much; 1 ns keeps syncs exact. */
		if (!tl_slack_set) {
			prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
			tl_slack_set = 1;
		}
	}
	if (sim_cfg.sync_mode != SYNC_SPIN && sim_cfg.sync_mode != SYNC_YIELD &&
	    deadline - now > spin) {
		u64 wake = deadline - spin;
		struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ULL),
				      .tv_nsec = (long)(wake % 1000000000ULL)};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (sim_now() < deadline) {
		if (sim_cfg.sync_mode == SYNC_YIELD)
			sched_yield();
		else
			relax();
	}
}

u64 sim_kernel_ns(void)
{
	return tl_kernel_ns != SIM_TIME_UNSET ? tl_kernel_ns : atomic_load(&cfg_kernel_ns);
}

u64 sim_launch_ns(void)
{
	return tl_launch_ns != SIM_TIME_UNSET ? tl_launch_ns : atomic_load(&cfg_launch_ns);
}

u64 sim_malloc_ns(void)
{
	return tl_malloc_ns != SIM_TIME_UNSET ? tl_malloc_ns : atomic_load(&cfg_malloc_ns);
}

u64 sim_copy_ns(size_t bytes)
{
	return sim_cfg.copy_fixed_ns + (u64)((double)bytes / sim_cfg.copy_gbps);
}

void sim_set_kernel_ns(u64 ns)
{
	atomic_store(&cfg_kernel_ns, ns);
}

void sim_set_malloc_ns(u64 ns)
{
	atomic_store(&cfg_malloc_ns, ns);
}

void sim_set_launch_ns(u64 ns)
{
	atomic_store(&cfg_launch_ns, ns);
}

void sim_set_thread_kernel_ns(u64 ns)
{
	tl_kernel_ns = ns;
}

void sim_set_thread_malloc_ns(u64 ns)
{
	tl_malloc_ns = ns;
}

void sim_set_thread_launch_ns(u64 ns)
{
	tl_launch_ns = ns;
}

void sim_module_load_cost(void)
{
	u64 ns = sim_cfg.module_ns;

	if (atomic_fetch_add(&module_loads, 1) == 0)
		ns += sim_cfg.module_cold_ns;
	sim_spin(ns);
}

/* ---- streams ------------------------------------------------------------ */

/* Maps a handle to its stream; NULL when the handle is not a live stream.
 * Lock held. */
static struct sim_stream *lookup(void *h)
{
	struct sim_stream *s = h;

	if (!h || h == SIM_STREAM_LEGACY)
		return &sim_legacy;
	if (h == SIM_STREAM_PER_THREAD) {
		if (ptds.magic != STREAM_MAGIC) {
			ptds.magic = STREAM_MAGIC;
			ptds.blocking = 1;
		}
		return &ptds;
	}
	return s->magic == STREAM_MAGIC ? s : NULL;
}

/*
 * Puts dur ns of work at the end of stream s, all of whose work is known, and
 * returns when it will end. Legacy default stream semantics, as in CUDA: work
 * on the legacy stream waits for all blocking streams, and work on a blocking
 * stream waits for the legacy stream. Lock held.
 */
static u64 queue_known(struct sim_stream *s, u64 now, u64 dur)
{
	u64 start = max64(now, s->busy_until);

	if (s->legacy)
		start = max64(start, blocking_busy);
	else if (s->blocking)
		start = max64(start, sim_legacy.busy_until);
	s->busy_until = start + dur;
	dev_busy = max64(dev_busy, s->busy_until);
	if (s->blocking)
		blocking_busy = max64(blocking_busy, s->busy_until);
	return s->busy_until;
}

/* As queue_known; behind an unresolved item the work just follows it, and
 * the end is not known yet: SIM_TIME_UNSET. Lock held. */
static u64 queue(struct sim_stream *s, u64 now, u64 dur)
{
	if (s->tail) {
		s->tail->after_ns += dur;
		return SIM_TIME_UNSET;
	}
	return queue_known(s, now, dur);
}

static void ext_put(struct sim_ext *x)
{
	if (x && --x->refs == 0)
		free(x);
}

/* The time of an event's recorded work: 1 when known (in *t). Lock held. */
static int dep_time(struct sim_ext *dep, u64 after, u64 t, u64 *out)
{
	if (!dep) {
		*out = t;
		return 1;
	}
	if (!dep->resolved)
		return 0;
	*out = max64(dep->end, dep->start) + after;
	return 1;
}

/* Appends x to s; its start is known when the stream has nothing pending. */
static void ext_append(struct sim_stream *s, struct sim_ext *x)
{
	if (s->tail) {
		s->tail->next = x;
		s->tail = x;
	} else {
		x->start = queue_known(s, sim_now(), 0);
		x->start_known = 1;
		s->head = s->tail = x;
	}
	if (!s->on_pend) {
		s->on_pend = 1;
		s->pend_next = pending;
		pending = s;
	}
	n_unresolved++;
}

/* Pops the resolved items at the head of s; 1 if any. Lock held. */
static int settle_stream(struct sim_stream *s)
{
	int progress = 0;

	while (s->head) {
		struct sim_ext *x = s->head;
		u64 t, next;

		if (x->kind == EXT_EVENT && !x->resolved &&
		    dep_time(x->dep, x->dep_after, x->dep_t, &t)) {
			x->end = max64(x->start, t);
			x->resolved = 1;
		}
		if (!x->resolved)
			break;
		x->end = max64(x->end, x->start);
		next = x->end + x->after_ns;
		dev_busy = max64(dev_busy, next);
		if (s->blocking)
			blocking_busy = max64(blocking_busy, next);
		s->head = x->next;
		if (s->head) {
			s->head->start = next;
			s->head->start_known = 1;
		} else {
			s->tail = NULL;
			s->busy_until = max64(s->busy_until, next);
		}
		n_unresolved--;
		ext_put(x);
		progress = 1;
	}
	return progress;
}

/* Resolves whatever can be, across streams, until nothing moves. Lock held. */
static void settle_all(void)
{
	int progress, moved = 0;

	do {
		struct sim_stream **pp = &pending;

		progress = 0;
		while (*pp) {
			struct sim_stream *s = *pp;

			progress |= settle_stream(s);
			if (!s->head) {
				s->on_pend = 0;
				*pp = s->pend_next;
			} else {
				pp = &s->pend_next;
			}
		}
		moved |= progress;
	} while (progress);
	/* Other waiters may be waiting for what just resolved. */
	if (moved)
		pthread_cond_broadcast(&sim_cond);
}

/* Blocks until s has nothing pending; returns the end of its work. Lock held
 * (released while waiting). */
static u64 stream_end_wait(struct sim_stream *s)
{
	for (;;) {
		settle_all();
		if (!s->head)
			break;
		pthread_cond_wait(&sim_cond, &sim_lock);
	}
	/* The legacy stream is ordered after the blocking streams. */
	return s->legacy ? max64(s->busy_until, blocking_busy) : s->busy_until;
}

/* Blocks until no stream has anything pending; returns the device's end.
 * Lock held (released while waiting). */
u64 sim_device_end_wait(void)
{
	for (;;) {
		settle_all();
		if (!n_unresolved)
			break;
		pthread_cond_wait(&sim_cond, &sim_lock);
	}
	return dev_busy;
}

u64 sim_legacy_queue_wait(u64 dur)
{
	u64 end = queue(&sim_legacy, sim_now(), dur);

	return end == SIM_TIME_UNSET ? stream_end_wait(&sim_legacy) : end;
}

/* With CUDA_LAUNCH_BLOCKING=1, as the driver does, the launch returns once
 * its work has ended, waiting the way a synchronisation does (SHIM_SYNC). */
int sim_launch(void *h, u64 dur, unsigned int nodes, int spin)
{
	struct sim_stream *s;
	u64 end = 0;

	if (spin)
		sim_spin(sim_launch_ns());
	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (s && s->capturing) {
		s->cap_ns += dur;
		s->cap_nodes += nodes;
	} else if (s) {
		queue(s, sim_now(), dur);
		if (sim_cfg.launch_blocking)
			end = stream_end_wait(s);
	}
	pthread_mutex_unlock(&sim_lock);
	if (end)
		sim_wait_until(end);
	return s ? SIM_OK : SIM_EHANDLE;
}

int sim_stream_create(void **out, int nonblocking)
{
	struct sim_stream *s;

	if (!out)
		return SIM_EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return SIM_ENOMEM;
	s->magic = STREAM_MAGIC;
	s->blocking = !nonblocking;
	*out = s;
	return SIM_OK;
}

/* Returns at once even with work pending, as CUDA does; the work still
 * counts in the device timeline. Items still pending (NCCL) are waited for,
 * since they refer to the stream. */
int sim_stream_destroy(void *h)
{
	struct sim_stream *s;

	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (s && (s->legacy || s == &ptds))
		s = NULL;
	if (s) {
		stream_end_wait(s);
		s->magic = 0;
	}
	pthread_mutex_unlock(&sim_lock);
	if (!s)
		return SIM_EHANDLE;
	free(s);
	return SIM_OK;
}

int sim_stream_sync(void *h)
{
	struct sim_stream *s;
	int ret = SIM_OK;
	u64 end = 0;

	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (!s)
		ret = SIM_EHANDLE;
	else if (s->capturing)
		ret = SIM_ECAPTURE;
	else
		end = stream_end_wait(s);
	pthread_mutex_unlock(&sim_lock);
	if (ret == SIM_OK)
		sim_wait_until(end);
	return ret;
}

int sim_device_sync(void)
{
	u64 end;

	pthread_mutex_lock(&sim_lock);
	end = sim_device_end_wait();
	pthread_mutex_unlock(&sim_lock);
	sim_wait_until(end);
	return SIM_OK;
}

/* ---- capture and graphs ------------------------------------------------- */

int sim_capture_begin(void *h)
{
	struct sim_stream *s;
	int ret = SIM_OK;

	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (!s)
		ret = SIM_EHANDLE;
	else if (s->legacy)
		ret = SIM_ECAPTURE;
	else if (s->capturing)
		ret = SIM_ESTATE;
	else {
		s->capturing = 1;
		s->cap_ns = 0;
		s->cap_nodes = 0;
	}
	pthread_mutex_unlock(&sim_lock);
	return ret;
}

int sim_capture_end(void *h, struct sim_graph **out)
{
	struct sim_stream *s;
	struct sim_graph *g;

	if (!out)
		return SIM_EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return SIM_ENOMEM;
	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (s && s->capturing) {
		g->magic = SIM_GRAPH_MAGIC;
		g->dur_ns = s->cap_ns;
		g->nodes = s->cap_nodes;
		s->capturing = 0;
	}
	pthread_mutex_unlock(&sim_lock);
	if (!g->magic) {
		free(g);
		return s ? SIM_EUNMATCHED : SIM_EHANDLE;
	}
	*out = g;
	return SIM_OK;
}

/* A graph and an executable graph are the same thing here: total device
 * time; only the magic tells them apart. */
int sim_graph_instantiate(struct sim_graph **exec, struct sim_graph *g)
{
	struct sim_graph *e;

	if (!exec)
		return SIM_EINVAL;
	if (!g || g->magic != SIM_GRAPH_MAGIC)
		return SIM_EHANDLE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return SIM_ENOMEM;
	*e = *g;
	e->magic = SIM_EXEC_MAGIC;
	*exec = e;
	return SIM_OK;
}

int sim_graph_destroy(struct sim_graph *g, unsigned int magic)
{
	if (!g || g->magic != magic)
		return SIM_EHANDLE;
	g->magic = 0;
	free(g);
	return SIM_OK;
}

/* One launch worth of CPU for the whole graph: that is the point of graphs. */
int sim_graph_launch(struct sim_graph *exec, void *h)
{
	if (!exec || exec->magic != SIM_EXEC_MAGIC)
		return SIM_EHANDLE;
	return sim_launch(h, exec->dur_ns, exec->nodes, 1);
}

/* ---- events ------------------------------------------------------------- */

int sim_event_create(struct sim_event **out)
{
	struct sim_event *e;

	if (!out)
		return SIM_EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return SIM_ENOMEM;
	e->magic = EVENT_MAGIC;
	*out = e;
	return SIM_OK;
}

int sim_event_destroy(struct sim_event *e)
{
	if (!e || e->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	ext_put(e->dep);
	pthread_mutex_unlock(&sim_lock);
	e->magic = 0;
	free(e);
	return SIM_OK;
}

/* The event captures the work queued on the stream so far (on the legacy
 * stream: also the blocking streams'). */
int sim_event_record(struct sim_event *e, void *h)
{
	struct sim_stream *s;
	int ret = SIM_OK;

	if (!e || e->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (!s) {
		ret = SIM_EHANDLE;
	} else if (s->capturing) {
		ret = SIM_ECAPTURE;
	} else {
		ext_put(e->dep);
		e->dep = NULL;
		e->recorded = 1;
		if (s->tail) {
			e->dep = s->tail;
			e->dep->refs++;
			e->after = s->tail->after_ns;
		} else {
			/* stamped when the stream reaches it: now on an idle stream,
			 * which is what cuEventElapsedTime measures from */
			e->t = max64(sim_now(), s->legacy ? max64(s->busy_until, blocking_busy)
							   : s->busy_until);
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return ret;
}

/* 1 with the end of the event's work in *t when it is known. Lock held. */
static int event_time(struct sim_event *e, u64 *t)
{
	if (!e->recorded) { /* an event never recorded is complete */
		*t = 0;
		return 1;
	}
	if (!dep_time(e->dep, e->after, e->t, t))
		return 0;
	if (e->dep) { /* known for good: drop the item */
		e->t = *t;
		ext_put(e->dep);
		e->dep = NULL;
	}
	return 1;
}

int sim_event_query(struct sim_event *e)
{
	int known;
	u64 t = 0;

	if (!e || e->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	settle_all();
	known = event_time(e, &t);
	pthread_mutex_unlock(&sim_lock);
	return known && t <= sim_now() ? SIM_OK : SIM_ENOTREADY;
}

/* The time between two events' completions, in ms (cuEventElapsedTime):
 * both must have been recorded and be complete. */
int sim_event_elapsed(struct sim_event *a, struct sim_event *b, float *ms)
{
	int known;
	u64 ta = 0, tb = 0, now;

	if (!a || !b || !ms || a->magic != EVENT_MAGIC || b->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	if (!a->recorded || !b->recorded)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	settle_all();
	known = event_time(a, &ta) && event_time(b, &tb);
	pthread_mutex_unlock(&sim_lock);
	now = sim_now();
	if (!known || ta > now || tb > now)
		return SIM_ENOTREADY;
	*ms = (float)((double)((long long)(tb - ta)) / 1e6);
	return SIM_OK;
}

int sim_event_sync(struct sim_event *e)
{
	u64 t;

	if (!e || e->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	for (;;) {
		settle_all();
		if (event_time(e, &t))
			break;
		pthread_cond_wait(&sim_cond, &sim_lock);
	}
	pthread_mutex_unlock(&sim_lock);
	sim_wait_until(t);
	return SIM_OK;
}

/* Later work on the stream starts after the event's work. A capturing
 * stream ignores the wait (the graph has no cross-stream edges here). */
int sim_stream_wait_event(void *h, struct sim_event *e)
{
	struct sim_stream *s;
	struct sim_ext *x;
	u64 t;

	if (!e || e->magic != EVENT_MAGIC)
		return SIM_EHANDLE;
	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (!s || s->capturing) {
		pthread_mutex_unlock(&sim_lock);
		return s ? SIM_OK : SIM_EHANDLE;
	}
	if (!s->tail && event_time(e, &t)) {
		s->busy_until = max64(s->busy_until, t);
		pthread_mutex_unlock(&sim_lock);
		return SIM_OK;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		pthread_mutex_unlock(&sim_lock);
		return SIM_ENOMEM;
	}
	x->kind = EXT_EVENT;
	x->refs = 1;
	x->dep = e->dep;
	if (x->dep)
		x->dep->refs++;
	x->dep_after = e->after;
	x->dep_t = e->recorded ? e->t : 0;
	ext_append(s, x);
	pthread_mutex_unlock(&sim_lock);
	return SIM_OK;
}

/* ---- items whose end is posted later ------------------------------------ */

int sim_ext_enqueue(void *h, struct sim_ext **out)
{
	struct sim_stream *s;
	struct sim_ext *x;
	int ret = SIM_OK;

	x = calloc(1, sizeof(*x));
	if (!x)
		return SIM_ENOMEM;
	x->kind = EXT_POSTED;
	x->refs = 2; /* the stream's and the poster's */
	pthread_mutex_lock(&sim_lock);
	s = lookup(h);
	if (!s)
		ret = SIM_EHANDLE;
	else if (s->capturing)
		ret = SIM_ECAPTURE;
	else
		ext_append(s, x);
	pthread_mutex_unlock(&sim_lock);
	if (ret != SIM_OK) {
		free(x);
		return ret;
	}
	*out = x;
	return SIM_OK;
}

u64 sim_ext_start(struct sim_ext *x)
{
	u64 start;

	pthread_mutex_lock(&sim_lock);
	for (;;) {
		settle_all();
		if (x->start_known)
			break;
		pthread_cond_wait(&sim_cond, &sim_lock);
	}
	start = x->start;
	pthread_mutex_unlock(&sim_lock);
	return start;
}

void sim_ext_complete(struct sim_ext *x, u64 end_ns)
{
	pthread_mutex_lock(&sim_lock);
	x->end = end_ns;
	x->resolved = 1;
	settle_all();
	pthread_cond_broadcast(&sim_cond);
	ext_put(x);
	pthread_mutex_unlock(&sim_lock);
}
