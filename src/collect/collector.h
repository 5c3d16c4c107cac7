/* The live source: loads the BPF programs, enrols target processes, finds
 * and attaches CUDA libraries, and turns ring-buffer records into
 * struct ig_event (Unix-ns event time). */
#ifndef IG_COLLECTOR_H
#define IG_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/clock.h"
#include "core/source.h"
#include "core/status.h"

enum collector_target { COLL_ALL_CUDA = 0, COLL_PIDS = 1, COLL_COMMAND = 2 };

struct collector_opts {
	int target;              /* enum collector_target */
	const int *pids;         /* COLL_PIDS: the pids */
	int npids;
	bool pids_waiting;       /* the pids make no CUDA call until after the attach
				  * (the demo's programs wait for a signal): a CUDA
				  * library they map already is not a late attach */
	const char *const *libs; /* --lib PATH files, attached in every mode */
	int nlibs;
	const char *exe;         /* COLL_COMMAND: executable, to find its libraries up front */
	bool force_raw_tp;       /* use raw_tp even where tp_btf works */
	bool no_system_libs;     /* do not attach ldconfig / /usr/local/cuda libraries */
	bool no_multi;           /* one perf-event uprobe per probe, not uprobe_multi links */
	bool no_hold;		 /* never stop a target at an exec or a library load
				  * (calls made before the attach are then missed and
				  * reported as attached late) */
	uint64_t min_offcpu_ns;  /* off-CPU intervals shorter than this are not streamed */
	bool stacks;             /* capture user stacks of calls (ig_event.stack_id) */
	unsigned stack_sample;   /* with stacks, tail only: a call gets its stack when it
				  * took at least its op's tail threshold
				  * (collector_set_stack_tail), or 1 in stack_sample of the
				  * others (a power of 2); 0 = every call gets its stack */
	bool no_waits;           /* no wait evidence: syscalls, faults, wait channels of the
				  * target threads (bpf/waits.bpf.h) are not traced */
	unsigned ring_mb;        /* the kernel's event ring buffer, MiB (a power of 2);
				  * 0 = 16 */
};

struct collector;

/* Loads and attaches everything. On failure returns NULL with a one-line
 * reason in err. The caller owns the result (collector_free). */
struct collector *collector_new(const struct collector_opts *o, char *err, size_t errlen);
void collector_free(struct collector *c);

/* Enrols a process (and, in the kernel, its future children) and attaches
 * the CUDA libraries it maps. -ESRCH when it does not exist. */
int collector_add_pid(struct collector *c, int pid);

/* The collector as an event source (owned by the collector). */
struct ig_source *collector_source(struct collector *c);

/* Periodic work on wall time: page-allocation deltas, library rescans.
 * Emits through emit; now_ns is Unix ns. */
void collector_tick(struct collector *c, uint64_t now_ns, ig_emit_fn emit, void *ctx);

/* Copies probe and drop counters into st. */
void collector_status(struct collector *c, struct ig_status *st);

/* Writes the attach summary: one line per library with the ops attached and
 * the symbols missing, one line for the tracepoints. */
void collector_summary(struct collector *c, FILE *f);

/* Counts a user-side drop (an event read but not processed). */
void collector_count_user_drop(struct collector *c, uint64_t n);

/* One uprobe_multi link (Linux 6.6) of prog_fd at offs[0..n) of path, with
 * a cookie per offset (cookies may be NULL); ret: return probes. The link
 * fd, or -errno. Also used by tests/tools/probe_floor. */
int collector_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
				const uint64_t *cookies, int n, bool ret);

/* When the next look at a process's mappings is due (after an exec or an
 * open of a CUDA library), on the clock of collector_now_ns; UINT64_MAX
 * when none is waiting. collector_tick does them. */
uint64_t collector_next_due_ns(struct collector *c);

/* The hook of pid's dynamic loader (pid 0: ingero-top's own) for libraries
 * loaded at run time: the loader's path (through /proc/PID/root) and the
 * offset of _dl_debug_state in it. 0, -ENOENT (no loader: static), or
 * -ENOSYS (the loader has no such symbol, e.g. musl). */
int collector_loader_hook(int pid, char *path, size_t len, uint64_t *off);

/* The distance from _dl_debug_state to _r_debug in a loader file (how the
 * kernel side finds the loader's list of objects from the probed address:
 * the uprobe's cookie), 0 when the loader lacks either symbol. */
int64_t collector_rdebug_delta(const char *loader);

/* Unix ns now, on the same clock as the events. */
uint64_t collector_now_ns(struct collector *c);

/* User stacks (opts.stacks). Both calls are thread-safe (one map syscall).
 * collector_stack copies the stack with this id (ig_event.stack_id) out of
 * the kernel's stacks map into *out (caller-owned): 0, or -ENOENT when it
 * is not (or no longer) there. collector_set_python tells the kernel where
 * the CPython of pid keeps its frames (src/pyframes.c builds cfg); NULL
 * forgets it. Forked children inherit it in the kernel. */
struct igb_stack;
struct igb_pyproc;
int collector_stack(struct collector *c, uint64_t id, struct igb_stack *out);
int collector_set_python(struct collector *c, int pid, const struct igb_pyproc *cfg);

/* Tail-only stacks (opts.stack_sample): calls of op that take at least
 * tail_ns get their stack; 0 (the start) = every call of op. Writes the
 * kernel's mmap-ed array, no syscall. 0, or -EINVAL for an op out of
 * range, -ENOENT when stacks are off or not tail-only. */
int collector_set_stack_tail(struct collector *c, int op, uint64_t tail_ns);

/* Kernel-side stack counters, summed over CPUs. */
struct collector_stack_stats {
	uint64_t captured;    /* calls with a stack */
	uint64_t distinct;    /* stacks stored (new hashes) */
	uint64_t errors;      /* user stack unreadable */
	uint64_t lost;        /* stack map update failed */
	uint64_t py_nothread; /* Python process, thread without a thread state */
	uint64_t py_readfail; /* interpreter memory unreadable */
};
void collector_stack_stats(struct collector *c, struct collector_stack_stats *st);


#endif
