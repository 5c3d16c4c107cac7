/* Internals of the live collector shared by its files: collector.c (life
 * cycle, ring buffer, status), attach.c (uprobes on libraries and on the
 * dynamic loader) and hold.c (processes held until their libraries are
 * attached). Not for use outside src/collect/. */
#ifndef IG_COLLECTOR_PRIV_H
#define IG_COLLECTOR_PRIV_H

#include "collect/cgcpu.h"
#include "collect/procenv.h"
#include "collect/collector.h"
#include "core/ops.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;

#define MAX_LIBS 64
#define DETACH_THREADS 32
#define MAX_PAGES_PIDS 1024
#define MAX_PENDING 64
#define RESCAN_TARGETS_NS 2000000000ULL
#define EXEC_RESCAN_NS 200000000ULL /* after an exec */
#define MAX_LOADERS 16
#define RESCAN_ALL_NS 5000000000ULL
/* BPF attach type of uprobe_multi links (Linux 6.6; not in libbpf 1.1) */
#define IG_BPF_TRACE_UPROBE_MULTI 48
#define MAX_LATE 256 /* processes attached late, remembered (the first 8 are named) */

struct lib {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	int ops[IG_LIB_MAX]; /* ops attached, by library family (enum ig_op_lib) */
	int nops;
	int probes;
	char missing[512]; /* expected ops with no symbol */
};

/* An NCCL communicator of a process (nccl.c). */
struct coll_comm {
	uint32_t pid;
	uint64_t handle; /* its ncclComm_t */
	uint64_t comm;	 /* IG_NCCL_COMM(key, rank, nranks) */
};

#define MAX_COMMS 256

struct pages_last {
	uint32_t pid;
	uint64_t bytes;
};

struct collector {
	struct ingero_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks, caplinks;
	bool multi;		/* programs loaded for uprobe_multi links */
	int mfds[2 * MAX_LIBS]; /* uprobe_multi link fds */
	int nmfds;
	int nprobes; /* uprobes attached (entry and return each count) */
	struct lib libs[MAX_LIBS];
	int nlibs;
	int probes_failed, probes_missing;
	int tracepoints_ok, tracepoints_failed;
	bool raw_tp;
	bool stacks;
	unsigned stack_sample; /* tail-only stacks: 1 in N of the others; 0 = every call */
	char stacks_off_why[64]; /* why stacks were asked for but are off */
	bool waits;		 /* wait evidence traced (bpf/waits.bpf.h) */
	char waits_off_why[64];	 /* why it was asked for but is off */
	/* CPython processes: where their runtime state lies (its GIL among
	 * it), to tell a futex wait on the GIL */
	struct {
		uint32_t pid;
		uint64_t lo, hi;
	} py[64];
	int npy;
	int target;
	struct pages_last pages[MAX_PAGES_PIDS];
	int npages;
	struct {
		int pid;
		uint64_t due_ns;
		bool maps_only; /* a library was loaded: the executable is the same */
	} pending[MAX_PENDING];
	/* dynamic loaders watched for libraries loaded at run time (dl_change) */
	struct {
		dev_t dev;
		ino_t ino;
	} loaders[MAX_LOADERS];
	int nloaders;
	int ldfds[MAX_LOADERS]; /* their uprobe_multi link fds */
	int nldfds;
	int npending;
	uint64_t last_rescan_ns, last_scan_all_ns, last_pages_ns, last_cg_ns;
	/* the targets counted for the status, and when (ig_mono_ms): a count
	 * walks the whole targets map, so it is taken at most 4 times a second */
	int ntargets;
	uint64_t targets_counted_ms;
	struct cgcpu cg; /* the CPU quota of the targets' cgroups */
	struct procenv env; /* the targets' CUDA and PyTorch settings */
	uint64_t user_drops;
	uint32_t calib_pid; /* the probe-cost child (calib.c): its records are dropped */
	uint32_t probe_ns;  /* measured cost of tracing one call, 0 unknown */
	/* the kernel time of a syscall and of a page fault the tracepoints do
	 * not see (the entry and the exit around them), added to each timed
	 * one (calib.c) */
	uint32_t kentry_sys_ns, kentry_fault_ns;
	/* the exact syscall hooks (w_sys_enter/exit), attached while the
	 * targets spend kernel time in syscalls (targets.c coll_sys_hooks_tick);
	 * that time in the current second, and quiet seconds since */
	struct bpf_link *sys_links[2];
	uint64_t ksys_sec;
	int sys_busy, sys_quiet; /* busy seconds in a row, quiet seconds since */

	uint32_t named[4096]; /* pids whose process name was reported (hash set) */
	int nnamed;
	/* ring-buffer callback state */
	ig_emit_fn emit;
	void *emit_ctx;
	int budget, delivered;
	struct ig_source src;
	/* holds (hold.c) */
	bool hold_on;	    /* targets are stopped at files not examined yet */
	bool walk;	    /* dl_change reads the loader's objects (Linux 5.17), else
			     * dl_change_hint is loaded: a hint to rescan, no hold */
	int loader_walk;    /* loaders watched whose list of objects dl_change reads */
	pid_t guardian;	    /* continues held processes should ingero-top die; 0: none */
	int guardian_fd;    /* write end of its pipe, -1 when none */
	int late[MAX_LATE]; /* processes attached late: the first MAX_LATE */
	int nlate;	    /* ... and how many in all */
	char notice[IG_STATUS_NOTES][256]; /* its notices for the status line: the
					    * last IG_STATUS_NOTES, notice_gen in all */
	struct coll_comm comms[MAX_COMMS]; /* NCCL communicators (nccl.c) */
	int ncomms;
	unsigned notice_gen, notice_said;
};

struct igb_event;

/* attach.c */
int coll_add_link(struct collector *c, struct bpf_link *l);
/* The target processes, the probe-cost child left out: up to max pids in
 * out; the count (all of them when out is NULL). targets.c */
int coll_target_pids(struct collector *c, uint32_t *out, int max);
/* Sends the pages each target allocated since the last call. targets.c */
void coll_poll_pages(struct collector *c, uint64_t now_ns, ig_emit_fn emit, void *ctx);
/* The CPU clock sampled on every CPU each KTICK_NS (bpf/waits.bpf.h
 * w_tick: the kernel CPU of target threads' syscalls). 100 Hz: each sample
 * interrupts the workload, and on a VM that cost 4 % of a traced loop's
 * time at 1 kHz (docs/performance.md). The CPUs sampled, or -errno.
 * attach.c */
#define KTICK_NS 10000000ULL
int coll_attach_ticks(struct collector *c);
/* Attaches (on) or detaches the exact syscall hooks; 0 or -errno.
 * targets.c */
int coll_sys_hooks(struct collector *c, bool on);
/* Once a second: the hooks on while the targets spend kernel time in
 * syscalls (KSYS_ON_NS a second, sampled or timed, KSYS_ON_S seconds in a
 * row), off after KSYS_QUIET_S quiet seconds. A single sample is 10 ms:
 * one second's would turn them on for a process's start-up alone (its
 * libraries read), and then every traced call's return pays them for
 * KSYS_QUIET_S seconds (docs/performance.md). targets.c */
#define KSYS_ON_NS 10000000ULL
#define KSYS_ON_S 2
#define KSYS_QUIET_S 10
void coll_sys_hooks_tick(struct collector *c);
/* Destroys n links from several threads at once (their detaches overlap). */
void coll_destroy_links(struct bpf_link **links, int n);
/* Attaches every op variant path exports: the number of ops attached (a
 * file attached before: its earlier count), 0 when it has none of the
 * symbols, -errno when it cannot be read. Marks the file resolved. */
int coll_attach_lib(struct collector *c, const char *path);
/* discover_cb that attaches what it is given. */
void coll_attach_found(void *ctx, const char *path, int pid);
/* Watches pid's dynamic loader (0: ingero-top's own) for dlopen. */
void coll_watch_loader(struct collector *c, int pid);
/* Marks a file examined (`resolved` map): targets using it are not held. */
void coll_resolve_path(struct collector *c, const char *path);
void coll_resolve_key(struct collector *c, uint64_t kdev, uint64_t ino);
/* A dev_t from stat() in the kernel's encoding (major << 20 | minor). */
uint64_t coll_kdev(dev_t d);

/* hold.c */
/* Handles an IGB_HOLD record: attaches what the process uses, marks the
 * files resolved, continues the process when it was stopped. */
void coll_hold(struct collector *c, const struct igb_event *b);
/* Notes that pid was found with a CUDA library already mapped (or could
 * not be held): its calls before now are not known. Once per process; a
 * hold's own reason (exact_why) replaces a guess made earlier. */
void coll_late(struct collector *c, int pid, const char *why, bool exact_why);
/* Whether this instance holds pid stopped right now (a record pending). */
bool coll_holding(struct collector *c, int pid);
/* The guardian: a small child that continues every process in the `held`
 * map when ingero-top dies without doing so. 0 or -errno. */
int coll_guardian_start(struct collector *c);
/* Continues every process in the `held` map (exit path). */
void coll_release_all(struct collector *c);
/* Ends the guardian (after the last coll_release_all). */
void coll_guardian_stop(struct collector *c);

/* nccl.c */
/* Completes an NCCL call's event from its raw record (bytes, the
 * communicator); ncclCommInitRank and ncclCommDestroy, and the exit of a
 * process, keep the table of communicators. Other events pass unchanged. */
void coll_nccl_event(struct collector *c, struct ig_event *e);

/* collector.c */
/* Looks at pid's mappings (maps_only) or mappings and executable after
 * delay_ns, from collector_tick. */
void coll_add_pending(struct collector *c, int pid, uint64_t delay_ns, bool maps_only);

/* calib.c: measures the cost of tracing one call (c->probe_ns); with wait
 * evidence on, also the kernel time a syscall's and a page fault's entry
 * and exit cost beyond what the tracepoints see (c->kentry_sys_ns,
 * c->kentry_fault_ns). 0 or -errno. */
int coll_calibrate(struct collector *c);

/* kwait.c: the wait evidence of an off-CPU record into e (a futex on a
 * CPython's GIL told); where pid's CPython keeps its runtime state (cfg
 * NULL: forget it). */
void coll_wait_event(struct collector *c, const struct igb_event *b, struct ig_event *e);
void coll_python_range(struct collector *c, int pid, const struct igb_pyproc *cfg);

#endif
