/* The advice of CPU contention that depends on priorities and scheduling
 * groups (words.c detect_words_cpu): a feeder at a lowered priority, a
 * culprit in another scheduling group than the feeder, a real-time
 * culprit. docs/detection.md, "Advice you can paste". */
#include "detect/detect_int.h"

#include <stdio.h>
#include <string.h>

/* Pin the feeder's process, all its threads, away from the culprit cn
 * (taskset -p without -a moves one task: the pid's own). */
void detect_rec_pin(struct ctx *x, struct finding *f, const char *cn)
{
	char cmd[64], pn[40];
	detect_put(cmd, sizeof(cmd), "taskset -a -cp <cores> %u", x->p->pid);
	detect_rec_cmd(f, cmd, "Pin %s, all its threads, to cores %s does not use",
		       detect_who(pn, sizeof(pn), x->p->comm, x->p->pid), cn);
}

/* The feeding threads run at a lowered priority (own: their IG_POLICY
 * word): beside an ordinary task a thread at nice 19 gets about 1.5 % of
 * a CPU (weights 15 and 1024), one under SCHED_IDLE less. Said first, with
 * the command that gives it its priority back. */
void detect_words_cpu_low(struct ctx *x, struct finding *f, uint32_t own)
{
	char cmd[96], pn[40];
	detect_who(pn, sizeof(pn), x->p->comm, x->p->pid);
	size_t n = strlen(f->c.explanation);
	detect_put(f->c.explanation + n, sizeof(f->c.explanation) - n,
		   " The feeding thread itself runs at a lowered priority (%s): beside an "
		   "ordinary task the scheduler gives it a small fraction of the CPU.",
		   IG_POLICY_OF(own) == 5 ? "SCHED_IDLE" : "a nice value above 0");
	if (IG_POLICY_OF(own) == 5) {
		detect_put(cmd, sizeof(cmd), "chrt -a -o -p 0 %u", x->p->pid);
		detect_rec_cmd(f, cmd, "Give %s, all its threads, the ordinary policy back", pn);
	} else {
		detect_put(cmd, sizeof(cmd), "renice 0 -p $(ls /proc/%u/task)", x->p->pid);
		detect_rec_cmd(f, cmd,
			       "Give %s, all its threads, the ordinary priority back (it "
			       "runs at nice %d)",
			       pn, IG_POLICY_NICE(own));
	}
}

/* The culprit in another CPU scheduling group than the feeder (its own
 * cgroup with the cpu controller, or its session's autogroup): the two
 * groups share the CPU by their weights, so renice and SCHED_IDLE on the
 * culprit change nothing for the feeder; its group's weight does. 1 when
 * so advised, 0 when both are in one group, the culprit's is above the
 * feeder's, or it is not known (replay). */
int detect_words_cpu_group(struct ctx *x, const struct cause *c, struct finding *f, const char *cn)
{
	struct ig_sched_group cg, fg;
	const struct ig_detect *d = x->d;
	if (!d->sched_group || d->sched_group(d->sched_group_ctx, c->culprit_pid, &cg) ||
	    d->sched_group(d->sched_group_ctx, x->p->pid, &fg) || cg.kind <= IG_SG_ROOT ||
	    (cg.kind == fg.kind && !strcmp(cg.dir, fg.dir)))
		return 0;
	/* a cgroup above the feeder's: the culprit competes there with the
	 * feeder's group as one task with another, and renice holds it */
	size_t k = strlen(cg.dir);
	if (cg.kind == fg.kind && cg.kind != IG_SG_AUTOGROUP && !strncmp(cg.dir, fg.dir, k) &&
	    fg.dir[k] == '/')
		return 0;
	char cmd[192];
	size_t n = strlen(f->c.explanation);
	detect_put(f->c.explanation + n, sizeof(f->c.explanation) - n,
		   " %s is in another CPU scheduling group than the feeder (%s): the groups share "
		   "the CPU by their weights, and nice or SCHED_IDLE on it alone changes nothing.",
		   cn, cg.kind == IG_SG_AUTOGROUP ? "its session's autogroup" : "its own cgroup");
	if (cg.kind == IG_SG_AUTOGROUP) {
		detect_put(cmd, sizeof(cmd), "echo 19 > /proc/%u/autogroup", c->culprit_pid);
		detect_rec_cmd(f, cmd, "Lower the priority of %s's session, all its processes", cn);
	} else {
		detect_put(cmd, sizeof(cmd), "echo %s > %s/%s",
			   cg.kind == IG_SG_CGROUP2 ? "1" : "2", cg.dir,
			   cg.kind == IG_SG_CGROUP2 ? "cpu.weight" : "cpu.shares");
		detect_rec_cmd(f, cmd, "Lower the CPU weight of %s's cgroup", cn);
	}
	detect_rec_pin(x, f, cn);
	detect_rec(f,
		   "Or cap %s's group with a CPU quota, or give the job a dedicated cpuset; "
		   "keep a core free per GPU-feeding thread",
		   cn);
	return 1;
}

/* A real-time preemptor (SCHED_FIFO, SCHED_RR) runs before every ordinary
 * task whenever it wants: nice and a CFS quota do not hold it, changing
 * its policy does. */
void detect_words_cpu_rt(struct ctx *x, const struct cause *c, struct finding *f, const char *cn)
{
	char cmd[96];
	detect_put(cmd, sizeof(cmd), "chrt -a -o -p 0 %u", c->culprit_pid);
	detect_rec_cmd(f, cmd,
		       "Make %s an ordinary task, all its threads (nice does not lower a "
		       "real-time one)",
		       cn);
	detect_put(cmd, sizeof(cmd), "chrt -a --idle -p 0 %u", c->culprit_pid);
	detect_rec_cmd(f, cmd,
		       "Or let it run only when a CPU is idle (SCHED_IDLE, all its threads)");
	detect_rec_pin(x, f, cn);
	detect_rec(f,
		   "Or give %s cores of its own (a cpuset): neither nice nor a CPU quota holds a "
		   "real-time task",
		   cn);
}

/* The process may run on fewer CPUs than the host has (its affinity, or
 * its cgroup's cpuset): said in the explanation, and the first advice
 * widens it, the process and its children (workers inherit the mask).
 * 1 when it is so. */
int detect_words_cpu_confined(struct ctx *x, struct finding *f)
{
	const struct ig_proc_stats *p = x->p;
	if (!p->cpus_allowed || !p->cpus_online || p->cpus_allowed >= p->cpus_online)
		return 0;
	char cmd[112];
	int cpuset = p->cpus_cpuset && p->cpus_cpuset <= p->cpus_allowed;
	size_t k = strlen(f->c.explanation);
	detect_put(f->c.explanation + k, sizeof(f->c.explanation) - k,
		   " It may run on %u of the host's %u CPUs (%s), and its threads and workers "
		   "share those.",
		   p->cpus_allowed, p->cpus_online,
		   cpuset ? "its cgroup's cpuset" : "its CPU affinity: taskset, numactl");
	if (cpuset) {
		detect_put(cmd, sizeof(cmd), "cat /proc/%u/cpuset", p->pid);
		detect_rec_cmd(f, cmd,
			       "Give its cgroup more CPUs (docker update --cpuset-cpus, systemd "
			       "AllowedCPUs=), or run fewer threads and workers than its %u; its "
			       "cpuset",
			       p->cpus_allowed);
	} else {
		detect_put(cmd, sizeof(cmd),
			   "for p in %u $(pgrep -P %u); do taskset -a -cp 0-%u $p; done", p->pid,
			   p->pid, p->cpus_online - 1);
		detect_rec_cmd(f, cmd, "Let it and its workers, every thread, run on all %u CPUs",
			       p->cpus_online);
	}
	return 1;
}
