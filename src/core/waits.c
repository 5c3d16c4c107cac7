/* The wait evidence's names and the IG_EV_KTIME layout (core/waits.h). */
#include "core/waits.h"

#include <stdio.h>
#include <string.h>

static const char *const sys_names[IG_SYS_MAX] = {
    [IG_SYS_NONE] = "",
    [IG_SYS_READ] = "read",
    [IG_SYS_WRITE] = "write",
    [IG_SYS_FSYNC] = "fsync",
    [IG_SYS_FUTEX] = "futex",
    [IG_SYS_POLL] = "poll",
    [IG_SYS_EPOLL] = "epoll_wait",
    [IG_SYS_SLEEP] = "nanosleep",
    [IG_SYS_RECV] = "recv",
    [IG_SYS_SEND] = "send",
    [IG_SYS_ACCEPT] = "accept",
    [IG_SYS_CONNECT] = "connect",
    [IG_SYS_FLOCK] = "flock",
    [IG_SYS_SEMOP] = "semop",
    [IG_SYS_MSGRCV] = "msgrcv",
    [IG_SYS_WAIT] = "wait4",
    [IG_SYS_SIGNAL] = "sigwait",
    [IG_SYS_MEM] = "mmap",
    [IG_SYS_IOCTL] = "ioctl",
    [IG_SYS_OPEN] = "open",
    [IG_SYS_SPLICE] = "splice",
    [IG_SYS_FALLOC] = "fallocate",
    [IG_SYS_OTHER] = "syscall",
    [IG_SYS_AIO] = "async I/O",
};

static const char *const fdk_names[IG_FDK_MAX] = {
    [IG_FDK_NONE] = "",
    [IG_FDK_REG] = "file",
    [IG_FDK_BLK] = "block device",
    [IG_FDK_FIFO] = "pipe",
    [IG_FDK_UNIX] = "unix socket",
    [IG_FDK_INET] = "TCP/UDP socket",
    [IG_FDK_INET6] = "TCP/UDP socket",
    [IG_FDK_SOCK] = "socket",
    [IG_FDK_CHR] = "device",
    [IG_FDK_EVENTFD] = "eventfd",
    [IG_FDK_EPOLL] = "epoll",
    [IG_FDK_TIMERFD] = "timerfd",
    [IG_FDK_SIGNALFD] = "signalfd",
    [IG_FDK_ANON] = "anon fd",
    [IG_FDK_DIR] = "directory",
    [IG_FDK_OTHER] = "fd",
};

static const char *const flt_names[IG_FLT_MAX] = {
    [IG_FLT_NONE] = "",
    [IG_FLT_ANON] = "anonymous memory",
    [IG_FLT_FILE] = "file mapping",
    [IG_FLT_SHMEM] = "shared memory",
};

static const char *const wfn_names[IG_WFN_MAX] = {
    [IG_WFN_NONE] = "",
    [IG_WFN_FUTEX] = "futex",
    [IG_WFN_PIPE_READ] = "pipe_read",
    [IG_WFN_PIPE_WRITE] = "pipe_write",
    [IG_WFN_SOCK_RECV] = "socket receive",
    [IG_WFN_SOCK_SEND] = "socket buffer full",
    [IG_WFN_POLL] = "poll",
    [IG_WFN_EPOLL] = "epoll",
    [IG_WFN_FILE_LOCK] = "file lock",
    [IG_WFN_PAGE_IO] = "page read",
    [IG_WFN_WRITEBACK] = "writeback",
    [IG_WFN_BLOCK] = "block I/O",
    [IG_WFN_DIRTY] = "dirty throttling",
    [IG_WFN_RECLAIM] = "reclaim",
    [IG_WFN_KLOCK] = "kernel lock",
    [IG_WFN_SLEEP] = "sleep",
    [IG_WFN_CHILD] = "child",
    [IG_WFN_SIGNAL] = "signal",
    [IG_WFN_SEM] = "semaphore",
    [IG_WFN_MSGQ] = "message queue",
    [IG_WFN_ACCEPT] = "accept",
    [IG_WFN_CONNECT] = "connect",
    [IG_WFN_EVENTFD] = "eventfd",
    [IG_WFN_TIMERFD] = "timerfd",
    [IG_WFN_OTHER] = "kernel",
    [IG_WFN_STOP] = "signal stop",
    [IG_WFN_TRACED] = "ptrace stop",
    [IG_WFN_FROZEN] = "freezer",
};

static const char *const kcat_names[IG_K_N] = {
    [IG_K_FILE] = "file",	   [IG_K_SYS] = "syscalls",
    [IG_K_MINOR] = "minor_faults", [IG_K_MAJ_FILE] = "file_faults",
    [IG_K_MAJ_ANON] = "swap_in",   [IG_K_RECLAIM] = "reclaim",
    [IG_K_COW] = "cow_faults",
};

#define NAME(tab, max, i) ((i) >= 0 && (i) < (max) && (tab)[i] ? (tab)[i] : "?")

const char *ig_sys_name(int sys)
{
	return NAME(sys_names, IG_SYS_MAX, sys);
}

const char *ig_fdk_name(int fdk)
{
	return NAME(fdk_names, IG_FDK_MAX, fdk);
}

const char *ig_flt_name(int flt)
{
	return NAME(flt_names, IG_FLT_MAX, flt);
}

const char *ig_wfn_name(int wfn)
{
	return NAME(wfn_names, IG_WFN_MAX, wfn);
}

const char *ig_kcat_name(int k)
{
	return NAME(kcat_names, IG_K_N, k);
}

void ig_ktime_pack(struct ig_event *e, uint64_t ts_ns, uint32_t pid, uint32_t tid,
		   const struct ig_ktime *k)
{
	memset(e, 0, sizeof(*e));
	e->kind = IG_EV_KTIME;
	e->ts_ns = ts_ns;
	e->pid = pid;
	e->tid = tid;
	e->arg0 = k->ns[IG_K_FILE];
	e->arg1 = k->ns[IG_K_SYS];
	e->arg2 = k->ns[IG_K_MINOR];
	e->stream = k->ns[IG_K_MAJ_FILE];
	e->preempt_ns = k->ns[IG_K_MAJ_ANON];
	e->blocked_ns = k->ns[IG_K_RECLAIM];
	e->cgroup_id = k->ns[IG_K_COW];
	e->switches = k->majors;
	e->ret = (int32_t)(k->n & 0x7fffffff);
}

void ig_ktime_unpack(const struct ig_event *e, struct ig_ktime *k)
{
	memset(k, 0, sizeof(*k));
	k->ns[IG_K_FILE] = e->arg0;
	k->ns[IG_K_SYS] = e->arg1;
	k->ns[IG_K_MINOR] = e->arg2;
	k->ns[IG_K_MAJ_FILE] = e->stream;
	k->ns[IG_K_MAJ_ANON] = e->preempt_ns;
	k->ns[IG_K_RECLAIM] = e->blocked_ns;
	k->ns[IG_K_COW] = e->cgroup_id;
	k->majors = e->switches;
	k->n = e->ret > 0 ? (uint32_t)e->ret : 0;
}

int ig_wait_describe(char *buf, size_t n, const struct ig_event *e)
{
	if (n)
		buf[0] = 0;
	if (e->kind != IG_EV_OFFCPU)
		return 0;
	return ig_wait_text(buf, n, e->flags, e->arg1);
}

int ig_wait_text(char *buf, size_t n, uint32_t flags, uint64_t wait)
{
	if (n)
		buf[0] = 0;
	if (!(flags & (IG_F_DETAIL | IG_F_THROTTLED)))
		return 0;
	if (flags & IG_F_THROTTLED)
		return snprintf(buf, n, "throttled by its CPU quota");
	int sys = IG_WAIT_SYS(wait), fdk = IG_WAIT_FDK(wait), flt = IG_WAIT_FLT(wait);
	int wfn = IG_WAIT_WFN(wait);
	uint32_t waker = IG_WAIT_WAKER(wait);
	int k = 0;
#define ADD(...)                                                                                   \
	k += snprintf(buf + (k < (int)n ? k : (int)n), (size_t)k < n ? n - (size_t)k : 0,          \
		      __VA_ARGS__)
	if (flt)
		ADD("page fault in %s", ig_flt_name(flt));
	else if (sys)
		ADD("%s%s%s", ig_sys_name(sys), fdk ? " on a " : "", fdk ? ig_fdk_name(fdk) : "");
	else
		ADD("not in a syscall");
	if (flags & IG_F_GIL)
		ADD(" (the GIL)");
	if (wfn)
		ADD(" (%s)", ig_wfn_name(wfn));
	if (flags & IG_F_RECLAIM)
		ADD(", in reclaim");
	if (waker)
		ADD(", woken by tid %u", waker);
#undef ADD
	return k;
}
