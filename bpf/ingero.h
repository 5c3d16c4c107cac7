/* Structures shared by the BPF programs (bpf/ingero.bpf.c) and user space
 * (src/collector.c). Fixed-width types, units in the field names. */
#ifndef IG_BPF_SHARED_H
#define IG_BPF_SHARED_H

#define IGB_COMM_LEN 16
#define IGB_MAX_DEPTH 4 /* nested traced calls per thread (runtime -> driver -> ...) */

/* Record kinds; the numbers equal enum ig_kind in src/event.h. */
enum igb_kind {
	IGB_CALL = 1,
	IGB_OFFCPU = 2,
	IGB_FORK = 3,
	IGB_EXEC = 4,
	IGB_EXIT = 5,
	IGB_BLOCK_IO = 7,
};

enum igb_state { IGB_PREEMPTED = 1, IGB_BLOCKED = 2 };

/* The uprobe cookie: which op, how to read its arguments, fixed direction. */
#define IGB_COOKIE(op, argmode, dir) ((__u64)(op) | ((__u64)(argmode) << 16) | ((__u64)(dir) << 24))
#define IGB_COOKIE_OP(c) ((c) & 0xffff)
#define IGB_COOKIE_ARGMODE(c) (((c) >> 16) & 0xff)
#define IGB_COOKIE_DIR(c) (((c) >> 24) & 0xff)

/* Argument modes, equal to enum ig_argmode in src/ops.h. */
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
};

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

/* Per-CPU counters, index by enum igb_counter. */
enum igb_counter {
	IGB_CNT_RB_DROPS = 0,     /* ring-buffer reservation failures */
	IGB_CNT_SWITCHES,         /* all context switches seen */
	IGB_CNT_TARGET_SWITCHES,  /* switches of target threads */
	IGB_CNT_DEPTH_OVERFLOW,   /* nesting deeper than IGB_MAX_DEPTH */
	IGB_CNT_UNMATCHED_RET,    /* return without a matching entry */
	IGB_CNT_IO_OTHER,         /* block requests of non-target processes */
	IGB_CNT_IO_OTHER_NS,      /* their total latency */
	IGB_CNT_CALLS,            /* call records emitted */
	IGB_CNT_MAX,
};

/* mm_page_alloc aggregate per target process (map key: tgid). */
struct igb_pages {
	__u64 bytes;
	__u64 allocs;
};

#endif
