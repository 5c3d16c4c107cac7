/* The words of page faults between calls (IG_CC_PAGE_FAULTS): fresh memory
 * the program keeps asking for, or pages it shares with a process it
 * forked, copied at the first write to each (copy on write: most of the
 * faults' time in writes to present pages, ig_time_parts.cow_ns, and a
 * fork seen). Each recommendation fits its mechanism. */
#include "detect/detect_int.h"

#include <string.h>

#include "core/fmt.h"

/* Copy on write after a fork: the child named, and how to fork less or
 * share nothing. */
static void words_cow(struct ctx *x, struct finding *f, const char *fn, const char *pct,
		      const char *cow)
{
	const struct ig_proc_stats *p = x->p;
	char who[40], last[60] = "", cmd[64];
	if (p->fork_pid) {
		detect_who(who, sizeof(who), p->fork_comm[0] ? p->fork_comm : p->comm,
			   p->fork_pid);
		detect_put(last, sizeof(last), " (the last: %s)", who);
	}
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "copy-on-write faults in %s: %s of its time copying pages it shares with "
		   "processes it forked%s",
		   fn, pct, last);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "After a fork the parent and the child share every page, write-protected, and the "
	    "first write to a page copies it. The feeding thread writes to memory it shares "
	    "with processes it forked (%u fork%s, no child running a program of its own): %s "
	    "of its wall time in page faults, "
	    "%s of it in faults that copied a page on its first write. The more memory the "
	    "process has, the more each fork costs: its page tables are copied, then each "
	    "page it writes.",
	    p->forks, p->forks == 1 ? "" : "s", pct, cow);
	detect_rec(f,
		   "Fork less often: start worker processes once and keep them "
		   "(DataLoader(persistent_workers=True), a Pool made before the loop), before "
		   "the large buffers are allocated");
	detect_rec(f,
		   "Or start children that share nothing: multiprocessing.set_start_method("
		   "'forkserver') or 'spawn'; save checkpoints from a thread, not a forked process");
	detect_put(cmd, sizeof(cmd), "ps --ppid %u -o pid,etime,args", p->pid);
	detect_rec_cmd(f, cmd, "Its children now, and how long each has lived");
}

void detect_words_faults(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], cow[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	uint64_t fault = x->parts->ns[IG_PART_FAULT];
	double cs = fault ? (double)x->parts->cow_ns / (double)fault : 0;
	fmt_pct(cow, sizeof(cow), cs > 1 ? 1 : cs);
	detect_ev(f, "cow_fault_pct", (cs > 1 ? 1 : cs) * 100, "%");
	if (cs >= 0.5 && x->p->forks) {
		words_cow(x, f, fn, pct, cow);
		return;
	}
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "page faults in %s: %s of its time faulting in fresh memory", fn, pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread touches memory it was just given (large "
	    "buffers allocated and freed every step, memory returned with madvise): each new "
	    "page faults and the kernel zeroes it, %s of its wall time. The host is not short "
	    "of memory; the program keeps asking for new pages.%s",
	    pct,
	    cs >= 0.5 ? " Most of the faults' time copied a page at its first write: zeroed "
			"pages it read before writing them, or pages it shares with a process "
			"it forked before tracing began (ps --ppid PID)."
		      : "");
	detect_rec(f,
		   "Reuse buffers across steps instead of allocating them per step (preallocate; "
		   "pinned memory from a pool)");
	detect_rec(
	    f, "Keep glibc from returning large blocks to the kernel: MALLOC_MMAP_THRESHOLD_="
	       "4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 before the command, or use jemalloc "
	       "or tcmalloc");
}
