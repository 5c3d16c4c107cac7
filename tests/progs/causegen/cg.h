/* causegen's shared pieces (tests/progs/causegen.c, tests/progs/causegen/):
 * the thread's own clocks, the phases' accounts, helper processes, and the
 * mechanisms of the kernel's wait evidence (mech.c: locks, pipes, sockets,
 * files, mappings, memory, timers) with the truth of each. */
#ifndef CG_H
#define CG_H

#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define CG_MAX_HELPERS 16

typedef unsigned long long u64;

/* ---- clocks (util.c) ---------------------------------------------------- */
extern int schedstat_fd; /* /proc/thread-self/schedstat of the feeding thread */
u64 clock_ns(clockid_t id);
u64 runq_ns(void);

/* One instant of the thread's three clocks. */
struct mark {
	u64 wall, cpu, rq;
};
void mark_now(struct mark *m);

/* Time of the feeding thread in one phase, summed over the run: wall =
 * on-CPU + preempted (runnable, waiting for a CPU) + off (blocked/sleeping). */
struct acct {
	u64 wall, cpu, preempted, n;
};
u64 sub0(u64 a, u64 b);
void acct_add(struct acct *a, const struct mark *b, const struct mark *e);
u64 acct_off(const struct acct *a);
void acct_clip(struct acct *a);

void die(const char *what);
void pin(int cpu);
void spin_until(u64 deadline, clockid_t id);
void sleep_until(u64 deadline);
int io_full(int fd, void *buf, size_t n, int wr);
void json_str(FILE *f, const char *s);

/* ---- helper processes and threads (util.c) ---------------------------------- */
struct helper {
	pid_t pid; /* a process, or a thread's tid */
	char comm[16];
	const char *role;
	int cpu;
	int thread; /* a thread of the feeding process */
};
extern struct helper helpers[2 * CG_MAX_HELPERS];
extern int nhelpers;
/* fork()s a helper named cg-ROLE-IDX pinned to cpu: 0 in the child */
pid_t spawn(const char *role, int idx, int cpu);
/* a helper thread of the feeding process, reported with its tid */
void helper_thread(const char *role, int idx, int cpu, void *(*fn)(void *), void *arg);

/* ---- mechanisms (mech.c) ------------------------------------------------------ */
/* How a mechanism's phase counts in the truth (tests/sweep/README.md). */
enum {
	MR_OFF = 0, /* off time: its class; on-CPU: host work */
	MR_ALL,	    /* on-CPU and off time: its class (the kernel's work) */
	MR_PSI
}; /* the memory stall PSI saw: memory pressure; the rest: its class */

struct cg_env {
	int cpu, helper_cpu; /* the feeder's, the helpers' */
	const char *dir;     /* a directory on a disk (files) */
	int mem_limit_mb;    /* the memory cgroup's limit, 0 none */
};

/* Sets up a mechanism from "NAME:US" (US: its wait or work per step). 0,
 * or -1 with the reason on stderr. At most CG_MAX_MECHS. */
#define CG_MAX_MECHS 4
int mech_add(const char *spec, const struct cg_env *env);
int mech_count(void);
/* One step of mechanism i (measured by the caller), and its clean-up
 * after it (its own phase: host work), when it has one. */
void mech_main(int i);
int mech_has_post(int i);
void mech_post(int i);
int mech_rule(int i); /* MR_* */
/* The class its truth counts in; rest: what PSI did not see (MR_PSI) */
const char *mech_class(int i, int rest);
void mech_stop_all(void);
void mech_json(FILE *f, const struct acct *main_acct, const struct acct *post_acct, const u64 *psi);
/* The kernel's count of time some task stalled on memory (/proc/pressure/
 * memory "some" total), ns; 0 without PSI. */
u64 psi_memory_ns(void);

/* ---- cgroups (cgroup.c): a CPU quota and a memory limit for the process
 * and its helpers; cgroup v2 where the controller is there, else v1 ---- */
struct cg_quota {
	int pct;	/* of one CPU, 0: none */
	char path[256]; /* the cgroup's directory */
	int v2;
	u64 throttled_ns, nr_throttled, nr_periods; /* cpu.stat at the start */
};
int cgroup_cpu_quota(struct cg_quota *q, int pct);
void cgroup_cpu_stat(const struct cg_quota *q, u64 *throttled_ns, u64 *nr_throttled,
		     u64 *nr_periods);
int cgroup_mem_limit(int mb, char *path, size_t len);
void cgroup_leave(void); /* back to the root cgroups, and the ones made removed */

#endif
