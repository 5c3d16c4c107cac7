/* causegen's clocks, accounts, helpers (cg.h). */
#include "cg.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct helper helpers[2 * CG_MAX_HELPERS];
int nhelpers;

int schedstat_fd = -1;

u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Run-queue wait of this thread so far (ns). Exact when read by the thread
 * itself: a wait is added when the thread gets the CPU back. */
u64 runq_ns(void)
{
	char buf[128];
	unsigned long long run, wait;
	ssize_t n = pread(schedstat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

/* A preemption can fall between two of the three reads (a syscall's return
 * is where a pending reschedule happens, and reading the thread's CPU clock
 * updates its runtime, which is what finds an expired slice). The run-queue
 * wait is read first and last: equal, no wait ended in between, so the three
 * samples are one instant as far as preemption is concerned; a wait after
 * the last read falls wholly in the next interval. */
void mark_now(struct mark *m)
{
	u64 rq;

	do {
		rq = runq_ns();
		m->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		m->wall = clock_ns(CLOCK_MONOTONIC);
		m->rq = runq_ns();
	} while (m->rq != rq);
}

u64 sub0(u64 a, u64 b)
{
	return a > b ? a - b : 0;
}

void acct_add(struct acct *a, const struct mark *b, const struct mark *e)
{
	a->wall += e->wall - b->wall;
	a->cpu += e->cpu - b->cpu;
	a->preempted += e->rq - b->rq;
	a->n++;
}

u64 acct_off(const struct acct *a)
{
	return sub0(a->wall, a->cpu + a->preempted);
}

/* Every interval has cpu + preempted <= wall, so that off = the rest and the
 * parts add up to the wall time exactly. The two clocks are read a few ns
 * apart: a cpu delta may exceed the wall delta by that much. */
void acct_clip(struct acct *a)
{
	if (a->preempted > a->wall)
		a->preempted = a->wall;
	if (a->cpu > a->wall - a->preempted)
		a->cpu = a->wall - a->preempted;
}

void die(const char *what)
{
	fprintf(stderr, "causegen: %s: %s\n", what, strerror(errno));
	exit(1);
}

void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "causegen: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		exit(2);
	}
}

void spin_until(u64 deadline, clockid_t id)
{
	while (clock_ns(id) < deadline)
		for (volatile int i = 0; i < 200; i++)
			;
}

void sleep_until(u64 deadline)
{
	struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int io_full(int fd, void *buf, size_t n, int wr)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = wr ? write(fd, (const char *)buf + done, n - done)
			       : read(fd, (char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

pid_t spawn(const char *role, int idx, int cpu)
{
	struct helper *h = &helpers[nhelpers++];
	pid_t pid;

	snprintf(h->comm, sizeof(h->comm), "cg-%s-%d", role, idx);
	h->role = role;
	h->cpu = cpu;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_NAME, h->comm, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(0);
		pin(cpu);
	}
	h->pid = pid;
	return pid;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

struct thr_start {
	void *(*fn)(void *);
	void *arg;
	struct helper *h;
	atomic_int started;
};

static void *thr_main(void *a)
{
	struct thr_start *t = a;
	void *(*fn)(void *) = t->fn;
	void *arg = t->arg;
	prctl(PR_SET_NAME, t->h->comm, 0, 0, 0);
	pin(t->h->cpu);
	t->h->pid = (pid_t)syscall(SYS_gettid);
	atomic_store(&t->started, 1);
	return fn(arg);
}

void helper_thread(const char *role, int idx, int cpu, void *(*fn)(void *), void *arg)
{
	struct helper *h = &helpers[nhelpers++];
	struct thr_start t = {.fn = fn, .arg = arg, .h = h};
	pthread_t th;
	snprintf(h->comm, sizeof(h->comm), "cg-%s-%d", role, idx);
	h->role = role;
	h->cpu = cpu;
	h->thread = 1;
	if (pthread_create(&th, NULL, thr_main, &t))
		die("pthread_create");
	pthread_detach(th);
	while (!atomic_load(&t.started))
		usleep(100);
}
