/* Structures shared by the BPF programs (bpf/ingero.bpf.c) and user space
 * (src/collect/collector.c). Fixed-width types, units in the field names. */
#ifndef IG_BPF_SHARED_H
#define IG_BPF_SHARED_H

#define IGB_COMM_LEN 16
#define IGB_MAX_DEPTH 4 /* nested traced calls per thread (runtime -> driver -> ...) */

/* Record kinds; the numbers equal enum ig_kind in src/core/event.h. */
enum igb_kind {
	IGB_CALL = 1,
	IGB_OFFCPU = 2,
	IGB_FORK = 3,
	IGB_EXEC = 4,
	IGB_EXIT = 5,
	IGB_BLOCK_IO = 7,
	IGB_COMM = 9,	    /* a target thread renamed itself (prctl, setproctitle): comm */
	IGB_KTIME = 12,	    /* kernel CPU time of a target thread between calls (below) */
	IGB_SAMPLE = 15,    /* a thread that makes CUDA calls caught by the tick running
			     * its own code between calls: stack_id its user stack,
			     * dur_ns the tick (stacks on) */
	IGB_DL_CHANGE = 32, /* a process loaded or unloaded a library: a hint, not an event */
	IGB_HOLD = 33,	    /* a target must not run before user space looks (struct below) */
};

/* IGB_HOLD: a target process execs a file, or its dynamic loader has
 * loaded a CUDA library, that user space has not examined yet (not in the
 * `resolved` map). Unless told
 * otherwise by flags, the kernel has stopped it (SIGSTOP) before it runs
 * one more instruction; user space attaches what it finds, marks the files
 * resolved and sends SIGCONT. Fields of struct igb_event used:
 *   state         enum igb_hold_reason
 *   flags         enum igb_hold_flags
 *   arg0, arg1    the first library file not examined (dev, ino), or 0
 *   stream, dur_ns the executable (dev, ino)
 *   ts_ns         when (also the value in the `held` map)
 * dev is the kernel's encoding: major << 20 | minor. */
enum igb_hold_reason { IGB_HOLD_EXEC = 1, IGB_HOLD_LOAD = 2 };
enum igb_hold_flags {
	IGB_HOLD_F_STOPPED = 0x1, /* SIGSTOP sent: user space must send SIGCONT */
	IGB_HOLD_F_SKIPPED = 0x2, /* not stopped: a job of an interactive shell */
	IGB_HOLD_F_FAILED = 0x4,  /* not stopped: the signal could not be sent */
	IGB_HOLD_F_NEW = 0x8,	  /* default mode: the process became a target here */
	IGB_HOLD_F_OFF = 0x10,	  /* not stopped: holds are off (hold_on false) */
};

/* Key of the `ig_held` map: one hold (its value: enum igb_held_state).
 * Each hold has its own entry, so that ending one never touches the next
 * hold of the same process. */
struct igb_held {
	__u32 tgid;
	__u32 pad;
	__u64 ts_ns; /* when, as in the IGB_HOLD record */
};
enum igb_held_state {
	IGB_HELD = 0,	     /* stopped, this instance has not answered yet */
	IGB_HELD_SHARED = 1, /* this instance is done; another one, still holding it,
			      * sends SIGCONT (the guardian does at the 1 s limit) */
};

/* Key of the `resolved` map: a file the collector has examined. */
struct igb_file {
	__u64 dev; /* kernel encoding, as above */
	__u64 ino;
};

enum igb_state { IGB_PREEMPTED = 1, IGB_BLOCKED = 2 };

/* ---- wait evidence (bpf/waits.bpf.h) ---------------------------------------
 * What a target thread was doing when it left the CPU, and where its
 * kernel CPU time went between calls. Only with the knob waits_on.
 *
 * IGB_OFFCPU of a blocked thread (flags has IGB_F_DETAIL) also carries:
 *   arg1       IGB_WAIT(sys + 1, fd kind, fault kind) | waker tid << 32
 *   stream     the wait channel: the first kernel frame outside the
 *              scheduler's functions (0 unknown)
 *   arg0       (the run-queue holder's tgid, as without detail) | the low
 *              32 bits of the innermost scheduler function under the wait
 *              channel (io_schedule, a mutex's slow path...; 0 unknown) << 32:
 *              it lies in the scheduler's text, whose high bits user space
 *              knows (kwait_sched_text)
 *   cgroup_id  the object: the syscall's first argument (a futex address,
 *              an fd), or for an fd: a file's dev << 32 | inode, an IPv4
 *              peer's address << 16 | port; in a page fault, its address
 *   switches, ret  the low and high halves of the thread's user stack id at
 *              a timer's or a lock's wait (stacks on), 0 none
 *   stack_id   at a lock wait with that stack: the waker's user stack id,
 *              taken as it woke the thread from a lock syscall of its own
 *              (its unlock, signal or post), 0 none
 * and of a preempted one: IGB_F_THROTTLED when the CPU quota of its cgroup
 * had run out; arg1 the scheduling policy of other_pid's task when it is
 * the one that took the CPU at the switch (IGB_POLICY: a real-time task
 * is not lowered by nice), 0 unknown, and in its high half the thread's
 * own (IGB_POLICY with nice + 20 for the priority: a thread at nice 19
 * gets little beside any ordinary task). */
#define IGB_POLICY(policy, rtprio) (1u << 16 | ((__u32)(rtprio)&0xff) << 8 | ((__u32)(policy)&0xff))
#define IGB_F_THROTTLED 0x20 /* preempted because its cgroup's CPU quota ran out */
#define IGB_F_RECLAIM 0x40   /* it slept during direct memory reclaim */
#define IGB_F_DETAIL 0x80    /* the wait evidence above was recorded */

#define IGB_WAIT(sys1, fdk, flt)                                                                   \
	((__u64)(sys1)&0xfff) | ((__u64)(fdk)&0xff) << 16 | ((__u64)(flt)&0xff) << 24
#define IGB_WAIT_SYS1(w) ((w)&0xfff)
/* A stopped thread (its task state), in bits 12-13 of the same word: it
 * waits for a SIGCONT, its tracer or a thaw, whatever its syscall was. */
#define IGB_WAIT_STOP(w) (((w) >> 12) & 3)
enum igb_stop { IGB_STOP_NONE, IGB_STOP_SIGNAL, IGB_STOP_PTRACE, IGB_STOP_FROZEN };
#define IGB_WAIT_FDK(w) (((w) >> 16) & 0xff)
#define IGB_WAIT_FLT(w) (((w) >> 24) & 0xff)
#define IGB_SYS_MAX 512 /* syscall numbers classified (sys_cls) */

/* What an fd is (struct file's inode type, or its anonymous inode). */
enum igb_fdk {
	IGB_FDK_NONE = 0,
	IGB_FDK_REG,	  /* regular file */
	IGB_FDK_BLK,	  /* block device */
	IGB_FDK_FIFO,	  /* pipe or FIFO */
	IGB_FDK_UNIX,	  /* AF_UNIX socket */
	IGB_FDK_INET,	  /* AF_INET socket */
	IGB_FDK_INET6,	  /* AF_INET6 socket */
	IGB_FDK_SOCK,	  /* another socket family */
	IGB_FDK_CHR,	  /* character device (a tty, /dev/nvidia*) */
	IGB_FDK_EVENTFD,  /* [eventfd] */
	IGB_FDK_EPOLL,	  /* [eventpoll] */
	IGB_FDK_TIMERFD,  /* [timerfd] */
	IGB_FDK_SIGNALFD, /* [signalfd] */
	IGB_FDK_ANON,	  /* another anonymous inode */
	IGB_FDK_DIR,	  /* directory */
	IGB_FDK_OTHER,
};

/* The mapping a page fault was in. */
enum igb_flt { IGB_FLT_NONE = 0, IGB_FLT_ANON, IGB_FLT_FILE, IGB_FLT_SHMEM };

/* Syscall classes user space writes into sys_cls[nr] before load. */
#define IGB_SC_FD 0x1	/* the first argument is an fd: look it up */
#define IGB_SC_IO 0x2	/* moves data through it: file I/O when it is a file */
/* IGB_SC_SYNC: writes back a file (fsync...), or asynchronous I/O
 * (io_submit, io_uring_enter...): file I/O whatever the fd */
#define IGB_SC_SYNC 0x4
/* IGB_SC_PACE: may wait for a timer (sleep, poll, epoll, a signal): the
 * user stack of its blocked waits is kept (stacks on), the call site of a
 * loop's pacing */
#define IGB_SC_PACE 0x8
#define IGB_SC_PROBE 0x10 /* the uprobe machinery's own (uretprobe, uprobe): the
			   * tracer's cost, not the thread's syscall time */
#define IGB_SC_LOCK 0x20 /* waits for another thread (futex, semop, flock, fcntl):
			  * the user stack of a feeding thread's blocked wait is kept
			  * (stacks on, at most one per IGB_SITE_GAP_NS), the call
			  * site of its lock waits */
#define IGB_SITE_GAP_NS 1000000ULL

/* IGB_KTIME: kernel CPU time of one target thread outside CUDA calls,
 * summed since its last record (at least every 200 ms or 1 ms of time):
 *   ts_ns      when (the time is counted there)
 *   dur_ns     the sum of the seven below
 *   arg0       in file syscalls (read/write of files, fsync...)
 *   arg1       in other syscalls
 *   stream     in minor page faults, but for the copy-on-write ones
 *   cgroup_id  in major faults of file mappings (reading the file)
 *   preempt_ns in major faults of anonymous memory (swap-in)
 *   blocked_ns in direct reclaim (not counted in the call around it)
 *   other_pid  in minor faults that were writes to a present page: copy on
 *              write (of a page shared with a forked process, or the zero
 *              page); op: how many (at most 65535)
 *   switches   major page faults; ret: syscalls and faults counted
 *   stack_id   how many of each: IGB_KCOUNTS (a record holds at most ~1 ms of
 *              them: 16 bits each, 8 for the major faults) */
#define IGB_KCOUNTS(file, sys, minor, majf, maja)                                          \
	((__u64)(__u16)(file) | (__u64)(__u16)(sys) << 16 | (__u64)(__u16)(minor) << 32 | \
	 (__u64)((majf) > 255 ? 255 : (majf)) << 48 | (__u64)((maja) > 255 ? 255 : (maja)) << 56)
#define IGB_KCOUNT(c, cat)                                                                 \
	((cat) < 3 ? (unsigned)(((c) >> (16 * (cat))) & 0xffff)                            \
		   : (unsigned)(((c) >> (48 + 8 * ((cat)-3))) & 0xff))
enum igb_kcat {
	IGB_K_FILE = 0,
	IGB_K_SYS,
	IGB_K_MINOR,
	IGB_K_MAJ_FILE,
	IGB_K_MAJ_ANON,
	IGB_K_RECLAIM,
	IGB_K_COW,
	IGB_K_N
};

/* The kernel time of the calibration child (collect/calib.c), summed here
 * instead of sent as records: user space reads it while the ring buffer
 * keeps the targets' records for the source's first poll. */
struct igb_calib {
	__u32 tgid; /* the child, 0 none */
	__u32 pad;
	__u64 ns[8], n[8]; /* by enum igb_kcat: kernel ns, syscalls or faults */
};

/* The uprobe cookie: which op, how to read its arguments, fixed direction. */
#define IGB_COOKIE(op, argmode, dir) ((__u64)(op) | ((__u64)(argmode) << 16) | ((__u64)(dir) << 24))
#define IGB_COOKIE_OP(c) ((c) & 0xffff)
#define IGB_COOKIE_ARGMODE(c) (((c) >> 16) & 0xff)
#define IGB_COOKIE_DIR(c) (((c) >> 24) & 0xff)

/* Argument modes, equal to enum ig_argmode in src/core/ops.h. */
enum igb_argmode {
	IGB_ARGS_NONE = 0,
	IGB_ARGS_PTR1,
	IGB_ARGS_SIZE2,
	IGB_ARGS_COPY_RT,
	IGB_ARGS_COPY_CU,
	IGB_ARGS_STREAM1,
	IGB_ARGS_STREAM2,
	IGB_ARGS_LAUNCH_RT,
	IGB_ARGS_LAUNCH_CU,
	IGB_ARGS_SIZE2_STREAM3,
	IGB_ARGS_PTR1_STREAM2,
	IGB_ARGS_LAUNCH_EX,
	IGB_ARGS_SIZE3_STREAM4,
	IGB_ARGS_NCCL_RED,
	IGB_ARGS_NCCL_GATHER,
	IGB_ARGS_NCCL_BCAST,
	IGB_ARGS_NCCL_REDUCE,
	IGB_ARGS_NCCL_P2P,
	IGB_ARGS_NCCL_INIT,
};

/* NCCL arguments as the entry probe leaves them (src/core/ops.h has the
 * layout the collector makes of them): arg0 = count, arg1 = type | op << 8 |
 * peer or root << 16 (0xff, 0xffffffff: none), arg2 = the ncclComm_t. For
 * ncclCommInitRank, at exit: arg0 = the ncclComm_t made, arg1 = nranks |
 * rank << 32, arg2 = a hash of the first 16 bytes of the unique id. */
#define IGB_NCCL_ARG1(type, op, peer)                                                             \
	((__u64)((type)&0xff) | ((__u64)((op)&0xff) << 8) | ((__u64)(__u32)(peer) << 16))

/* One record in the ring buffer. */
struct igb_event {
	__u64 ts_ns;      /* CLOCK_MONOTONIC: call entry, or switch-out for off-CPU */
	__u64 dur_ns;     /* call duration, off-CPU duration, I/O latency */
	__u64 arg0;       /* bytes / function / child pid */
	__u64 arg1;       /* copy direction */
	__u64 stream;
	__u64 cgroup_id;
	__u64 preempt_ns; /* off CPU while runnable during the call / interval */
	__u64 blocked_ns; /* off CPU while sleeping */
	__u32 pid;        /* tgid */
	__u32 tid;
	__u32 switches;
	__u32 other_pid;  /* preemptor (calls, preempted intervals) or waker (blocked) */
	__u32 cpu;
	__s32 ret;
	__u16 kind;       /* enum igb_kind */
	__u16 op;         /* enum ig_op, or block I/O op */
	__u8 state;       /* enum igb_state for off-CPU records */
	__u8 flags;       /* IG_F_IN_CALL... */
	__u16 pad;
	char comm[IGB_COMM_LEN];
	char other_comm[IGB_COMM_LEN];
	__u64 stack_id;
};

/* The record of a call whose argument mode uses a third argument (the NCCL
 * modes, IGB_ARGS_NCCL_RED on): the common record and arg2 after it. Only
 * those calls pay for the wider record; a reader tells them by the length. */
struct igb_event_wide {
	struct igb_event e;
	__u64 arg2; /* NCCL: the communicator (above) */
};

/* Per-CPU counters, index by enum igb_counter. */
enum igb_counter {
	IGB_CNT_RB_DROPS = 0,	 /* ring-buffer reservation failures */
	IGB_CNT_SWITCHES,	 /* all context switches seen */
	IGB_CNT_TARGET_SWITCHES, /* switches of target threads */
	IGB_CNT_DEPTH_OVERFLOW,	 /* nesting deeper than IGB_MAX_DEPTH */
	IGB_CNT_UNMATCHED_RET,	 /* return without a matching entry */
	IGB_CNT_IO_OTHER,	 /* block requests of non-target processes */
	IGB_CNT_IO_OTHER_NS,	 /* their total latency */
	IGB_CNT_STACKS,		 /* calls with a stack captured */
	IGB_CNT_STACK_NEW,	 /* distinct stacks stored in the stacks map */
	IGB_CNT_STACK_ERR,	 /* user stack could not be read */
	IGB_CNT_STACK_MAPFAIL,	 /* stack not stored (map update failed) */
	IGB_CNT_PY_NOTHREAD,	 /* Python process, calling thread has no thread state */
	IGB_CNT_PY_READFAIL,	 /* interpreter memory could not be read */
	IGB_CNT_HOLDS,		 /* processes stopped until their libraries were attached */
	IGB_CNT_HOLD_SKIPPED,	 /* ... not stopped: jobs of an interactive shell */
	IGB_CNT_HOLD_FAILED,	 /* ... not stopped: the signal or the record failed */
	IGB_CNT_DL_UNSURE,	 /* loader walks that could not read everything */
	IGB_CNT_MAX,
};

/* mm_page_alloc aggregate per target process (map key: tgid). */
struct igb_pages {
	__u64 bytes;
	__u64 allocs;
};

/* ---- user stacks (stacks_on) --------------------------------------------
 * call_exit captures the caller's user stack (frame-pointer walk by the
 * kernel) and, for processes with an entry in py_procs, the CPython frames
 * of the calling thread. Both are hashed together; the hash is the event's
 * stack_id and the key of the stacks map, so each distinct stack is stored
 * once. User space reads a stack by id when it first sees the id. */
#define IGB_STACK_MAX 64 /* native frames per stack */
#define IGB_PY_MAX 32    /* interpreter frames per stack */
#define IGB_STACKS_MAX 8192
#define IGB_PY_ENTRY 1ULL /* low bit of igb_pyframe.code: the outermost frame run
			   * by one call of the C evaluation loop */

struct igb_pyframe {
	__u64 code;  /* PyCodeObject * | IGB_PY_ENTRY */
	__u64 instr; /* 3.11+: _Py_CODEUNIT *prev_instr; 3.10: f_lasti */
};

enum igb_stack_flags {
	IGB_STK_PY = 0x1,          /* the process has a configured CPython (py_procs) */
	IGB_STK_PY_NOTHREAD = 0x2, /* ... but the calling thread has no thread state */
	IGB_STK_PY_TRUNC = 0x4,    /* more than IGB_PY_MAX interpreter frames */
	IGB_STK_PY_ERR = 0x8,      /* an interpreter structure could not be read */
};

struct igb_stack {
	__u32 tgid;  /* process that produced it first */
	__u16 nips;  /* valid entries in ips */
	__u8 npy;    /* valid entries in py */
	__u8 flags;  /* enum igb_stack_flags */
	__u64 ips[IGB_STACK_MAX];	/* return addresses, innermost first */
	struct igb_pyframe py[IGB_PY_MAX]; /* innermost first */
};

/* Where one process's CPython keeps its frames (map py_procs, key tgid),
 * filled by src/stacks/pyframes.c from the interpreter's symbols and version.
 * Offsets in bytes; IGB_PY_NONE marks a field this version does not have. */
#define IGB_PY_NONE 0xffff
#define IGB_PY_FRAME_READ 104 /* bytes read per frame: every offset + 8 fits */

enum igb_py_tid { IGB_PY_TID_NATIVE = 0, IGB_PY_TID_PTHREAD = 1 };

struct igb_pyproc {
	__u64 runtime;		  /* address of _PyRuntime in the process */
	__u16 runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_tstate_head; /* PyInterpreterState.threads.head (tstate_head) */
	__u16 tstate_next;	  /* PyThreadState.next */
	__u16 tstate_tid;	  /* native_thread_id (3.11+) or thread_id (3.10) */
	__u16 tstate_frame;	  /* cframe (3.11, 3.12) or frame (3.10) */
	__u16 cframe_current;	  /* _PyCFrame.current_frame; IGB_PY_NONE: tstate_frame
				   * points at the frame itself */
	__u16 frame_code;	  /* f_code */
	__u16 frame_previous;	  /* previous (3.11+) or f_back (3.10) */
	__u16 frame_instr;	  /* prev_instr (3.11+) or f_lasti (3.10) */
	__u16 frame_owner;	  /* owner (char), or IGB_PY_NONE */
	__u16 frame_is_entry;	  /* is_entry (bool, 3.11), or IGB_PY_NONE */
	__u8 owner_cstack;	  /* owner of C-stack shim frames (3.12: 3), 0xff = none */
	__u8 tid_kind;		  /* enum igb_py_tid: what tstate_tid holds */
	__u8 instr_int;		  /* frame_instr is a 32-bit int (f_lasti) */
	__u8 pad[3];
	__u64 runtime_size;	  /* sizeof _PyRuntime (its ELF symbol), 0 unknown: the
				   * GIL lies inside (user space only) */
};

#endif
