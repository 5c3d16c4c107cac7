/* The cost of tracing one call on this machine: the uprobe and uretprobe
 * traps run on the traced thread just outside the time the probes measure
 * (before the entry timestamp, after the return one), so a thread making
 * tens of thousands of calls a second spends a measurable share of its wall
 * time there. Measured once at start: a child process (a target, so the
 * programs take their full path) calls a function of this executable with
 * the probes attached and without them; the difference per call is the
 * cost. The model counts it as API time instead of host work
 * (docs/collector.md). Everything the child's probes report is dropped
 * (coll_calib_pid). */
#include "collect/collector_priv.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/elfsym.h"
#include "core/log.h"
#include "core/ops.h"
#include "ingero.h"
#include "ingero.skel.h"
#include "core/clock.h"

/* Many short rounds, the fastest kept: a round that was preempted (a busy
 * machine) is slower, never faster. */
#define CALIB_CALLS 200
#define CALIB_ROUNDS 60

/* The probed function: a real call the compiler cannot remove, which
 * starts as CUDA's entry points do (push %rbp: the kernel emulates it
 * instead of single-stepping it, which costs a trap more). */
__attribute__((noinline, used)) static int calib_inner(int x)
{
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x + 1;
}

__attribute__((noinline, used, optimize("no-omit-frame-pointer"))) int ingero_top_calib_fn(int x)
{
	return calib_inner(x) + 1; /* not a leaf: it keeps its frame */
}

#define CALIB_PAGES 16384

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define CALIB_SYSCALLS 100000

/* The kernel's side: the CPU time of CALIB_SYSCALLS file syscalls (empty
 * reads of its own executable: 's') or of touching CALIB_PAGES fresh pages
 * ('f'), ns in all. */
static uint64_t child_kernel(char req)
{
	uint64_t t0, t;
	if (req == 's') {
		char b[1];
		int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		t0 = thread_cpu_ns();
		for (int i = 0; i < CALIB_SYSCALLS; i++)
			if (pread(fd, b, 0, 0))
				break;
		t = thread_cpu_ns() - t0;
		close(fd);
		return t;
	}
	size_t len = (size_t)CALIB_PAGES << 12;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	t0 = thread_cpu_ns();
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	t = thread_cpu_ns() - t0;
	munmap(p, len);
	return t;
}

/* The child: for each request byte, the fastest of CALIB_ROUNDS timed runs
 * of CALIB_CALLS calls, written back as ns; or the kernel's side. */
static void child_loop(int rfd, int wfd)
{
	volatile int x = 0;
	char req;
	while (read(rfd, &req, 1) == 1) {
		if (req == 's' || req == 'f') {
			uint64_t ns = child_kernel(req);
			if (write(wfd, &ns, sizeof(ns)) != sizeof(ns))
				break;
			continue;
		}
		uint64_t best = UINT64_MAX;
		for (int r = 0; r < CALIB_ROUNDS; r++) {
			uint64_t t0 = ig_mono_ns();
			for (int i = 0; i < CALIB_CALLS; i++)
				x = ingero_top_calib_fn(x);
			uint64_t d = ig_mono_ns() - t0;
			if (d < best)
				best = d;
		}
		if (write(wfd, &best, sizeof(best)) != sizeof(best))
			break;
	}
	_exit(0);
}

/* One timed run of the child; gives up after 5 s (a child held or stopped
 * by someone else must not hold ingero-top's start). */
static int timed_req(int wfd, int rfd, char req, uint64_t *ns)
{
	struct pollfd p = {.fd = rfd, .events = POLLIN};
	if (write(wfd, &req, 1) != 1)
		return -EIO;
	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	return read(rfd, ns, sizeof(*ns)) == sizeof(*ns) ? 0 : -EIO;
}

static int timed_run(int wfd, int rfd, uint64_t *ns)
{
	return timed_req(wfd, rfd, 'r', ns);
}

/* A syscall or a page fault costs more kernel time than its tracepoints
 * see (the entry and exit around them, and the programs' own time): the
 * child's CPU time for many of them against the kernel time the programs
 * sent for them; the difference per one is added to each counted (kwait.c).
 * 0, or -errno. */
static int kernel_run(struct collector *c, int wfd, int rfd, char req, int cat, unsigned n,
		      uint32_t *extra)
{
	int fd = bpf_map__fd(c->skel->maps.calib);
	uint32_t zero = 0;
	struct igb_calib cb = {.tgid = c->calib_pid};
	uint64_t cpu;
	if (bpf_map_update_elem(fd, &zero, &cb, BPF_ANY))
		return -errno;
	int r = timed_req(wfd, rfd, req, &cpu);
	if (r)
		return r;
	/* the child's last sums come at its next flush (1 ms of kernel time,
	 * or 200 ms): wait for the category to have its count */
	for (int i = 0; i < 40; i++) {
		if (bpf_map_lookup_elem(fd, &zero, &cb))
			return -errno;
		if (cb.n[cat] >= n / 2)
			break;
		usleep(10000);
	}
	if (!cb.n[cat])
		return -ENODATA;
	double seen = (double)cb.ns[cat] / (double)cb.n[cat];
	double all = (double)cpu / n;
	*extra = all > seen && all - seen < 20000 ? (uint32_t)(all - seen) : 0;
	return 0;
}

static void calibrate_kernel(struct collector *c, int wfd, int rfd)
{
	uint64_t warm;
	if (timed_req(wfd, rfd, 'f', &warm)) /* also makes the child a thread the programs know */
		return;
	/* the syscalls' with the exact hooks on, as they are when they count */
	int r = coll_sys_hooks(c, true);
	if (!r)
		r = kernel_run(c, wfd, rfd, 's', IGB_K_FILE, CALIB_SYSCALLS, &c->kentry_sys_ns);
	coll_sys_hooks(c, false);
	if (!r)
		r = kernel_run(c, wfd, rfd, 'f', IGB_K_MINOR, CALIB_PAGES, &c->kentry_fault_ns);
	if (r)
		log_msg(LOG_INFO, "kernel entry cost not measured: %s", strerror(-r));
	else
		log_msg(
		    LOG_INFO,
		    "kernel entry cost: %u ns per syscall, %u ns per page fault beyond what the "
		    "tracepoints see",
		    c->kentry_sys_ns, c->kentry_fault_ns);
}

int coll_calibrate(struct collector *c)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *name = "ingero_top_calib_fn";
	uint64_t off = 0;
	int to[2], from[2], r = -EINVAL;

	if (getenv("INGERO_TOP_NO_CALIB") || n <= 0)
		return -ENOTSUP;
	exe[n] = 0;
	if (elfsym_offsets(exe, &name, 1, &off) != 1 || !off)
		return -ENOENT; /* a stripped binary: no correction */
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		child_loop(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	c->calib_pid = (uint32_t)pid;

	uint64_t plain = 0, probed = 0;
	uint8_t one = 1;
	uint32_t tgid = (uint32_t)pid;
	struct bpf_link *le = NULL, *lx = NULL;
	int fe = -1, fx = -1; /* uprobe_multi link fds */
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = IGB_COOKIE(IG_OP_CUDA_STREAM_SYNC, 0, 0));
	if (timed_run(to[1], from[0], &plain)) /* also warms the child up */
		goto out;
	if (timed_run(to[1], from[0], &plain))
		goto out;
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &tgid, &one, BPF_ANY);
	struct bpf_program *ret =
	    c->stacks ? c->skel->progs.call_exit_stk : c->skel->progs.call_exit;
	if (c->multi) { /* the programs were loaded for uprobe_multi links */
		uint64_t cookie = uo.bpf_cookie;
		fe = collector_uprobe_multi_link(bpf_program__fd(c->skel->progs.call_enter), exe,
						 &off, &cookie, 1, false);
		fx = fe >= 0 ? collector_uprobe_multi_link(bpf_program__fd(ret), exe, &off, &cookie,
							   1, true)
			     : -1;
		if (fe < 0 || fx < 0) {
			r = fe < 0 ? fe : fx;
			goto out;
		}
	} else {
		le = bpf_program__attach_uprobe_opts(c->skel->progs.call_enter, pid, exe, off, &uo);
		uo.retprobe = true;
		lx = le ? bpf_program__attach_uprobe_opts(ret, pid, exe, off, &uo) : NULL;
		if (!le || !lx) {
			r = -errno;
			goto out;
		}
	}
	r = timed_run(to[1], from[0], &probed);
	if (!r && probed > plain)
		c->probe_ns = (probed - plain) / CALIB_CALLS;
	if (!r && c->waits)
		calibrate_kernel(c, to[1], from[0]);
out:
	/* perf-event uprobes detach slowly (a grace period each): they go with
	 * the collector's other links at exit; the child is gone by then */
	if (le)
		coll_add_link(c, le);
	if (lx)
		coll_add_link(c, lx);
	if (fx >= 0)
		close(fx);
	if (fe >= 0)
		close(fe);
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.targets), &tgid);
	struct igb_calib none = {0};
	uint32_t zero = 0;
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.calib), &zero, &none, BPF_ANY);
	close(to[1]);
	close(from[0]);
	kill(pid, SIGKILL); /* done, or stuck: either way it goes */
	waitpid(pid, NULL, 0);
	if (r)
		log_msg(LOG_INFO, "probe cost not measured: %s", strerror(-r));
	else
		log_msg(LOG_INFO, "probe cost: %lu ns per traced call", (unsigned long)c->probe_ns);
	return r;
}
