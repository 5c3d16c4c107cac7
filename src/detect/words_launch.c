/* The words of synchronous launches (IG_CC_LAUNCH_BLOCKING, rules_launch.c):
 * what set them (the environment the job was started with, the program at
 * run time, or not known), and how to undo it; and the allocation chains'
 * advice when the environment turns PyTorch's caching allocator off. */
#include "detect/detect_int.h"

#include <string.h>

#include "core/fmt.h"

static void words_how(struct ctx *x, struct finding *f, const struct launch_waits *lw, char *how,
		      size_t n)
{
	const struct ig_proc_stats *p = x->p;
	char cmd[80];
	if (lw->env && (p->env_initial & IG_ENV_LAUNCH_BLOCKING)) {
		detect_put(how, n, "it was started with it");
		detect_put(cmd, sizeof(cmd), "xargs -0 -n1 < /proc/%u/environ | grep CUDA_LAUNCH",
			   p->pid);
		detect_rec_cmd(
		    f, cmd,
		    "Unset CUDA_LAUNCH_BLOCKING where the job is started (its shell, script or "
		    "container env) and restart it; it came with the job");
	} else if (lw->env) {
		detect_put(how, n, "the program set it at run time");
		detect_put(cmd, sizeof(cmd), "ps -o args= -p %u", p->pid);
		detect_rec_cmd(f, cmd,
			       "The program sets it itself (os.environ in Python, setenv): remove "
			       "that line and restart; its command line");
	} else if (p->env_src) {
		detect_put(how, n,
			   "CUDA_LAUNCH_BLOCKING is not in its environment: something else "
			   "serialises its launches (compute-sanitizer, cuda-gdb, a profiler's "
			   "serialising option)");
		if (p->ppid) {
			detect_put(cmd, sizeof(cmd), "ps -o pid,args -p %u", p->ppid);
			detect_rec_cmd(f, cmd,
				       "Run it outside the tool that serialises its launches; see "
				       "what started it");
		}
	} else {
		detect_put(how, n, "the source did not record its environment");
		detect_put(cmd, sizeof(cmd), "xargs -0 -n1 < /proc/%u/environ | grep CUDA_LAUNCH",
			   p->pid);
		detect_rec_cmd(f, cmd, "Look for CUDA_LAUNCH_BLOCKING=1 in its environment");
	}
}

void detect_words_launch_blocking(struct ctx *x, const struct cause *c, struct finding *f,
				  const struct launch_waits *lw, double in)
{
	char fn[64], how[200], mean[16], pin[16], prest[16], sync[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_ns(mean, sizeof(mean), (uint64_t)lw->mean_ns);
	fmt_pct(pin, sizeof(pin), in);
	fmt_pct(prest, sizeof(prest), 1.0 - in);
	fmt_ns(sync, sizeof(sync), (uint64_t)lw->sync_per_ns);
	words_how(x, f, lw, how, sizeof(how));
	if (lw->env)
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "synchronous launches in %s: CUDA_LAUNCH_BLOCKING=1 makes each launch "
			   "wait for its kernel (%s on average, %s of its time), so its other %s "
			   "cannot overlap the GPU",
			   fn, mean, pin, prest);
	else
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "synchronous launches in %s: each launch waits for its kernel (%s on "
			   "average, %s of its time; its syncs wait %s), so its other %s cannot "
			   "overlap the GPU",
			   fn, mean, pin, lw->syncs ? sync : "-", prest);
	if (lw->env)
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "CUDA_LAUNCH_BLOCKING=1 is set in the process's environment (%s): every "
		    "kernel launch returns only once the kernel has finished, a debugging "
		    "setting that makes an error show at the launch that caused it. Nothing "
		    "is queued on the GPU while the thread runs its own code, so host work "
		    "and GPU work take turns: %s of the wall time in launches, %s in the rest. "
		    "Queued launches overlap them; the impact is the smaller share, what that "
		    "gives back.",
		    how, pin, prest);
	else
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The feeding thread's launches average %s, far beyond a launch's few "
		    "microseconds of CPU work, and the synchronisations after them wait %s "
		    "each: each launch returned once its kernel had finished, as with "
		    "CUDA_LAUNCH_BLOCKING=1 (a full launch queue would leave the syncs "
		    "waiting for the queue). Here %s. Host work and GPU work take turns; the "
		    "impact is the smaller share, what overlap gives back.",
		    mean, sync, how);
	if (!lw->env)
		detect_put(
		    f->c.lacking, sizeof(f->c.lacking),
		    "CUDA_LAUNCH_BLOCKING=1 in the process's environment (%s): the launches' "
		    "waits are measured, what made them synchronous is inferred",
		    x->p->env_src ? "not set" : "not recorded");
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "launch_pct", in * 100, "%");
	detect_ev(f, "launch_mean_ns", lw->mean_ns, "ns");
	detect_ev(f, "launches", (double)lw->calls, "");
	if (lw->syncs)
		detect_ev(f, "wait_per_sync_ns", lw->sync_per_ns, "ns");
	detect_ev(f, "env_launch_blocking", x->p->env_src ? lw->env : -1, "");
	detect_ev(f, "feeder_wall_ns", (double)x->parts->wall_ns, "ns");
	detect_rec(f, "Keep CUDA_LAUNCH_BLOCKING=1 for debugging runs: without it an error shows "
		      "at a later call (cudaGetLastError, torch.cuda.synchronize())");
}

/* PYTORCH_NO_CUDA_MEMORY_CACHING=1: PyTorch allocates and frees device
 * memory for every tensor; the first thing to undo. 1 when said. */
int detect_words_env_alloc(struct ctx *x, struct finding *f)
{
	const struct ig_proc_stats *p = x->p;
	if (!((p->env | p->env_initial) & IG_ENV_NO_ALLOC_CACHE))
		return 0;
	char cmd[80];
	size_t o = strlen(f->c.explanation);
	detect_put(f->c.explanation + o, sizeof(f->c.explanation) - o,
		   " Its environment sets PYTORCH_NO_CUDA_MEMORY_CACHING=1: PyTorch's caching "
		   "allocator is off, every tensor is a cudaMalloc and a cudaFree.");
	if (p->env_initial & IG_ENV_NO_ALLOC_CACHE)
		detect_put(cmd, sizeof(cmd), "xargs -0 -n1 < /proc/%u/environ | grep CUDA_MEMORY",
			   p->pid);
	else
		detect_put(cmd, sizeof(cmd), "ps -o args= -p %u", p->pid);
	detect_rec_cmd(f, cmd,
		       "Unset PYTORCH_NO_CUDA_MEMORY_CACHING and restart: the caching "
		       "allocator reuses freed blocks; %s",
		       p->env_initial & IG_ENV_NO_ALLOC_CACHE ? "it came with the job"
							      : "the program sets it");
	return 1;
}
