/* The wait evidence, mechanism by mechanism, on hand-built events: each
 * off-CPU interval's evidence (core/waits.h) lands in the part its mechanism
 * names and its culprit table names the thread, peer or device; timed waits
 * that another thread ends merge into its wait; kernel time goes to file
 * I/O, faults and reclaim; the CPU quota's events reach the process; and
 * the pure pieces: the wait codes' packing and words, the syscall map, the
 * cgroup parsers of v1 and v2. */
#include "check.h"
#include "collect/cgcpu.h"
#include "collect/cpuaff.h"
#include "collect/kwait.h"
#include "core/ops.h"
#include "core/waits.h"
#include "evmake.h"
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#define PID 100
#define STEP (50 * MS)
#define GAP (30 * MS) /* off CPU between two calls of a step */
#define STEPS 200     /* 10 s: the window (10 s) is full */

/* One wait between calls: its evidence and how it ended. */
struct wait {
	uint32_t flags; /* IG_F_* besides IG_F_DETAIL */
	int state;	/* IG_OFF_* */
	uint64_t wait;	/* IG_WAIT_PACK(...) */
	uint32_t waker; /* tid, 0 none */
	uint32_t wpid;	/* its process */
	uint64_t obj;	/* ig_event.arg2 */
	int legacy;	/* no IG_F_DETAIL: an older recording */
};

static struct ig_event off_ev(uint64_t ts, uint64_t dur, const struct wait *w)
{
	struct ig_event e =
	    ev_off(PID, PID, ts, dur, w->state, w->flags | (w->legacy ? 0 : IG_F_DETAIL), w->wpid,
		   w->wpid ? "worker" : NULL);
	e.arg1 = w->wait | (uint64_t)w->waker << 32;
	e.arg2 = w->obj;
	strcpy(e.comm, "python3");
	return e;
}

/* STEPS steps of a 1 ms launch and a GAP off CPU with evidence w; the
 * process's figures at the end. */
static void run(const struct wait *w, struct ig_proc_stats *p)
{
	struct ig_model *m = model_new(NULL);
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		struct ig_event o = off_ev(t + 5 * MS, GAP, w);
		model_ingest(m, &o);
	}
	CHECK(model_proc(m, PID, p) == 0);
	model_free(m);
}

static double share(const struct ig_proc_stats *p, int part)
{
	return p->parts.wall_ns ? (double)p->parts.ns[part] / (double)p->parts.wall_ns : 0;
}

/* The part of w is GAP / STEP of the wall time (within 2 points: the
 * window's edges), and no other wait part has any. */
static void expect_part(const char *what, const struct wait *w, int part, struct ig_proc_stats *p)
{
	run(w, p);
	double want = (double)GAP / (double)STEP;
	CHECKF(fabs(share(p, part) - want) < 0.02, "%s: part %s %.3f, want %.3f", what,
	       ig_part_name(part), share(p, part), want);
	static const int waits[] = {IG_PART_IO_WAIT,   IG_PART_TASK_WAIT,    IG_PART_SLEEP,
				    IG_PART_FAULT,     IG_PART_UNKNOWN,	     IG_PART_FILE_IO,
				    IG_PART_COLD_READ, IG_PART_MEM_PRESSURE, IG_PART_LOCK_WAIT,
				    IG_PART_GIL_WAIT,  IG_PART_BACKPRESSURE, IG_PART_NET_WAIT,
				    IG_PART_PREEMPTED, IG_PART_THROTTLED};
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (waits[i] != part)
			CHECKF(p->parts.ns[waits[i]] == 0, "%s: %s has %.3f", what,
			       ig_part_name(waits[i]), share(p, waits[i]));
}

static void test_mechanisms(void)
{
	struct ig_proc_stats p;
	const uint64_t futex = 0x7f0000001000ull;

	/* a lock another thread of the process released: the lock's, and the
	 * thread is the culprit (not the process) */
	struct wait lock = {.state = IG_OFF_BLOCKED,
			    .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			    .waker = 101,
			    .wpid = PID,
			    .obj = futex};
	expect_part("futex lock", &lock, IG_PART_LOCK_WAIT, &p);
	CHECK(p.nlockers == 1 && p.lockers[0].pid == 101 && p.lockers[0].aux == PID);
	/* a file lock (flock) a process released */
	struct wait flock = {.state = IG_OFF_BLOCKED,
			     .wait = IG_WAIT_PACK(IG_SYS_FLOCK, IG_FDK_REG, 0, IG_WFN_FILE_LOCK),
			     .waker = 205,
			     .wpid = 200};
	expect_part("flock", &flock, IG_PART_LOCK_WAIT, &p);
	CHECK(p.nlockers == 1 && p.lockers[0].pid == 205 && p.lockers[0].aux == 200);

	/* the GIL: the interpreter's flag decides, whoever ended it */
	struct wait gil = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_GIL,
			   .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			   .waker = 102,
			   .wpid = PID,
			   .obj = futex};
	expect_part("gil", &gil, IG_PART_GIL_WAIT, &p);
	CHECK(p.ngil == 1 && p.gil_holders[0].pid == 102);

	/* asynchronous I/O waited for (io_getevents, io_uring_enter): its
	 * completion comes from an interrupt, or from the ring's worker thread
	 * of the process; either way file I/O. A timeout: nothing came, a sleep */
	struct wait aio = {.state = IG_OFF_BLOCKED, .wait = IG_WAIT_PACK(IG_SYS_AIO, 0, 0, 0)};
	expect_part("aio, an interrupt", &aio, IG_PART_FILE_IO, &p);
	aio.waker = 104;
	aio.wpid = PID;
	expect_part("io_uring, its worker", &aio, IG_PART_FILE_IO, &p);
	aio.flags = IG_F_TIMER;
	aio.waker = aio.wpid = 0;
	expect_part("aio, a timeout", &aio, IG_PART_SLEEP, &p);
	CHECK(p.parts.timed_wait_ns == p.parts.ns[IG_PART_SLEEP]);

	/* input: a pipe read a producer ended, an eventfd read */
	struct wait pipe_in = {.state = IG_OFF_BLOCKED,
			       .wait = IG_WAIT_PACK(IG_SYS_READ, IG_FDK_FIFO, 0, IG_WFN_PIPE_READ),
			       .waker = 301,
			       .wpid = 300};
	expect_part("pipe read", &pipe_in, IG_PART_TASK_WAIT, &p);
	CHECK(p.nwakers == 1 && p.wakers[0].pid == 301 && p.wakers[0].aux == 300);
	struct wait efd = {.state = IG_OFF_BLOCKED,
			   .wait = IG_WAIT_PACK(IG_SYS_READ, IG_FDK_EVENTFD, 0, IG_WFN_EVENTFD),
			   .waker = 103,
			   .wpid = PID};
	expect_part("eventfd read", &efd, IG_PART_TASK_WAIT, &p);

	/* back-pressure: a write to a full pipe or unix socket its reader
	 * drained; the reader is the culprit */
	struct wait full = {.state = IG_OFF_BLOCKED,
			    .wait = IG_WAIT_PACK(IG_SYS_WRITE, IG_FDK_FIFO, 0, IG_WFN_PIPE_WRITE),
			    .waker = 401,
			    .wpid = 400};
	expect_part("full pipe", &full, IG_PART_BACKPRESSURE, &p);
	CHECK(p.ndrainers == 1 && p.drainers[0].pid == 401 && p.drainers[0].aux == 400);
	struct wait fullsock = {.state = IG_OFF_BLOCKED,
				.wait = IG_WAIT_PACK(IG_SYS_SEND, IG_FDK_UNIX, 0, IG_WFN_SOCK_SEND),
				.waker = 402,
				.wpid = 400};
	expect_part("full unix socket", &fullsock, IG_PART_BACKPRESSURE, &p);

	/* the network: a TCP recv (the peer is the culprit: 127.0.0.1:5000)
	 * and an epoll an interrupt ended */
	struct wait tcp = {.state = IG_OFF_BLOCKED,
			   .wait = IG_WAIT_PACK(IG_SYS_RECV, IG_FDK_INET, 0, IG_WFN_SOCK_RECV),
			   .obj = (uint64_t)0x7f000001 << 16 | 5000};
	expect_part("tcp recv", &tcp, IG_PART_NET_WAIT, &p);
	CHECK(p.npeers == 1 && p.peers[0].pid == 0x7f000001 && p.peers[0].aux == 5000);
	struct wait ep = {.state = IG_OFF_BLOCKED,
			  .wait = IG_WAIT_PACK(IG_SYS_EPOLL, IG_FDK_EPOLL, 0, IG_WFN_EPOLL)};
	expect_part("epoll, interrupt", &ep, IG_PART_NET_WAIT, &p);

	/* file I/O: fsync in D state, a read of a regular file; the device */
	struct wait fsync = {.state = IG_OFF_BLOCKED,
			     .flags = IG_F_DSTATE,
			     .wait = IG_WAIT_PACK(IG_SYS_FSYNC, IG_FDK_REG, 0, IG_WFN_WRITEBACK),
			     .obj = (uint64_t)(8u << 20 | 1) << 32 | 1234};
	expect_part("fsync", &fsync, IG_PART_FILE_IO, &p);
	CHECK(p.file_dev == (8u << 20 | 1));
	struct wait fread = {.state = IG_OFF_BLOCKED,
			     .flags = IG_F_DSTATE,
			     .wait = IG_WAIT_PACK(IG_SYS_READ, IG_FDK_REG, 0, IG_WFN_PAGE_IO),
			     .obj = (uint64_t)(254u << 20) << 32 | 99};
	expect_part("file read", &fread, IG_PART_FILE_IO, &p);

	/* cold reads: a major fault of a file mapping (D state or not) */
	struct wait cold = {.state = IG_OFF_BLOCKED,
			    .flags = IG_F_DSTATE | IG_F_FAULT,
			    .wait = IG_WAIT_PACK(0, 0, IG_FLT_FILE, IG_WFN_PAGE_IO),
			    .obj = (uint64_t)(8u << 20 | 2) << 32 | 77};
	expect_part("file fault", &cold, IG_PART_COLD_READ, &p);
	CHECK(p.file_dev == (8u << 20 | 2));

	/* memory pressure: reclaim, swap-in of anonymous memory */
	struct wait recl = {.state = IG_OFF_BLOCKED,
			    .flags = IG_F_DSTATE | IG_F_RECLAIM,
			    .wait = IG_WAIT_PACK(0, 0, IG_FLT_ANON, IG_WFN_RECLAIM)};
	expect_part("reclaim", &recl, IG_PART_MEM_PRESSURE, &p);
	struct wait swapin = {.state = IG_OFF_BLOCKED,
			      .flags = IG_F_DSTATE | IG_F_FAULT,
			      .wait = IG_WAIT_PACK(0, 0, IG_FLT_ANON, IG_WFN_PAGE_IO)};
	expect_part("swap-in", &swapin, IG_PART_MEM_PRESSURE, &p);
	/* a fault of fresh memory (a kernel lock of the process's own, no
	 * waker): page faults */
	struct wait fresh = {.state = IG_OFF_BLOCKED,
			     .flags = IG_F_FAULT,
			     .wait = IG_WAIT_PACK(0, 0, IG_FLT_ANON, IG_WFN_OTHER)};
	expect_part("fresh memory", &fresh, IG_PART_FAULT, &p);

	/* a timer: nanosleep and a timerfd read are its own pace */
	struct wait nap = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_TIMER,
			   .wait = IG_WAIT_PACK(IG_SYS_SLEEP, 0, 0, IG_WFN_SLEEP)};
	expect_part("nanosleep", &nap, IG_PART_SLEEP, &p);
	struct wait tfd = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_TIMER,
			   .wait = IG_WAIT_PACK(IG_SYS_READ, IG_FDK_TIMERFD, 0, IG_WFN_TIMERFD)};
	expect_part("timerfd", &tfd, IG_PART_SLEEP, &p);

	/* the CPU quota: runnable but throttled is not preemption */
	struct wait thr = {.state = IG_OFF_PREEMPTED, .flags = IG_F_THROTTLED};
	expect_part("throttled", &thr, IG_PART_THROTTLED, &p);
	CHECK(p.npreemptors == 0);
	struct wait pre = {.state = IG_OFF_PREEMPTED, .waker = 0, .wpid = 500};
	expect_part("preempted", &pre, IG_PART_PREEMPTED, &p);
	CHECK(p.npreemptors == 1 && p.preemptors[0].pid == 500);

	/* an older recording without the evidence: the scheduler's flags */
	struct wait old = {.state = IG_OFF_BLOCKED, .flags = IG_F_DSTATE, .legacy = 1};
	expect_part("legacy D state", &old, IG_PART_IO_WAIT, &p);
	struct wait oldw = {.state = IG_OFF_BLOCKED, .wpid = 300, .legacy = 1};
	expect_part("legacy woken", &oldw, IG_PART_TASK_WAIT, &p);
}

/* A condition polled with a timeout: four 5 ms waits a timer ends, then
 * one a thread ends, on the same futex, are one wait on that thread. A
 * sleep on another futex before them stays a sleep. */
static void test_timed_merge(void)
{
	struct ig_model *m = model_new(NULL);
	const uint64_t fx = 0x7f0000002000ull;
	struct wait timed = {.state = IG_OFF_BLOCKED,
			     .flags = IG_F_TIMER,
			     .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			     .obj = fx};
	struct wait other = timed;
	other.obj = fx + 4096;
	struct wait woken = {.state = IG_OFF_BLOCKED,
			     .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			     .waker = 104,
			     .wpid = PID,
			     .obj = fx};
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		uint64_t at = t + 2 * MS;
		struct ig_event o = off_ev(at, 4 * MS, &other);
		model_ingest(m, &o);
		at += 4 * MS + 100 * US;
		for (int i = 0; i < 4; i++, at += 5 * MS + 100 * US) {
			o = off_ev(at, 5 * MS, &timed);
			model_ingest(m, &o);
		}
		o = off_ev(at, 3 * MS, &woken);
		model_ingest(m, &o);
	}
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	/* of each 50 ms step: 4 ms asleep, 4 x 5 + 3 ms on the condition */
	CHECKF(fabs(share(&p, IG_PART_LOCK_WAIT) - 23.0 / 50) < 0.01, "lock %.3f",
	       share(&p, IG_PART_LOCK_WAIT));
	CHECKF(fabs(share(&p, IG_PART_SLEEP) - 4.0 / 50) < 0.01, "sleep %.3f",
	       share(&p, IG_PART_SLEEP));
	CHECK(p.nlockers == 1 && p.lockers[0].pid == 104);
	CHECKF(fabs(p.lockers[0].share - 1.0) < 0.01, "share %.3f", p.lockers[0].share);
	model_free(m);
}

/* Naps between two calls: a select() or poll() with nothing to wait for
 * (its first argument 0: time.sleep in Python 3.10 and older, poll(NULL,
 * 0, ms)) is a sleep call, counted as the naps of a poll; the same with a
 * file descriptor set is a wait with a timeout nobody ended, counted as
 * neither. Four 5 ms naps a step. */
static void test_nap_calls(void)
{
	static const struct {
		const char *what;
		uint64_t obj;
		int naps;
	} k[] = {
	    {"select(0, ...)", 0, 4},
	    {"poll(fds, 1, ms)", 0x7ffd00001000ull, 0},
	};
	for (int i = 0; i < 2; i++) {
		struct ig_model *m = model_new(NULL);
		struct wait nap = {.state = IG_OFF_BLOCKED,
				   .flags = IG_F_TIMER,
				   .wait = IG_WAIT_PACK(IG_SYS_POLL, 0, 0, IG_WFN_POLL),
				   .obj = k[i].obj};
		for (int j = 0; j < STEPS; j++) {
			uint64_t t = T0 + (uint64_t)j * STEP;
			struct ig_event c =
			    ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
			model_ingest(m, &c);
			for (int n = 0; n < 4; n++) {
				struct ig_event o =
				    off_ev(t + 2 * MS + (uint64_t)n * 6 * MS, 5 * MS, &nap);
				model_ingest(m, &o);
			}
		}
		struct ig_proc_stats p;
		struct ig_thread_stats th;
		CHECK(model_proc(m, PID, &p) == 0);
		CHECK(model_threads(m, PID, &th, 1) == 1);
		CHECKF(fabs(share(&p, IG_PART_SLEEP) - 20.0 / 50) < 0.02, "%s: sleep %.3f",
		       k[i].what, share(&p, IG_PART_SLEEP));
		double per_gap =
		    th.slept_gaps_win ? (double)th.gap_sleeps_win / th.slept_gaps_win : 0;
		CHECKF(fabs(per_gap - k[i].naps) < 0.01, "%s: %.2f naps a gap, want %d", k[i].what,
		       per_gap, k[i].naps);
		double timed =
		    p.parts.wall_ns ? (double)p.parts.timed_wait_ns / p.parts.wall_ns : 0;
		CHECKF(k[i].naps ? timed == 0 : fabs(timed - 20.0 / 50) < 0.02,
		       "%s: timed waits %.3f", k[i].what, timed);
		model_free(m);
	}
}

/* Copy-on-write faults' kernel CPU is page faults' part, and said apart
 * (cow_ns); the process's forks count while their children share its
 * memory: a child that runs a program no longer does, nor do children
 * forked before the process itself ran a new program. */
static void test_cow_faults(void)
{
	struct ig_model *m = model_new(NULL);
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		struct ig_ktime kt = {.ns = {[IG_K_MINOR] = 5 * MS, [IG_K_COW] = 15 * MS}, .n = 9};
		struct ig_event e;
		ig_ktime_pack(&e, t + STEP - 10 * US, PID, PID, &kt);
		model_ingest(m, &e);
	}
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	CHECKF(fabs(share(&p, IG_PART_FAULT) - 0.40) < 0.02, "fault %.3f",
	       share(&p, IG_PART_FAULT));
	CHECKF(fabs((double)p.parts.cow_ns / (double)p.parts.wall_ns - 0.30) < 0.02, "cow %.3f",
	       (double)p.parts.cow_ns / (double)p.parts.wall_ns);
	CHECK(p.forks == 0 && p.fork_pid == 0);

	static const struct {
		uint32_t pid, arg0; /* a fork's child, a name's or exec's parent */
		int kind;
		const char *comm;
		uint32_t forks, last; /* PID's after it */
	} ev[] = {
	    {PID, 4001, IG_EV_FORK, "python3", 1, 4001},
	    {PID, 4002, IG_EV_FORK, "python3", 2, 4002},
	    {4002, PID, IG_EV_EXEC, "sh", 1, 0},	     /* 4002 runs a program */
	    {4001, PID, IG_EV_COMM, "pt_data_worker", 1, 0}, /* a rename: still shares */
	    {PID, 0, IG_EV_EXEC, "python3", 0, 0},	     /* PID runs a new one */
	    {4001, PID, IG_EV_EXEC, "sh", 0, 0},	     /* no count below 0 */
	    {PID, 4003, IG_EV_FORK, "python3", 1, 4003},
	};
	for (int i = 0; i < (int)(sizeof(ev) / sizeof(ev[0])); i++) {
		struct ig_event e = {.kind = (uint16_t)ev[i].kind,
				     .pid = ev[i].pid,
				     .tid = ev[i].pid,
				     .arg0 = ev[i].arg0};
		e.ts_ns = T0 + (uint64_t)STEPS * STEP + (uint64_t)i * MS;
		strcpy(e.comm, ev[i].comm);
		model_ingest(m, &e);
		CHECK(model_proc(m, PID, &p) == 0);
		CHECKF(p.forks == ev[i].forks && p.fork_pid == ev[i].last,
		       "%d: forks %u, last %u; want %u, %u", i, p.forks, p.fork_pid, ev[i].forks,
		       ev[i].last);
	}
	CHECKF(!strcmp(p.fork_comm, "python3"), "%s", p.fork_comm);
	model_free(m);
}

/* The tick's samples of a thread running its own code between calls: the
 * process's host call site is where most of them were, with their share;
 * six other sites, seen once each, do not push it out. */
static void test_host_samples(void)
{
	struct ig_model *m = model_new(NULL);
	struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, T0, MS, "python3");
	model_ingest(m, &c);
	for (int k = 0; k < 100; k++) {
		struct ig_event e = {.kind = IG_EV_SAMPLE, .pid = PID, .tid = PID};
		e.ts_ns = T0 + 2 * MS + (uint64_t)k * 10 * MS;
		e.dur_ns = 10 * MS;
		e.stack_id = k % 4 ? 0xdec0de : k < 24 ? 0x1000u + (uint64_t)k : 0x106;
		model_ingest(m, &e);
	}
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	CHECKF(p.host_stack == 0xdec0de, "%" PRIx64, p.host_stack);
	CHECKF(p.host_stack_ns == 75 * 10 * MS && p.host_sampled_ns == 100 * 10 * MS,
	       "%" PRIu64 " of %" PRIu64, p.host_stack_ns, p.host_sampled_ns);
	model_free(m);
}

/* Kernel CPU between calls by what it served: file syscalls are file I/O,
 * major faults of files cold reads, reclaim memory pressure; the rest of
 * the on-CPU time is the host's. */
static void test_ktime(void)
{
	struct ig_model *m = model_new(NULL);
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		struct ig_ktime kt = {.ns = {[IG_K_FILE] = 20 * MS,
					     [IG_K_MAJ_FILE] = 5 * MS,
					     [IG_K_RECLAIM] = 2 * MS,
					     [IG_K_SYS] = 1 * MS},
				      .majors = 3,
				      .n = 10};
		struct ig_event e;
		ig_ktime_pack(&e, t + STEP - 10 * US, PID, PID, &kt);
		struct ig_ktime back;
		ig_ktime_unpack(&e, &back);
		CHECK(!memcmp(&back, &kt, sizeof(kt)));
		model_ingest(m, &e);
	}
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	CHECKF(fabs(share(&p, IG_PART_FILE_IO) - 0.40) < 0.02, "file %.3f",
	       share(&p, IG_PART_FILE_IO));
	CHECKF(fabs(share(&p, IG_PART_COLD_READ) - 0.10) < 0.02, "cold %.3f",
	       share(&p, IG_PART_COLD_READ));
	CHECKF(fabs(share(&p, IG_PART_MEM_PRESSURE) - 0.04) < 0.02, "mem %.3f",
	       share(&p, IG_PART_MEM_PRESSURE));
	/* 49 ms of each step on the CPU between calls, 27 of them served */
	CHECKF(fabs(share(&p, IG_PART_HOST_CPU) - 0.44) < 0.02, "host %.3f",
	       share(&p, IG_PART_HOST_CPU));
	CHECKF(fabs((double)p.parts.ksys_ns / (double)p.parts.wall_ns - 0.02) < 0.01, "ksys %.3f",
	       (double)p.parts.ksys_ns / (double)p.parts.wall_ns);
	model_free(m);
}

/* Minor faults are fresh memory's, unless the thread swaps in in the same
 * window: then they are the swap cache's (memory pressure). */
static void test_swap_cache_faults(void)
{
	for (int swapping = 0; swapping < 2; swapping++) {
		struct ig_model *m = model_new(NULL);
		for (int k = 0; k < STEPS; k++) {
			uint64_t t = T0 + (uint64_t)k * STEP;
			struct ig_event c =
			    ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
			model_ingest(m, &c);
			struct ig_ktime kt = {
			    .ns = {
				[IG_K_MINOR] = 10 * MS, [IG_K_MAJ_ANON] = swapping ? 5 * MS : 0}};
			struct ig_event e;
			ig_ktime_pack(&e, t + STEP - 10 * US, PID, PID, &kt);
			model_ingest(m, &e);
		}
		struct ig_proc_stats p;
		CHECK(model_proc(m, PID, &p) == 0);
		double fault = share(&p, IG_PART_FAULT), mem = share(&p, IG_PART_MEM_PRESSURE);
		CHECKF(swapping ? fabs(mem - 0.30) < 0.02 && fault == 0
				: fabs(fault - 0.20) < 0.02 && mem == 0,
		       "swapping %d: faults %.3f, memory %.3f", swapping, fault, mem);
		model_free(m);
	}
}

/* The CPU quota's events: the latest limit and its directory, the
 * throttling summed in the window and since the start. */
static void test_quota_events(void)
{
	struct ig_model *m = model_new(NULL);
	for (int s = 0; s < 15; s++) {
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL,
					    T0 + (uint64_t)s * SEC, MS, "python3");
		model_ingest(m, &c);
		struct ig_event g = {0};
		g.kind = IG_EV_CGROUP;
		g.ts_ns = T0 + (uint64_t)s * SEC + 500 * MS;
		g.pid = g.tid = PID;
		g.arg0 = 50000;
		g.arg1 = 100000;
		g.arg2 = s ? 300 * MS : 0;
		g.stream = s ? (uint64_t)6 << 32 | 10 : 0;
		g.flags = 1;
		g.container = "/sys/fs/cgroup/job.slice/train";
		model_ingest(m, &g);
	}
	model_advance(m, T0 + 15 * SEC - 1); /* the window: seconds 5 to 14 */
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	CHECK(p.quota.quota_us == 50000 && p.quota.period_us == 100000 && p.quota.v2 == 1);
	CHECK(!strcmp(p.quota.dir, "/sys/fs/cgroup/job.slice/train"));
	CHECKF(p.quota.nr_per == 100 && p.quota.nr_thr == 60, "%llu of %llu",
	       (unsigned long long)p.quota.nr_thr, (unsigned long long)p.quota.nr_per);
	CHECK(p.quota.thr_ns == 10 * 300 * MS);
	CHECK(p.quota.life_nr_per == 140 && p.quota.life_thr_ns == 14 * 300 * MS);
	/* a reset keeps the limit, not its counts */
	model_reset(m);
	CHECK(model_proc(m, PID, &p) == 0);
	CHECK(p.quota.quota_us == 50000 && p.quota.life_nr_per == 0 && p.quota.dir[0] == '/');
	model_free(m);
}

/* Culprits come from the feeding threads of a CUDA process (a Python
 * thread waiting for the GIL the feeder holds does not make the feeder the
 * GIL's culprit), and from every thread of a process without CUDA calls (a
 * data loader's worker: who preempts it). */
static void test_culprit_threads(void)
{
	struct ig_model *m = model_new(NULL);
	struct wait gil = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_GIL,
			   .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			   .waker = PID,
			   .wpid = PID,
			   .obj = 0x7f0000003000ull};
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		struct ig_event o = off_ev(t + 5 * MS, GAP, &gil); /* the busy thread */
		o.tid = PID + 1;
		model_ingest(m, &o);
		struct ig_event w =
		    ev_off(300, 300, t + 2 * MS, 10 * MS, IG_OFF_PREEMPTED, 0, 301, "cg-hog");
		model_ingest(m, &w);
	}
	struct ig_proc_stats p;
	CHECK(model_proc(m, PID, &p) == 0);
	CHECKF(p.ngil == 0, "%d GIL holders", p.ngil);
	CHECK(model_proc(m, 300, &p) == 0);
	CHECKF(p.npreemptors == 1 && p.preemptors[0].pid == 301, "%d preemptors", p.npreemptors);
	model_free(m);
}

/* A wait of each step at offset at, lasting dur, with user stack id (and
 * the user stack of the thread that ended it, 0 none). */
struct site_wait {
	const struct wait *w;
	uint64_t at, dur, stack, wake;
};

/* STEPS steps: a 1 ms launch, then the waits; the process's figures. */
static void site_steps(const struct site_wait *sw, int n, struct ig_proc_stats *p)
{
	struct ig_model *m = model_new(NULL);
	for (int k = 0; k < STEPS; k++) {
		uint64_t t = T0 + (uint64_t)k * STEP;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, t, MS, "python3");
		model_ingest(m, &c);
		for (int i = 0; i < n; i++) {
			struct ig_event o = off_ev(t + sw[i].at, sw[i].dur, sw[i].w);
			o.stack_id = sw[i].stack;
			o.stream = sw[i].wake;
			model_ingest(m, &o);
		}
	}
	CHECK(model_proc(m, PID, p) == 0);
	model_free(m);
}

/* The call sites of waits between calls: the user stack a paced loop
 * slept at most on a timer (two sites, 3 ms and 1 ms a step), none from
 * waits that are not sleeps; the stack it waited at most on a lock or
 * condition (two sites, 10 ms and 2 ms a step, one of them a timed wait
 * that ran out: a lock's, not a sleep's), and on the GIL (not a lock's);
 * and where the threads that ended its lock waits were (the wakers'
 * stacks of its lock waits by the time they ended: not the GIL's). */
static void test_wait_sites(void)
{
	struct wait nap = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_TIMER,
			   .wait = IG_WAIT_PACK(IG_SYS_SLEEP, 0, 0, IG_WFN_SLEEP)};
	struct wait lock = {.state = IG_OFF_BLOCKED,
			    .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			    .waker = 101,
			    .wpid = PID};
	struct wait timed = {.state = IG_OFF_BLOCKED,
			     .flags = IG_F_TIMER,
			     .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX)};
	struct wait gil = {.state = IG_OFF_BLOCKED,
			   .flags = IG_F_GIL,
			   .wait = IG_WAIT_PACK(IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX),
			   .waker = 102,
			   .wpid = PID};
	const struct site_wait all[] = {
	    {&nap, 2 * MS, 3 * MS, 0xabcull, 0},
	    {&nap, 6 * MS, 1 * MS, 0xdefull, 0},
	    {&lock, 8 * MS, 10 * MS, 0x999ull, 0x1999ull},
	    {&timed, 19 * MS, 2 * MS, 0x777ull, 0},
	    {&gil, 22 * MS, 20 * MS, 0x555ull, 0x3555ull},
	    {&lock, 43 * MS, 3 * MS, 0x999ull, 0x2999ull},
	};
	struct ig_proc_stats p;
	site_steps(all, 6, &p);
	CHECKF(p.sleep_stack == 0xabcull, "sleep stack 0x%llx", (unsigned long long)p.sleep_stack);
	CHECKF(p.lock_stack == 0x999ull, "lock stack 0x%llx", (unsigned long long)p.lock_stack);
	CHECKF(p.gil_stack == 0x555ull, "GIL stack 0x%llx", (unsigned long long)p.gil_stack);
	CHECKF(p.lock_wake_stack == 0x1999ull, "lock wakers' stack 0x%llx",
	       (unsigned long long)p.lock_wake_stack);

	/* the timed waits alone: the lock's call site, not a sleep's */
	site_steps(&all[3], 1, &p);
	CHECKF(p.lock_stack == 0x777ull && !p.sleep_stack && !p.gil_stack && !p.lock_wake_stack,
	       "lock 0x%llx sleep 0x%llx GIL 0x%llx", (unsigned long long)p.lock_stack,
	       (unsigned long long)p.sleep_stack, (unsigned long long)p.gil_stack);
}

/* A feeder's wait for a program it ran (ig_offcpu_rec.child): in wait4,
 * or ended by a young child of its own that exec'd a program of another
 * name (it reads its output); not by a forked worker that did not exec,
 * nor by a child that exec'd the interpreter under the feeder's name, nor
 * by an exec'd child older than 0.5 s (a producer that lives on). */
static void test_child_waits(void)
{
	static const struct {
		const char *name, *comm;
		int exec, sys;
		uint64_t age; /* of the child at the wake-up */
		int child;
	} k[] = {
	    {"wait4 for any child", "causegen", 0, IG_SYS_WAIT, 2 * MS, 1},
	    {"output of sleep", "sleep", 1, IG_SYS_POLL, 2 * MS, 1},
	    {"a forked worker", "pt_data_worker", 0, IG_SYS_READ, 2 * MS, 0},
	    {"the interpreter again", "python3", 1, IG_SYS_READ, 2 * MS, 0},
	    {"a producer that lives on", "producer", 1, IG_SYS_READ, 600 * MS, 0},
	};
	for (int i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
		struct ig_model *m = model_new(NULL);
		uint64_t t = T0 + SEC;
		struct ig_event c = ev_call(PID, PID, IG_OP_CUDA_LAUNCH_KERNEL, T0, MS, "python3");
		model_ingest(m, &c);
		struct ig_event f = {.kind = IG_EV_FORK, .pid = PID, .tid = PID, .arg0 = 4242};
		f.ts_ns = t - k[i].age;
		strcpy(f.comm, "python3");
		model_ingest(m, &f);
		if (k[i].exec) {
			struct ig_event x = {.kind = IG_EV_EXEC, .pid = 4242, .tid = 4242};
			x.ts_ns = f.ts_ns + 1000;
			strcpy(x.comm, k[i].comm);
			model_ingest(m, &x);
		}
		struct wait w = {.state = IG_OFF_BLOCKED,
				 .wait = IG_WAIT_PACK(k[i].sys, IG_FDK_FIFO, 0, 0),
				 .waker = 4242,
				 .wpid = 4242};
		struct ig_event o = off_ev(t, 5 * MS, &w);
		strcpy(o.other_comm, k[i].comm);
		model_ingest(m, &o);
		struct ig_offcpu_rec r[IG_TL_MAX];
		int n = model_thread_offcpu(m, PID, r, IG_TL_MAX);
		CHECKF(n == 1 && r[0].part == IG_PART_TASK_WAIT && r[0].child == k[i].child,
		       "%s: %d records, part %d, child %d (want %d)", k[i].name, n,
		       n ? r[0].part : -1, n ? r[0].child : -1, k[i].child);
		model_free(m);
	}
}

static void test_codes(void)
{
	uint64_t w = IG_WAIT_PACK(IG_SYS_WRITE, IG_FDK_FIFO, IG_FLT_NONE, IG_WFN_PIPE_WRITE) |
		     (uint64_t)4312 << 32;
	CHECK(IG_WAIT_SYS(w) == IG_SYS_WRITE && IG_WAIT_FDK(w) == IG_FDK_FIFO);
	CHECK(IG_WAIT_FLT(w) == IG_FLT_NONE && IG_WAIT_WFN(w) == IG_WFN_PIPE_WRITE);
	CHECK(IG_WAIT_WAKER(w) == 4312);
	char b[160];
	ig_wait_text(b, sizeof(b), IG_F_DETAIL, w);
	CHECKF(strstr(b, "write") && strstr(b, "pipe") && strstr(b, "4312"), "'%s'", b);
	ig_wait_text(b, sizeof(b), 0, 0);
	CHECKF(b[0] == 0, "'%s'", b);
	for (int i = 0; i < IG_SYS_MAX; i++)
		CHECK(strcmp(ig_sys_name(i), "?"));
	for (int i = 0; i < IG_FDK_MAX; i++)
		CHECK(strcmp(ig_fdk_name(i), "?"));
	for (int i = 0; i < IG_WFN_MAX; i++)
		CHECK(strcmp(ig_wfn_name(i), "?"));
	CHECK(!strcmp(ig_sys_name(IG_SYS_MAX), "?"));

	/* this architecture's syscalls in ingero-top's codes */
	CHECK(kwait_sys(SYS_read) == IG_SYS_READ && kwait_sys(SYS_pwrite64) == IG_SYS_WRITE);
	CHECK(kwait_sys(SYS_fdatasync) == IG_SYS_FSYNC && kwait_sys(SYS_futex) == IG_SYS_FUTEX);
	CHECK(kwait_sys(SYS_epoll_wait) == IG_SYS_EPOLL && kwait_sys(SYS_ppoll) == IG_SYS_POLL);
	CHECK(kwait_sys(SYS_clock_nanosleep) == IG_SYS_SLEEP);
	CHECK(kwait_sys(SYS_io_getevents) == IG_SYS_AIO &&
	      kwait_sys(SYS_io_uring_enter) == IG_SYS_AIO);
	CHECK(kwait_sys(SYS_recvfrom) == IG_SYS_RECV && kwait_sys(SYS_sendmsg) == IG_SYS_SEND);
	CHECK(kwait_sys(SYS_flock) == IG_SYS_FLOCK && kwait_sys(SYS_madvise) == IG_SYS_MEM);
	CHECK(kwait_sys(SYS_getpid) == IG_SYS_OTHER && kwait_sys(-1) == IG_SYS_NONE);
	CHECK(kwait_sys(100000) == IG_SYS_OTHER);
}

static void test_cgroup_texts(void)
{
	char out[256];
	/* v1: the cpu controller's line, among others and combined */
	const char *v1 = "12:memory:/job\n4:cpu,cpuacct:/sweep/q50\n3:cpuset:/\n0::/user.slice\n";
	CHECK(cgcpu_path(v1, 0, out, sizeof(out)) == 0 && !strcmp(out, "/sweep/q50"));
	CHECK(cgcpu_path("5:cpuacct:/a\n6:cpu:/b\n", 0, out, sizeof(out)) == 0 &&
	      !strcmp(out, "/b"));
	CHECK(cgcpu_path("5:cpuacct,cpuset:/a\n", 0, out, sizeof(out)) == -ENOENT);
	/* v2: the unified line */
	CHECK(cgcpu_path(v1, 1, out, sizeof(out)) == 0 && !strcmp(out, "/user.slice"));
	CHECK(cgcpu_path("0::/\n", 1, out, sizeof(out)) == 0 && !strcmp(out, "/"));
	CHECK(cgcpu_path("", 1, out, sizeof(out)) == -ENOENT);
	CHECK(cgcpu_path_of("5:cpuacct,cpuset:/a\n", 0, "cpuset", out, sizeof(out)) == 0 &&
	      !strcmp(out, "/a"));
	CHECK(cgcpu_path_of("3:cpuset:/b\n", 0, "cpu", out, sizeof(out)) == -ENOENT);
	/* kernel CPU lists */
	CHECK(cpuaff_count("0-3,8\n") == 5 && cpuaff_count("0") == 1 && cpuaff_count("") == 0);
	CHECK(cpuaff_count("2-1") == -EINVAL && cpuaff_count("a") == -EINVAL &&
	      cpuaff_count("0-3;5") == -EINVAL);
	struct cpuaff a;
	CHECK(cpuaff_read((uint32_t)getpid(), &a) == 0 && a.allowed >= 1 && a.online >= a.allowed);
	CHECK(cgcpu_path("0::/a/very/long/path\n", 1, out, 8) == -ENAMETOOLONG);

	uint64_t q = 1, p = 1;
	CHECK(cgcpu_parse_max("max 100000\n", &q, &p) == 0 && q == 0 && p == 100000);
	CHECK(cgcpu_parse_max("50000 100000\n", &q, &p) == 1 && q == 50000 && p == 100000);
	CHECK(cgcpu_parse_max("", &q, &p) == -EINVAL);
	CHECK(cgcpu_parse_max("50x 100000", &q, &p) == -EINVAL);
	CHECK(cgcpu_parse_max("50000 0", &q, &p) == -EINVAL);

	uint64_t t, nt, np;
	const char *v1s = "nr_periods 120\nnr_throttled 48\nthrottled_time 2500000000\n";
	CHECK(cgcpu_parse_stat(v1s, &t, &nt, &np) == 0 && t == 2500000000ull && nt == 48 &&
	      np == 120);
	const char *v2s = "usage_usec 900\nuser_usec 800\nsystem_usec 100\nnr_periods 10\n"
			  "nr_throttled 7\nthrottled_usec 1500\nnr_bursts 0\nburst_usec 0\n";
	CHECK(cgcpu_parse_stat(v2s, &t, &nt, &np) == 0 && t == 1500000 && nt == 7 && np == 10);
	CHECK(cgcpu_parse_stat("usage_usec 5\n", &t, &nt, &np) == -ENOENT);
}

int main(void)
{
	test_mechanisms();
	test_timed_merge();
	test_nap_calls();
	test_cow_faults();
	test_host_samples();
	test_ktime();
	test_swap_cache_faults();
	test_quota_events();
	test_culprit_threads();
	test_wait_sites();
	test_child_waits();
	test_codes();
	test_cgroup_texts();
	return check_done("test_waits");
}
