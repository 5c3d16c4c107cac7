/* The CPU quota of the traced processes' cgroups: the nearest cgroup up the
 * process's own that limits its CPU (cgroup v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us), and how much it throttled (its
 * cpu.stat), read once a second and sent as IG_EV_CGROUP events (core/
 * event.h) for the processes that have one. The parsers are pure. */
#ifndef IG_CGCPU_H
#define IG_CGCPU_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/source.h"
#include "core/waits.h"

#define CGCPU_PROCS 64 /* processes followed at once */

struct cgcpu_proc {
	uint32_t pid;
	int v2;
	char rel[IG_DETAIL_LEN]; /* its cgroup (/proc/PID/cgroup) when last read */
	char dir[IG_DETAIL_LEN]; /* the limiting cgroup's directory, "" none found */
	uint64_t quota_us, period_us;
	uint64_t thr_ns, nr_thr, nr_per; /* cpu.stat when last read */
	int based;			 /* they are dir's (deltas can be sent) */
	uint64_t seen;			 /* the tick that last saw the process */
};

struct cgcpu {
	struct cgcpu_proc p[CGCPU_PROCS];
	int n;
	uint64_t ticks;
	char v1_root[64]; /* where v1's cpu controller is mounted, "" none */
	int v2_cpu;	  /* the unified hierarchy has the cpu controller */
};

void cgcpu_init(struct cgcpu *cc);
/* Reads the cgroups of the pids (n of them) and emits an IG_EV_CGROUP for
 * each one whose CPU is limited. now_ns: event time. */
void cgcpu_tick(struct cgcpu *cc, const uint32_t *pids, int n, uint64_t now_ns, ig_emit_fn emit,
		void *ctx);

/* The CPU scheduling group of pid (core/waits.h), from /proc: its cgroup
 * when the cpu controller has one for it, else its autogroup when the
 * kernel has them on, else the root. 0, or -errno. */
int cgcpu_sched_group(uint32_t pid, struct ig_sched_group *g);

/* /proc/PID/cgroup text: the path of the cpu controller's cgroup (v1 line
 * naming "cpu" among its controllers when v2 is 0, else the "0::" line).
 * 0, or -ENOENT. */
int cgcpu_path(const char *text, int v2, char *out, size_t n);
/* The same for controller ctl of cgroup v1 ("cpuset"); v2 as above. */
/* A small file of /proc or /sys into buf (n bytes at most, NUL-ended):
 * 0, or -errno. */
int cgcpu_read(const char *path, char *buf, size_t n);
int cgcpu_path_of(const char *text, int v2, const char *ctl, char *out, size_t n);
/* "max 100000" or "50000 100000" (cpu.max): 1 limited (quota and period
 * set), 0 not limited, -EINVAL. */
int cgcpu_parse_max(const char *s, uint64_t *quota_us, uint64_t *period_us);
/* cpu.stat: throttled time (v1 throttled_time ns, v2 throttled_usec) and
 * the periods; 0, or -ENOENT when it has none of them. */
int cgcpu_parse_stat(const char *text, uint64_t *thr_ns, uint64_t *nr_thr, uint64_t *nr_per);

#endif
