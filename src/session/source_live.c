/* The live source: the collector's events and what live collection needs
 * around them: the processes to trace (--pid, a launched command, a --demo
 * scenario) held until their libraries are attached, a host snapshot once
 * a second, the collector's rescans on its ticks, the end of the workload,
 * and the lag that keeps event time behind the wall clock. */
#include "session/sources.h"

#include "collect/collector.h"
#include "collect/hostinfo.h"
#include "collect/nvml.h"
#include "session/command.h"
#include "session/demo.h"
#include "session/live_stacks.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

/* Event time runs this far behind the wall clock: records wait up to one
 * poll interval in the ring buffer, and the model must not close a second
 * before they are in, or live and replay of the same events would differ. */
#define LIVE_LAG_NS 300000000ULL
#define MAX_PIDS 64

struct live {
	struct ig_source src;
	struct collector *coll;
	struct ig_source *stream; /* the collector's (owned by it) */
	struct nvml *nvml;	  /* GPU device meters */
	struct command *cmd;	  /* -- CMD */
	struct demo_run *demo;	  /* --demo */
	const char *demo_name;
	int pids[MAX_PIDS]; /* traced from the start */
	int npids;
	bool ticked;	  /* the first tick leaves the workload alone */
	bool gone;	  /* the command or the scenario ended */
	int status;	  /* its exit status once gone */
	int drain_passes; /* empty polls after it ended */
	bool done;
	uint64_t last_snapshot_ns;
	struct hostinfo_cpu cpu_prev;
	uint64_t self_cpu_ns, self_at_ns; /* ingero-top's CPU at the last snapshot */
};

static struct live *live_of(struct ig_source *s)
{
	return s->priv;
}

static int live_fd(struct ig_source *s)
{
	struct ig_source *st = live_of(s)->stream;
	return st->ops->fd(st);
}

static int live_poll(struct ig_source *s, ig_emit_fn emit, void *ctx, int max)
{
	struct ig_source *st = live_of(s)->stream;
	return st->ops->poll(st, emit, ctx, max);
}

static void snapshot(struct live *l, uint64_t ts_ns, ig_emit_fn emit, void *ctx)
{
	struct hostinfo_cpu cur;
	struct hostinfo_mem mem;
	struct ig_event e;

	hostinfo_cpu_read(&cur);
	hostinfo_mem_read(&mem);
	ig_snapshot_fill(&e, ts_ns, hostinfo_cpu_pct(&l->cpu_prev, &cur), mem.used_pct,
			 mem.avail_mb, mem.swap_used_mb, hostinfo_load1());
	l->cpu_prev = cur;
	/* the tracer's own CPU: said whenever the tracer is named as a culprit */
	struct rusage ru;
	if (!getrusage(RUSAGE_SELF, &ru)) {
		uint64_t cpu =
		    ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
		    ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
		if (l->self_at_ns && ts_ns > l->self_at_ns) {
			e.flags |= IG_SNAP_SELF;
			e.arg2 = (cpu - l->self_cpu_ns) * 1000 / (ts_ns - l->self_at_ns);
		}
		l->self_cpu_ns = cpu;
		l->self_at_ns = ts_ns;
	}
	emit(ctx, &e);
}

/* The launched command or the scenario: once it ended, everything it did
 * is in the ring buffer; drain it twice more, then the source is done. */
static void watch_workload(struct live *l, ig_emit_fn emit, void *ctx, struct ig_status *st)
{
	if (!l->gone && l->cmd && command_poll(l->cmd) >= 0) {
		l->gone = true;
		l->status = command_poll(l->cmd);
		ig_status_say(st, "%s exited with status %d", command_name(l->cmd), l->status);
	}
	if (!l->gone && l->demo && demo_done(l->demo)) {
		l->gone = true;
		l->status = 0;
		ig_status_say(st, "demo %s finished", l->demo_name);
	}
	if (!l->gone)
		return;
	st->cmd_status = l->status;
	if (l->done)
		return;
	int n = 0, r;
	while ((r = live_poll(&l->src, emit, ctx, 1 << 20)) > 0)
		n += r;
	if (n == 0 && ++l->drain_passes >= 2)
		l->done = true;
}

static uint64_t live_tick(struct ig_source *s, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			  struct ig_status *st)
{
	struct live *l = live_of(s);
	uint64_t evnow = now_ns - LIVE_LAG_NS;

	collector_tick(l->coll, evnow, emit, ctx);
	collector_status(l->coll, st);
	if (l->nvml)
		nvml_tick(l->nvml, evnow, emit, ctx, st);
	st->mode = IG_MODE_LIVE;
	if (now_ns - l->last_snapshot_ns >= 1000000000ULL) {
		snapshot(l, evnow, emit, ctx);
		l->last_snapshot_ns = now_ns;
	}
	/* Not at the first tick (the session's creation): the caller sets its
	 * event hook after that, and a short command may already be done. */
	if (l->ticked)
		watch_workload(l, emit, ctx, st);
	l->ticked = true;
	/* a look at a process's mappings (after an exec, a library load) */
	uint64_t due = collector_next_due_ns(l->coll), cnow = collector_now_ns(l->coll);
	if (due == UINT64_MAX)
		return UINT64_MAX;
	return due <= cnow ? now_ns : now_ns + (due - cnow);
}

static uint64_t live_pace(struct ig_source *s, uint64_t now_ns)
{
	return now_ns - LIVE_LAG_NS;
}

static bool live_done(struct ig_source *s)
{
	return live_of(s)->done;
}

static void live_describe(struct ig_source *s, FILE *f)
{
	collector_summary(live_of(s)->coll, f);
}

static void live_free(struct ig_source *s)
{
	struct live *l = s ? live_of(s) : NULL;
	if (!l)
		return;
	demo_stop(l->demo);
	command_free(l->cmd);
	nvml_stop(l->nvml);
	collector_free(l->coll);
	free(l);
}

static const struct ig_source_ops live_ops = {
    .name = "live",
    .fd = live_fd,
    .poll = live_poll,
    .peek_ts = NULL, /* what the ring buffer holds has happened */
    .tick = live_tick,
    .pace = live_pace,
    .set_pace = NULL,
    .seek = NULL,
    .done = live_done,
    .describe = live_describe,
    .free = live_free,
};

/* The processes to trace: a scenario's, --pid's (which must exist), a
 * command's (held), or every process that maps a CUDA library. */
static int choose_targets(struct live *l, const struct cli *cli, struct collector_opts *o,
			  char *err, size_t errlen)
{
	if (cli->demo) {
		l->demo = demo_start(cli->demo, err, errlen);
		if (!l->demo)
			return -EINVAL;
		l->demo_name = cli->demo;
		l->npids = demo_pids(l->demo, l->pids, MAX_PIDS);
		o->target = COLL_PIDS;
		o->no_system_libs = true;
		o->pids_waiting = true; /* they wait for SIGUSR1 (demo_release) */
	} else if (cli->npids) {
		for (int i = 0; i < cli->npids && i < MAX_PIDS; i++) {
			if (kill(cli->pids[i], 0) && errno == ESRCH) {
				snprintf(err, errlen, "no process with pid %d", cli->pids[i]);
				return -ESRCH;
			}
			l->pids[l->npids++] = cli->pids[i];
		}
		o->target = COLL_PIDS;
	} else if (cli->cmd) {
		l->cmd = command_new(cli->cmd, err, errlen);
		if (!l->cmd)
			return -EINVAL;
		l->pids[l->npids++] = command_pid(l->cmd);
		o->target = COLL_COMMAND;
		o->exe = command_exe(l->cmd);
	} else {
		o->target = COLL_ALL_CUDA;
	}
	o->pids = l->pids;
	o->npids = l->npids;
	return 0;
}

struct ig_source *live_source_new(const struct cli *cli, char *err, size_t errlen)
{
	struct live *l = calloc(1, sizeof(*l));
	struct collector_opts o = {0};

	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->src = (struct ig_source){.ops = &live_ops, .priv = l};
	o.libs = cli->libs;
	o.nlibs = cli->nlibs;
	o.force_raw_tp = cli->raw_tp;
	/* Kernels before 6.6, or to compare: one perf event per probe. */
	o.no_multi = getenv("INGERO_TOP_NO_UPROBE_MULTI") != NULL;
	/* To compare, or where stopping a target is not wanted: no holds. */
	o.no_hold = getenv("INGERO_TOP_NO_HOLD") != NULL;
	o.no_system_libs = cli->no_system_libs;
	o.stacks = !cli->no_stacks;
	o.stack_sample = cli->stacks_all ? 0 : LIVE_STACK_SAMPLE;
	o.no_waits = cli->no_waits;
	/* A recording's reader waits for its writer when the disk (or a CPU
	 * shared with it) cannot keep up: the kernel buffers the events
	 * meanwhile, 64 MiB (about a million calls) instead of 16 */
	o.ring_mb = cli->record ? 64 : 0;
	if (choose_targets(l, cli, &o, err, errlen) ||
	    !(l->coll = collector_new(&o, err, errlen))) {
		live_free(&l->src);
		return NULL;
	}
	l->stream = collector_source(l->coll);
	hostinfo_cpu_read(&l->cpu_prev);
	l->nvml = nvml_start(NULL, (unsigned)(cli->interval_s * 1000 + 0.5)); /* device meters */
	return &l->src;
}

int live_source_start(struct ig_source *s, char *err, size_t errlen)
{
	struct live *l = live_of(s);

	if (l->demo)
		demo_release(l->demo);
	if (l->cmd && command_release(l->cmd, err, errlen))
		return -EINVAL;
	return 0;
}

struct collector *live_source_collector(struct ig_source *s)
{
	return live_of(s)->coll;
}

int live_source_pids(struct ig_source *s, const int **pids)
{
	*pids = live_of(s)->pids;
	return live_of(s)->npids;
}
