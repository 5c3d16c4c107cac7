/* waitprobe: waits of known kinds, each a known number of times, for the
 * wait evidence's integration test (tests/integration/test_collect_waits.sh).
 * Every wait lasts WAIT_MS, so each is an off-CPU event; the thread that
 * ends it is told in the expect file by its tid. In order:
 *
 *   lock   N x pthread_mutex_lock (in take_lock()) of a mutex thread "wp-holder" holds
 *   pipe   N x read of an empty pipe thread "wp-writer" then writes
 *   full   N x write of 64 KiB into a full pipe thread "wp-reader" drains
 *   fsync  F x pwrite + fdatasync of 4 KiB to a file in DIR (F = N unless given)
 *   kcpu   buffered 256 KiB pwrites over the same file until the thread has
 *          run 500 ms (CPU time, nearly all of it the kernel's copies)
 *   sleep  N x (cudaDeviceSynchronize, clock_nanosleep of WAIT_MS in
 *          pace_sleep()): a loop paced by its own timer
 *
 * The feeder makes a CUDA call first (a feeding thread all along); the
 * helpers sleep on a semaphore until the feeder's go, so that only the
 * waits above keep the feeder off the CPU.
 *
 *   waitprobe N DIR EXPECT [F]
 *
 * EXPECT gets "pid P", "feeder T", "holder T", "writer T", "reader T", "n N"
 * and, at the end, "kcpu_ns X": the kcpu phase's CPU time by its own clock. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define WAIT_MS 5
#define CHUNK (64 << 10)

static int n;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int done_turn;
static sem_t go[3]; /* the feeder's go to each helper: it never blocks on them */
static int pin[2], pfull[2];
static pid_t tids[3];

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void nap_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* A helper waits for the feeder's go (asleep: on 2 CPUs spinning helpers
 * would preempt the feeder). */
static void wait_go(int h)
{
	while (sem_wait(&go[h]) && errno == EINTR)
		;
}

static void *holder(void *arg)
{
	prctl(PR_SET_NAME, "wp-holder");
	tids[0] = gettid_();
	for (int k = 1; k <= n; k++) {
		wait_go(0);
		pthread_mutex_lock(&mu);
		atomic_store(&done_turn, k); /* holding it: the feeder may block now */
		nap_ms(WAIT_MS);
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

static void *writer(void *arg)
{
	static char b[64];
	prctl(PR_SET_NAME, "wp-writer");
	tids[1] = gettid_();
	for (int k = 1; k <= n; k++) {
		wait_go(1);
		nap_ms(WAIT_MS);
		if (write(pin[1], b, sizeof(b)) != (ssize_t)sizeof(b))
			exit(3);
	}
	return arg;
}

static void *reader(void *arg)
{
	static char b[CHUNK];
	prctl(PR_SET_NAME, "wp-reader");
	tids[2] = gettid_();
	for (int k = 1; k <= n; k++) {
		wait_go(2);
		nap_ms(WAIT_MS);
		for (size_t got = 0; got < CHUNK;) { /* room for the feeder's write */
			ssize_t r = read(pfull[0], b, CHUNK - got);
			if (r <= 0)
				exit(3);
			got += (size_t)r;
		}
	}
	return arg;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void pace_sleep(void)
{
	nap_ms(WAIT_MS);
}

__attribute__((noinline)) static void take_lock(void)
{
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: waitprobe N DIR EXPECT [FSYNCS]\n");
		return 2;
	}
	int fsyncs = argc == 5 ? atoi(argv[4]) : n;
	static char buf[4 * CHUNK];
	char path[4096];
	snprintf(path, sizeof(path), "%s/waitprobe-%d.bin", argv[2], (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pipe(pin) || pipe(pfull) || fcntl(pfull[1], F_SETPIPE_SZ, CHUNK) < 0) {
		perror("waitprobe");
		return 1;
	}
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		sem_init(&go[i], 0, 0);
	cudaDeviceSynchronize(); /* a feeding thread from the start */
	pthread_create(&t[0], NULL, holder, NULL);
	pthread_create(&t[1], NULL, writer, NULL);
	pthread_create(&t[2], NULL, reader, NULL);
	while (!tids[0] || !tids[1] || !tids[2])
		nap_ms(1);
	FILE *e = fopen(argv[3], "w");
	if (!e)
		return 1;
	fprintf(e, "pid %d\nfeeder %d\nholder %d\nwriter %d\nreader %d\nn %d\n", (int)getpid(),
		(int)gettid_(), (int)tids[0], (int)tids[1], (int)tids[2], n);
	fclose(e);

	for (int k = 1; k <= n; k++) { /* lock */
		sem_post(&go[0]);
		while (atomic_load(&done_turn) < k) /* until it holds the lock */
			;
		take_lock();
	}
	for (int k = 1; k <= n; k++) { /* pipe: empty, then fed */
		char b[64];
		sem_post(&go[1]);
		if (read(pin[0], b, sizeof(b)) != (ssize_t)sizeof(b))
			return 3;
	}
	memset(buf, 1, sizeof(buf));
	if (write(pfull[1], buf, CHUNK) != CHUNK) /* full */
		return 3;
	for (int k = 1; k <= n; k++) { /* full: blocked until drained */
		sem_post(&go[2]);
		if (write(pfull[1], buf, CHUNK) != CHUNK)
			return 3;
	}
	for (int k = 1; k <= fsyncs; k++) /* fsync */
		if (pwrite(fd, buf, 4096, 0) != 4096 || fdatasync(fd))
			return 3;
	uint64_t c0 = thread_cpu_ns(), kcpu = 0; /* kcpu */
	while (fsyncs && (kcpu = thread_cpu_ns() - c0) < 500000000ull)
		if (pwrite(fd, buf, 4 * CHUNK, 0) != 4 * CHUNK)
			return 3;
	for (int k = 0; k < n; k++) { /* sleep */
		cudaDeviceSynchronize();
		pace_sleep();
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	close(fd);
	unlink(path);
	if ((e = fopen(argv[3], "a"))) {
		fprintf(e, "kcpu_ns %llu\n", (unsigned long long)kcpu);
		fclose(e);
	}
	return 0;
}
