/* The one event type: every source (live BPF, SQLite replay, synthetic
 * streams in tests and benches) fills a struct ig_event and hands it to
 * ig_ingest(). Times are Unix nanoseconds (event time), durations are ns. */
#ifndef IG_EVENT_H
#define IG_EVENT_H

#include <stdint.h>

enum ig_kind {
	IG_EV_NONE = 0,
	IG_EV_CALL,	  /* a CUDA runtime/driver call: ts_ns = entry, dur_ns */
	IG_EV_OFFCPU,	  /* an off-CPU interval of a target thread: ts_ns = when it
			   * left the CPU, dur_ns = time off CPU */
	IG_EV_FORK,	  /* pid forked child arg0 */
	IG_EV_EXEC,	  /* pid exec'd; comm holds the new name */
	IG_EV_EXIT,	  /* process pid exited */
	IG_EV_PAGE_ALLOC, /* arg0 bytes of pages allocated by pid since the last one */
	IG_EV_BLOCK_IO,	  /* block request: ts_ns = issue, dur_ns = latency,
			   * arg0 = bytes, op = IG_IO_* */
	IG_EV_SNAPSHOT,	  /* system snapshot: see struct ig_snapshot fields below */
	IG_EV_COMM,	  /* process name (or name change) for pid: comm; arg0 = ppid (0 = unknown);
			   * container (collect/container.h) when the source knows it */
	IG_EV_GPU,	  /* a GPU device sample (NVML): struct ig_gpu_dev, packed below */
	IG_EV_GPU_PROC,	  /* GPU memory of process pid on device cpu (NVML): arg0 = bytes,
			   * flags IG_GPU_V_MEM when known; ts_ns = its device sample's */
	IG_EV_KTIME,	  /* kernel CPU time of thread tid between CUDA calls, by what it
			   * served (core/waits.h struct ig_ktime), counted at ts_ns */
	IG_EV_CGROUP,	  /* the CPU quota of process pid's cgroup, once a second while
			   * it has one: arg0 quota us, arg1 period us, arg2 throttled ns
			   * since the last, stream nr_throttled << 32 | nr_periods since
			   * the last, flags 1 on cgroup v2, container the cgroup's
			   * directory (collect/cgcpu.h) */
	IG_EV_ENV,	  /* what process pid's environment says about how CUDA and
			   * PyTorch run: arg0 IG_ENV_* set, arg1 where it was read
			   * (IG_ENV_SRC_*), arg2 IG_ENV_* of the environment it
			   * was started with; stream the CPUs it may run on
			   * (IG_CPUS_*); sent when it changes and every 10 s while
			   * any is set or its CPUs are fewer than those online
			   * (collect/procenv.h) */
	IG_EV_SAMPLE,	  /* thread tid, which makes CUDA calls, caught on the CPU in its
			   * own code between them by the sampling tick: stack_id its
			   * user stack, dur_ns the tick's period (the time it stands
			   * for); with stacks on */
	IG_EV_KIND_MAX,
};

/* Off-CPU state of a thread while it was off CPU. */
enum ig_offcpu_state {
	IG_OFF_UNKNOWN = 0,   /* source did not say (Ingero recordings) */
	IG_OFF_PREEMPTED = 1, /* it was runnable: CPU contention */
	IG_OFF_BLOCKED = 2,   /* it slept: GPU, lock, I/O, pipe... */
};

enum ig_io_op { IG_IO_READ = 1, IG_IO_WRITE = 2, IG_IO_DISCARD = 3, IG_IO_OTHER = 4 };

/* cudaMemcpyKind values, also used for driver copies. */
enum ig_copy_dir {
	IG_DIR_H2H = 0,
	IG_DIR_H2D = 1,
	IG_DIR_D2H = 2,
	IG_DIR_D2D = 3,
	IG_DIR_DEFAULT = 4
};

#define IG_COMM_LEN 16
#define IG_NODE_LEN 32
/* A container name ("k8s:<pod uid>/<id>" is the longest) and its NUL. */
#define IG_CONTAINER_LEN 64
#define IG_DETAIL_LEN 256 /* the longest container text of any kind (a cgroup directory) */

/* Flags on IG_EV_CALL / IG_EV_OFFCPU. */
#define IG_F_IN_CALL 0x1  /* off-CPU interval started inside a traced call */
#define IG_F_NO_SPLIT 0x2 /* preempted/blocked split unknown for this call */
/* Why a blocked off-CPU interval slept (IG_OFF_BLOCKED; none set: woken by
 * another task, or not recorded). */
#define IG_F_DSTATE 0x4 /* uninterruptible sleep (D): block I/O, page cache */
#define IG_F_TIMER 0x8	/* woken by a timer: a sleep or a timeout */
#define IG_F_FAULT 0x10 /* went to sleep inside a page fault */
/* The kernel's evidence of the wait (core/waits.h), IG_EV_OFFCPU: */
#define IG_F_THROTTLED 0x20 /* preempted: its cgroup's CPU quota had run out */
#define IG_F_RECLAIM 0x40   /* slept during direct memory reclaim */
#define IG_F_DETAIL 0x80    /* arg1, arg2 say what it waited in (core/waits.h) */
#define IG_F_GIL 0x100	    /* a futex wait on CPython's GIL */

/* The scheduling policy of a preempted interval's preemptor (the low half
 * of its arg1): known, SCHED_* (1 FIFO, 2 RR: real-time, 3 BATCH, 5 IDLE),
 * real-time priority; the high half is the thread's own, with nice + 20
 * for the priority (IG_POLICY_NICE). */
#define IG_POLICY_KNOWN(w) ((int)(((w) >> 16) & 1))
#define IG_POLICY_OF(w) ((int)((w)&0xff))
#define IG_POLICY_RTPRIO(w) ((int)(((w) >> 8) & 0xff))
#define IG_POLICY_RT(w) (IG_POLICY_KNOWN(w) && (IG_POLICY_OF(w) == 1 || IG_POLICY_OF(w) == 2))
#define IG_POLICY_NICE(w) (IG_POLICY_RTPRIO(w) - 20)

/* IG_EV_ENV: the settings found (arg0), and where (arg1). */
#define IG_ENV_LAUNCH_BLOCKING 0x1 /* CUDA_LAUNCH_BLOCKING=1: launches wait for their work */
#define IG_ENV_NO_ALLOC_CACHE 0x2  /* PYTORCH_NO_CUDA_MEMORY_CACHING=1: no caching allocator */
#define IG_ENV_ALL 0x3
#define IG_ENV_SRC_LIVE 1    /* the C library's environ: settings made at run time count */
#define IG_ENV_SRC_INITIAL 2 /* /proc/PID/environ: the environment it was started with */
/* IG_EV_ENV's stream: the CPUs it may run on (its affinity), those online,
 * those its cgroup's cpuset allows (0 not known); 0 not read */
#define IG_CPUS_PACK(allowed, online, cpuset)                                                      \
	(((uint64_t)(allowed)&0xfffff) | (((uint64_t)(online)&0xfffff) << 20) |                    \
	 (((uint64_t)(cpuset)&0xfffff) << 40))
#define IG_CPUS_ALLOWED(s) ((uint32_t)((s)&0xfffff))
#define IG_CPUS_ONLINE(s) ((uint32_t)(((s) >> 20) & 0xfffff))
#define IG_CPUS_CPUSET(s) ((uint32_t)(((s) >> 40) & 0xfffff))

struct ig_event {
	uint64_t ts_ns;	 /* Unix ns: entry time for calls, switch-out for off-CPU */
	uint64_t dur_ns; /* call duration, off-CPU duration, I/O latency */
	uint32_t pid;	 /* tgid */
	uint32_t tid;
	uint16_t kind;	 /* enum ig_kind */
	uint16_t op;	 /* enum ig_op for calls, enum ig_io_op for block I/O */
	int32_t ret;	 /* return code of the call */
	uint32_t flags;	 /* IG_F_* */
	uint32_t cpu;	 /* CPU the event happened on (off-CPU: where it left) */
	uint64_t arg0;	 /* bytes (alloc, copy), kernel function (launch), child pid (fork);
			  * off-CPU: the task that ran while a woken thread waited for
			  * its CPU (preempt_ns of a blocked interval), 0 = unknown */
	uint64_t arg1;	 /* copy direction (enum ig_copy_dir); NCCL: type, op, peer
			  * (core/ops.h); launch-ex: grid blocks << 16 | block threads;
			  * a preempted interval: other_pid's scheduling policy
			  * (IG_POLICY_*), 0 unknown; the thread's own in the high
			  * half */
	uint64_t arg2;	 /* NCCL: the communicator (IG_NCCL_COMM, core/ops.h); else 0 */
	uint64_t stream; /* CUDA stream handle, 0 = default stream; a blocked
			  * interval's (IG_F_DETAIL) at a lock: the user stack id of the
			  * thread that ended it (other_pid's), 0 none */
	uint64_t cgroup_id;
	/* Per-call off-CPU attribution (calls), or the interval itself (off-CPU). */
	uint64_t preempt_ns; /* off CPU while runnable */
	uint64_t blocked_ns; /* off CPU while sleeping */
	uint32_t switches;   /* context switches during the call */
	uint8_t state;	     /* enum ig_offcpu_state (off-CPU events) */
	uint8_t node;	     /* index into the node name table (multi-file replay) */
	uint16_t pad;
	uint32_t other_pid;	      /* preemptor tgid (last one for calls), or waker tgid
				       * for blocked intervals; 0 = none */
	char other_comm[IG_COMM_LEN]; /* comm of other_pid */
	char comm[IG_COMM_LEN];	      /* comm of pid when known (may be empty) */
	uint64_t stack_id;	      /* user stack hash, 0 = none */
	/* IG_EV_COMM: the process's container or service ("docker:<id>",
	 * "k8s:<pod uid>/<id>", "<unit>.service", "-" for the host;
	 * collect/container.h), NULL or "" when the source does not know it.
	 * IG_EV_CGROUP: the cgroup's directory.
	 * Like the event, valid only during the emit call: whoever keeps the
	 * event copies the text (the flight ring's names, the recorder's queue). */
	const char *container;
};

/* IG_EV_SNAPSHOT reuses fields: arg0 = cpu permille (0..1000 * ncpu not used:
 * 0..1000 of all CPUs), arg1 = memory used permille, stream = available MiB,
 * preempt_ns = swap used MiB, blocked_ns = load average * 100; with flags
 * IG_SNAP_SELF, arg2 = the CPU ingero-top itself used since the last
 * snapshot, permille of one CPU (live only: not recorded). Helpers: */
#define IG_SNAP_SELF 0x1
static inline void ig_snapshot_fill(struct ig_event *e, uint64_t ts_ns, double cpu_pct,
				    double mem_pct, uint64_t mem_avail_mb, uint64_t swap_mb,
				    double load1)
{
	*e = (struct ig_event){0};
	e->kind = IG_EV_SNAPSHOT;
	e->ts_ns = ts_ns;
	e->arg0 = (uint64_t)(cpu_pct * 10.0 + 0.5);
	e->arg1 = (uint64_t)(mem_pct * 10.0 + 0.5);
	e->stream = mem_avail_mb;
	e->preempt_ns = swap_mb;
	e->blocked_ns = (uint64_t)(load1 * 100.0 + 0.5);
}

/* A GPU device sample (IG_EV_GPU), as NVML reports it. Each value has a
 * bit in valid: a call that failed or that the device does not support
 * leaves its value unset (shown as no value, never as 0). */
#define IG_GPU_V_UTIL 0x1   /* util_gpu_pct, util_mem_pct */
#define IG_GPU_V_MEM 0x2    /* mem_used, mem_total */
#define IG_GPU_V_POWER 0x4  /* power_mw */
#define IG_GPU_V_LIMIT 0x8  /* power_limit_mw */
#define IG_GPU_V_TEMP 0x10  /* temp_c */
#define IG_GPU_V_CLOCK 0x20 /* sm_mhz */
#define IG_GPU_MAX_DEVS 16

struct ig_gpu_dev {
	uint64_t ts_ns;		      /* when sampled (Unix ns) */
	unsigned index;		      /* NVML device index */
	uint32_t valid;		      /* IG_GPU_V_* */
	unsigned util_gpu_pct;	      /* percent of the last sample period a kernel ran */
	unsigned util_mem_pct;	      /* percent of it device memory was read or written */
	uint64_t mem_used, mem_total; /* bytes */
	unsigned power_mw, power_limit_mw;
	unsigned temp_c;
	unsigned sm_mhz;
	int err;		/* NVML code of the first call that failed, 0 = none */
	char name[IG_COMM_LEN]; /* device name, cut ("NVIDIA " dropped) */
};

/* IG_EV_GPU reuses fields: cpu = index, flags = valid, arg0 = mem_used,
 * arg1 = mem_total, stream = power_mw | power_limit_mw << 32, preempt_ns =
 * util_gpu | util_mem << 8 | temp_c << 16 | sm_mhz << 32, ret = err, comm =
 * name. These two are the only readers and writers of that layout. */
static inline void ig_gpu_dev_pack(struct ig_event *e, const struct ig_gpu_dev *d)
{
	*e = (struct ig_event){0};
	e->kind = IG_EV_GPU;
	e->ts_ns = d->ts_ns;
	e->cpu = d->index;
	e->flags = d->valid;
	e->arg0 = d->mem_used;
	e->arg1 = d->mem_total;
	e->stream = (uint64_t)d->power_mw | ((uint64_t)d->power_limit_mw << 32);
	e->preempt_ns = (uint64_t)(d->util_gpu_pct & 0xff) |
			((uint64_t)(d->util_mem_pct & 0xff) << 8) |
			((uint64_t)(d->temp_c & 0xffff) << 16) | ((uint64_t)d->sm_mhz << 32);
	e->ret = d->err;
	for (int i = 0; i < IG_COMM_LEN - 1 && d->name[i]; i++)
		e->comm[i] = d->name[i];
}

static inline void ig_gpu_dev_unpack(const struct ig_event *e, struct ig_gpu_dev *d)
{
	*d = (struct ig_gpu_dev){0};
	d->ts_ns = e->ts_ns;
	d->index = e->cpu;
	d->valid = e->flags;
	d->mem_used = e->arg0;
	d->mem_total = e->arg1;
	d->power_mw = (unsigned)(e->stream & 0xffffffffu);
	d->power_limit_mw = (unsigned)(e->stream >> 32);
	d->util_gpu_pct = (unsigned)(e->preempt_ns & 0xff);
	d->util_mem_pct = (unsigned)((e->preempt_ns >> 8) & 0xff);
	d->temp_c = (unsigned)((e->preempt_ns >> 16) & 0xffff);
	d->sm_mhz = (unsigned)(e->preempt_ns >> 32);
	d->err = e->ret;
	for (int i = 0; i < IG_COMM_LEN - 1 && e->comm[i]; i++)
		d->name[i] = e->comm[i];
}

#endif
