/* The kernel's evidence of what a thread was doing, in the words of every
 * source: why a blocked off-CPU interval waited (the syscall in flight, the
 * kind of fd, the page fault's mapping, the wait channel, the waking
 * thread) and where a thread's kernel CPU time went between CUDA calls
 * (struct ig_ktime). The codes are ingero-top's own, the same on every
 * architecture, and are what recordings keep (docs/recording.md).
 *
 * IG_EV_OFFCPU with IG_F_DETAIL in flags:
 *   arg1  IG_WAIT_PACK(sys, fdk, flt, wfn) | waker tid << 32
 *   arg2  the object: a futex's address, a file's dev << 32 | inode (dev
 *         in the kernel's encoding, major << 20 | minor), an IPv4 peer's
 *         address << 16 | port, a page fault's address; else the
 *         syscall's first argument
 * IG_EV_KTIME: struct ig_ktime, packed by ig_ktime_pack. Pure data. */
#ifndef IG_WAITS_H
#define IG_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

/* What a blocked interval's syscall was (several syscalls, one code). */
enum ig_sys {
	IG_SYS_NONE = 0, /* not in a syscall, or not recorded */
	IG_SYS_READ,	 /* read, pread64, readv, preadv, preadv2 */
	IG_SYS_WRITE,	 /* write, pwrite64, writev, pwritev, pwritev2 */
	IG_SYS_FSYNC,	 /* fsync, fdatasync, sync_file_range, msync, syncfs, sync */
	IG_SYS_FUTEX,	 /* futex, futex_waitv */
	IG_SYS_POLL,	 /* poll, ppoll, select, pselect6 */
	IG_SYS_EPOLL,	 /* epoll_wait, epoll_pwait, epoll_pwait2 */
	IG_SYS_SLEEP,	 /* nanosleep, clock_nanosleep */
	IG_SYS_RECV,	 /* recvfrom, recvmsg, recvmmsg */
	IG_SYS_SEND,	 /* sendto, sendmsg, sendmmsg */
	IG_SYS_ACCEPT,	 /* accept, accept4 */
	IG_SYS_CONNECT,	 /* connect */
	IG_SYS_FLOCK,	 /* flock, fcntl (F_SETLKW) */
	IG_SYS_SEMOP,	 /* semop, semtimedop */
	IG_SYS_MSGRCV,	 /* msgrcv, mq_timedreceive */
	IG_SYS_WAIT,	 /* wait4, waitid */
	IG_SYS_SIGNAL,	 /* pause, rt_sigsuspend, rt_sigtimedwait */
	IG_SYS_MEM,	 /* mmap, munmap, mprotect, madvise, brk, mremap */
	IG_SYS_IOCTL,	 /* ioctl */
	IG_SYS_OPEN,	 /* open, openat, close, stat family, unlink, rename... */
	IG_SYS_SPLICE,	 /* sendfile, splice, copy_file_range, tee */
	IG_SYS_FALLOC,	 /* fallocate, ftruncate */
	IG_SYS_OTHER,	 /* any other syscall */
	/* after OTHER: the values above are in recordings */
	IG_SYS_AIO, /* io_submit, io_getevents, io_pgetevents, io_uring_enter:
		     * asynchronous I/O, waited for */
	IG_SYS_MAX,
};

/* What the syscall's fd was; the values of bpf/ingero.h's enum igb_fdk. */
enum ig_fdk {
	IG_FDK_NONE = 0,
	IG_FDK_REG,
	IG_FDK_BLK,
	IG_FDK_FIFO,
	IG_FDK_UNIX,
	IG_FDK_INET,
	IG_FDK_INET6,
	IG_FDK_SOCK,
	IG_FDK_CHR,
	IG_FDK_EVENTFD,
	IG_FDK_EPOLL,
	IG_FDK_TIMERFD,
	IG_FDK_SIGNALFD,
	IG_FDK_ANON,
	IG_FDK_DIR,
	IG_FDK_OTHER,
	IG_FDK_MAX,
};

/* The mapping of the page fault it slept in (enum igb_flt). */
enum ig_flt { IG_FLT_NONE = 0, IG_FLT_ANON, IG_FLT_FILE, IG_FLT_SHMEM, IG_FLT_MAX };

/* What the kernel function it slept in waits for, from the wait channel
 * (the first frame outside the scheduler) and the scheduler function under
 * it (collect/kwait.c reads their names). */
enum ig_wfn {
	IG_WFN_NONE = 0,   /* not recorded */
	IG_WFN_FUTEX,	   /* futex_wait_queue... */
	IG_WFN_PIPE_READ,  /* pipe_read: the pipe is empty */
	IG_WFN_PIPE_WRITE, /* pipe_write: the pipe is full */
	IG_WFN_SOCK_RECV,  /* waiting for data on a socket */
	IG_WFN_SOCK_SEND,  /* waiting for room in a socket's buffer */
	IG_WFN_POLL,	   /* poll, select */
	IG_WFN_EPOLL,	   /* epoll_wait */
	IG_WFN_FILE_LOCK,  /* flock, POSIX record locks */
	IG_WFN_PAGE_IO,	   /* a page being read from disk (folio lock, readahead) */
	IG_WFN_WRITEBACK,  /* writeback, journal commit (fsync) */
	IG_WFN_BLOCK,	   /* the block layer: a request tag, a direct I/O */
	IG_WFN_DIRTY,	   /* dirty-page throttling (balance_dirty_pages) */
	IG_WFN_RECLAIM,	   /* memory reclaim, memory.high throttling */
	IG_WFN_KLOCK,	   /* a kernel mutex or rwsem (an inode lock, mmap_lock) */
	IG_WFN_SLEEP,	   /* nanosleep */
	IG_WFN_CHILD,	   /* waiting for a child (wait4) */
	IG_WFN_SIGNAL,	   /* waiting for a signal */
	IG_WFN_SEM,	   /* SysV semaphore */
	IG_WFN_MSGQ,	   /* message queue */
	IG_WFN_ACCEPT,	   /* waiting for a connection */
	IG_WFN_CONNECT,	   /* waiting for a connect to complete */
	IG_WFN_EVENTFD,	   /* eventfd read */
	IG_WFN_TIMERFD,	   /* timerfd read */
	IG_WFN_OTHER,	   /* another kernel function */
	/* stopped, not waiting for anything of its own (after OTHER: the
	 * values above are in recordings) */
	IG_WFN_STOP,   /* a job-control stop: SIGSTOP, SIGTSTP (do_signal_stop) */
	IG_WFN_TRACED, /* a ptrace stop: a tracer or debugger holds it */
	IG_WFN_FROZEN, /* its cgroup's freezer (docker pause, cgroup.freeze) */
	IG_WFN_MAX,
};

#define IG_WAIT_PACK(sys, fdk, flt, wfn)                                                           \
	((uint64_t)((sys)&0xff) | (uint64_t)((fdk)&0xff) << 8 | (uint64_t)((flt)&0xf) << 16 |      \
	 (uint64_t)((wfn)&0xff) << 24)
#define IG_WAIT_SYS(a1) ((int)((a1)&0xff))
#define IG_WAIT_FDK(a1) ((int)(((a1) >> 8) & 0xff))
#define IG_WAIT_FLT(a1) ((int)(((a1) >> 16) & 0xf))
#define IG_WAIT_WFN(a1) ((int)(((a1) >> 24) & 0xff))
#define IG_WAIT_WAKER(a1) ((uint32_t)((a1) >> 32))

/* Where a thread's kernel CPU went between CUDA calls (IG_EV_KTIME). */
enum ig_kcat {
	IG_K_FILE = 0, /* in file syscalls: reads and writes of files, fsync */
	IG_K_SYS,      /* in other syscalls */
	IG_K_MINOR,    /* in minor page faults: fresh memory, mappings of cached pages */
	IG_K_MAJ_FILE, /* in major faults of file mappings: reading the file */
	IG_K_MAJ_ANON, /* in major faults of anonymous memory: swap-in */
	IG_K_RECLAIM,  /* in direct memory reclaim */
	IG_K_COW,      /* in minor faults that wrote to a present page: copy on write
			* (a page shared with a forked process, the zero page) */
	IG_K_N,
};

struct ig_ktime {
	uint64_t ns[IG_K_N];
	uint32_t majors; /* major page faults */
	uint32_t n;	 /* syscalls and faults counted */
};

/* IG_EV_KTIME's fields: arg0 file, arg1 sys, arg2 minor, stream major file,
 * preempt_ns major anon, blocked_ns reclaim, cgroup_id copy on write (0 in
 * recordings before it), switches majors, ret n; dur_ns 0 (the time is
 * counted at ts_ns). The only writer and reader of that. */
void ig_ktime_pack(struct ig_event *e, uint64_t ts_ns, uint32_t pid, uint32_t tid,
		   const struct ig_ktime *k);
void ig_ktime_unpack(const struct ig_event *e, struct ig_ktime *k);

/* Short names for people: "read", "pipe", "file", "pipe_read"... "?" out
 * of range. */
const char *ig_sys_name(int sys);
const char *ig_fdk_name(int fdk);
const char *ig_flt_name(int flt);
const char *ig_wfn_name(int wfn);
const char *ig_kcat_name(int k);

/* One line of what an off-CPU interval's evidence says, e.g. "read on a
 * pipe (pipe_read), woken by tid 4312" or "" when it has none. */
int ig_wait_describe(char *buf, size_t n, const struct ig_event *e);
/* The same from an interval's flags and evidence (ig_event.arg1). */
int ig_wait_text(char *buf, size_t n, uint32_t flags, uint64_t wait);

/* What a lock wait's call site says it waited on (stacks_lock_kind): the
 * words of a lock_wait chain follow it. */
enum ig_lock_kind {
	IG_LOCK_UNKNOWN = 0, /* a futex, semaphore or file lock: not said */
	IG_LOCK_MUTEX,	     /* a mutex another thread held (pthread_mutex_lock) */
	IG_LOCK_RWLOCK,	     /* a read-write lock another thread held (pthread_rwlock_*) */
	IG_LOCK_COND,	     /* a condition or semaphore another thread signals */
	IG_LOCK_QGET,	     /* a queue's get, until a producer put an item */
	IG_LOCK_QPUT,	     /* a full queue's put, until a consumer took one */
};

/* The kind of the call site with user stack id, whose waits the thread
 * at user stack wake_id ended (0: not known; ctx: their stacks). */
typedef int (*ig_lock_kind_fn)(void *ctx, uint64_t stack_id, uint64_t wake_id);

/* The group whose tasks the CPU scheduler weighs together: nice and a
 * task's policy count only among them, a group against another by its
 * weight. A cgroup with the cpu controller (v1 or v2: its directory),
 * else the autogroup (its session: "N" of /proc/PID/autogroup) while the
 * kernel has them on, else the root. */
enum ig_sgroup { IG_SG_UNKNOWN = 0, IG_SG_ROOT, IG_SG_AUTOGROUP, IG_SG_CGROUP1, IG_SG_CGROUP2 };
struct ig_sched_group {
	int kind;      /* enum ig_sgroup */
	char dir[128]; /* the cgroup's directory, or the autogroup's number */
};
/* pid's group (0), or -errno (gone, not readable) */
typedef int (*ig_sched_group_fn)(void *ctx, uint32_t pid, struct ig_sched_group *g);

#endif
