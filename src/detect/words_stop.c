/* The words of a feeding thread that did not run because something stopped
 * it (IG_CC_STOPPED): a job-control stop (SIGSTOP, SIGTSTP) until a
 * SIGCONT, a tracer's ptrace stops, or its cgroup's freezer. The task
 * state at the switch-out says which (core/waits.h IG_WFN_STOP, _TRACED,
 * _FROZEN; the process's most, ig_proc_stats.stop_kind); the culprit is the task that let it go on: the SIGCONT's
 * sender, the tracer, the thawer. docs/detection.md, "Stopped". */
#include "detect/detect_int.h"

#include "core/fmt.h"

#include <string.h>

/* An interactive shell: its job control (Ctrl-Z, then fg or bg), not a
 * program to end. */
static int is_shell(const char *comm)
{
	static const char *const sh[] = {"bash", "sh", "dash", "zsh", "fish", "ksh", "tcsh", "csh"};
	for (size_t i = 0; i < sizeof(sh) / sizeof(sh[0]); i++)
		if (!strcmp(comm, sh[i]))
			return 1;
	return 0;
}

static void words_traced(struct ctx *x, const struct cause *c, struct finding *f,
			 const char *fn, const char *cn, const char *pct)
{
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "stopped by a tracer: %s held %s %s of its time in ptrace stops",
		   c->culprit_pid ? cn : "a tracer", fn, pct);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "A tracer or debugger is attached to the feeding thread (strace, ltrace, gdb, a "
		   "profiler that uses ptrace): each syscall, breakpoint or signal it watches "
		   "stops the thread until the tracer lets it go on, and %s did for %.0f%% of "
		   "that time. The GPU has nothing queued meanwhile.",
		   c->culprit_pid ? cn : "the tracer (not recorded)", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	if (c->culprit_pid && !c->culprit_self) {
		char cmd[48];
		detect_put(cmd, sizeof(cmd), "kill %u", c->culprit_pid);
		detect_rec_cmd(f, cmd,
			       "Detach it when the trace is not needed: end %s (strace and gdb "
			       "let their tracees go on as they exit)",
			       cn);
	}
	detect_rec(f, "If the trace is needed, make it stop less: strace -e trace=<the calls you "
		      "need>, or a sampling profiler (perf, py-spy without --native) that does "
		      "not stop the thread");
	(void)x;
}

static void words_frozen(struct ctx *x, const struct cause *c, struct finding *f,
			 const char *fn, const char *cn, const char *pct)
{
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "frozen by its cgroup: %s frozen %s of its time until %s thawed it", fn, pct,
		   c->culprit_pid ? cn : "another task");
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "The process's cgroup was frozen (docker pause, a batch scheduler's suspend, "
		   "systemctl freeze, cgroup.freeze or freezer.state): none of its threads runs "
		   "until the cgroup is thawed, and %s thawed it for %.0f%% of that time. The GPU "
		   "has nothing queued meanwhile.",
		   c->culprit_pid ? cn : "the thawer (not recorded)", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	char cmd[48];
	detect_put(cmd, sizeof(cmd), "cat /proc/%u/cgroup", x->p->pid);
	detect_rec_cmd(f, cmd, "See which cgroup is frozen");
	detect_rec(f, "Thaw it with what froze it (docker unpause, systemctl thaw), or write 0 to "
		      "its cgroup.freeze (v2) or THAWED to its freezer.state (v1)");
}

/* A job-control stop: SIGSTOP or SIGTSTP, then a SIGCONT. */
static void words_signal(struct ctx *x, const struct cause *c, struct finding *f,
			 const char *fn, const char *cn, const char *pct)
{
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "stopped by signals: %s stopped %s of its time (SIGSTOP) until %s continued "
		   "it",
		   fn, pct, c->culprit_pid ? cn : "another task");
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "The feeding thread's process was stopped with SIGSTOP or SIGTSTP and did not "
		   "run until a SIGCONT, which %s sent for %.0f%% of that time. A CPU limiter that "
		   "stops and continues processes (cpulimit), a batch scheduler's suspend or a "
		   "shell's job control (Ctrl-Z) does this; the GPU has nothing queued meanwhile.",
		   c->culprit_pid ? cn : "another task (not recorded)", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	char cmd[64], pn[40];
	detect_who(pn, sizeof(pn), x->p->comm, x->p->pid);
	if (c->culprit_pid && !c->culprit_self) {
		detect_put(cmd, sizeof(cmd), "ps -o pid,args -p %u", c->culprit_pid);
		detect_rec_cmd(f, cmd, "See what stops and continues it");
		/* the SIGCONT a second after the stopper is told to end: until it
		 * has, it may stop the process once more */
		if (is_shell(c->culprit_comm))
			detect_put(cmd, sizeof(cmd), "kill -CONT %u", x->p->pid);
		else
			detect_put(cmd, sizeof(cmd), "kill %u; sleep 1; kill -CONT %u",
				   c->culprit_pid, x->p->pid);
		detect_rec_cmd(f, cmd,
			       is_shell(c->culprit_comm)
				   ? "A job suspended in that shell (fg or bg there), or let %s run on"
				   : "End what stops it and let %s run on",
			       pn);
	}
	detect_rec(f, "To cap the job's CPU, use a cgroup quota instead (cpu.max, docker --cpus, "
		      "systemd CPUQuota=): its threads run in every period, the process is "
		      "never frozen whole");
}

void detect_words_stopped(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], cn[96], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	if (x->p->stop_kind == IG_STOP_TRACED)
		words_traced(x, c, f, fn, cn, pct);
	else if (x->p->stop_kind == IG_STOP_FROZEN)
		words_frozen(x, c, f, fn, cn, pct);
	else
		words_signal(x, c, f, fn, cn, pct);
}
