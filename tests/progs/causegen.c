/* causegen: a training-like loop whose causes of slowness are parameters, and
 * which measures its own ground truth (tests/sweep/README.md). One feeding
 * thread (the main thread) runs steps through the shim CUDA stack; each cause
 * has an intensity: host prep on the CPU, data-loader worker processes behind
 * a pipe, write + fdatasync to a file, CPU hogs on the feeder's CPU, sleeps,
 * allocations, copies, syncs per step. Every phase of a step is timed by the
 * thread's own clocks: wall (CLOCK_MONOTONIC), on-CPU (CLOCK_THREAD_CPUTIME_ID)
 * and run-queue wait (field 2 of /proc/thread-self/schedstat), so preempted
 * time is told apart from the phase it fell in. At the end one JSON object
 * says where the feeding thread's wall time went. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "causegen/cg.h"

#define CG_MAX_SYNCS 1000

static struct {
	double seconds;
	long steps;
	const char *truth;
	long kernels, syncs;
	double kernel_us;
	const char *sync_mode;
	size_t h2d;
	double host_us;
	int loaders, prefetch;
	double loader_ms, loader_busy;
	long io_writes, io_every;
	double io_us; /* the io phase writes until this much time passed, when > 0 */
	size_t io_bytes;
	const char *dir;
	int hogs;
	int hog_nice;
	double sleep_us;
	long allocs, alloc_every;
	double alloc_us;
	size_t alloc_bytes;
	int cpu, helper_cpu;
	int cpu_quota, quota_burners, own_hogs, mem_limit;
	int launch_blocking; /* CUDA_LAUNCH_BLOCKING=1 set at start */
	const char *mech[CG_MAX_MECHS];
	int nmech;
} opt;

static struct cg_quota quota; /* --cpu-quota, and its cpu.stat at the end */
static u64 quota_end[3];
static char memcg[256]; /* --mem-limit's cgroup */

/* The phases of a step, in the order a step runs them. */
enum phase { PH_LOADER, PH_HOST, PH_IO, PH_SLEEP, PH_ALLOC, PH_COPY, PH_LAUNCH, PH_SYNC, PH_N };
static const char *const phase_names[PH_N] = {"loader", "host", "io",	  "sleep",
					      "alloc",	"copy", "launch", "sync"};
static struct acct ph[PH_N], residue;
static struct mark last; /* end of the last phase: what follows is residue */

static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "causegen: %s failed: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

/* ---- helpers: loaders and hogs ------------------------------------------- */

/* A data-loader worker: for each credit, produce one batch in --loader-ms
 * (--loader-busy % of it busy on the CPU, the rest asleep), then send it. */
static void loader_main(int idx, int out_fd, int credit_fd)
{
	long seq = idx; /* a batch is its sequence number */
	u64 period = (u64)(opt.loader_ms * 1e6);
	char c;

	for (;; seq += opt.loaders) {
		if (io_full(credit_fd, &c, 1, 0)) /* the feeder is done */
			_exit(0);
		u64 t0 = clock_ns(CLOCK_MONOTONIC);
		spin_until(t0 + (u64)((double)period * opt.loader_busy / 100), CLOCK_MONOTONIC);
		sleep_until(t0 + period);
		if (io_full(out_fd, &seq, sizeof(seq), 1))
			_exit(0);
	}
}

/* A CPU hog on the feeder's CPU, always busy. Its nice level sets how much
 * of the CPU it takes from a feeder that is runnable: w / (w + 1024), with
 * w = 1024 / 1.25^nice (the scheduler's weights). */
static void hog_main(void)
{
	errno = 0;
	if (opt.hog_nice && nice(opt.hog_nice) == -1 && errno)
		die("nice");
	for (;;)
		spin_until(~0ull, CLOCK_MONOTONIC);
}

static int loader_data[CG_MAX_HELPERS], loader_credit[CG_MAX_HELPERS];

static void close_loader_fds(int n)
{
	for (int k = 0; k < n; k++) {
		close(loader_data[k]);
		close(loader_credit[k]);
	}
}

static void start_loaders(void)
{
	for (int i = 0; i < opt.loaders; i++) {
		int d[2], c[2];

		if (pipe2(d, O_CLOEXEC) || pipe2(c, O_CLOEXEC))
			die("pipe");
		if (spawn("loader", i, opt.helper_cpu) == 0) {
			close_loader_fds(i);
			close(d[0]);
			close(c[1]);
			loader_main(i, d[1], c[0]);
		}
		close(d[1]);
		close(c[0]);
		loader_data[i] = d[0];
		loader_credit[i] = c[1];
		for (int k = 0; k < opt.prefetch; k++)
			if (io_full(loader_credit[i], "c", 1, 1))
				die("write credit");
	}
}

static void start_hogs(void)
{
	for (int i = 0; i < opt.hogs; i++)
		if (spawn("hog", i, opt.cpu) == 0) {
			close_loader_fds(opt.loaders);
			hog_main();
		}
}

static void stop_helpers(void)
{
	close_loader_fds(opt.loaders);
	for (int i = 0; i < nhelpers; i++)
		if (!helpers[i].thread)
			kill(helpers[i].pid, SIGKILL);
	for (int i = 0; i < nhelpers; i++)
		if (!helpers[i].thread)
			waitpid(helpers[i].pid, NULL, 0);
}

/* Threads of the feeding process itself, always busy on its CPU: it
 * competes with its own threads (more busy threads than cores). */
static void *own_hog_main(void *arg)
{
	(void)arg;
	for (;;)
		spin_until(~0ull, CLOCK_MONOTONIC);
	return NULL;
}

/* Processes in the feeder's CPU cgroup, busy on the helpers' CPU: they
 * spend the quota the feeder needs. */
static void start_burners(void)
{
	for (int i = 0; i < opt.quota_burners; i++)
		if (spawn("burner", i, opt.helper_cpu) == 0)
			for (;;)
				spin_until(~0ull, CLOCK_MONOTONIC);
}

/* The device and file system under --dir: what a block-I/O chain must name. */
static struct {
	char dev[32], disk[64], fs[64], mount[512], source[512];
} iodev;

static void find_device(const char *dir)
{
	char real[PATH_MAX], line[4096], path[128], link[PATH_MAX];
	struct stat st;
	size_t best = 0;
	FILE *f;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || !realpath(dir, real)) {
		fprintf(stderr, "causegen: --dir %s is not a directory\n", dir);
		exit(2);
	}
	snprintf(iodev.dev, sizeof(iodev.dev), "%u:%u", major(st.st_dev), minor(st.st_dev));
	f = fopen("/proc/self/mountinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char mm[32], mnt[512], *sep = strstr(line, " - ");
		char fs[64], src[512];
		size_t n;

		/* id parent MAJ:MIN root mountpoint opts ... - fstype source superopts */
		if (!sep || sscanf(line, "%*s %*s %31s %*s %511s", mm, mnt) != 2 ||
		    strcmp(mm, iodev.dev) || sscanf(sep + 3, "%63s %511s", fs, src) != 2)
			continue;
		n = strlen(mnt);
		if (strncmp(real, mnt, n) || (real[n] && real[n] != '/' && n > 1) || n < best)
			continue;
		best = n;
		snprintf(iodev.mount, sizeof(iodev.mount), "%s", mnt);
		snprintf(iodev.fs, sizeof(iodev.fs), "%s", fs);
		snprintf(iodev.source, sizeof(iodev.source), "%s", src);
	}
	if (f)
		fclose(f);
	/* /sys/dev/block/M:m -> .../block/vda or .../block/vda/vda1 (a partition) */
	snprintf(path, sizeof(path), "/sys/dev/block/%s", iodev.dev);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		char *base, part[160];

		link[n] = 0;
		snprintf(part, sizeof(part), "%s/partition", path);
		base = strrchr(link, '/');
		if (base && access(part, F_OK) == 0) {
			*base = 0;
			base = strrchr(link, '/');
		}
		if (base)
			snprintf(iodev.disk, sizeof(iodev.disk), "%s", base + 1);
	}
}

/* ---- one step ------------------------------------------------------------- */

static struct {
	cudaStream_t stream;
	void *dbuf, *dcopy;
	char *hcopy, *iobuf;
	int io_fd;
	char io_path[PATH_MAX];
	u64 kernel_ns, gpu_work_ns, io_bytes, copy_bytes;
	long step, kernels, syncs, allocs, io_writes, copies, batches;
} run;

static void do_loader(void)
{
	int w = (int)(run.step % opt.loaders);
	long seq;

	if (io_full(loader_data[w], &seq, sizeof(seq), 0) || seq != run.step) {
		fprintf(stderr, "causegen: loader %d died or sent a batch out of order\n", w);
		exit(1);
	}
	if (io_full(loader_credit[w], "c", 1, 1))
		die("write credit");
	run.batches++;
}

static int io_on(void)
{
	return opt.io_writes > 0 || opt.io_us > 0;
}

/* --io-writes N writes, or with --io-us as many as fit in U us (at least
 * one): a count's time is the disk's business, a time is not (io-25's 12
 * writes were 42 % of its step at this VM's ~120 us a write; on a disk 5x
 * faster they would be 13 %, under the third of its design that the bare
 * sweep checks). */
static void do_io(void)
{
	u64 end = clock_ns(CLOCK_MONOTONIC) + (u64)(opt.io_us * 1e3);

	for (long i = 0; opt.io_us > 0 ? i == 0 || clock_ns(CLOCK_MONOTONIC) < end
				       : i < opt.io_writes;
	     i++) {
		run.iobuf[0] = (char)(run.step + i); /* never the same bytes twice in a row */
		if (pwrite(run.io_fd, run.iobuf, opt.io_bytes, 0) != (ssize_t)opt.io_bytes)
			die("pwrite");
		if (fdatasync(run.io_fd))
			die("fdatasync");
		run.io_bytes += opt.io_bytes;
		run.io_writes++;
	}
}

static void do_alloc(void)
{
	for (long i = 0; i < opt.allocs; i++) {
		void *p;

		check(cudaMalloc(&p, opt.alloc_bytes), "cudaMalloc");
		check(cudaFree(p), "cudaFree");
		run.allocs++;
	}
}

/* Launches and syncs: the kernels of a step split over --syncs segments, each
 * ending in cudaStreamSynchronize. Only the edges of this block are full
 * marks (reading schedstat costs ~1 us, too much between calls of a sync
 * storm); inside it the wall clock alone splits launch from sync time. */
static void do_cuda(const struct mark *b, struct mark *e)
{
	dim3 grid = {64, 1, 1}, block = {256, 1, 1};
	void *args[1] = {&run.dbuf};
	u64 launch = 0, t = b->wall;

	for (long s = 0; s < opt.syncs; s++) {
		long k = opt.kernels / opt.syncs + (s < opt.kernels % opt.syncs);

		for (long i = 0; i < k; i++) /* any host function stands for the kernel */
			check(cudaLaunchKernel((const void *)(uintptr_t)do_loader, grid, block,
					       args, 0, run.stream),
			      "cudaLaunchKernel");
		u64 t1 = clock_ns(CLOCK_MONOTONIC);
		check(cudaStreamSynchronize(run.stream), "cudaStreamSynchronize");
		u64 t2 = clock_ns(CLOCK_MONOTONIC);
		launch += t1 - t;
		t = t2;
		run.kernels += k;
		run.gpu_work_ns += (u64)k * run.kernel_ns;
	}
	run.syncs += opt.syncs;
	mark_now(e);
	/* Launches are busy spins, on the CPU unless preempted; run-queue waits
	 * come after a sync's sleep: the block's are charged to the syncs, and a
	 * launch is taken as preempted only when the syncs cannot hold them. */
	u64 wall = e->wall - b->wall, pre = e->rq - b->rq, cpu = e->cpu - b->cpu;
	u64 api = launch < sub0(wall, pre) ? launch : sub0(wall, pre);
	struct acct *L = &ph[PH_LAUNCH], *S = &ph[PH_SYNC];
	u64 sync_pre = pre - (launch - api), sync_cpu = sub0(cpu, api);

	L->wall += launch;
	L->cpu += api;
	L->preempted += launch - api;
	L->n += (u64)opt.kernels;
	S->wall += wall - launch;
	S->preempted += sync_pre;
	S->cpu += sync_cpu < wall - launch - sync_pre ? sync_cpu : wall - launch - sync_pre;
	S->n += (u64)opt.syncs;
}

static void do_host(void)
{
	spin_until(clock_ns(CLOCK_THREAD_CPUTIME_ID) + (u64)(opt.host_us * 1e3),
		   CLOCK_THREAD_CPUTIME_ID);
}

static void do_sleep(void)
{
	sleep_until(clock_ns(CLOCK_MONOTONIC) + (u64)(opt.sleep_us * 1e3));
}

static void do_copy(void)
{
	check(cudaMemcpy(run.dcopy, run.hcopy, opt.h2d, cudaMemcpyHostToDevice), "cudaMemcpy");
	run.copies++;
	run.copy_bytes += opt.h2d;
}

static int due(long every)
{
	return every > 0 && (run.step + 1) % every == 0;
}

static void phase(enum phase id, int cond, void (*fn)(void))
{
	struct mark b, e;

	if (!cond)
		return;
	mark_now(&b);
	acct_add(&residue, &last, &b);
	fn();
	mark_now(&e);
	acct_add(&ph[id], &b, &e);
	last = e;
}

/* The mechanisms' phases: its own, then its clean-up (host work). */
static struct acct mech_acct[CG_MAX_MECHS], mech_post_acct[CG_MAX_MECHS];
static u64 mech_psi[CG_MAX_MECHS];

static void mech_phase(int i)
{
	struct mark b, e;
	mark_now(&b);
	acct_add(&residue, &last, &b);
	u64 psi = mech_rule(i) == MR_PSI ? psi_memory_ns() : 0;
	mech_main(i);
	mark_now(&e);
	if (mech_rule(i) == MR_PSI)
		mech_psi[i] += psi_memory_ns() - psi;
	acct_add(&mech_acct[i], &b, &e);
	last = e;
	if (!mech_has_post(i))
		return;
	mech_post(i);
	mark_now(&e);
	acct_add(&mech_post_acct[i], &last, &e);
	last = e;
}

/* One step: what the GPU does not overlap (batch, host prep, checkpoint
 * write, sleep, allocations, the H2D copy), then the launches and syncs. */
static void step(void)
{
	struct mark b, e;

	phase(PH_LOADER, opt.loaders > 0, do_loader);
	phase(PH_HOST, opt.host_us > 0, do_host);
	for (int i = 0; i < mech_count(); i++)
		mech_phase(i);
	phase(PH_IO, io_on() && due(opt.io_every), do_io);
	phase(PH_SLEEP, opt.sleep_us > 0, do_sleep);
	phase(PH_ALLOC, opt.allocs > 0 && due(opt.alloc_every), do_alloc);
	phase(PH_COPY, opt.h2d > 0, do_copy);
	mark_now(&b);
	acct_add(&residue, &last, &b);
	do_cuda(&b, &e);
	last = e;
	run.step++;
}

/* ---- the ground truth ----------------------------------------------------- */

static void json_acct(FILE *f, const char *name, const struct acct *a, int final)
{
	fprintf(f,
		"    \"%s\": {\"wall_ns\": %llu, \"cpu_ns\": %llu, \"preempted_ns\": %llu, "
		"\"off_ns\": %llu, \"count\": %llu}%s\n",
		name, a->wall, a->cpu, a->preempted, acct_off(a), a->n, final ? "" : ",");
}

/* The contract's parts (tests/sweep/README.md), from the phases. Inside
 * calls: syncs and copies wait for the GPU, launches and allocations are API
 * work. Between calls: the on-CPU time of every other phase and of the
 * residue is host work; their off-CPU time is I/O, a task (the loader pipe),
 * a timer, or (busy loop, residue) unknown. They add up to the wall time. */
/* The contract's part of a mechanism's class. */
static const char *const part_names[] = {
    "gpu_wait",	 "api",		 "call_preempted", "host_cpu",	   "preempted",
    "io_wait",	 "task_wait",	 "sleep",	   "fault",	   "unknown",
    "throttled", "file_io",	 "cold_read",	   "mem_pressure", "lock_wait",
    "gil_wait",	 "backpressure", "net_wait",	   "stopped"};
enum {
	P_GPU,
	P_API,
	P_CPRE,
	P_HOST,
	P_PRE,
	P_IO,
	P_TASK,
	P_SLEEP,
	P_FAULT,
	P_UNK,
	P_THR,
	P_FILE,
	P_COLD,
	P_MEM,
	P_LOCK,
	P_GIL,
	P_FULL,
	P_NET,
	P_STOP,
	P_N
};

static int class_part(const char *cls)
{
	static const struct {
		const char *cls;
		int part;
	} m[] = {{"lock_wait", P_LOCK}, {"loader_wait", P_TASK},  {"backpressure", P_FULL},
		 {"net_wait", P_NET},	{"timer_sleep", P_SLEEP}, {"file_io", P_FILE},
		 {"cold_read", P_COLD}, {"page_faults", P_FAULT}, {"memory_pressure", P_MEM},
		 {"gil_wait", P_GIL},	{"stopped", P_STOP},	  {"poll_wait", P_SLEEP}};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(cls, m[i].cls))
			return m[i].part;
	return P_UNK;
}

/* The mechanisms' share of the parts, by their rules (tests/sweep/README.md). */
static void mech_parts(u64 *p)
{
	for (int i = 0; i < mech_count(); i++) {
		struct acct a = mech_acct[i], q = mech_post_acct[i];
		acct_clip(&a);
		acct_clip(&q);
		u64 off = acct_off(&a), cls = (u64)class_part(mech_class(i, 0));
		p[P_PRE] += a.preempted + q.preempted;
		p[P_HOST] += q.cpu;
		p[P_UNK] += acct_off(&q);
		if (mech_rule(i) == MR_OFF) {
			p[cls] += off;
			p[P_HOST] += a.cpu;
		} else if (mech_rule(i) == MR_ALL) {
			p[cls] += off + a.cpu;
		} else { /* MR_PSI: the memory stall the kernel saw, the rest its own */
			u64 stall = mech_psi[i] < off + a.cpu ? mech_psi[i] : off + a.cpu;
			p[P_MEM] += stall;
			p[class_part(mech_class(i, 1))] += off + a.cpu - stall;
		}
	}
}

/* The contract's parts (tests/sweep/README.md), from the phases. Inside
 * calls: syncs and copies wait for the GPU, launches and allocations are API
 * work. Between calls: the on-CPU time of the phases that run user code and
 * of the residue is host work; the write + fdatasync phase is file I/O, on
 * the CPU or not; the loaders' and the sleep's off time is a task and a
 * timer; the mechanisms' by their rules. Under a CPU quota the loop never
 * sleeps (sync-mode spin): off time anywhere is the quota's throttling.
 * They add up to the wall time. */
static void json_parts(FILE *f, const struct acct *res)
{
	const struct acct *L = &ph[PH_LOADER], *H = &ph[PH_HOST], *I = &ph[PH_IO];
	const struct acct *S = &ph[PH_SLEEP], *Y = &ph[PH_SYNC], *C = &ph[PH_COPY];
	const struct acct *K = &ph[PH_LAUNCH], *A = &ph[PH_ALLOC];
	u64 p[P_N] = {0};
	int under_quota = opt.cpu_quota > 0;
	u64 thr_y = under_quota ? acct_off(Y) : 0, thr_k = under_quota ? acct_off(K) : 0;

	p[P_GPU] = sub0(Y->wall, Y->preempted + thr_y) + sub0(C->wall, C->preempted);
	p[P_API] = sub0(K->wall, K->preempted + thr_k) + sub0(A->wall, A->preempted);
	p[P_CPRE] = Y->preempted + C->preempted + K->preempted + A->preempted;
	p[P_HOST] = H->cpu + L->cpu + S->cpu + res->cpu;
	p[P_PRE] = H->preempted + L->preempted + I->preempted + S->preempted + res->preempted;
	p[P_FILE] = I->cpu + acct_off(I);
	p[P_TASK] = acct_off(L);
	p[P_SLEEP] = acct_off(S);
	if (under_quota)
		p[P_THR] = acct_off(H) + acct_off(res) + thr_y + thr_k;
	else
		p[P_UNK] = acct_off(H) + acct_off(res);
	mech_parts(p);
	/* The kernel may count the wait of a throttled task as run-queue wait
	 * (Linux 6.18 here does): with nothing else on its CPU, all of it is
	 * the quota's. */
	if (under_quota && !opt.hogs && !opt.own_hogs) {
		p[P_THR] += p[P_PRE] + p[P_CPRE];
		p[P_PRE] = p[P_CPRE] = 0;
	}
	fprintf(f, "  \"parts\": {");
	for (int i = 0; i < P_N; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", part_names[i], p[i]);
	fprintf(f, "},\n");
}

static void json_helpers(FILE *f)
{
	fprintf(f, "  \"helpers\": [");
	for (int i = 0; i < nhelpers; i++) {
		fprintf(f, "%s{\"pid\": %d, \"comm\": ", i ? ", " : "", (int)helpers[i].pid);
		json_str(f, helpers[i].comm);
		fprintf(f, ", \"role\": \"%s\", \"cpu\": %d, \"thread\": %s}", helpers[i].role,
			helpers[i].cpu, helpers[i].thread ? "true" : "false");
	}
	fprintf(f, "]\n");
}

static void json_causes(FILE *f, u64 wall)
{
	fprintf(f,
		"  \"gpu\": {\"work_ns\": %llu, \"kernels\": %ld, \"kernel_ns\": %llu, "
		"\"syncs\": %ld, \"syncs_per_s\": %.3f, \"busy_share\": %.6f, \"idle_ns\": %llu, "
		"\"copies\": %ld, \"copy_bytes\": %llu},\n",
		run.gpu_work_ns, run.kernels, run.kernel_ns, run.syncs,
		wall ? (double)run.syncs * 1e9 / (double)wall : 0.0,
		wall ? (double)run.gpu_work_ns / (double)wall : 0.0, sub0(wall, run.gpu_work_ns),
		run.copies, run.copy_bytes);
	fprintf(f,
		"  \"loader\": {\"workers\": %d, \"period_ms\": %g, \"busy_pct\": %g, "
		"\"prefetch\": %d, \"batches\": %ld},\n",
		opt.loaders, opt.loader_ms, opt.loader_busy, opt.prefetch, run.batches);
	const char *io[][2] = {{"file", run.io_path},  {"dev", iodev.dev},
			       {"disk", iodev.disk},   {"fs", iodev.fs},
			       {"mount", iodev.mount}, {"source", iodev.source}};
	fprintf(f, "  \"io\": {\"writes\": %ld, \"bytes\": %llu, \"us\": %g", run.io_writes,
		run.io_bytes, opt.io_us);
	for (int i = 0; i < 6; i++) {
		fprintf(f, ", \"%s\": ", io[i][0]);
		json_str(f, io[i][1]);
	}
	fprintf(f, "},\n");
	fprintf(f,
		"  \"hogs\": {\"count\": %d, \"nice\": %d, \"cpu\": %d},\n"
		"  \"alloc\": {\"count\": %ld, \"us\": %g, \"every\": %ld, \"bytes\": %zu},\n"
		"  \"host_us\": %g, \"sleep_us\": %g,\n",
		opt.hogs, opt.hog_nice, opt.cpu, run.allocs, opt.alloc_us, opt.alloc_every,
		opt.alloc_bytes, opt.host_us, opt.sleep_us);
}

static void write_truth(const struct mark *b, const struct mark *e, u64 setup_ns, int argc,
			char **argv)
{
	char tmp[PATH_MAX];
	struct acct res = residue;
	u64 wall = e->wall - b->wall;
	FILE *f = stdout;

	acct_clip(&res);
	for (int i = 0; i < PH_N; i++)
		acct_clip(&ph[i]);
	if (opt.truth) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", opt.truth);
		f = fopen(tmp, "w");
		if (!f)
			die(tmp);
	}
	fprintf(f, "{\n  \"generator\": \"causegen\", \"format\": 1,\n  \"argv\": [");
	for (int i = 0; i < argc; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, argv[i]);
	}
	fprintf(f, "],\n");
	fprintf(f,
		"  \"pid\": %d, \"tid\": %d, \"comm\": \"causegen\", \"cpu\": %d, "
		"\"helper_cpu\": %d,\n"
		"  \"steps\": %ld, \"wall_ns\": %llu, \"start_ns\": %llu, \"end_ns\": %llu, "
		"\"setup_ns\": %llu,\n",
		(int)getpid(), (int)syscall(SYS_gettid), opt.cpu, opt.helper_cpu, run.step, wall,
		b->wall, e->wall, setup_ns);
	fprintf(f, "  \"phases\": {\n");
	for (int i = 0; i < PH_N; i++)
		json_acct(f, phase_names[i], &ph[i], i == PH_N - 1);
	fprintf(f, "  },\n");
	fprintf(f,
		"  \"residue\": {\"wall_ns\": %llu, \"cpu_ns\": %llu, \"preempted_ns\": %llu, "
		"\"off_ns\": %llu, \"share\": %.6f},\n",
		res.wall, res.cpu, res.preempted, acct_off(&res),
		wall ? (double)res.wall / (double)wall : 0.0);
	fprintf(f, "  \"total\": {\"cpu_ns\": %llu, \"preempted_ns\": %llu, \"off_ns\": %llu},\n",
		e->cpu - b->cpu, e->rq - b->rq, sub0(wall, e->cpu - b->cpu + e->rq - b->rq));
	json_parts(f, &res);
	json_causes(f, wall);
	mech_json(f, mech_acct, mech_post_acct, mech_psi);
	fprintf(f,
		"  \"quota\": {\"pct\": %d, \"v2\": %d, \"throttled_ns\": %llu, \"nr_throttled\": "
		"%llu, \"nr_periods\": %llu, \"burners\": %d, \"path\": ",
		quota.pct, quota.v2, sub0(quota_end[0], quota.throttled_ns),
		sub0(quota_end[1], quota.nr_throttled), sub0(quota_end[2], quota.nr_periods),
		opt.quota_burners);
	json_str(f, quota.path);
	fprintf(f, "},\n  \"mem_limit_mb\": %d, \"own_hogs\": %d, \"launch_blocking\": %d,\n",
		opt.mem_limit, opt.own_hogs, opt.launch_blocking);
	json_helpers(f);
	fprintf(f, "}\n");
	if (opt.truth) {
		if (fclose(f) || rename(tmp, opt.truth))
			die(opt.truth);
	} else {
		fflush(f);
	}
}

/* ---- options ---------------------------------------------------------------- */

enum { T_DBL, T_LONG, T_INT, T_SIZE, T_STR };
static const struct optdef {
	const char *name;
	int type;
	void *ptr;
	double min, max, def; /* def: the default (below min: unset) */
} defs[] = {
    {"seconds", T_DBL, &opt.seconds, 0, 86400, 5},
    {"steps", T_LONG, &opt.steps, 0, 1e9, 0},
    {"truth", T_STR, &opt.truth, 0, 0, 0},
    {"kernels", T_LONG, &opt.kernels, 0, 1e6, 1},
    {"kernel-us", T_DBL, &opt.kernel_us, 0, 1e7, 1000},
    {"syncs", T_LONG, &opt.syncs, 1, CG_MAX_SYNCS, 1},
    {"sync-mode", T_STR, &opt.sync_mode, 0, 0, 0},
    {"h2d", T_SIZE, &opt.h2d, 0, 1 << 30, 0},
    {"host-us", T_DBL, &opt.host_us, 0, 1e7, 0},
    {"loaders", T_INT, &opt.loaders, 0, CG_MAX_HELPERS, 0},
    {"loader-ms", T_DBL, &opt.loader_ms, 0.01, 1e5, 10},
    {"loader-busy", T_DBL, &opt.loader_busy, 0, 100, 0},
    {"prefetch", T_INT, &opt.prefetch, 1, 64, 2},
    {"io-writes", T_LONG, &opt.io_writes, 0, 1e5, 0},
    {"io-us", T_DBL, &opt.io_us, 0, 1e7, 0},
    {"io-bytes", T_SIZE, &opt.io_bytes, 1, 1 << 28, 4096},
    {"io-every", T_LONG, &opt.io_every, 1, 1e9, 1},
    {"dir", T_STR, &opt.dir, 0, 0, 0},
    {"hogs", T_INT, &opt.hogs, 0, CG_MAX_HELPERS, 0},
    {"hog-nice", T_INT, &opt.hog_nice, -20, 19, 0},
    {"sleep-us", T_DBL, &opt.sleep_us, 0, 1e7, 0},
    {"allocs", T_LONG, &opt.allocs, 0, 1e5, 0},
    {"alloc-us", T_DBL, &opt.alloc_us, 0, 1e7, 20},
    {"alloc-every", T_LONG, &opt.alloc_every, 1, 1e9, 1},
    {"alloc-bytes", T_SIZE, &opt.alloc_bytes, 1, 1 << 30, 1 << 20},
    {"cpu", T_INT, &opt.cpu, 0, CPU_SETSIZE - 1, -1},
    {"helper-cpu", T_INT, &opt.helper_cpu, 0, CPU_SETSIZE - 1, -1},
    {"cpu-quota", T_INT, &opt.cpu_quota, 1, 10000, 0},
    {"quota-burners", T_INT, &opt.quota_burners, 0, CG_MAX_HELPERS, 0},
    {"own-hogs", T_INT, &opt.own_hogs, 0, CG_MAX_HELPERS, 0},
    {"mem-limit", T_INT, &opt.mem_limit, 16, 1 << 20, 0},
    {"launch-blocking", T_INT, &opt.launch_blocking, 0, 1, 0},
    {"mech", T_STR, NULL, 0, 0, 0}, /* repeated: opt.mech[] */
};
#define NDEFS (int)(sizeof(defs) / sizeof(defs[0]))

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: causegen [--seconds S | --steps N] [--truth FILE]\n"
	       "  GPU:     [--kernels K] [--kernel-us U] [--syncs S]\n"
	       "           [--sync-mode auto|block|spin|yield] [--h2d BYTES]\n"
	       "  host:    [--host-us U]  loader: [--loaders N --loader-ms MS [--loader-busy PCT]\n"
	       "           [--prefetch N]]  disk: [--io-writes N --io-bytes B [--io-every M] --dir "
	       "DIR]\n"
	       "  hogs:    [--hogs N [--hog-nice N]]\n"
	       "  sleep:   [--sleep-us U]\n"
	       "  alloc:   [--allocs N [--alloc-us U] [--alloc-every M] [--alloc-bytes B]]\n"
	       "  waits:   [--mech NAME:US]... (lock-mutex, input-unix, file-fsync, ...: mech.c)\n"
	       "  cgroups: [--cpu-quota PCT [--quota-burners N]] [--mem-limit MB]\n"
	       "  threads: [--own-hogs N]   (busy threads of its own on its CPU)\n"
	       "  CPUs:    [--cpu N] [--helper-cpu N]   (tests/sweep/README.md)\n"
	       "  env:     [--launch-blocking 1]   (sets CUDA_LAUNCH_BLOCKING=1 at start)\n");
}

static void set_num(const struct optdef *d, double v)
{
	if (d->type == T_DBL)
		*(double *)d->ptr = v;
	else if (d->type == T_LONG)
		*(long *)d->ptr = (long)v;
	else if (d->type == T_INT)
		*(int *)d->ptr = (int)v;
	else if (d->type == T_SIZE)
		*(size_t *)d->ptr = (size_t)v;
}

static int set_opt(const struct optdef *d, const char *arg)
{
	char *end;
	double v;

	if (d->type == T_STR) {
		*(const char **)d->ptr = arg;
		return 0;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v < d->min || v > d->max ||
	    (d->type != T_DBL && v != (double)(long long)v)) {
		fprintf(stderr, "causegen: bad --%s %s (want %g..%g)\n", d->name, arg, d->min,
			d->max);
		return -1;
	}
	set_num(d, v);
	return 0;
}

static int parse(int argc, char **argv)
{
	struct option lo[NDEFS + 2];
	int c;

	for (int i = 0; i < NDEFS; i++) {
		if (defs[i].ptr)
			set_num(&defs[i], defs[i].def);
		lo[i] = (struct option){defs[i].name, required_argument, NULL, 256 + i};
	}
	lo[NDEFS] = (struct option){"help", no_argument, NULL, 'h'};
	lo[NDEFS + 1] = (struct option){NULL, 0, NULL, 0};
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c >= 256 && !defs[c - 256].ptr) { /* --mech, repeated */
			if (opt.nmech == CG_MAX_MECHS) {
				fprintf(stderr, "causegen: at most %d --mech\n", CG_MAX_MECHS);
				return -1;
			}
			opt.mech[opt.nmech++] = optarg;
			continue;
		}
		if (c < 256 || set_opt(&defs[c - 256], optarg)) {
			if (c < 256)
				usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "causegen: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (opt.steps <= 0 && opt.seconds <= 0) {
		fprintf(stderr, "causegen: --seconds or --steps must be > 0\n");
		return -1;
	}
	if (io_on() && !opt.dir) {
		fprintf(stderr, "causegen: --io-writes and --io-us need --dir\n");
		return -1;
	}
	if (opt.sync_mode && strcmp(opt.sync_mode, "auto") && strcmp(opt.sync_mode, "block") &&
	    strcmp(opt.sync_mode, "spin") && strcmp(opt.sync_mode, "yield")) {
		fprintf(stderr, "causegen: bad --sync-mode %s\n", opt.sync_mode);
		return -1;
	}
	return 0;
}

/* The CPU quota and the memory limit, before the helpers start: they
 * inherit them. */

static void setup_cgroups(void)
{
	int r;
	if (opt.cpu_quota && (r = cgroup_cpu_quota(&quota, opt.cpu_quota))) {
		fprintf(stderr, "causegen: cannot set a CPU quota: %s\n", strerror(-r));
		exit(2);
	}
	if (opt.mem_limit && (r = cgroup_mem_limit(opt.mem_limit, memcg, sizeof(memcg)))) {
		fprintf(stderr, "causegen: cannot set a memory limit: %s\n", strerror(-r));
		cgroup_leave();
		exit(2);
	}
}

/* The feeder's CPU: --cpu, else the highest allowed one; helpers (loaders)
 * on --helper-cpu, else the lowest allowed one that is not the feeder's.
 * CPUs given explicitly are only checked by pinning to them (a runner that
 * pins itself elsewhere passes them). */
static void choose_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (int i = CPU_SETSIZE - 1; i >= 0 && opt.cpu < 0; i--)
		if (CPU_ISSET(i, &set))
			opt.cpu = i;
	for (int i = 0; i < CPU_SETSIZE && opt.helper_cpu < 0; i++)
		if (CPU_ISSET(i, &set) && i != opt.cpu)
			opt.helper_cpu = i;
	if (opt.helper_cpu < 0)
		opt.helper_cpu = opt.cpu;
}

static void setup_io(void)
{
	snprintf(run.io_path, sizeof(run.io_path), "%s/causegen-%d.bin", opt.dir, (int)getpid());
	run.io_fd = open(run.io_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (run.io_fd < 0)
		die(run.io_path);
	run.iobuf = malloc(opt.io_bytes);
	if (!run.iobuf)
		die("malloc");
	memset(run.iobuf, 0x5a, opt.io_bytes);
	/* allocate the blocks now: the steps then overwrite, without metadata */
	if (pwrite(run.io_fd, run.iobuf, opt.io_bytes, 0) != (ssize_t)opt.io_bytes ||
	    fsync(run.io_fd))
		die(run.io_path);
}

static void setup_cuda(void)
{
	check(cudaStreamCreate(&run.stream), "cudaStreamCreate");
	check(cudaMalloc(&run.dbuf, 4096), "cudaMalloc");
	if (opt.h2d) {
		run.hcopy = calloc(1, opt.h2d);
		if (!run.hcopy)
			die("calloc");
		check(cudaMalloc(&run.dcopy, opt.h2d), "cudaMalloc");
	}
	run.kernel_ns = (u64)(opt.kernel_us * 1e3);
	shimSetKernelTime(run.kernel_ns);
	shimSetThreadMallocTime((u64)(opt.alloc_us * 1e3));
}

int main(int argc, char **argv)
{
	u64 t0 = clock_ns(CLOCK_MONOTONIC), end;
	struct mark b, e;

	if (parse(argc, argv))
		return 2;
	choose_cpus();
	if (opt.sync_mode) /* read by the shim at the first CUDA call */
		setenv("SHIM_SYNC", opt.sync_mode, 1);
	if (opt.launch_blocking) /* as a program's own setenv (os.environ) does */
		setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (schedstat_fd < 0)
		die("/proc/thread-self/schedstat");
	if (opt.dir) {
		find_device(opt.dir);
		if (io_on())
			setup_io();
	}
	signal(SIGPIPE, SIG_IGN);
	setup_cgroups();
	start_loaders();
	start_hogs();
	start_burners();
	pin(opt.cpu);
	for (int i = 0; i < opt.own_hogs; i++)
		helper_thread("ownhog", i, opt.cpu, own_hog_main, NULL);
	setup_cuda();
	struct cg_env env = {opt.cpu, opt.helper_cpu, opt.dir, opt.mem_limit};
	for (int i = 0; i < opt.nmech; i++)
		if (mech_add(opt.mech[i], &env)) {
			stop_helpers();
			mech_stop_all();
			cgroup_leave();
			return 2;
		}

	mark_now(&b);
	last = b;
	end = b.wall + (u64)(opt.seconds * 1e9);
	while (opt.steps > 0 ? run.step < opt.steps : clock_ns(CLOCK_MONOTONIC) < end)
		step();
	mark_now(&e);
	acct_add(&residue, &last, &e);

	if (quota.pct)
		cgroup_cpu_stat(&quota, &quota_end[0], &quota_end[1], &quota_end[2]);
	stop_helpers();
	mech_stop_all();
	cgroup_leave();
	if (opt.h2d)
		check(cudaFree(run.dcopy), "cudaFree");
	check(cudaFree(run.dbuf), "cudaFree");
	check(cudaStreamDestroy(run.stream), "cudaStreamDestroy");
	if (io_on()) {
		close(run.io_fd);
		unlink(run.io_path);
	}
	write_truth(&b, &e, b.wall - t0, argc, argv);
	fprintf(stderr, "causegen: pid=%d steps=%ld wall_s=%.3f step_ms=%.3f\n", (int)getpid(),
		run.step, (double)(e.wall - b.wall) / 1e9,
		run.step ? (double)(e.wall - b.wall) / 1e6 / (double)run.step : 0.0);
	free(run.hcopy);
	free(run.iobuf);
	return 0;
}
