/* The wait evidence's user side (kwait.h): this architecture's syscall
 * numbers in ingero-top's codes, the kernel's wait functions by name from
 * /proc/kallsyms, and the BPF records made into events. */
#include "collect/kwait.h"

#include "collect/collector_priv.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/waits.h"
#include <linux/types.h>
#include "ingero.h"

_Static_assert((int)IGB_FDK_OTHER == (int)IG_FDK_OTHER && (int)IGB_FLT_SHMEM == (int)IG_FLT_SHMEM,
	       "fd and fault kinds of bpf/ingero.h and core/waits.h differ");
_Static_assert(IGB_F_THROTTLED == IG_F_THROTTLED && IGB_F_RECLAIM == IG_F_RECLAIM &&
		   IGB_F_DETAIL == IG_F_DETAIL && (int)IGB_KTIME == (int)IG_EV_KTIME &&
		   (int)IGB_SAMPLE == (int)IG_EV_SAMPLE,
	       "wait flags of bpf/ingero.h and core/event.h differ");

/* ---- syscalls ---------------------------------------------------------------- */

#define FD IGB_SC_FD
#define IO (IGB_SC_FD | IGB_SC_IO)
#define SYNC (IGB_SC_FD | IGB_SC_SYNC)

static const struct {
	long nr;
	uint8_t sys, cls;
} sysmap[] = {
    {SYS_read, IG_SYS_READ, IO},
    {SYS_pread64, IG_SYS_READ, IO},
    {SYS_readv, IG_SYS_READ, IO},
    {SYS_preadv, IG_SYS_READ, IO},
    {SYS_preadv2, IG_SYS_READ, IO},
    {SYS_write, IG_SYS_WRITE, IO},
    {SYS_pwrite64, IG_SYS_WRITE, IO},
    {SYS_writev, IG_SYS_WRITE, IO},
    {SYS_pwritev, IG_SYS_WRITE, IO},
    {SYS_pwritev2, IG_SYS_WRITE, IO},
    {SYS_fsync, IG_SYS_FSYNC, SYNC},
    {SYS_fdatasync, IG_SYS_FSYNC, SYNC},
    {SYS_sync_file_range, IG_SYS_FSYNC, SYNC},
    {SYS_syncfs, IG_SYS_FSYNC, SYNC},
    {SYS_msync, IG_SYS_FSYNC, IGB_SC_SYNC},
    {SYS_sync, IG_SYS_FSYNC, IGB_SC_SYNC},
    {SYS_fallocate, IG_SYS_FALLOC, SYNC},
    {SYS_ftruncate, IG_SYS_FALLOC, SYNC},
    {SYS_futex, IG_SYS_FUTEX, 0},
    {SYS_ppoll, IG_SYS_POLL, 0},
    {SYS_pselect6, IG_SYS_POLL, 0},
    {SYS_epoll_pwait, IG_SYS_EPOLL, FD},
    {SYS_nanosleep, IG_SYS_SLEEP, 0},
    {SYS_clock_nanosleep, IG_SYS_SLEEP, 0},
    {SYS_recvfrom, IG_SYS_RECV, FD},
    {SYS_recvmsg, IG_SYS_RECV, FD},
    {SYS_recvmmsg, IG_SYS_RECV, FD},
    {SYS_sendto, IG_SYS_SEND, FD},
    {SYS_sendmsg, IG_SYS_SEND, FD},
    {SYS_sendmmsg, IG_SYS_SEND, FD},
    {SYS_accept4, IG_SYS_ACCEPT, FD},
    {SYS_connect, IG_SYS_CONNECT, FD},
    {SYS_flock, IG_SYS_FLOCK, FD},
    {SYS_fcntl, IG_SYS_FLOCK, FD},
    {SYS_semtimedop, IG_SYS_SEMOP, 0},
    {SYS_msgrcv, IG_SYS_MSGRCV, 0},
    {SYS_mq_timedreceive, IG_SYS_MSGRCV, 0},
    {SYS_wait4, IG_SYS_WAIT, 0},
    {SYS_waitid, IG_SYS_WAIT, 0},
    {SYS_rt_sigsuspend, IG_SYS_SIGNAL, 0},
    {SYS_rt_sigtimedwait, IG_SYS_SIGNAL, 0},
    {SYS_mmap, IG_SYS_MEM, 0},
    {SYS_munmap, IG_SYS_MEM, 0},
    {SYS_mprotect, IG_SYS_MEM, 0},
    {SYS_madvise, IG_SYS_MEM, 0},
    {SYS_brk, IG_SYS_MEM, 0},
    {SYS_mremap, IG_SYS_MEM, 0},
    {SYS_ioctl, IG_SYS_IOCTL, FD},
    {SYS_openat, IG_SYS_OPEN, 0},
    {SYS_close, IG_SYS_OPEN, FD},
    {SYS_newfstatat, IG_SYS_OPEN, 0},
    {SYS_unlinkat, IG_SYS_OPEN, 0},
    {SYS_renameat, IG_SYS_OPEN, 0},
    {SYS_splice, IG_SYS_SPLICE, FD},
    {SYS_copy_file_range, IG_SYS_SPLICE, IO},
    {SYS_tee, IG_SYS_SPLICE, FD},
    {SYS_sendfile, IG_SYS_SPLICE, FD},
    /* asynchronous I/O: Linux AIO (files and block devices alone) and
     * io_uring (taken as files too: docs/detection.md); their kernel CPU
     * is file I/O whatever the first argument (a context, a ring) */
    {SYS_io_submit, IG_SYS_AIO, IGB_SC_SYNC},
    {SYS_io_getevents, IG_SYS_AIO, IGB_SC_SYNC},
    {SYS_io_pgetevents, IG_SYS_AIO, IGB_SC_SYNC},
    {SYS_io_uring_enter, IG_SYS_AIO, IGB_SC_SYNC},
#ifdef SYS_poll /* not on every architecture */
    {SYS_poll, IG_SYS_POLL, 0},
    {SYS_select, IG_SYS_POLL, 0},
    {SYS_epoll_wait, IG_SYS_EPOLL, FD},
    {SYS_pause, IG_SYS_SIGNAL, 0},
    {SYS_open, IG_SYS_OPEN, 0},
    {SYS_stat, IG_SYS_OPEN, 0},
    {SYS_lstat, IG_SYS_OPEN, 0},
    {SYS_unlink, IG_SYS_OPEN, 0},
    {SYS_rename, IG_SYS_OPEN, 0},
    {SYS_semop, IG_SYS_SEMOP, 0},
#endif
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, IG_SYS_EPOLL, FD},
#endif
#ifdef SYS_futex_waitv
    {SYS_futex_waitv, IG_SYS_FUTEX, 0},
#endif
};

/* The syscalls through which the kernel's uprobes return and enter on
 * x86-64 (Linux 6.11 and 6.16 on): a traced call's uretprobe is one, so a
 * thread sampled in it is paying for the tracer, not making a syscall of
 * its own. Counted as the thread's syscall time, every traced call would
 * switch the exact syscall hooks on (collector_tick), and they cost each
 * call's return a tracepoint. */
#if defined(__x86_64__)
#define NR_URETPROBE 335
#define NR_UPROBE 336
#endif

void kwait_sys_classes(uint8_t *cls)
{
	memset(cls, 0, IGB_SYS_MAX);
	for (size_t i = 0; i < sizeof(sysmap) / sizeof(sysmap[0]); i++) {
		int sys = sysmap[i].sys;
		int pace = sys == IG_SYS_SLEEP || sys == IG_SYS_POLL || sys == IG_SYS_EPOLL ||
			   sys == IG_SYS_SIGNAL;
		int lock = sys == IG_SYS_FUTEX || sys == IG_SYS_SEMOP || sys == IG_SYS_FLOCK;
		if (sysmap[i].nr >= 0 && sysmap[i].nr < IGB_SYS_MAX)
			cls[sysmap[i].nr] =
			    sysmap[i].cls | (pace ? IGB_SC_PACE : 0) | (lock ? IGB_SC_LOCK : 0);
	}
#ifdef NR_URETPROBE
	cls[NR_URETPROBE] = IGB_SC_PROBE;
	cls[NR_UPROBE] = IGB_SC_PROBE;
#endif
}

int kwait_sys(long nr)
{
	for (size_t i = 0; i < sizeof(sysmap) / sizeof(sysmap[0]); i++)
		if (sysmap[i].nr == nr)
			return sysmap[i].sys;
	return nr >= 0 ? IG_SYS_OTHER : IG_SYS_NONE;
}

/* ---- kernel wait functions, by name ------------------------------------------ */

/* A kernel function whose name says what a thread sleeping in it waits
 * for: the wait channel (exact name or prefix ending in '*'). */
static const struct {
	const char *name;
	uint8_t wfn;
} wchans[] = {
    {"futex_*", IG_WFN_FUTEX},
    {"pipe_read", IG_WFN_PIPE_READ}, /* anon_ and fifo_ since Linux 6.15 */
    {"anon_pipe_read", IG_WFN_PIPE_READ},
    {"fifo_pipe_read", IG_WFN_PIPE_READ},
    {"pipe_write", IG_WFN_PIPE_WRITE},
    {"anon_pipe_write", IG_WFN_PIPE_WRITE},
    {"fifo_pipe_write", IG_WFN_PIPE_WRITE},
    {"unix_stream_read_generic", IG_WFN_SOCK_RECV},
    {"unix_stream_recvmsg", IG_WFN_SOCK_RECV},
    {"unix_stream_data_wait", IG_WFN_SOCK_RECV},
    {"__skb_wait_for_more_packets", IG_WFN_SOCK_RECV},
    {"__skb_recv_datagram", IG_WFN_SOCK_RECV},
    {"skb_recv_datagram", IG_WFN_SOCK_RECV},
    {"__unix_dgram_recvmsg", IG_WFN_SOCK_RECV},
    {"sk_wait_data", IG_WFN_SOCK_RECV},
    {"tcp_recvmsg*", IG_WFN_SOCK_RECV},
    {"udp_recvmsg", IG_WFN_SOCK_RECV},
    {"sk_stream_wait_memory", IG_WFN_SOCK_SEND},
    {"sock_alloc_send_pskb", IG_WFN_SOCK_SEND},
    {"sock_wait_for_wmem", IG_WFN_SOCK_SEND},
    {"unix_wait_for_peer", IG_WFN_SOCK_SEND},
    {"unix_stream_sendmsg", IG_WFN_SOCK_SEND},
    {"do_poll*", IG_WFN_POLL},
    {"do_sys_poll", IG_WFN_POLL},
    {"poll_schedule_timeout*", IG_WFN_POLL},
    {"do_select", IG_WFN_POLL},
    {"core_sys_select", IG_WFN_POLL},
    {"ep_poll", IG_WFN_EPOLL},
    {"do_epoll_wait", IG_WFN_EPOLL},
    {"locks_lock_inode_wait", IG_WFN_FILE_LOCK},
    {"flock_lock_inode_wait", IG_WFN_FILE_LOCK},
    {"locks_lock_file_wait", IG_WFN_FILE_LOCK},
    {"do_lock_file_wait", IG_WFN_FILE_LOCK},
    {"fcntl_setlk", IG_WFN_FILE_LOCK},
    {"__flock*", IG_WFN_FILE_LOCK},
    {"folio_wait_bit*", IG_WFN_PAGE_IO},
    {"__folio_lock*", IG_WFN_PAGE_IO},
    {"__lock_page*", IG_WFN_PAGE_IO},
    {"wait_on_page_bit*", IG_WFN_PAGE_IO},
    {"filemap_*", IG_WFN_PAGE_IO},
    {"__filemap_get_folio", IG_WFN_PAGE_IO},
    {"folio_wait_writeback", IG_WFN_WRITEBACK},
    {"wait_on_page_writeback", IG_WFN_WRITEBACK},
    {"__filemap_fdatawait_range", IG_WFN_WRITEBACK},
    {"file_write_and_wait_range", IG_WFN_WRITEBACK},
    {"jbd2_*", IG_WFN_WRITEBACK},
    {"ext4_sync_file", IG_WFN_WRITEBACK},
    {"xfs_log_force*", IG_WFN_WRITEBACK},
    {"btrfs_sync_file", IG_WFN_WRITEBACK},
    {"blkdev_issue_flush", IG_WFN_WRITEBACK},
    {"submit_bio_wait", IG_WFN_BLOCK},
    {"blk_mq_get_tag", IG_WFN_BLOCK},
    {"__blkdev_direct_IO*", IG_WFN_BLOCK},
    {"__iomap_dio_rw", IG_WFN_BLOCK},
    {"iomap_dio_rw", IG_WFN_BLOCK},
    {"balance_dirty_pages*", IG_WFN_DIRTY},
    {"throttle_direct_reclaim", IG_WFN_RECLAIM},
    {"reclaim_throttle", IG_WFN_RECLAIM},
    {"mem_cgroup_handle_over_high", IG_WFN_RECLAIM},
    {"shrink_*", IG_WFN_RECLAIM},
    {"try_to_free_*", IG_WFN_RECLAIM},
    {"__alloc_pages_slowpath*", IG_WFN_RECLAIM},
    {"hrtimer_nanosleep", IG_WFN_SLEEP},
    {"common_nsleep*", IG_WFN_SLEEP},
    {"do_wait", IG_WFN_CHILD},
    {"kernel_wait4", IG_WFN_CHILD},
    {"kernel_waitid", IG_WFN_CHILD},
    {"sigsuspend", IG_WFN_SIGNAL},
    {"do_sigtimedwait", IG_WFN_SIGNAL},
    {"__do_sys_pause", IG_WFN_SIGNAL},
    {"__x64_sys_pause", IG_WFN_SIGNAL},
    {"do_semtimedop", IG_WFN_SEM},
    {"do_msgrcv", IG_WFN_MSGQ},
    {"do_mq_timedreceive", IG_WFN_MSGQ},
    {"inet_csk_accept", IG_WFN_ACCEPT},
    {"unix_accept", IG_WFN_ACCEPT},
    {"inet_wait_for_connect", IG_WFN_CONNECT},
    {"eventfd_read", IG_WFN_EVENTFD},
    {"eventfd_read_iter", IG_WFN_EVENTFD},
    {"timerfd_read*", IG_WFN_TIMERFD},
    {"lock_mm_and_find_vma", IG_WFN_KLOCK},
    /* stopped: the task state says so too (IGB_WAIT_STOP); these names
     * for a freezer's wait in an interruptible sleep (cgroup v2, where
     * do_freezer_trap is inlined into get_signal) and older kernels'
     * __refrigerator in D state */
    {"do_signal_stop", IG_WFN_STOP},
    {"ptrace_stop", IG_WFN_TRACED},
    {"ptrace_do_notify", IG_WFN_TRACED},
    {"ptrace_notify", IG_WFN_TRACED},
    {"do_freezer_trap", IG_WFN_FROZEN},
    {"__refrigerator", IG_WFN_FROZEN},
    {"get_signal", IG_WFN_FROZEN},
};

/* Scheduler functions (in the scheduler's text) that say the thread
 * waits for a lock, whatever called them. */
static const char *const lock_fns[] = {"mutex_lock*", "__mutex_lock*", "rwsem_down_*", "down_read*",
				       "down_write*", "__down*",       "rt_mutex_*"};

static bool match(const char *pat, const char *name)
{
	size_t n = strlen(pat);
	if (n && pat[n - 1] == '*')
		return !strncmp(pat, name, n - 1);
	/* "name.cold", "name.constprop.0": the compiler's copies are the function */
	return !strncmp(pat, name, n) && (!name[n] || name[n] == '.');
}

#define W_LOCK 0xff /* ranges[].wfn of a lock function */

struct krange {
	uint64_t lo, hi;
	uint8_t wfn;
};

static struct {
	int loaded;
	struct krange *r;
	size_t n;
	uint64_t sched[2];
} K;

static int cmp_range(const void *a, const void *b)
{
	const struct krange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uint8_t classify(const char *name)
{
	for (size_t i = 0; i < sizeof(lock_fns) / sizeof(lock_fns[0]); i++)
		if (match(lock_fns[i], name))
			return W_LOCK;
	for (size_t i = 0; i < sizeof(wchans) / sizeof(wchans[0]); i++)
		if (match(wchans[i].name, name))
			return wchans[i].wfn;
	return 0;
}

/* One pass over /proc/kallsyms: the scheduler's text and the functions
 * above with their ends (the next symbol). */
static void load(void)
{
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;
	struct krange *open = NULL;

	K.loaded = 1;
	FILE *f = fopen("/proc/kallsyms", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr)
			break; /* addresses hidden */
		if (open) {
			if (addr > open->lo)
				open->hi = addr;
			else
				K.n--; /* out of order: drop it */
			open = NULL;
		}
		if (!strcmp(name, "__sched_text_start"))
			K.sched[0] = addr;
		else if (!strcmp(name, "__sched_text_end"))
			K.sched[1] = addr;
		if (type != 't' && type != 'T')
			continue;
		uint8_t w = classify(name);
		if (!w)
			continue;
		if (K.n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct krange *nr = realloc(K.r, nc * sizeof(*nr));
			if (!nr)
				break;
			K.r = nr;
			cap = nc;
		}
		open = &K.r[K.n++];
		*open = (struct krange){addr, addr, w};
	}
	if (open)
		K.n--;
	if (f)
		fclose(f);
	if (K.r)
		qsort(K.r, K.n, sizeof(*K.r), cmp_range);
	if (K.sched[0] >= K.sched[1])
		K.sched[0] = K.sched[1] = 0;
}

static uint8_t lookup(uint64_t ip)
{
	size_t lo = 0, hi = K.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ip < K.r[mid].lo)
			hi = mid;
		else if (ip >= K.r[mid].hi)
			lo = mid + 1;
		else
			return K.r[mid].wfn;
	}
	return 0;
}

void kwait_sched_text(uint64_t r[2])
{
	if (!K.loaded)
		load();
	r[0] = K.sched[0];
	r[1] = K.sched[1];
}

int kwait_wfn(uint64_t wchan, uint64_t how)
{
	if (!K.loaded)
		load();
	if (how && lookup(how) == W_LOCK)
		return IG_WFN_KLOCK;
	if (!wchan)
		return IG_WFN_NONE;
	uint8_t w = lookup(wchan);
	return w && w != W_LOCK ? w : w == W_LOCK ? IG_WFN_KLOCK : IG_WFN_OTHER;
}

/* ---- records into events -------------------------------------------------------- */

/* A scheduler function from the low 32 bits of its address (bpf/ingero.h):
 * the high ones are the scheduler's text's, the next ones when the text
 * crosses a 4 GiB line below it. */
static uint64_t sched_fn(uint32_t low)
{
	if (!K.loaded)
		load();
	if (!low || !K.sched[0])
		return 0;
	uint64_t fn = (K.sched[0] & ~0xffffffffull) | low;
	return fn < K.sched[0] ? fn + (1ull << 32) : fn;
}

void kwait_offcpu(const struct igb_event *b, struct ig_event *e)
{
	e->stream = 0;
	e->stack_id = 0;
	e->cgroup_id = 0;
	if (!(b->flags & IGB_F_DETAIL))
		return;
	unsigned sys1 = IGB_WAIT_SYS1(b->arg1);
	int sys = sys1 ? kwait_sys((long)sys1 - 1) : IG_SYS_NONE;
	static const uint8_t stop_wfn[4] = {0, IG_WFN_STOP, IG_WFN_TRACED, IG_WFN_FROZEN};
	int wfn = stop_wfn[IGB_WAIT_STOP(b->arg1)];
	if (!wfn)
		wfn = kwait_wfn(b->stream, sched_fn((uint32_t)(b->arg0 >> 32)));
	e->arg1 = IG_WAIT_PACK(sys, IGB_WAIT_FDK(b->arg1), IGB_WAIT_FLT(b->arg1), wfn) |
		  (b->arg1 & 0xffffffff00000000ull);
	e->arg0 = (uint32_t)b->arg0;
	e->arg2 = b->cgroup_id;
	/* the user stack of a wait: a timer's (IGB_SC_PACE) or a lock's (IGB_SC_LOCK) */
	e->stack_id = (uint64_t)(uint32_t)b->ret << 32 | b->switches;
	/* and of the thread that ended a lock wait (core/event.h) */
	e->stream = b->stack_id;
	e->switches = 0;
	e->ret = 0;
}

void kwait_ktime(const struct igb_event *b, struct ig_event *e, uint32_t sys_ns, uint32_t fault_ns)
{
	struct ig_ktime k = {
	    .ns = {[IG_K_FILE] = b->arg0,
		   [IG_K_SYS] = b->arg1,
		   [IG_K_MINOR] = b->stream,
		   [IG_K_MAJ_FILE] = b->cgroup_id,
		   [IG_K_MAJ_ANON] = b->preempt_ns,
		   [IG_K_RECLAIM] = b->blocked_ns,
		   [IG_K_COW] = b->other_pid},
	    .majors = b->switches,
	    .n = b->ret > 0 ? (uint32_t)b->ret : 0,
	};
	/* each syscall and fault timed also cost its entry and exit, which the
	 * tracepoints inside them do not see (a sample counts none: it sees
	 * them) */
	for (int i = 0; i < IG_K_RECLAIM; i++)
		k.ns[i] += (uint64_t)IGB_KCOUNT(b->stack_id, i) *
			   (i == IG_K_FILE || i == IG_K_SYS ? sys_ns : fault_ns);
	k.ns[IG_K_COW] += (uint64_t)b->op * fault_ns;
	uint64_t ts = e->ts_ns;
	char comm[IG_COMM_LEN];
	memcpy(comm, e->comm, sizeof(comm));
	ig_ktime_pack(e, ts, b->pid, b->tid, &k);
	memcpy(e->comm, comm, sizeof(comm));
	e->cpu = b->cpu;
}

/* ---- CPython's GIL ------------------------------------------------------------- */

void coll_python_range(struct collector *c, int pid, const struct igb_pyproc *cfg)
{
	int i = 0;
	while (i < c->npy && c->py[i].pid != (uint32_t)pid)
		i++;
	if (!cfg || !cfg->runtime_size) {
		if (i < c->npy)
			c->py[i] = c->py[--c->npy];
		return;
	}
	if (i == c->npy) {
		if (c->npy == (int)(sizeof(c->py) / sizeof(c->py[0])))
			return; /* the first 64 only */
		c->npy++;
	}
	c->py[i].pid = (uint32_t)pid;
	c->py[i].lo = cfg->runtime;
	c->py[i].hi = cfg->runtime + cfg->runtime_size;
}

/* The GIL lives in the interpreter's runtime state (_PyRuntime: in 3.12
 * and later inside its main interpreter, also there): a futex there is
 * the GIL's (its condition variable or mutex); the runtime's other locks
 * are taken rarely and briefly. */
void coll_wait_event(struct collector *c, const struct igb_event *b, struct ig_event *e)
{
	kwait_offcpu(b, e);
	if (!(e->flags & IG_F_DETAIL) || IG_WAIT_SYS(e->arg1) != IG_SYS_FUTEX)
		return;
	for (int i = 0; i < c->npy; i++)
		if (c->py[i].pid == e->pid && e->arg2 >= c->py[i].lo && e->arg2 < c->py[i].hi) {
			e->flags |= IG_F_GIL;
			return;
		}
}
