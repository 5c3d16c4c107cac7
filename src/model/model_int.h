/* Internals of the model shared by its files (model.c: life cycle and
 * time; ingest.c: events into tables and slices; read.c: the read API;
 * window.c: the snapshot for the window hook; ctab.c: culprit tables).
 * Nothing outside src/model/ includes this. */
#ifndef IG_MODEL_INT_H
#define IG_MODEL_INT_H

#include <stdint.h>
#include <string.h>

#include "core/hist.h"
#include "core/lru.h"
#include "core/ops.h"
#include "core/waits.h"
#include "model/model.h"
#include "model/window.h"

#define NS 1000000000ull
#define TAIL_SHIFT 4
#define TAILB (HIST_BUCKETS >> TAIL_SHIFT) /* quarter-octave buckets for tail sums */
#define CTAB_N IG_CULPRITS
#define MIN_SPAN_NS 1000000ull /* spans shorter than 1 ms are taken as 1 ms */

/* --- culprit tables: who preempted us / who woke us, per 1-s slice ------- */

struct culp {
	uint32_t pid;
	uint32_t aux; /* ig_culprit.aux */
	char comm[IG_COMM_LEN];
	uint64_t ns[IG_WIN_MAX];
};

struct ctab {
	uint64_t sec[IG_WIN_MAX]; /* second held by column j */
	struct culp e[CTAB_N];
};

/* --- histogram series: an op, an (op, process) or an (op, thread) -------- */

enum { LV_OP = 0, LV_PROC = 1, LV_THREAD = 2 };

struct tailacc {
	uint32_t n, nosplit;
	uint64_t dur, pre, blk;
};

struct sslice {
	uint64_t sec;
	uint64_t dur, pre, blk, bytes, max;
	uint32_t switches, nosplit;
	struct hist h; /* h.n = calls in the slice */
};

/* Cold start of one copy direction (or of an op that is not a copy): its
 * first calls and the durations of all its calls, for the settled p50. */
#define COLD_KEYS 5 /* IG_DIR_H2H .. IG_DIR_DEFAULT; key 0 for other ops */
struct coldk {
	unsigned n;	    /* first calls recorded (up to cfg cold_calls) */
	uint64_t max, sum;  /* of their durations */
	uint64_t net_max;   /* longest less its preempted time (and the sleep of a
			     * synchronising call: a wait for the GPU) */
	uint64_t end;	    /* completion of the last of them */
	uint64_t calls;	    /* all calls of the key */
	uint32_t sb[TAILB]; /* their durations, quarter-octave buckets */
};

struct series {
	uint64_t key;
	uint64_t first_ns, last_ns;
	uint64_t calls_life;
	uint64_t nested_life; /* calls made inside another traced call of the thread */
	uint32_t pid, tid;
	uint16_t op;
	uint8_t level;
	unsigned cold_n;
	uint64_t cold_max, cold_sum, cold_end;
	uint64_t out_thr; /* outlier threshold, set each second from the window p50 */
	int out_n, out_i;
	uint64_t out_ts[IG_OUTLIERS], out_dur[IG_OUTLIERS];
	struct ctab *ct;	  /* LV_OP, LV_PROC */
	struct tailacc *tail_win; /* TAILB; LV_OP, LV_PROC */
	struct tailacc *tail;	  /* W * TAILB */
	struct coldk *ck;	  /* COLD_KEYS, by copy direction; LV_OP, LV_PROC */
	struct sslice *sl;	  /* W */
	struct hist life, win;
};

/* --- processes and threads ------------------------------------------------ */

struct pslice {
	uint64_t sec;
	uint64_t calls, call_ns, copy_ns, copy_bytes, copy_calls;
	uint64_t page_bytes, io_ops, io_bytes, io_lat, io_max;
	uint64_t cg_thr_ns, cg_nr_thr, cg_nr_per; /* its cgroup's throttling (IG_EV_CGROUP) */
};

/* A call site of waits: a user stack id and the time waited there. */
struct wait_site {
	uint64_t id, ns;
};

struct proc {
	uint32_t pid, ppid;
	char comm[IG_COMM_LEN];
	char container[IG_CONTAINER_LEN]; /* "" unknown (ig_event.container) */
	uint64_t cgroup_id;
	uint64_t first_ns, last_ns;
	uint32_t io_dev; /* device of the last block I/O (ig_event arg1) */
	int exited, cuda;
	int execd;	  /* it ran a program of its own (an exec was seen) */
	uint64_t exit_ns; /* time of its exit event (when exited) */
	uint64_t calls_life, page_life;
	struct pslice *sl; /* W */
	struct ctab pre;   /* preemptors (off-CPU preempted intervals) */
	struct ctab wake;  /* wakers of blocked intervals between calls */
	/* by thread (key: tid, aux: its process): who ended waits on a lock
	 * or condition, on the GIL, on a full pipe or socket; by network peer
	 * (key: IPv4 address, aux: port) */
	struct ctab lock, gil, full, net;
	struct ctab stop;      /* by thread: who let its stopped threads go on (in calls too) */
	uint64_t stop_ns[3];   /* its feeders stopped, by IG_STOP_* (lifetime) */
	uint32_t feed_sched;   /* its feeding threads' own policy, nice (IG_POLICY_*), latest */
	uint32_t file_dev;     /* device of the file of its latest file wait */
	struct ig_quota quota; /* window fields unused (the slices have them) */
	uint32_t env, env_src, env_initial; /* its environment's settings (IG_EV_ENV) */
	uint64_t cpus;			    /* the CPUs it may run on (IG_CPUS_*), 0 none */
	/* the processes it forked that share its memory (that have not run a
	 * program since: not a spawn), since its own last exec, and the last
	 * one (0: it ran a program); shares: this one is counted so in its
	 * parent's */
	uint32_t forks, fork_pid;
	int shares;
	/* where its feeding threads waited between calls, by time since the
	 * start (user stack ids; the least waited makes room): on a timer, on
	 * a lock or condition, on the GIL; and where the threads that ended
	 * its lock waits were (ig_event.stream) */
	struct wait_site sleep_at[4], lock_at[4], gil_at[4], wake_at[4];
	struct wait_site host_at[4]; /* where they ran their own code (IG_EV_SAMPLE) */
	uint64_t host_sampled;	     /* the time all those samples stand for */
};

enum { ST_UNK = 0, ST_PRE = 1, ST_BLK = 2 };

/* Why a blocked interval between calls slept (model/waits.c: the kernel's
 * evidence, else the IG_F_* flags and the waker), and the part it counts in. */
enum {
	BW_IO = 0, /* D state, nothing more known */
	BW_TASK,   /* woken by another task: input from a producer */
	BW_SLEEP,  /* a timer ended it */
	BW_FAULT,  /* a page fault of fresh memory, or of unrecorded kind */
	BW_OTHER,  /* woken by an interrupt, nothing more known */
	BW_FILE,   /* in a file syscall */
	BW_COLD,   /* in a major fault of a file mapping */
	BW_MEM,	   /* in reclaim, swap-in */
	BW_LOCK,   /* on a lock or condition another thread released */
	BW_GIL,	   /* on CPython's GIL */
	BW_FULL,   /* writing to a full pipe or socket */
	BW_NET,	   /* on a network socket */
	BW_STOP,   /* stopped: a signal, a tracer, the cgroup freezer (in calls too) */
	BW_N
};

struct tslice {
	uint64_t sec;
	uint64_t calls, call_ns, cuda_ns, sync_calls, sync_ns;
	uint64_t sync_nested, sync_nested_ns; /* of those, inside another sync-like call */
	uint64_t off[2][3];		      /* [in call][state] */
	uint32_t sw[2];
	/* inside calls: time first covered by a call, and the parts of it
	 * preempted and blocked, for [0] other calls and [1] calls that
	 * synchronise */
	uint64_t in_busy[2], in_pre[2], in_blk[2];
	uint64_t bw[BW_N];  /* blocked between calls, by reason */
	uint32_t nosplit;   /* calls without a preempted/blocked split */
	uint32_t outer[2];  /* calls not inside another traced call, by in_busy's [k] */
	uint32_t rt_idle_n; /* round-trip idle calls and their time (tparts_raw) */
	uint64_t rt_idle;
	uint32_t rt_sync_n; /* of those, the syncs */
	uint64_t rt_sync;
	uint64_t thr[2];     /* [in call] preempted while its cgroup was throttled */
	uint64_t stop_in;    /* stopped inside calls (between: bw[BW_STOP]) */
	uint64_t kt[IG_K_N]; /* kernel CPU between calls (IG_EV_KTIME) */
	uint64_t timed;	     /* of bw[BW_SLEEP], timed waits nobody ended */
	uint32_t waits;	     /* blocked intervals with the kernel's evidence */
	/* gaps between calls in which it slept on its own timers, and those
	 * sleeps: a loop paced by its clock sleeps once a gap, one that polls
	 * for something sleeps and checks, again and again */
	uint32_t slept_gaps, gap_sleeps;
};

/* The raw sums behind struct ig_time_parts (a slice or a lifetime). */
struct tparts_raw {
	uint64_t in_busy[2], in_pre[2], in_blk[2];
	uint64_t off_btw[3]; /* between calls by state */
	uint64_t bw[BW_N];
	uint32_t nosplit;
	uint64_t outer[2];	     /* calls not inside another, [1] those that synchronise:
				      * each costs one probe pair outside its measured time */
	uint64_t rt_idle, rt_idle_n; /* round-trip idle calls (ig_time_parts.rt_idle_ns):
				      * their time not preempted, and how many */
	uint64_t rt_sync, rt_sync_n; /* of those, the syncs (ig_time_parts.rt_sync_ns) */
	uint64_t thr[2];	     /* throttled, [in call] (tslice) */
	uint64_t stop_in;	     /* stopped inside calls (tslice) */
	uint64_t kt[IG_K_N];	     /* kernel CPU between calls */
	uint64_t timed;		     /* timed waits nobody ended */
	uint32_t waits;
};

struct thread {
	uint32_t tid, pid;
	uint64_t first_ns, last_ns, calls_life;
	uint64_t first_call_ns;	       /* entry of its first CUDA call: it feeds from then */
	uint64_t un_start, un_end;     /* last interval of the union of call intervals */
	uint64_t call_start, call_end; /* last call interval */
	/* an NCCL group being built (ncclGroupStart .. ncclGroupEnd) */
	uint8_t grp_depth;
	uint32_t grp_sig; /* member counts, 4 bits per NCCL data op */
	uint64_t grp_bytes, grp_stream, grp_comm;
	/* the previous call, to see a driver call nested in a runtime call */
	uint64_t prev_start, prev_end; /* its interval */
	uint64_t ppre, pblk;	       /* off-CPU time counted for the previous call */
	uint16_t pop;
	uint8_t psync;
	/* the GPU queue of this thread as its calls leave it: q_empty after a
	 * synchronisation until work is queued; p_idle: the previous outer call
	 * was a round-trip idle one (its runtime wrapper, arriving after it, is
	 * too) */
	uint8_t q_empty, p_idle;
	uint8_t fed; /* in or past its first CUDA call: its start is forgotten (thread_fed) */
	uint16_t gap_sleeps; /* sleep calls since its last call (tslice.gap_sleeps) */
	uint32_t pre_pid;
	char pre_comm[IG_COMM_LEN];
	char comm[IG_COMM_LEN]; /* the thread's own name, from its latest event */
	uint64_t life_cuda, life_off[2][3];
	struct tparts_raw life_raw;
	int tl_n, tl_i;
	struct ig_offcpu_rec tl[IG_TL_MAX];
	uint8_t tl_src[IG_TL_MAX];   /* in_call came from the source's flag */
	uint8_t tl_bw[IG_TL_MAX];    /* BW_* of a blocked interval */
	uint64_t tl_pre[IG_TL_MAX];  /* its run-queue wait after the wake-up */
	uint8_t tl_timed[IG_TL_MAX]; /* a timed wait (futex, poll) a timer ended: a
				      * lock's if the next wait on it is ended by a thread */
	struct tslice *sl;	     /* W */
};

/* --- whole-host slices and the slowest calls ------------------------------ */

struct gslice {
	uint64_t sec;
	uint64_t page_bytes, io_ops, io_bytes, io_lat, io_max;
	uint64_t cpu_max, mem_max, swap_max; /* permille, permille, MiB */
};

struct slowslice {
	uint64_t sec;
	int n;
	struct ig_call_rec r[IG_SLOW_MAX]; /* slowest first */
};

/* The off-CPU intervals of one of the slowest calls (callev.c). */
#define IG_CALLEV_MAX 2048
struct callev {
	uint64_t ts_ns; /* the call: its thread and entry time */
	uint32_t tid;
	uint16_t op;
	uint8_t n, used, cut;
	struct ig_offcpu_rec r[IG_CALLEV_TL];
};

/* (op, process) and (op, thread) series: slot i of t holds s[i]. */
struct stab {
	struct lru t;
	struct series **s;
};

/* --- NCCL (nccl.c) --------------------------------------------------------- */

#define NC_DATA 8   /* data ops: ncclAllReduce .. ncclRecv, in enum order */
#define NC_GROUPS 8 /* distinct groups (by their members) kept */
#define NC_KINDS (NC_DATA + NC_GROUPS)
#define NC_PEND 4096  /* operations waiting for their completion */
#define NC_RANKS 64   /* (process, communicator) pairs */
#define NC_EVENTS 256 /* recorded CUDA events (event syncs complete their stream) */

struct nc_slice {
	uint64_t sec;
	uint64_t ops, bytes, done, wait_ns, wait_max, sync_ns;
};

struct nc_kind {
	uint32_t sig; /* groups: member counts (4 bits per data op); 0: slot unused */
	uint64_t ops_life, bytes_life, done_life;
	struct hist wait_life;
	struct nc_slice sl[IG_WIN_MAX];
};

struct nc_pend {
	uint32_t pid;
	uint16_t kind;
	uint16_t rank; /* index into ranks */
	uint64_t stream, end_ns, bytes;
};

/* An operation the rank enqueued: its sequence number (the rank's
 * ops_life once counted, from 1) and its enqueue call's entry (Unix ns). */
struct nc_arrival {
	uint64_t seq, entry_ns;
};

struct nc_rank {
	uint32_t pid;
	uint64_t comm; /* IG_NCCL_COMM, 0 unknown */
	uint64_t ops_life, last_ns;
	struct nc_slice sl[IG_WIN_MAX];
	/* the last IG_NCCL_ARRIVALS operations, operation seq in slot
	 * seq % IG_NCCL_ARRIVALS (the cross-host join, docs/fleet.md) */
	struct nc_arrival arr[IG_NCCL_ARRIVALS];
};

struct nc_event {
	uint32_t pid;
	uint64_t event, stream, end_ns;
};

/* Plain data without pointers: a copy of the model copies it with memcpy. */
struct nccl_state {
	struct nc_kind k[NC_KINDS];
	struct nc_pend pend[NC_PEND];
	int npend;
	struct nc_rank r[NC_RANKS];
	int nr;
	struct nc_event ev[NC_EVENTS];
	int nev, evi;
	uint64_t dropped;
};

/* --- GPU devices (gpu.c) ----------------------------------------------------- */

#define GPU_PMEM 256 /* (process, device) memory entries */

struct gpu_slice {
	uint64_t sec;
	uint32_t n, n_util, n_power;
	uint64_t util_sum, umem_sum, power_sum, mem_max;
	int temp_max; /* -1 none */
};

struct gpu_dev_st {
	int seen;
	struct ig_gpu_dev last;
	struct gpu_slice sl[IG_WIN_MAX];
};

struct gpu_pmem {
	uint32_t pid;
	uint16_t dev;
	uint16_t known;
	uint64_t bytes, ts_ns;
};

/* Plain data without pointers, like nccl_state. */
struct gpu_state {
	struct gpu_dev_st d[IG_GPU_MAX_DEVS];
	struct gpu_pmem pm[GPU_PMEM];
	int npm;
};

/* The name a culprit task was last seen with (ctab.c), by pid. */
#define NAME_SLOTS 512
struct name_slot {
	uint32_t pid;
	char comm[IG_COMM_LEN];
};

struct ig_model {
	struct ig_model_cfg cfg;
	unsigned W;
	int started;
	uint64_t clock_ns, first_ns, cur_sec;
	struct ig_model_totals tot;
	uint32_t probe_ns; /* cost of tracing one call (model_set_probe_ns) */

	struct series *ops[IG_OP_MAX];
	struct stab sp, st; /* (op, process), (op, thread) */

	struct lru ph, th; /* slot i holds procs[i], threads[i] */
	struct proc *procs;
	struct thread *threads;
	struct pslice *psl;
	struct tslice *tsl;

	struct slowslice *slow;	     /* IG_OP_MAX * W */
	struct slowslice *slow_life; /* IG_OP_MAX: the slowest since the start */
	struct callev *callev;	     /* IG_CALLEV_MAX: the slowest calls' intervals */
	unsigned callev_i;	     /* the next entry to (re)use */
	struct gslice *gsl;	     /* W */
	struct ig_event host;	     /* latest snapshot */
	int host_valid;

	struct ig_proc_stats *scratch_p;

	struct name_slot names[NAME_SLOTS]; /* culprits' names (ctab.c); kept by a reset */

	struct nccl_state *nccl; /* nccl.c */
	struct gpu_state *gpu;	 /* gpu.c */

	/* the window hook (model/window.h) and the snapshot it is handed */
	ig_window_fn win_fn;
	void *win_ctx;
	struct ig_window win;
	struct ig_proc_stats *win_all;
	struct ig_win_proc *win_procs;
	struct ig_win_series *win_series;
	struct ig_win_thread *win_threads;
	struct ig_nccl_rank *win_nccl;
	struct ig_gpu_stats *win_gpus;
};

/* A read of the window: the window ends at end_ns, the clock normally, a
 * second boundary while the window snapshot is built (window.c). The
 * complete seconds it covers are win_start_sec(m) .. m->cur_sec. */
uint64_t win_start_sec(const struct ig_model *m);
int in_window(const struct ig_model *m, uint64_t sec);
uint64_t span_since(const struct ig_model *m, uint64_t end_ns, uint64_t since);
uint64_t rate_span(const struct ig_model *m, uint64_t end_ns);

static inline void copy_comm(char *dst, const char *src)
{
	size_t n = strnlen(src, IG_COMM_LEN - 1);
	memcpy(dst, src, n);
	memset(dst + n, 0, IG_COMM_LEN - n);
}

static inline struct proc *proc_find(const struct ig_model *m, uint32_t pid)
{
	int32_t i = lru_find(&m->ph, pid);
	return i >= 0 ? &m->procs[i] : NULL;
}

static inline struct thread *thread_find(const struct ig_model *m, uint32_t tid)
{
	int32_t i = lru_find(&m->th, tid);
	return i >= 0 ? &m->threads[i] : NULL;
}

static inline struct series *op_proc_find(const struct ig_model *m, int op, uint32_t pid)
{
	int32_t i = lru_find(&m->sp.t, ((uint64_t)pid << 8) | (unsigned)op);
	return i >= 0 ? m->sp.s[i] : NULL;
}

/* model.c: moves the clock to t, handing a window snapshot to the hook and
 * rotating the window at each second boundary crossed. */
void model_advance_to(struct ig_model *m, uint64_t t);

/* parts.c: the time parts of a wall time from the raw sums */
void parts_of(const struct tparts_raw *r, uint64_t wall_ns, uint32_t probe_ns,
	      struct ig_time_parts *out);
void parts_add(struct ig_time_parts *dst, const struct ig_time_parts *src);

/* waits.c: off-CPU intervals and kernel time by mechanism. blocked_reason:
 * the BW_* of a blocked interval between calls. */
int blocked_reason(const struct ig_event *e);
void ingest_offcpu(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
		   int inwin);
void ingest_sample(struct ig_model *m, const struct ig_event *e, uint64_t end);
void ingest_ktime(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
		  int inwin);
/* Off-CPU intervals of t in [a, b) that arrived before the call that holds
 * them move from "between calls" to "inside calls". */
void reclassify(struct ig_model *m, struct thread *t, struct proc *p, uint64_t a, uint64_t b);
/* ingest.c: the thread, process and slices, made when new */
struct proc *proc_get(struct ig_model *m, uint32_t pid, uint64_t t);
/* The thread of e and its process (*pp), named from e when they were not. */
struct thread *event_thread(struct ig_model *m, const struct ig_event *e, uint64_t end,
			    struct proc **pp);
struct thread *thread_get(struct ig_model *m, uint32_t tid, uint32_t pid, uint64_t ts,
			  uint64_t end);
struct tslice *tslot(struct ig_model *m, struct thread *t, uint64_t sec);
void thread_fed(struct ig_model *m, struct thread *t);

/* ctab.c; aux: the culprit's process (tables of threads) or port (peers) */
void ctab_add(struct ig_model *m, struct ctab *t, uint32_t pid, uint32_t aux, const char *comm,
	      uint64_t ns, uint64_t sec);
void ctab_sub(struct ig_model *m, struct ctab *t, uint32_t pid, uint64_t ns, uint64_t sec);
/* A wait of ns that ended at end_ns, kept in the seconds of the window it
 * covers (its part before the window is not counted); _sub takes it back. */
void ctab_add_wait(struct ig_model *m, struct ctab *t, uint32_t pid, uint32_t aux, const char *comm,
		   uint64_t end_ns, uint64_t ns);
void ctab_sub_wait(struct ig_model *m, struct ctab *t, uint32_t pid, uint64_t end_ns, uint64_t ns);
int ctab_top(const struct ig_model *m, const struct ctab *t, struct ig_culprit *out, int n,
	     uint64_t total);

/* ingest.c: a series is one allocation of series_size() bytes; its slices,
 * culprit table and tail sums follow the struct (series_rebase points at
 * them, e.g. after a copy) */
size_t series_size(unsigned W, int full);
void series_rebase(struct series *S, unsigned W, int full);
void series_clear(struct series *S, unsigned W, int full);
struct series *series_alloc(unsigned W, int full);
void model_expire(struct ig_model *m, uint64_t k);
void model_thresholds(struct ig_model *m, uint64_t k);

/* read.c: the fill functions read the window ending at end_ns */
void totals_fill(const struct ig_model *m, uint64_t end_ns, struct ig_model_totals *t);
void series_fill(const struct ig_model *m, uint64_t end_ns, const struct series *S,
		 struct ig_series_stats *o);
void proc_fill(const struct ig_model *m, uint64_t end_ns, const struct proc *p,
	       struct ig_proc_stats *o);
void thread_fill(const struct ig_model *m, uint64_t end_ns, const struct thread *t,
		 struct ig_thread_stats *o);
int procs_sorted(const struct ig_model *m, uint64_t end_ns, struct ig_proc_stats *out, int max);
int threads_busiest(const struct ig_model *m, uint64_t end_ns, uint32_t pid,
		    struct ig_thread_stats *out, int max);
int slow_calls(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out, int max);
int thread_offcpu(const struct thread *t, struct ig_offcpu_rec *out, int max);
/* Keeps the off-CPU intervals during call e of thread t (callev.c). */
void callev_keep(struct ig_model *m, const struct thread *t, const struct ig_event *e);

/* nccl.c: an NCCL call, or a call that may complete NCCL operations, of
 * thread t (ingest_call); the rest of the read API. */
void nccl_call(struct ig_model *m, struct thread *t, const struct ig_event *e, uint64_t end,
	       uint64_t sec, int inwin);
void nccl_reset(struct ig_model *m); /* also what makes a new state ready */
int nccl_window_ranks(const struct ig_model *m, uint64_t end, struct ig_nccl_rank *out, int max);
/* gpu.c: a device or process sample; reset; the read API at end. */
void gpu_ingest(struct ig_model *m, const struct ig_event *e, uint64_t sec, int inwin);
void gpu_reset(struct ig_model *m);
int gpu_stats_at(const struct ig_model *m, uint64_t end, struct ig_gpu_stats *out, int max);
/* pid's memory over the devices' latest samples and the devices listing it;
 * 0, or -ENOENT when no device gives a value. */
int gpu_proc_mem(const struct ig_model *m, uint32_t pid, uint64_t *bytes, uint32_t *devs);

/* window.c */
int window_alloc(struct ig_model *m);
void window_free(struct ig_model *m);
/* Builds the snapshot of the W complete seconds before second k and hands
 * it to the hook. */
void window_emit(struct ig_model *m, uint64_t k);

#endif
