/* The NVML sampler (nvml.h): a thread that loads libnvidia-ml.so.1 with
 * dlopen, initialises it, and every interval reads each device's
 * utilisation, memory, power and limit, temperature, SM clock and the GPU
 * memory of its compute processes, then publishes the round under a lock.
 * Only that thread calls NVML. NVML's types are declared here from
 * NVIDIA's public API reference, so nothing of NVML is needed to build. */
#include "collect/nvml.h"

#include "collect/collector.h"
#include "core/event.h"
#include "core/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"

/* --- NVML's ABI (nvml.h) ------------------------------------------------------ */

typedef int nvml_ret;
typedef struct nvmlDevice_st *nvml_dev;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

struct nvml_util {
	unsigned int gpu, memory;
};
struct nvml_mem_v1 {
	unsigned long long total, free, used;
};
struct nvml_mem_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};
#define NVML_MEMORY_V2 ((unsigned int)(sizeof(struct nvml_mem_v2) | (2u << 24)))
struct nvml_proc_v1 { /* nvmlProcessInfo_v1_t: 16 bytes */
	unsigned int pid;
	unsigned long long used;
};
struct nvml_proc { /* nvmlProcessInfo_t of the _v2 and _v3 calls: 24 bytes */
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

struct nvml_fns {
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*driver_version)(char *, unsigned int);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_dev *);
	nvml_ret (*name)(nvml_dev, char *, unsigned int);
	nvml_ret (*util)(nvml_dev, struct nvml_util *);
	nvml_ret (*mem_v2)(nvml_dev, struct nvml_mem_v2 *);
	nvml_ret (*mem_v1)(nvml_dev, struct nvml_mem_v1 *);
	nvml_ret (*power)(nvml_dev, unsigned int *);
	nvml_ret (*limit)(nvml_dev, unsigned int *);
	nvml_ret (*temp)(nvml_dev, int, unsigned int *);
	nvml_ret (*clock)(nvml_dev, int, unsigned int *);
	nvml_ret (*procs)(nvml_dev, unsigned int *, void *); /* _v3 or _v2 (24-byte entries) */
	nvml_ret (*procs_v1)(nvml_dev, unsigned int *, void *);
};

/* --- the sampler ------------------------------------------------------------------ */

#define MAX_PROCS 512 /* processes kept per round, all devices */
#define PROC_BUF 1024 /* entries asked of NVML per device */

struct round {
	uint64_t ts_ns; /* Unix ns */
	int ndev;
	struct ig_gpu_dev dev[IG_GPU_MAX_DEVS];
	int nproc;
	struct {
		uint32_t pid;
		uint16_t dev;
		uint16_t known;
		uint64_t bytes;
	} proc[MAX_PROCS];
};

struct nvml {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	unsigned interval_ms;
	char path[PATH_MAX];
	/* under mu */
	int state;
	char line[256];
	int stop, done, abandoned;
	const char *busy;     /* the NVML call in progress, NULL between calls */
	uint64_t busy_since;  /* CLOCK_MONOTONIC ns */
	uint64_t gen, taken;  /* rounds published, the last one emitted */
	struct round pub;     /* the latest round */
	/* the thread's own */
	void *dl;
	struct nvml_fns f;
	unsigned ndev;
	nvml_dev h[IG_GPU_MAX_DEVS];
	char names[IG_GPU_MAX_DEVS][IG_COMM_LEN];
	struct round work;
	struct nvml_proc pbuf[PROC_BUF];
};

static void set_state(struct nvml *n, int state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_state(struct nvml *n, int state, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&n->mu);
	n->state = state;
	va_start(ap, fmt);
	vsnprintf(n->line, sizeof(n->line), fmt, ap);
	va_end(ap);
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
}

static void busy(struct nvml *n, const char *call)
{
	pthread_mutex_lock(&n->mu);
	n->busy = call;
	n->busy_since = call ? ig_mono_ns() : 0;
	pthread_mutex_unlock(&n->mu);
}

/* One NVML call, named for the status line while it runs. */
#define CALL(n, fn, name, ...)                                                                     \
	({                                                                                         \
		busy(n, name);                                                                     \
		nvml_ret r_ = (n)->f.fn(__VA_ARGS__);                                              \
		busy(n, NULL);                                                                     \
		r_;                                                                                \
	})

static const char *err_str(struct nvml *n, nvml_ret r)
{
	const char *s = n->f.error_string ? n->f.error_string(r) : NULL;
	return s ? s : "unknown error";
}

static void *sym(struct nvml *n, const char *a, const char *b)
{
	void *p = dlsym(n->dl, a);
	return p || !b ? p : dlsym(n->dl, b);
}

/* dlopen, the symbols, nvmlInit, the devices. 0, or -1 with the state set. */
static int nv_open(struct nvml *n)
{
	nvml_ret n_ret;
	n->dl = dlopen(n->path, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		const char *e = dlerror();
		set_state(n, NVML_ABSENT, "%.100s not found (%.120s)", n->path,
			  e ? e : "dlopen failed");
		return -1;
	}
	struct nvml_fns *f = &n->f;
	*(void **)&f->init = sym(n, "nvmlInit_v2", "nvmlInit");
	*(void **)&f->shutdown = sym(n, "nvmlShutdown", NULL);
	*(void **)&f->error_string = sym(n, "nvmlErrorString", NULL);
	*(void **)&f->driver_version = sym(n, "nvmlSystemGetDriverVersion", NULL);
	*(void **)&f->count = sym(n, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&f->handle = sym(n, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	*(void **)&f->name = sym(n, "nvmlDeviceGetName", NULL);
	*(void **)&f->util = sym(n, "nvmlDeviceGetUtilizationRates", NULL);
	*(void **)&f->mem_v2 = sym(n, "nvmlDeviceGetMemoryInfo_v2", NULL);
	*(void **)&f->mem_v1 = sym(n, "nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&f->power = sym(n, "nvmlDeviceGetPowerUsage", NULL);
	*(void **)&f->limit = sym(n, "nvmlDeviceGetEnforcedPowerLimit", NULL);
	*(void **)&f->temp = sym(n, "nvmlDeviceGetTemperature", NULL);
	*(void **)&f->clock = sym(n, "nvmlDeviceGetClockInfo", NULL);
	*(void **)&f->procs = sym(n, "nvmlDeviceGetComputeRunningProcesses_v3",
				  "nvmlDeviceGetComputeRunningProcesses_v2");
	*(void **)&f->procs_v1 = sym(n, "nvmlDeviceGetComputeRunningProcesses", NULL);
	if (!f->init || !f->count || !f->handle) {
		set_state(n, NVML_FAILED, "%.200s has no nvmlInit or device calls", n->path);
		return -1;
	}
	if ((n_ret = CALL(n, init, "nvmlInit_v2")) != NVML_SUCCESS) {
		set_state(n, NVML_FAILED, "nvmlInit_v2: %s (%d)", err_str(n, n_ret), n_ret);
		return -1;
	}
	unsigned count = 0;
	if ((n_ret = CALL(n, count, "nvmlDeviceGetCount_v2", &count)) != NVML_SUCCESS) {
		set_state(n, NVML_FAILED, "nvmlDeviceGetCount_v2: %s (%d)", err_str(n, n_ret),
			  n_ret);
		return -1;
	}
	if (!count) {
		set_state(n, NVML_FAILED, "NVML sees no GPU");
		return -1;
	}
	n->ndev = count < IG_GPU_MAX_DEVS ? count : IG_GPU_MAX_DEVS;
	char names[200] = "", drv[96] = "?";
	for (unsigned i = 0; i < n->ndev; i++) {
		char nm[96] = "";
		if (CALL(n, handle, "nvmlDeviceGetHandleByIndex_v2", i, &n->h[i]) != NVML_SUCCESS)
			n->h[i] = NULL;
		if (n->h[i] && f->name && CALL(n, name, "nvmlDeviceGetName", n->h[i], nm,
					       sizeof(nm)) != NVML_SUCCESS)
			nm[0] = 0;
		nm[sizeof(nm) - 1] = 0;
		const char *b = strncmp(nm, "NVIDIA ", 7) ? nm : nm + 7;
		size_t bl = strnlen(b, IG_COMM_LEN - 1);
		memcpy(n->names[i], b, bl);
		n->names[i][bl] = 0;
		size_t l = strlen(names);
		if (l < sizeof(names) - 1)
			snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", nm[0] ? nm : "?");
	}
	if (f->driver_version &&
	    CALL(n, driver_version, "nvmlSystemGetDriverVersion", drv, sizeof(drv)) != NVML_SUCCESS)
		snprintf(drv, sizeof(drv), "?");
	drv[sizeof(drv) - 1] = 0;
	set_state(n, NVML_OK, "driver %s, %u device%s (%s)%s", drv, count, count == 1 ? "" : "s",
		  names, count > IG_GPU_MAX_DEVS ? ", the first 16 sampled" : "");
	return 0;
}

/* The compute processes of device i into the round. */
static void nv_procs(struct nvml *n, unsigned i, struct round *r)
{
	nvml_ret n_ret;
	unsigned cnt = PROC_BUF;
	int v1 = !n->f.procs;
	if (v1 && !n->f.procs_v1)
		return;
	if (v1)
		n_ret = CALL(n, procs_v1, "nvmlDeviceGetComputeRunningProcesses", n->h[i], &cnt,
			     n->pbuf);
	else
		n_ret = CALL(n, procs, "nvmlDeviceGetComputeRunningProcesses_v3", n->h[i], &cnt,
			     n->pbuf);
	if (n_ret != NVML_SUCCESS && n_ret != NVML_ERROR_INSUFFICIENT_SIZE) {
		if (!r->dev[i].err)
			r->dev[i].err = n_ret;
		return;
	}
	if (cnt > PROC_BUF)
		cnt = PROC_BUF; /* more than asked for: the first ones */
	const struct nvml_proc_v1 *p1 = (const void *)n->pbuf;
	for (unsigned k = 0; k < cnt && r->nproc < MAX_PROCS; k++) {
		uint32_t pid = v1 ? p1[k].pid : n->pbuf[k].pid;
		unsigned long long used = v1 ? p1[k].used : n->pbuf[k].used;
		r->proc[r->nproc].pid = pid;
		r->proc[r->nproc].dev = (uint16_t)i;
		r->proc[r->nproc].known = used != NVML_VALUE_NOT_AVAILABLE;
		r->proc[r->nproc].bytes = used == NVML_VALUE_NOT_AVAILABLE ? 0 : used;
		r->nproc++;
	}
}

static void first_err(struct ig_gpu_dev *d, nvml_ret r)
{
	if (r != NVML_SUCCESS && !d->err)
		d->err = r;
}

/* One device's values; a failed call leaves its value unset. */
static void nv_device(struct nvml *n, unsigned i, struct ig_gpu_dev *d)
{
	nvml_ret n_ret;
	const struct nvml_fns *f = &n->f;
	nvml_dev h = n->h[i];
	memset(d, 0, sizeof(*d));
	d->index = i;
	memcpy(d->name, n->names[i], IG_COMM_LEN);
	if (!h)
		return;
	struct nvml_util u;
	if (f->util) {
		if (!(n_ret = CALL(n, util, "nvmlDeviceGetUtilizationRates", h, &u))) {
			d->valid |= IG_GPU_V_UTIL;
			d->util_gpu_pct = u.gpu > 100 ? 100 : u.gpu;
			d->util_mem_pct = u.memory > 100 ? 100 : u.memory;
		}
		first_err(d, n_ret);
	}
	struct nvml_mem_v2 m2 = {.version = NVML_MEMORY_V2};
	struct nvml_mem_v1 m1;
	if (f->mem_v2 && !(n_ret = CALL(n, mem_v2, "nvmlDeviceGetMemoryInfo_v2", h, &m2))) {
		d->valid |= IG_GPU_V_MEM;
		d->mem_used = m2.used;
		d->mem_total = m2.total;
	} else if (f->mem_v1) {
		if (!(n_ret = CALL(n, mem_v1, "nvmlDeviceGetMemoryInfo", h, &m1))) {
			d->valid |= IG_GPU_V_MEM;
			d->mem_used = m1.used;
			d->mem_total = m1.total;
		}
		first_err(d, n_ret);
	}
	unsigned v;
	if (f->power) {
		if (!(n_ret = CALL(n, power, "nvmlDeviceGetPowerUsage", h, &v))) {
			d->valid |= IG_GPU_V_POWER;
			d->power_mw = v;
		}
		first_err(d, n_ret);
	}
	if (f->limit) {
		if (!(n_ret = CALL(n, limit, "nvmlDeviceGetEnforcedPowerLimit", h, &v))) {
			d->valid |= IG_GPU_V_LIMIT;
			d->power_limit_mw = v;
		}
		first_err(d, n_ret);
	}
	if (f->temp) {
		if (!(n_ret = CALL(n, temp, "nvmlDeviceGetTemperature", h, NVML_TEMPERATURE_GPU, &v))) {
			d->valid |= IG_GPU_V_TEMP;
			d->temp_c = v;
		}
		first_err(d, n_ret);
	}
	if (f->clock) {
		if (!(n_ret = CALL(n, clock, "nvmlDeviceGetClockInfo", h, NVML_CLOCK_SM, &v))) {
			d->valid |= IG_GPU_V_CLOCK;
			d->sm_mhz = v;
		}
		first_err(d, n_ret);
	}
}

static void nv_round(struct nvml *n)
{
	struct round *r = &n->work;
	r->ndev = (int)n->ndev;
	r->nproc = 0;
	for (unsigned i = 0; i < n->ndev; i++) {
		nv_device(n, i, &r->dev[i]);
		if (n->h[i])
			nv_procs(n, i, r);
	}
	r->ts_ns = ig_unix_now_ns();
	for (unsigned i = 0; i < n->ndev; i++)
		r->dev[i].ts_ns = r->ts_ns;
	pthread_mutex_lock(&n->mu);
	memcpy(&n->pub, r, sizeof(*r));
	n->gen++;
	pthread_mutex_unlock(&n->mu);
}

/* The end of the thread: it frees everything when its owner has gone. */
static void nv_finish(struct nvml *n, int opened)
{
	if (opened && n->f.shutdown)
		(void)CALL(n, shutdown, "nvmlShutdown");
	pthread_mutex_lock(&n->mu);
	n->done = 1;
	int gone = n->abandoned;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	if (gone) {
		if (n->dl)
			dlclose(n->dl);
		pthread_mutex_destroy(&n->mu);
		pthread_cond_destroy(&n->cv);
		free(n);
	}
}

static void *nv_thread(void *arg)
{
	struct nvml *n = arg;
	int opened = nv_open(n) == 0;
	while (opened) {
		nv_round(n);
		pthread_mutex_lock(&n->mu);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)n->interval_ms * 1000000ULL;
		until.tv_sec += (time_t)(ns / 1000000000ULL);
		until.tv_nsec = (long)(ns % 1000000000ULL);
		while (!n->stop && pthread_cond_timedwait(&n->cv, &n->mu, &until) != ETIMEDOUT)
			;
		int stop = n->stop;
		pthread_mutex_unlock(&n->mu);
		if (stop)
			break;
	}
	nv_finish(n, opened);
	return NULL;
}

struct nvml *nvml_start(const char *path, unsigned interval_ms)
{
	struct nvml *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (!path)
		path = getenv("INGERO_TOP_NVML");
	snprintf(n->path, sizeof(n->path), "%s", path && *path ? path : "libnvidia-ml.so.1");
	n->interval_ms = interval_ms < 100 ? 100 : interval_ms > 10000 ? 10000 : interval_ms;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	n->state = NVML_STARTING;
	snprintf(n->line, sizeof(n->line), "loading %.200s", n->path);
	if (pthread_create(&n->th, NULL, nv_thread, n)) {
		n->state = NVML_FAILED;
		snprintf(n->line, sizeof(n->line), "cannot start the sampler thread");
		n->done = 1;
		n->th = 0;
	}
	return n;
}

void nvml_stop(struct nvml *n)
{
	if (!n)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	pthread_cond_broadcast(&n->cv);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 300000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!n->done && pthread_cond_timedwait(&n->cv, &n->mu, &until) != ETIMEDOUT)
		;
	if (!n->done) {
		/* stuck in NVML: leave it the memory it may still touch */
		n->abandoned = 1;
		log_msg(LOG_WARN, "NVML: %s does not return; leaving it behind",
			n->busy ? n->busy : "a call");
		pthread_mutex_unlock(&n->mu);
		pthread_detach(n->th);
		return;
	}
	pthread_mutex_unlock(&n->mu);
	if (n->th)
		pthread_join(n->th, NULL);
	if (n->dl)
		dlclose(n->dl);
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->cv);
	free(n);
}

int nvml_status(struct nvml *n, char *line, size_t len, uint64_t *stuck_ns)
{
	pthread_mutex_lock(&n->mu);
	int st = n->state;
	uint64_t stuck = 0, now = ig_mono_ns();
	/* a call running longer than a round and a second is not answering */
	uint64_t limit = (uint64_t)n->interval_ms * 1000000ULL + 1000000000ULL;
	if (n->busy && now > n->busy_since + limit)
		stuck = now - n->busy_since;
	if (stuck)
		snprintf(line, len, "%s not answering for %.0f s", n->busy, (double)stuck / 1e9);
	else
		snprintf(line, len, "%s", n->line);
	pthread_mutex_unlock(&n->mu);
	if (stuck_ns)
		*stuck_ns = stuck;
	return st;
}

int nvml_wait_ready(struct nvml *n, unsigned timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)timeout_ms * 1000000ULL;
	until.tv_sec += (time_t)(ns / 1000000000ULL);
	until.tv_nsec = (long)(ns % 1000000000ULL);
	pthread_mutex_lock(&n->mu);
	while (n->state == NVML_STARTING &&
	       pthread_cond_timedwait(&n->cv, &n->mu, &until) != ETIMEDOUT)
		;
	int st = n->state;
	pthread_mutex_unlock(&n->mu);
	return st;
}

int nvml_take(struct nvml *n, uint64_t now_ns, ig_emit_fn emit, void *ctx)
{
	static __thread struct round r; /* too big for the stack */
	pthread_mutex_lock(&n->mu);
	if (n->gen == n->taken) {
		pthread_mutex_unlock(&n->mu);
		return 0;
	}
	n->taken = n->gen;
	memcpy(&r, &n->pub, sizeof(r));
	pthread_mutex_unlock(&n->mu);
	uint64_t ts = r.ts_ns < now_ns ? r.ts_ns : now_ns;
	struct ig_event e;
	int k = 0;
	for (int i = 0; i < r.ndev; i++) {
		r.dev[i].ts_ns = ts;
		ig_gpu_dev_pack(&e, &r.dev[i]);
		emit(ctx, &e);
		k++;
	}
	for (int i = 0; i < r.nproc; i++) {
		memset(&e, 0, sizeof(e));
		e.kind = IG_EV_GPU_PROC;
		e.ts_ns = ts;
		e.pid = r.proc[i].pid;
		e.cpu = r.proc[i].dev;
		e.arg0 = r.proc[i].bytes;
		e.flags = r.proc[i].known ? IG_GPU_V_MEM : 0;
		emit(ctx, &e);
		k++;
	}
	return k;
}

void nvml_tick(struct nvml *n, uint64_t now_ns, ig_emit_fn emit, void *ctx, struct ig_status *st)
{
	nvml_take(n, now_ns, emit, ctx);
	st->nvml_state = nvml_status(n, st->nvml, sizeof(st->nvml), &st->nvml_stuck_ns);
}
