/* causegen's mechanisms of the kernel's wait evidence (--mech NAME:US): each
 * makes the feeding thread wait, or work in the kernel, for about US per
 * step, in one way of its class, and is measured by the thread's own clocks
 * around it (causegen.c). tests/sweep/README.md lists them and the truth
 * each gives: the class of its off time (MR_OFF), of all its time
 * (MR_ALL), or the memory stall the kernel's PSI saw (MR_PSI).
 *
 * Helpers wait for a request word in shared memory and the feeder spins
 * until they answer, so that no wait but the mechanism's own is off the CPU. */
#include "cg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CHUNK (64u << 10)
#define FILE_MB 64

/* Per mechanism: the words the feeder and its helper share (fork-safe). */
struct shared {
	atomic_int req, ack;
};

struct mst {
	const struct mdef *d;
	u64 us;
	struct cg_env env;
	struct shared *sh;
	int fd[4];
	char *buf, *map;
	size_t len, pos;
	char path[256];
	int port;
	u64 steps, bytes, faults, majors;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_rwlock_t rw;
	timer_t timer; /* paced-sigwait, paced-sigsuspend */
	pid_t child;   /* cow-fork: the child that shares its pages */
	aio_context_t aio;   /* file-aio */
	struct uring *uring; /* file-uring */
	int flag;
};

struct mdef {
	const char *name, *cls; /* the class its truth counts in */
	int rule;		/* MR_* */
	const char *rest;	/* MR_PSI: the class of what PSI did not see */
	int (*setup)(struct mst *m);
	void (*main)(struct mst *m);
	void (*post)(struct mst *m); /* its clean-up, host work; NULL none */
};

static struct mst mech[CG_MAX_MECHS];
static int nmech;

static u64 now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The helper's side of a request: wait for it (polling, on its own CPU). */
static void helper_wait_req(struct shared *sh)
{
	while (!atomic_load(&sh->req))
		usleep(50);
	atomic_store(&sh->req, 0);
}

/* The feeder's side: ask, and spin until the helper has taken it. */
static void request(struct shared *sh)
{
	atomic_store(&sh->ack, 0);
	atomic_store(&sh->req, 1);
	while (!atomic_load(&sh->ack))
		;
}

static void *shared_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap shared");
	return p;
}

static int open_file(struct mst *m, const char *what, int flags)
{
	if (!m->env.dir) {
		fprintf(stderr, "causegen: --mech %s needs --dir\n", m->d->name);
		return -1;
	}
	snprintf(m->path, sizeof(m->path), "%s/causegen-%d-%s.bin", m->env.dir, (int)getpid(),
		 what);
	int fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0600);
	if (fd < 0)
		die(m->path);
	return fd;
}

/* A file of FILE_MB MiB written and synced, then dropped from the cache. */
static int data_file(struct mst *m, int flags)
{
	int fd = open_file(m, m->d->name, 0);
	char *b = malloc(1 << 20);
	if (!b)
		die("malloc");
	for (int i = 0; i < FILE_MB; i++) {
		memset(b, 'a' + i % 26, 1 << 20);
		if (pwrite(fd, b, 1 << 20, (off_t)i << 20) != 1 << 20)
			die(m->path);
	}
	free(b);
	if (fsync(fd))
		die("fsync");
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (flags) {
		close(fd);
		fd = open(m->path, O_RDWR | O_CLOEXEC | flags);
		if (fd < 0)
			die(m->path);
	}
	m->len = (size_t)FILE_MB << 20;
	return fd;
}

/* ---- locks and conditions ----------------------------------------------------- */

static void *holder_main(void *arg)
{
	struct mst *m = arg;
	for (;;) {
		helper_wait_req(m->sh);
		if (!strcmp(m->d->name, "lock-mutex") || !strcmp(m->d->name, "lock-timedmutex")) {
			pthread_mutex_lock(&m->mu);
			atomic_store(&m->sh->ack, 1);
			sleep_until(now_ns() + m->us * 1000);
			pthread_mutex_unlock(&m->mu);
		} else if (!strcmp(m->d->name, "lock-rwlock")) { /* for writing */
			pthread_rwlock_wrlock(&m->rw);
			atomic_store(&m->sh->ack, 1);
			sleep_until(now_ns() + m->us * 1000);
			pthread_rwlock_unlock(&m->rw);
		} else { /* a condition it signals after us */
			atomic_store(&m->sh->ack, 1);
			sleep_until(now_ns() + m->us * 1000);
			pthread_mutex_lock(&m->mu);
			m->flag = 1;
			pthread_cond_signal(&m->cv);
			pthread_mutex_unlock(&m->mu);
		}
	}
	return NULL;
}

static int setup_holder(struct mst *m)
{
	pthread_mutexattr_t a;
	pthread_condattr_t c;
	pthread_mutexattr_init(&a);
	pthread_mutex_init(&m->mu, &a);
	pthread_condattr_init(&c);
	pthread_condattr_setclock(&c, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &c);
	pthread_rwlock_init(&m->rw, NULL);
	helper_thread("holder", (int)(m - mech), m->env.helper_cpu, holder_main, m);
	return 0;
}

static void main_mutex(struct mst *m)
{
	request(m->sh);
	pthread_mutex_lock(&m->mu);
	pthread_mutex_unlock(&m->mu);
}

/* The same lock with a timeout that does not run out (glibc waits in the
 * futex wait its conditions use), and a read-write lock taken for reading
 * while the holder has it for writing. */
static void main_timedmutex(struct mst *m)
{
	struct timespec ts;
	request(m->sh);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	pthread_mutex_timedlock(&m->mu, &ts);
	pthread_mutex_unlock(&m->mu);
}

static void main_rwlock(struct mst *m)
{
	request(m->sh);
	pthread_rwlock_rdlock(&m->rw);
	pthread_rwlock_unlock(&m->rw);
}

/* A condition waited for without a timeout, or with timeouts of 1 ms that
 * run out before it is signalled (each a timer's wake-up). */
static void main_cond(struct mst *m)
{
	int timed = !strcmp(m->d->name, "lock-timedcond");
	pthread_mutex_lock(&m->mu);
	m->flag = 0;
	request(m->sh);
	while (!m->flag) {
		if (timed) {
			struct timespec ts;
			u64 t = now_ns() + 1000000;
			ts.tv_sec = (time_t)(t / 1000000000ull);
			ts.tv_nsec = (long)(t % 1000000000ull);
			pthread_cond_timedwait(&m->cv, &m->mu, &ts);
		} else {
			pthread_cond_wait(&m->cv, &m->mu);
		}
	}
	pthread_mutex_unlock(&m->mu);
}

/* A file lock another process holds for us. */
static int setup_flock(struct mst *m)
{
	m->fd[0] = open_file(m, "lock", 0);
	if (spawn("locker", (int)(m - mech), m->env.helper_cpu) == 0) {
		int fd = open(m->path, O_RDWR | O_CLOEXEC);
		for (;;) {
			helper_wait_req(m->sh);
			flock(fd, LOCK_EX);
			atomic_store(&m->sh->ack, 1);
			sleep_until(now_ns() + m->us * 1000);
			flock(fd, LOCK_UN);
		}
	}
	return 0;
}

static void main_flock(struct mst *m)
{
	request(m->sh);
	flock(m->fd[0], LOCK_EX);
	flock(m->fd[0], LOCK_UN);
}

/* ---- input from a producer, and a slow consumer ---------------------------------- */

/* An item after m->us of work: to a producer thread's eventfd, or a
 * producer process's socket. */
static void produce(struct mst *m, int fd, int eventfd)
{
	char item[64] = {0};
	sleep_until(now_ns() + m->us * 1000);
	if (eventfd) {
		uint64_t one = 1;
		if (write(fd, &one, sizeof(one)) != sizeof(one))
			_exit(0);
	} else if (io_full(fd, item, sizeof(item), 1)) {
		_exit(0);
	}
}

static void *producer_thread(void *arg)
{
	struct mst *m = arg;
	for (;;) {
		helper_wait_req(m->sh);
		atomic_store(&m->sh->ack, 1);
		produce(m, m->fd[1], 1);
	}
	return NULL;
}

/* A producer of items for the feeder: a thread writing an eventfd
 * (nonblock: the feeder polls it), or a process writing a unix socket. */
static int setup_producer(struct mst *m, int thread, int nonblock)
{
	if (thread) {
		m->fd[0] = m->fd[1] = eventfd(0, EFD_CLOEXEC | (nonblock ? EFD_NONBLOCK : 0));
		helper_thread("producer", (int)(m - mech), m->env.helper_cpu, producer_thread, m);
		return 0;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
	if (spawn("producer", (int)(m - mech), m->env.helper_cpu) == 0) {
		close(sv[0]);
		for (;;) {
			helper_wait_req(m->sh);
			atomic_store(&m->sh->ack, 1);
			produce(m, sv[1], 0);
		}
	}
	close(sv[1]);
	m->fd[0] = sv[0];
	return 0;
}

static int setup_input(struct mst *m)
{
	return setup_producer(m, !strcmp(m->d->name, "input-eventfd"), 0);
}

static void main_input(struct mst *m)
{
	char item[64];
	request(m->sh);
	if (!strcmp(m->d->name, "input-eventfd")) {
		uint64_t v;
		if (read(m->fd[0], &v, sizeof(v)) != sizeof(v))
			die("read eventfd");
	} else if (io_full(m->fd[0], item, sizeof(item), 0)) {
		die("recv");
	}
}

/* ---- polling: the feeder checks without blocking and sleeps between checks ------ */

/* What a consumer that polls does (q.get_nowait() then time.sleep): the
 * item comes from a producer thread through an eventfd (poll-eventfd,
 * poll-select) or from a producer process through a unix socket
 * (poll-unix, poll-ppoll), both read without blocking, with a POLL_NAP_US
 * nap after each miss: a nanosleep, or a select() or ppoll() with nothing
 * to wait for (poll-select: time.sleep in Python 3.10 and older;
 * poll-ppoll: poll(NULL, 0, ms)). */
#define POLL_NAP_US 200
static int from_thread(const struct mst *m)
{
	return !strcmp(m->d->name, "poll-eventfd") || !strcmp(m->d->name, "poll-select");
}

static int setup_poll(struct mst *m)
{
	return setup_producer(m, from_thread(m), 1);
}

/* A nap of us microseconds the way the mechanism naps. */
static void nap(const struct mst *m, u64 us)
{
	u64 end = now_ns() + us * 1000;
	if (!strcmp(m->d->name, "poll-select") || !strcmp(m->d->name, "paced-select")) {
		for (u64 t; (t = now_ns()) < end;) {
			struct timeval tv = {(time_t)((end - t) / 1000000000ull),
					     (long)((end - t) % 1000000000ull / 1000)};
			if (!tv.tv_sec && !tv.tv_usec)
				break;
			select(0, NULL, NULL, NULL, &tv);
		}
	} else if (!strcmp(m->d->name, "poll-ppoll")) {
		for (u64 t; (t = now_ns()) < end;) {
			struct timespec ts = {(time_t)((end - t) / 1000000000ull),
					      (long)((end - t) % 1000000000ull)};
			ppoll(NULL, 0, &ts, NULL);
		}
	} else {
		sleep_until(end);
	}
}

static void main_poll(struct mst *m)
{
	char item[64];
	size_t got = 0;
	request(m->sh);
	for (;;) {
		ssize_t n = from_thread(m)
				? read(m->fd[0], item, 8)
				: recv(m->fd[0], item + got, sizeof(item) - got, MSG_DONTWAIT);
		if (n > 0 && (from_thread(m) || (got += (size_t)n) == sizeof(item)))
			return;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			die("poll read");
		nap(m, POLL_NAP_US);
	}
}

/* ---- child processes ---------------------------------------------------------- */

/* The feeder starts a child and waits for it to end, as subprocess.run or
 * os.system do: a fork whose child sleeps us, or sleep(1) started by
 * posix_spawn for us. */
static int setup_child(struct mst *m)
{
	(void)m;
	return 0;
}

static void main_child(struct mst *m)
{
	pid_t pid;
	if (!strcmp(m->d->name, "child-fork")) {
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			sleep_until(now_ns() + m->us * 1000);
			_exit(0);
		}
	} else {
		char arg[32];
		char *argv[] = {"sleep", arg, NULL};
		snprintf(arg, sizeof(arg), "%.6f", (double)m->us / 1e6);
		if (posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, environ))
			die("posix_spawn /bin/sleep");
	}
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid");
}

/* ---- stopped by another process ------------------------------------------------ */

/* A helper process stops the whole feeder process for us and lets it go
 * on, while the feeder spins in request() between calls: with SIGSTOP
 * and SIGCONT, as a CPU limiter (cpulimit) or a job control does; or as
 * its tracer (PTRACE_SEIZE once, then PTRACE_INTERRUPT and PTRACE_CONT),
 * as strace or a debugger stops it. It answers only once the feeder runs
 * again. */
static void stop_once(struct mst *m, pid_t feeder)
{
	int st;
	if (!strcmp(m->d->name, "stop-signal")) {
		kill(feeder, SIGSTOP);
		sleep_until(now_ns() + m->us * 1000);
		kill(feeder, SIGCONT);
		return;
	}
	ptrace(PTRACE_INTERRUPT, feeder, 0, 0);
	while (waitpid(feeder, &st, __WALL) == feeder && WIFSTOPPED(st) &&
	       st >> 16 != PTRACE_EVENT_STOP) /* a signal's stop: deliver it */
		ptrace(PTRACE_CONT, feeder, 0, (void *)(long)WSTOPSIG(st));
	sleep_until(now_ns() + m->us * 1000);
	ptrace(PTRACE_CONT, feeder, 0, 0);
}

static int setup_stop(struct mst *m)
{
	pid_t feeder = getpid(), pid;
	int tracer = !strcmp(m->d->name, "stop-ptrace");
	if ((pid = spawn(tracer ? "tracer" : "stopper", (int)(m - mech), m->env.helper_cpu)) == 0) {
		if (tracer && ptrace(PTRACE_SEIZE, feeder, 0, 0))
			die("PTRACE_SEIZE");
		for (;;) {
			/* a tracer lets the signals the feeder gets between its
			 * requests go on (a tracee stops at each) */
			while (!atomic_load(&m->sh->req)) {
				int st;
				if (tracer && waitpid(feeder, &st, __WALL | WNOHANG) == feeder &&
				    WIFSTOPPED(st))
					ptrace(PTRACE_CONT, feeder, 0,
					       (void *)(long)(st >> 16 ? 0 : WSTOPSIG(st)));
				usleep(50);
			}
			atomic_store(&m->sh->req, 0);
			stop_once(m, feeder);
			atomic_store(&m->sh->ack, 1);
		}
	}
	if (tracer) /* Yama's ptrace_scope 1: a child may trace us when we say so */
		prctl(PR_SET_PTRACER, pid, 0, 0, 0);
	return 0;
}

static void main_stop(struct mst *m)
{
	request(m->sh); /* stopped while it spins, on until the helper answers */
}

/* The consumer drains what the feeder wrote, us after it was asked to. */
#define FULL_BYTES (32u << 10)
static int setup_full(struct mst *m)
{
	int sv[2];
	if (!strcmp(m->d->name, "full-pipe")) {
		if (pipe2(sv, O_CLOEXEC))
			die("pipe");
		fcntl(sv[1], F_SETPIPE_SZ, 4096);
		int t = sv[0]; /* [0] the feeder's end */
		sv[0] = sv[1];
		sv[1] = t;
	} else {
		int small = 4096;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			die("socketpair");
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	if (spawn("consumer", (int)(m - mech), m->env.helper_cpu) == 0) {
		char *b = malloc(FULL_BYTES);
		close(sv[0]);
		for (;;) {
			helper_wait_req(m->sh);
			atomic_store(&m->sh->ack, 1);
			sleep_until(now_ns() + m->us * 1000);
			if (!b || io_full(sv[1], b, FULL_BYTES, 0))
				_exit(0);
		}
	}
	close(sv[1]);
	m->fd[0] = sv[0];
	m->buf = calloc(1, FULL_BYTES);
	return m->buf ? 0 : -1;
}

static void main_full(struct mst *m)
{
	request(m->sh);
	if (io_full(m->fd[0], m->buf, FULL_BYTES, 1))
		die("write");
}

/* ---- the network: a server on loopback answers us later ---------------------------- */

static int setup_net(struct mst *m)
{
	int udp = !strcmp(m->d->name, "net-udp");
	int type = udp ? SOCK_DGRAM : SOCK_STREAM;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || (!udp && listen(s, 1)) ||
	    getsockname(s, (struct sockaddr *)&a, &al))
		die("server socket");
	m->port = ntohs(a.sin_port);
	if (spawn("server", (int)(m - mech), m->env.helper_cpu) == 0) {
		char c;
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		int c_fd = udp ? s : accept(s, NULL, NULL);
		for (;;) {
			ssize_t n = udp ? recvfrom(c_fd, &c, 1, 0, (struct sockaddr *)&from, &fl)
					: recv(c_fd, &c, 1, 0);
			if (n <= 0)
				_exit(0);
			sleep_until(now_ns() + m->us * 1000);
			if ((udp ? sendto(c_fd, &c, 1, 0, (struct sockaddr *)&from, fl)
				 : send(c_fd, &c, 1, 0)) != 1)
				_exit(0);
		}
	}
	close(s);
	m->fd[0] = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (m->fd[0] < 0 || connect(m->fd[0], (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	return 0;
}

static void main_net(struct mst *m)
{
	char c = 'q';
	if (send(m->fd[0], &c, 1, 0) != 1 || recv(m->fd[0], &c, 1, 0) != 1)
		die("request");
}

/* ---- loops paced by their own timer ------------------------------------------------ */

#define TICK_SIG (SIGRTMIN + 3)
static void on_tick(int sig)
{
	(void)sig;
}

static int setup_paced(struct mst *m)
{
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_condattr_t c;
	m->fd[0] = epoll_create1(EPOLL_CLOEXEC);
	m->fd[1] = eventfd(0, EFD_CLOEXEC); /* never written: the epoll waits out */
	m->fd[2] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (m->fd[0] < 0 || m->fd[1] < 0 || m->fd[2] < 0 ||
	    epoll_ctl(m->fd[0], EPOLL_CTL_ADD, m->fd[1], &ev))
		die("epoll");
	pthread_mutex_init(&m->mu, NULL);
	pthread_condattr_init(&c);
	pthread_condattr_setclock(&c, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &c);
	if (!strcmp(m->d->name, "paced-sigwait") || !strcmp(m->d->name, "paced-sigsuspend")) {
		/* a one-shot POSIX timer whose signal goes to this thread, blocked
		 * but while it waits for it */
		struct sigaction sa = {.sa_handler = on_tick};
		struct sigevent se = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = TICK_SIG};
		sigset_t s;
		se._sigev_un._tid = gettid();
		sigaction(TICK_SIG, &sa, NULL);
		sigemptyset(&s);
		sigaddset(&s, TICK_SIG);
		pthread_sigmask(SIG_BLOCK, &s, NULL);
		if (timer_create(CLOCK_MONOTONIC, &se, &m->timer))
			die("timer_create");
	}
	return 0;
}

static void main_paced(struct mst *m)
{
	u64 t = now_ns() + m->us * 1000;
	struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
	struct timespec rel = {(time_t)(m->us / 1000000), (long)(m->us % 1000000) * 1000};
	struct epoll_event ev;
	if (!strcmp(m->d->name, "paced-select")) {
		nap(m, m->us);
	} else if (!strcmp(m->d->name, "paced-epoll")) {
		while (epoll_pwait2(m->fd[0], &ev, 1, &rel, NULL) < 0 && errno == EINTR)
			;
	} else if (!strcmp(m->d->name, "paced-timerfd")) {
		struct itimerspec it = {.it_value = rel};
		uint64_t n;
		timerfd_settime(m->fd[2], 0, &it, NULL);
		if (read(m->fd[2], &n, sizeof(n)) != sizeof(n))
			die("read timerfd");
	} else if (!strcmp(m->d->name, "paced-sigwait") ||
		   !strcmp(m->d->name, "paced-sigsuspend")) {
		struct itimerspec it = {.it_value = rel};
		sigset_t s;
		timer_settime(m->timer, 0, &it, NULL);
		if (!strcmp(m->d->name, "paced-sigwait")) {
			sigemptyset(&s);
			sigaddset(&s, TICK_SIG);
			while (sigwaitinfo(&s, NULL) < 0 && errno == EINTR)
				;
		} else { /* the handler runs, then sigsuspend returns */
			pthread_sigmask(SIG_BLOCK, NULL, &s);
			sigdelset(&s, TICK_SIG);
			sigsuspend(&s);
		}
	} else { /* paced-cond: nobody signals it */
		pthread_mutex_lock(&m->mu);
		while (now_ns() < t)
			pthread_cond_timedwait(&m->cv, &m->mu, &ts);
		pthread_mutex_unlock(&m->mu);
	}
}

/* ---- files: the kernel's work and the disk ----------------------------------------- */

static int setup_file(struct mst *m)
{
	const char *n = m->d->name;
	m->fd[0] = !strcmp(n, "file-dread") ? data_file(m, O_DIRECT) : data_file(m, 0);
	if (posix_memalign((void **)&m->buf, 4096, CHUNK))
		return -1;
	memset(m->buf, 7, CHUNK);
	if (!strcmp(n, "file-fsync"))
		m->len = 4096;
	return 0;
}

static void main_file(struct mst *m)
{
	const char *n = m->d->name;
	u64 end = now_ns() + m->us * 1000;
	if (!strcmp(n, "file-fsync")) { /* 4 KiB writes, each synced */
		do {
			m->buf[0]++;
			if (pwrite(m->fd[0], m->buf, 4096, 0) != 4096 || fdatasync(m->fd[0]))
				die("write");
			m->bytes += 4096;
		} while (now_ns() < end);
		return;
	}
	int wr = !strcmp(n, "file-bigwrite");
	do {
		if (m->pos + CHUNK > m->len)
			m->pos = 0;
		ssize_t r = wr ? pwrite(m->fd[0], m->buf, CHUNK, (off_t)m->pos)
			       : pread(m->fd[0], m->buf, CHUNK, (off_t)m->pos);
		if (r != CHUNK)
			die(wr ? "pwrite" : "pread");
		m->pos += CHUNK;
		m->bytes += CHUNK;
	} while (now_ns() < end);
}

/* The pages read this step leave the cache again. */
static void post_drop(struct mst *m)
{
	posix_fadvise(m->fd[0], 0, 0, POSIX_FADV_DONTNEED);
}

/* ---- asynchronous file reads ---------------------------------------------------------- */

/* O_DIRECT reads of CHUNK bytes submitted asynchronously and waited for at
 * once, as an offloading trainer's I/O library does: Linux AIO (file-aio:
 * io_submit, then io_getevents; libaio's calls) or io_uring (file-uring:
 * one read, io_uring_enter waiting for its completion). Raw syscalls: no
 * library needed. */
struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int setup_uring(struct mst *m)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	struct uring *u = calloc(1, sizeof(*u));
	if (!u || (u->fd = (int)syscall(SYS_io_uring_setup, 4, &p)) < 0)
		die("io_uring_setup");
	size_t sqn = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqn = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sqn = cqn = sqn > cqn ? sqn : cqn;
	char *sq = mmap(NULL, sqn, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
			IORING_OFF_SQ_RING);
	char *cq = p.features & IORING_FEAT_SINGLE_MMAP
		       ? sq
		       : mmap(NULL, cqn, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
			      IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		die("io_uring mmap");
	u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned *)(sq + p.sq_off.array);
	u->cq_head = (unsigned *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	m->uring = u;
	return 0;
}

static int setup_aio(struct mst *m)
{
	m->fd[0] = data_file(m, O_DIRECT);
	if (posix_memalign((void **)&m->buf, 4096, CHUNK))
		return -1;
	if (!strcmp(m->d->name, "file-uring"))
		return setup_uring(m);
	if (syscall(SYS_io_setup, 4, &m->aio))
		die("io_setup");
	return 0;
}

/* One read of CHUNK at off through the ring, waited for. */
static long uring_read(struct uring *u, int fd, void *buf, u64 off)
{
	unsigned tail = *u->sq_tail, i = tail & *u->sq_mask;
	struct io_uring_sqe *e = &u->sqes[i];
	memset(e, 0, sizeof(*e));
	e->opcode = IORING_OP_READ;
	e->fd = fd;
	e->addr = (u64)(uintptr_t)buf;
	e->len = CHUNK;
	e->off = off;
	u->sq_array[i] = i;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	unsigned head = *u->cq_head;
	if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
		return -1;
	long res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static void main_aio(struct mst *m)
{
	u64 end = now_ns() + m->us * 1000;
	do {
		if (m->pos + CHUNK > m->len)
			m->pos = 0;
		long r;
		if (m->uring) {
			r = uring_read(m->uring, m->fd[0], m->buf, m->pos);
		} else {
			struct iocb cb;
			memset(&cb, 0, sizeof(cb));
			cb.aio_fildes = (uint32_t)m->fd[0];
			cb.aio_lio_opcode = IOCB_CMD_PREAD;
			cb.aio_buf = (u64)(uintptr_t)m->buf;
			cb.aio_nbytes = CHUNK;
			cb.aio_offset = (long long)m->pos;
			struct iocb *cbs[1] = {&cb};
			struct io_event ev;
			r = syscall(SYS_io_submit, m->aio, 1, cbs) == 1 &&
				    syscall(SYS_io_getevents, m->aio, 1, 1, &ev, NULL) == 1
				? (long)ev.res
				: -1;
		}
		if (r != CHUNK)
			die("async read");
		m->pos += CHUNK;
		m->bytes += CHUNK;
	} while (now_ns() < end);
}

/* ---- mappings: cold file pages, fresh memory -------------------------------------- */

static int setup_cold(struct mst *m)
{
	m->fd[0] = data_file(m, 0);
	m->map = mmap(NULL, m->len, PROT_READ, MAP_SHARED, m->fd[0], 0);
	if (m->map == MAP_FAILED)
		die("mmap file");
	if (!strcmp(m->d->name, "cold-rand"))
		madvise(m->map, m->len, MADV_RANDOM);
	return 0;
}

static void main_cold(struct mst *m)
{
	u64 end = now_ns() + m->us * 1000;
	int rnd = !strcmp(m->d->name, "cold-rand");
	volatile char sink = 0;
	do {
		size_t off = rnd ? ((size_t)random() % (m->len >> 12)) << 12 : m->pos;
		sink += m->map[off];
		m->pos = (m->pos + 4096) % m->len;
		m->faults++;
	} while (now_ns() < end);
}

static void post_cold(struct mst *m)
{
	madvise(m->map, m->len, MADV_DONTNEED);
	posix_fadvise(m->fd[0], 0, 0, POSIX_FADV_DONTNEED);
}

#define FRESH_BYTES (256ul << 20)
static int setup_fresh(struct mst *m)
{
	m->len = FRESH_BYTES;
	if (!strcmp(m->d->name, "fault-dontneed")) {
		m->map =
		    mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m->map == MAP_FAILED)
			die("mmap");
	}
	return 0;
}

/* Pages of memory just given (a malloc of a large block, glibc's mmap; or
 * a buffer returned with MADV_DONTNEED) touched until us has passed. */
static void main_fresh(struct mst *m)
{
	u64 end = now_ns() + m->us * 1000;
	if (!m->map && !(m->map = malloc(m->len)))
		die("malloc");
	do {
		m->map[m->pos] = 1;
		m->pos += 4096;
		m->faults++;
		if (m->pos >= m->len)
			m->pos = 0;
	} while (now_ns() < end);
}

static void post_fresh(struct mst *m)
{
	if (!strcmp(m->d->name, "fault-dontneed")) {
		madvise(m->map, m->pos ? m->pos : m->len, MADV_DONTNEED);
	} else {
		free(m->map); /* glibc gives it back: munmap */
		m->map = NULL;
	}
	m->pos = 0;
}

/* ---- copy-on-write after a fork ------------------------------------------------------- */

/* A buffer of its own, written page by page each step, while a child it
 * forked (an asynchronous checkpoint, a worker started with fork) still
 * shares its pages: every first write to a page copies it. Once every page
 * is its own again, the clean-up after the step (host work, as the fork's
 * copy of the page tables is) ends the child and forks a new one. */
#define COW_BYTES (256u << 20)
static void cow_refork(struct mst *m)
{
	if (m->child > 0) {
		kill(m->child, SIGKILL);
		waitpid(m->child, NULL, 0);
	}
	fflush(NULL);
	m->child = fork();
	if (m->child < 0)
		die("fork");
	if (m->child == 0) {
		prctl(PR_SET_NAME, "cg-cowchild", 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (;;)
			pause();
	}
}

static int setup_cow(struct mst *m)
{
	m->len = COW_BYTES;
	m->map = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->map == MAP_FAILED)
		die("mmap");
	for (size_t i = 0; i < m->len; i += 4096)
		m->map[i] = 1; /* its own pages before any fork */
	cow_refork(m);
	return 0;
}

static void main_cow(struct mst *m)
{
	u64 end = now_ns() + m->us * 1000;
	do {
		m->map[m->pos] = 2;
		m->pos += 4096;
		m->faults++;
		if (m->pos >= m->len)
			m->pos = 0;
	} while (m->pos && now_ns() < end);
}

static void post_cow(struct mst *m)
{
	if (!m->pos)
		cow_refork(m);
}

/* ---- memory pressure under the cgroup's limit --------------------------------------- */

static int swap_on(void)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/swaps", "re");
	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n > 1; /* a header, then one line per device */
}

/* Memory twice the cgroup's limit, touched in a cycle: every touch finds
 * its page in swap (read back, another page reclaimed for it): anonymous
 * memory (mem-swap) or shared memory in /dev/shm (mem-shm). */
static int setup_mem(struct mst *m)
{
	if (!m->env.mem_limit_mb) {
		fprintf(stderr, "causegen: --mech %s needs --mem-limit\n", m->d->name);
		return -1;
	}
	m->len = (size_t)m->env.mem_limit_mb << 21; /* twice the limit */
	if (strcmp(m->d->name, "mem-thrash") && !swap_on()) {
		fprintf(stderr, "causegen: --mech %s needs swap (swapon)\n", m->d->name);
		return -1;
	}
	if (!strcmp(m->d->name, "mem-swap") || !strcmp(m->d->name, "mem-shm")) {
		int fd = -1, flags = MAP_PRIVATE | MAP_ANONYMOUS;
		if (!strcmp(m->d->name, "mem-shm")) {
			snprintf(m->path, sizeof(m->path), "/dev/shm/causegen-%d", (int)getpid());
			fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || ftruncate(fd, (off_t)m->len))
				die(m->path);
			flags = MAP_SHARED;
		}
		m->map = mmap(NULL, m->len, PROT_READ | PROT_WRITE, flags, fd, 0);
		if (m->map == MAP_FAILED)
			die("mmap");
		for (size_t i = 0; i < m->len; i += 4096) /* out to swap, most of it */
			m->map[i] = 1;
		return 0;
	}
	m->fd[0] = open_file(m, "thrash", 0);
	if (posix_memalign((void **)&m->buf, 4096, CHUNK))
		return -1;
	memset(m->buf, 3, CHUNK);
	for (size_t i = 0; i < m->len; i += CHUNK)
		if (pwrite(m->fd[0], m->buf, CHUNK, (off_t)i) != CHUNK)
			die("pwrite");
	fsync(m->fd[0]);
	return 0;
}

static long majflt(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_majflt;
}

static void main_mem(struct mst *m)
{
	u64 end = now_ns() + m->us * 1000;
	int swap = strcmp(m->d->name, "mem-thrash") != 0;
	long maj = majflt();
	do {
		if (swap) {
			m->map[m->pos]++;
			m->pos = (m->pos + 4096) % m->len;
			m->faults++;
		} else {
			if (pread(m->fd[0], m->buf, CHUNK, (off_t)m->pos) != CHUNK)
				die("pread");
			m->pos = (m->pos + CHUNK) % m->len;
			m->bytes += CHUNK;
		}
	} while (now_ns() < end);
	m->majors += (u64)(majflt() - maj);
}

/* ---- the table ------------------------------------------------------------------------ */

static const struct mdef defs[] = {
    {"lock-mutex", "lock_wait", MR_OFF, NULL, setup_holder, main_mutex, NULL},
    {"lock-timedmutex", "lock_wait", MR_OFF, NULL, setup_holder, main_timedmutex, NULL},
    {"lock-rwlock", "lock_wait", MR_OFF, NULL, setup_holder, main_rwlock, NULL},
    {"lock-cond", "lock_wait", MR_OFF, NULL, setup_holder, main_cond, NULL},
    {"lock-timedcond", "lock_wait", MR_OFF, NULL, setup_holder, main_cond, NULL},
    {"lock-flock", "lock_wait", MR_OFF, NULL, setup_flock, main_flock, NULL},
    {"input-unix", "loader_wait", MR_OFF, NULL, setup_input, main_input, NULL},
    {"input-eventfd", "loader_wait", MR_OFF, NULL, setup_input, main_input, NULL},
    {"child-fork", "loader_wait", MR_OFF, NULL, setup_child, main_child, NULL},
    {"child-spawn", "loader_wait", MR_OFF, NULL, setup_child, main_child, NULL},
    {"stop-signal", "stopped", MR_OFF, NULL, setup_stop, main_stop, NULL},
    {"stop-ptrace", "stopped", MR_OFF, NULL, setup_stop, main_stop, NULL},
    {"full-pipe", "backpressure", MR_OFF, NULL, setup_full, main_full, NULL},
    {"full-unix", "backpressure", MR_OFF, NULL, setup_full, main_full, NULL},
    {"net-tcp", "net_wait", MR_OFF, NULL, setup_net, main_net, NULL},
    {"net-udp", "net_wait", MR_OFF, NULL, setup_net, main_net, NULL},
    {"poll-eventfd", "poll_wait", MR_OFF, NULL, setup_poll, main_poll, NULL},
    {"poll-unix", "poll_wait", MR_OFF, NULL, setup_poll, main_poll, NULL},
    {"poll-select", "poll_wait", MR_OFF, NULL, setup_poll, main_poll, NULL},
    {"poll-ppoll", "poll_wait", MR_OFF, NULL, setup_poll, main_poll, NULL},
    {"paced-select", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"paced-epoll", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"paced-timerfd", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"paced-cond", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"paced-sigwait", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"paced-sigsuspend", "timer_sleep", MR_OFF, NULL, setup_paced, main_paced, NULL},
    {"file-fsync", "file_io", MR_ALL, NULL, setup_file, main_file, NULL},
    {"file-bigwrite", "file_io", MR_ALL, NULL, setup_file, main_file, NULL},
    {"file-dread", "file_io", MR_ALL, NULL, setup_file, main_file, NULL},
    {"file-cread", "file_io", MR_ALL, NULL, setup_file, main_file, post_drop},
    {"file-aio", "file_io", MR_ALL, NULL, setup_aio, main_aio, NULL},
    {"file-uring", "file_io", MR_ALL, NULL, setup_aio, main_aio, NULL},
    {"cold-seq", "cold_read", MR_ALL, NULL, setup_cold, main_cold, post_cold},
    {"cold-rand", "cold_read", MR_ALL, NULL, setup_cold, main_cold, post_cold},
    {"fault-malloc", "page_faults", MR_ALL, NULL, setup_fresh, main_fresh, post_fresh},
    {"fault-dontneed", "page_faults", MR_ALL, NULL, setup_fresh, main_fresh, post_fresh},
    /* every write a copy on write (faults counts them) */
    {"cow-fork", "page_faults", MR_ALL, NULL, setup_cow, main_cow, post_cow},
    /* every touch a swap-in: all of it pressure (majors counts them) */
    {"mem-swap", "memory_pressure", MR_ALL, NULL, setup_mem, main_mem, NULL},
    {"mem-shm", "memory_pressure", MR_ALL, NULL, setup_mem, main_mem, NULL},
    /* a file bigger than the limit: reads, and the reclaim PSI sees */
    {"mem-thrash", "memory_pressure", MR_PSI, "file_io", setup_mem, main_mem, NULL},
};
#define NDEFS (int)(sizeof(defs) / sizeof(defs[0]))

int mech_add(const char *spec, const struct cg_env *env)
{
	char name[64];
	double us;
	if (nmech == CG_MAX_MECHS || sscanf(spec, "%63[^:]:%lf", name, &us) != 2 || us <= 0) {
		fprintf(stderr, "causegen: bad --mech %s (want NAME:US, at most %d)\n", spec,
			CG_MAX_MECHS);
		return -1;
	}
	struct mst *m = &mech[nmech];
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < NDEFS; i++)
		if (!strcmp(defs[i].name, name))
			m->d = &defs[i];
	if (!m->d) {
		fprintf(stderr, "causegen: unknown --mech %s; known:", name);
		for (int i = 0; i < NDEFS; i++)
			fprintf(stderr, " %s", defs[i].name);
		fputc('\n', stderr);
		return -1;
	}
	m->us = (u64)us;
	m->env = *env;
	m->sh = shared_page();
	nmech++;
	if (m->d->setup(m))
		return -1;
	return 0;
}

int mech_count(void)
{
	return nmech;
}

void mech_main(int i)
{
	mech[i].d->main(&mech[i]);
	mech[i].steps++;
}

int mech_has_post(int i)
{
	return mech[i].d->post != NULL;
}

void mech_post(int i)
{
	mech[i].d->post(&mech[i]);
}

int mech_rule(int i)
{
	return mech[i].d->rule;
}

const char *mech_class(int i, int rest)
{
	return rest ? mech[i].d->rest : mech[i].d->cls;
}

u64 psi_memory_ns(void)
{
	char line[256];
	unsigned long long total = 0;
	FILE *f = fopen("/proc/pressure/memory", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "some ", 5)) {
			const char *t = strstr(line, "total=");
			if (t)
				total = strtoull(t + 6, NULL, 10);
		}
	if (f)
		fclose(f);
	return total * 1000;
}

void mech_stop_all(void)
{
	for (int i = 0; i < nmech; i++)
		if (mech[i].path[0])
			unlink(mech[i].path);
}

void mech_json(FILE *f, const struct acct *main_acct, const struct acct *post_acct, const u64 *psi)
{
	fprintf(f, "  \"mechs\": [");
	for (int i = 0; i < nmech; i++) {
		const struct mst *m = &mech[i];
		const struct acct *a = &main_acct[i], *p = &post_acct[i];
		fprintf(f,
			"%s{\"name\": \"%s\", \"class\": \"%s\", \"rule\": \"%s\", \"rest\": "
			"\"%s\", \"us\": %llu, \"steps\": %llu, \"wall_ns\": %llu, \"cpu_ns\": "
			"%llu, \"preempted_ns\": %llu, \"off_ns\": %llu, \"psi_ns\": %llu, "
			"\"post\": {\"wall_ns\": %llu, \"cpu_ns\": %llu, \"preempted_ns\": %llu, "
			"\"off_ns\": %llu}, \"bytes\": %llu, \"touches\": %llu, \"majors\": %llu, "
			"\"port\": %d, \"file\": ",
			i ? ", " : "", m->d->name, m->d->cls,
			m->d->rule == MR_OFF   ? "off"
			: m->d->rule == MR_ALL ? "all"
					       : "psi",
			m->d->rest ? m->d->rest : "", m->us, m->steps, a->wall, a->cpu,
			a->preempted, acct_off(a), psi[i], p->wall, p->cpu, p->preempted,
			acct_off(p), m->bytes, m->faults, m->majors, m->port);
		json_str(f, m->path);
		fputc('}', f);
	}
	fprintf(f, "],\n");
}
