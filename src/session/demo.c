/* Demo scenarios: the table of scenarios (which programs, with which flags,
 * pinned where) and the processes of one run: started stopped before their
 * first CUDA call, released once the probes are attached, stopped and reaped
 * as process groups. The programs live next to the ingero-top binary
 * (build/workload, build/tests/progs/...). See docs/scenarios.md. */
#include "session/demo.h"
#include "core/log.h"
#include "core/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEMO_MAX_PROCS 4
#define DEMO_MAX_ARGS 32
#define DEMO_MAX_ENV 4
#define DEMO_READY_MS 5000 /* a traced program must say "ready PID" within this */
#define DEMO_TERM_MS 1000  /* SIGTERM, then SIGKILL after this */

enum demo_role {
	DR_MAIN = 1,   /* traced; the scenario is done when it exits */
	DR_TRACED = 2, /* traced; waits for the release like the main process */
	DR_HELPER = 3, /* not traced (CPU hogs...): started at the release */
};

struct demo_prog {
	enum demo_role role;
	const char *exe;		 /* relative to the directory of ingero-top */
	const char *argv[DEMO_MAX_ARGS]; /* after argv[0]; "@CPU", "@CPU2", "@DIR" substituted */
};

struct demo_scn {
	const char *name;
	const char *env[DEMO_MAX_ENV]; /* NAME=VALUE for every program of the scenario */
	int need_dir;		       /* a scratch directory on a disk (@DIR) */
	struct demo_prog prog[DEMO_MAX_PROCS];
};

/*
 * The scenarios. Each lasts about 10 s on a 2-core VM with the probes
 * attached (bounded by --iters or --seconds, never by the tracer), and its
 * processes are pinned so that the root cause does not depend on where the
 * scheduler happens to put them: @CPU is the highest CPU ingero-top may use
 * (CPU 1 on a 2-core host), @CPU2 the lowest (demo_pick_cpus). Why each is
 * built this way, and what ingero-top must
 * say about it: docs/scenarios.md.
 */
/* clang-format off */
static const struct demo_scn demo_scns[] = {
	{
		.name = "cpu-contention",
		/* A launch-bound step: 10 launches of 0.5 ms of host CPU each (the
		 * dispatch work of an eager framework, inside the CUDA call), then
		 * a sync. A hog shares the core: the launches are preempted. */
		.env = { "SHIM_LAUNCH_US=500" },
		.prog = {
			{ DR_MAIN, "workload", { "--wait-signal", "--cpu", "@CPU", "--iters", "1000",
				"--kernels", "10", "--kernel-us", "100", "--sync-every", "1", NULL } },
			{ DR_HELPER, "tests/progs/hog", { "--cpu", "@CPU", "--seconds", "30", NULL } },
		},
	},
	{
		.name = "gpu-bound",
		.prog = {
			{ DR_MAIN, "tests/progs/trainer", { "--wait-signal", "--cpu", "@CPU",
				"--seconds", "10", "--kernels", "4", "--kernel-us", "5000",
				"--h2d", "1048576", "--long-every", "10", "--long-x", "6", NULL } },
		},
	},
	{
		.name = "dataloader",
		.prog = {
			{ DR_MAIN, "tests/progs/dataloader", { "--wait-signal", "--cpu", "@CPU",
				"--worker-cpu", "@CPU2", "--workers", "3", "--seconds", "10",
				NULL } },
		},
	},
	{
		.name = "hidden-sync",
		.prog = {
			{ DR_MAIN, "workload", { "--wait-signal", "--cpu", "@CPU", "--iters", "250000",
				"--kernels", "1", "--kernel-us", "5", "--d2h", "4",
				"--sync-every", "1", NULL } },
		},
	},
	{
		.name = "memcpy",
		.prog = {
			{ DR_MAIN, "workload", { "--wait-signal", "--cpu", "@CPU", "--iters", "500",
				"--kernels", "1", "--kernel-us", "2000", "--h2d", "268435456",
				"--sync-every", "1", NULL } },
		},
	},
	{
		.name = "alloc-spike",
		.prog = {
			{ DR_MAIN, "workload", { "--wait-signal", "--cpu", "@CPU", "--iters", "500",
				"--kernels", "4", "--kernel-us", "5000", "--sync-every", "1",
				"--malloc-every", "1", "--slow-malloc-every", "50",
				"--slow-malloc-us", "40000", NULL } },
		},
	},
	{
		.name = "io-stall",
		.need_dir = 1,
		.prog = {
			{ DR_MAIN, "tests/progs/trainer", { "--wait-signal", "--cpu", "@CPU",
				"--seconds", "10", "--kernels", "2", "--kernel-us", "8000",
				"--h2d", "1048576", "--ckpt-every", "2", "--ckpt-bytes",
				"16777216", "--ckpt-shards", "4", "--dir", "@DIR", NULL } },
		},
	},
	{
		.name = "cold-start",
		/* The first five launches take 300 ms (module loading); then a
		 * steady loop that reads the loss (syncs) every 20 steps. It ends
		 * (8.5 s) before the slow calls leave the 10 s window, after which
		 * the cold start is history and its chain resolves. Launches cost
		 * 50 us (eager dispatch), so that µs jitter makes no tail of them. */
		.env = { "SHIM_LAUNCH_US=50" },
		.prog = {
			{ DR_MAIN, "workload", { "--wait-signal", "--cpu", "@CPU", "--iters", "700",
				"--kernels", "4", "--kernel-us", "2500", "--sync-every", "20",
				"--warmup-slow", "5", "--warmup-us", "300000", NULL } },
		},
	},
};
/* clang-format on */

#define DEMO_NSCN (sizeof(demo_scns) / sizeof(demo_scns[0]))

struct demo_proc {
	pid_t pid;
	enum demo_role role;
	int out_fd; /* its stdout ("ready PID"), kept open so it never gets SIGPIPE */
	int exited;
	int status;
	char *argv[DEMO_MAX_ARGS + 2];
};

struct demo_run {
	const struct demo_scn *scn;
	int nproc;
	struct demo_proc proc[DEMO_MAX_PROCS];
	char dir[PATH_MAX]; /* scratch directory, "" when none */
	char cpu[12], cpu2[12];
	int released;
};

const char *const *demo_names(void)
{
	static const char *names[DEMO_NSCN + 1];

	if (!names[0])
		for (size_t i = 0; i < DEMO_NSCN; i++)
			names[i] = demo_scns[i].name;
	return names;
}

static const struct demo_scn *demo_find(const char *name)
{
	for (size_t i = 0; i < DEMO_NSCN; i++)
		if (!strcmp(demo_scns[i].name, name))
			return &demo_scns[i];
	return NULL;
}

/* Directory of the running binary, "" when /proc/self/exe cannot be read. */
static void demo_bindir(char *out, size_t n)
{
	char exe[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	out[0] = 0;
	if (l <= 0)
		return;
	exe[l] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(out, n, "%s", exe[0] ? exe : "/");
}

/* Where the scenario's programs are: beside the binary (the build tree:
 * build/workload, build/tests/progs/...), or where `make install` put them
 * (PREFIX/bin/ingero-top -> PREFIX/libexec/ingero-top/). Returns 0 with the
 * directory in dir, or -1 with a one-line reason in err. */
static int demo_progdir(const struct demo_scn *s, char *dir, size_t n, char *err,
			size_t errlen)
{
	char bindir[PATH_MAX], path[PATH_MAX + 64], first[PATH_MAX + 64] = "";
	int e = 0;

	demo_bindir(bindir, sizeof(bindir));
	if (!bindir[0]) {
		snprintf(err, errlen, "demo: cannot find the directory of ingero-top: %s",
			 strerror(errno));
		return -1;
	}
	for (int where = 0; where < 2; where++) {
		snprintf(dir, n, where ? "%s/../libexec/ingero-top" : "%s", bindir);
		int i;
		for (i = 0; i < DEMO_MAX_PROCS && s->prog[i].exe; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, s->prog[i].exe);
			if (access(path, X_OK))
				break;
		}
		if (i == DEMO_MAX_PROCS || !s->prog[i].exe)
			return 0;
		if (!where) {
			e = errno;
			snprintf(first, sizeof(first), "%s", path);
		}
	}
	snprintf(err, errlen,
		 "demo %s needs %s (%s); build it with 'make test-build' or install it with "
		 "'make install'",
		 s->name, first, strerror(e));
	return -1;
}

static long demo_ms(void)
{
	return (long)ig_mono_ms();
}

static void demo_free_argv(struct demo_proc *p)
{
	for (int i = 0; p->argv[i]; i++)
		free(p->argv[i]);
	memset(p->argv, 0, sizeof(p->argv));
}

/* The CPUs of @CPU and @CPU2, from the set this process may use (a container
 * or a taskset may exclude CPU 0 or 1): @CPU the highest allowed CPU, @CPU2
 * the lowest (the same on one CPU). INGERO_DEMO_CPUS="A,B" sets them, for a
 * caller that pins ingero-top itself away from them (the tests). */
static void demo_pick_cpus(int *cpu, int *cpu2)
{
	const char *env = getenv("INGERO_DEMO_CPUS");
	cpu_set_t set;
	int a, b;
	char tail;

	if (env && sscanf(env, "%d,%d%c", &a, &b, &tail) == 2 && a >= 0 && b >= 0 &&
	    a < CPU_SETSIZE && b < CPU_SETSIZE) {
		*cpu = a;
		*cpu2 = b;
		return;
	}
	*cpu = *cpu2 = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	int lo = -1, hi = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			if (lo < 0)
				lo = i;
			hi = i;
		}
	if (lo >= 0) {
		*cpu = hi;
		*cpu2 = lo;
	}
}

/* INGERO_DEMO_SCALE (0.05..4, default 1) shortens or lengthens every
 * scenario: the values of --iters and --seconds are multiplied by it.
 * `make scenarios` uses it to give the shipped recordings 20 s of activity
 * (and to keep the busiest one small); docs/scenarios.md. */
static double demo_scale(void)
{
	const char *s = getenv("INGERO_DEMO_SCALE");
	char *end;
	double f = s && *s ? strtod(s, &end) : 1;

	if (!s || !*s || *end || !(f >= 0.05 && f <= 4))
		return 1;
	return f;
}

static int demo_build_argv(struct demo_run *d, struct demo_proc *p, const struct demo_prog *g,
			   const char *path)
{
	double scale = demo_scale();
	char num[32];
	int n = 0;

	p->argv[n++] = strdup(path);
	for (int i = 0; g->argv[i] && n < DEMO_MAX_ARGS + 1; i++) {
		const char *a = g->argv[i];
		if (!strcmp(a, "@CPU"))
			a = d->cpu;
		else if (!strcmp(a, "@CPU2"))
			a = d->cpu2;
		else if (!strcmp(a, "@DIR"))
			a = d->dir;
		else if (i > 0 && scale != 1 &&
			 (!strcmp(g->argv[i - 1], "--iters") ||
			  !strcmp(g->argv[i - 1], "--seconds"))) {
			double v = atof(a) * scale;
			snprintf(num, sizeof(num), "%.0f", v < 1 ? 1 : v);
			a = num;
		}
		p->argv[n++] = strdup(a);
	}
	p->argv[n] = NULL;
	for (int i = 0; i < n; i++)
		if (!p->argv[i])
			return -ENOMEM;
	return 0;
}

/* The environment of the scenario's programs: ours plus the scenario's. */
static char **demo_envp(const struct demo_scn *s)
{
	extern char **environ;
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	char **env = calloc(n + DEMO_MAX_ENV + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int overridden = 0;
		for (int j = 0; j < DEMO_MAX_ENV && s->env[j]; j++) {
			size_t l = strcspn(s->env[j], "=");
			if (!strncmp(environ[i], s->env[j], l) && environ[i][l] == '=')
				overridden = 1;
		}
		if (!overridden)
			env[k++] = environ[i];
	}
	for (int j = 0; j < DEMO_MAX_ENV && s->env[j]; j++)
		env[k++] = (char *)s->env[j];
	env[k] = NULL;
	return env;
}

/* Forks and executes one program in its own process group, stdin from
 * /dev/null, stdout into a pipe (for "ready PID"), stderr inherited when it
 * is not a terminal (batch logs keep the programs' summary lines) and
 * /dev/null under the full-screen viewer. */
static int demo_spawn(struct demo_proc *p, char **envp)
{
	int out[2];

	if (pipe2(out, O_CLOEXEC))
		return -errno;
	int quiet = isatty(2);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(out[0]);
		close(out[1]);
		return -e;
	}
	if (pid == 0) {
		sigset_t none;
		int nul = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		/* Die with ingero-top: a demo must not outlive the viewer. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		signal(SIGPIPE, SIG_DFL); /* ignored dispositions survive exec */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (nul >= 0) {
			dup2(nul, 0);
			if (quiet)
				dup2(nul, 2);
		}
		dup2(out[1], 1);
		execve(p->argv[0], p->argv, envp);
		dprintf(2, "ingero-top: demo: cannot run %s: %s\n", p->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no race with the kill in demo_stop */
	close(out[1]);
	p->pid = pid;
	p->out_fd = out[0];
	return 0;
}

/* Waits for "ready PID" on the program's stdout: it has mapped the CUDA
 * libraries and waits for SIGUSR1. */
static int demo_wait_ready(struct demo_proc *p, char *err, size_t errlen)
{
	char buf[64];
	size_t n = 0;
	long end = demo_ms() + DEMO_READY_MS;

	while (n < sizeof(buf) - 1) {
		struct pollfd pf = {.fd = p->out_fd, .events = POLLIN};
		long left = end - demo_ms();
		if (left <= 0) {
			snprintf(err, errlen, "%s did not get ready within %d ms", p->argv[0],
				 DEMO_READY_MS);
			return -ETIMEDOUT;
		}
		int r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t k = read(p->out_fd, buf + n, sizeof(buf) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "%s exited before it was ready", p->argv[0]);
			return -ECHILD;
		}
		n += (size_t)k;
		buf[n] = 0;
		int pid;
		if (strchr(buf, '\n') && sscanf(buf, "ready %d", &pid) == 1 && pid == p->pid)
			return 0;
		if (strchr(buf, '\n')) {
			snprintf(err, errlen, "%s said \"%.*s\" instead of \"ready %d\"",
				 p->argv[0], (int)strcspn(buf, "\n"), buf, (int)p->pid);
			return -EPROTO;
		}
	}
	snprintf(err, errlen, "%s: unexpected output", p->argv[0]);
	return -EPROTO;
}

struct demo_run *demo_start(const char *name, char *err, size_t errlen)
{
	const struct demo_scn *s = demo_find(name);
	char bindir[PATH_MAX], path[PATH_MAX + 64];

	if (!s) {
		size_t o =
		    (size_t)snprintf(err, errlen, "unknown demo scenario \"%s\"; known:", name);
		for (size_t i = 0; i < DEMO_NSCN && o < errlen; i++)
			o += (size_t)snprintf(err + o, errlen - o, " %s", demo_scns[i].name);
		return NULL;
	}
	if (demo_progdir(s, bindir, sizeof(bindir), err, errlen))
		return NULL;

	struct demo_run *d = calloc(1, sizeof(*d));
	char **envp = demo_envp(s);
	if (!d || !envp) {
		snprintf(err, errlen, "out of memory");
		free(d);
		free(envp);
		return NULL;
	}
	d->scn = s;
	int cpu, cpu2;
	demo_pick_cpus(&cpu, &cpu2);
	snprintf(d->cpu, sizeof(d->cpu), "%d", cpu);
	snprintf(d->cpu2, sizeof(d->cpu2), "%d", cpu2);
	if (s->need_dir) {
		/* /var/tmp, not /tmp: /tmp is often a tmpfs, and the I/O must reach a
		 * disk. TMPDIR wins when set. */
		const char *base = getenv("TMPDIR");
		snprintf(d->dir, sizeof(d->dir), "%s/ingero-demo.XXXXXX",
			 base && *base ? base : "/var/tmp");
		if (!mkdtemp(d->dir)) {
			snprintf(err, errlen, "demo: cannot create a directory in %s: %s",
				 base && *base ? base : "/var/tmp", strerror(errno));
			d->dir[0] = 0;
			goto fail;
		}
	}
	for (int i = 0; i < DEMO_MAX_PROCS && s->prog[i].exe; i++) {
		struct demo_proc *p = &d->proc[d->nproc];
		p->role = s->prog[i].role;
		p->out_fd = -1;
		snprintf(path, sizeof(path), "%s/%s", bindir, s->prog[i].exe);
		if (demo_build_argv(d, p, &s->prog[i], path)) {
			snprintf(err, errlen, "out of memory");
			d->nproc++;
			goto fail;
		}
		d->nproc++;
		if (p->role == DR_HELPER)
			continue; /* started at the release */
		int r = demo_spawn(p, envp);
		if (r) {
			snprintf(err, errlen, "demo: cannot start %s: %s", path, strerror(-r));
			goto fail;
		}
		if (demo_wait_ready(p, err, errlen))
			goto fail;
		log_msg(LOG_INFO, "demo %s: %s[%d] traced%s", s->name, s->prog[i].exe, (int)p->pid,
			p->role == DR_MAIN ? " (main)" : "");
	}
	free(envp);
	return d;
fail:
	free(envp);
	demo_stop(d);
	return NULL;
}

int demo_pids(const struct demo_run *d, int *pids, int max)
{
	int n = 0;

	for (int i = 0; d && i < d->nproc && n < max; i++)
		if (d->proc[i].role != DR_HELPER && d->proc[i].pid > 0)
			pids[n++] = d->proc[i].pid;
	return n;
}

void demo_release(struct demo_run *d)
{
	if (!d || d->released)
		return;
	d->released = 1;
	char **envp = demo_envp(d->scn);
	if (envp) {
		/* helpers first: a hog is running when the workload starts */
		for (int i = 0; i < d->nproc; i++) {
			struct demo_proc *p = &d->proc[i];
			if (p->role != DR_HELPER || p->pid)
				continue;
			int r = demo_spawn(p, envp);
			if (r) {
				log_msg(LOG_WARN, "demo %s: cannot start %s: %s", d->scn->name,
					p->argv[0], strerror(-r));
				p->pid = 0;
				continue;
			}
			log_msg(LOG_INFO, "demo %s: %s[%d] helper, not traced", d->scn->name,
				d->scn->prog[i].exe, (int)p->pid);
		}
		free(envp);
	}
	for (int i = 0; i < d->nproc; i++)
		if (d->proc[i].role != DR_HELPER && d->proc[i].pid > 0)
			kill(d->proc[i].pid, SIGUSR1);
}

static void demo_reap(struct demo_proc *p, int options)
{
	int status;

	if (p->pid <= 0 || p->exited)
		return;
	pid_t r;
	do
		r = waitpid(p->pid, &status, options);
	while (r < 0 && errno == EINTR);
	if (r == p->pid || (r < 0 && errno == ECHILD)) {
		p->exited = 1;
		p->status = r == p->pid ? status : 0;
	}
}

int demo_done(struct demo_run *d)
{
	if (!d)
		return 1;
	for (int i = 0; i < d->nproc; i++) {
		if (d->proc[i].role != DR_MAIN)
			continue;
		demo_reap(&d->proc[i], WNOHANG);
		return d->proc[i].exited;
	}
	return 1;
}

/* Removes the scratch directory and what the programs left in it. */
static void demo_rmdir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 256];

	if (dp) {
		while ((e = readdir(dp))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(dp);
	}
	rmdir(dir);
}

void demo_stop(struct demo_run *d)
{
	if (!d)
		return;
	/* The whole process group: workers forked by a program go too. */
	for (int i = 0; i < d->nproc; i++)
		if (d->proc[i].pid > 0)
			kill(-d->proc[i].pid, SIGTERM);
	long end = demo_ms() + DEMO_TERM_MS;
	for (;;) {
		int alive = 0;
		for (int i = 0; i < d->nproc; i++) {
			demo_reap(&d->proc[i], WNOHANG);
			alive += d->proc[i].pid > 0 && !d->proc[i].exited;
		}
		if (!alive || demo_ms() >= end)
			break;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < d->nproc; i++) {
		struct demo_proc *p = &d->proc[i];
		if (p->pid > 0) {
			kill(-p->pid,
			     SIGKILL); /* stragglers in the group, even if the leader is gone */
			demo_reap(p, 0);
		}
		if (p->out_fd >= 0)
			close(p->out_fd);
		demo_free_argv(p);
	}
	if (d->dir[0])
		demo_rmdir(d->dir);
	free(d);
}

const char *demo_recording(const char *name)
{
	static char path[PATH_MAX + 128];
	char bindir[PATH_MAX];

	if (!demo_find(name))
		return NULL;
	demo_bindir(bindir, sizeof(bindir));
	if (!bindir[0])
		return NULL;
	/* build/ingero-top -> tests/scenarios/ of the source tree; installed:
	 * PREFIX/share/ingero-top/scenarios/ */
	snprintf(path, sizeof(path), "%s/../tests/scenarios/%s.db", bindir, name);
	if (access(path, R_OK)) {
		snprintf(path, sizeof(path), "%s/../share/ingero-top/scenarios/%s.db", bindir,
			 name);
		if (access(path, R_OK))
			return NULL;
	}
	char *real = realpath(path, NULL);
	if (real) {
		snprintf(path, sizeof(path), "%s", real);
		free(real);
	}
	return path;
}
