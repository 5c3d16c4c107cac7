/* A CPU hog for the contention tests: busy-loops on one CPU under the comm
 * "ig-hog", so that a traced thread pinned to the same CPU is preempted and
 * the tracer can name who preempted it. With --tick-us N it is a "ticker"
 * instead ("ig-ticker"): it sleeps N us, runs ~20 us, and again, like a
 * kernel thread or a monitoring agent that wakes often and runs briefly,
 * and so is often the first to take a preempted thread's CPU without
 * holding it long. With --threads N, N threads busy-loop (the main one
 * and N-1 more), for the tests of advice that must act on every thread. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double hog_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double hog_end; /* 0: until killed */

static void *hog_spin(void *arg)
{
	volatile unsigned long spins = 0;
	(void)arg;
	for (;;) {
		/* Read the clock only now and then: the point is to burn CPU. */
		for (int i = 0; i < 100000; i++)
			spins++;
		if (hog_end && hog_now() >= hog_end)
			return NULL;
	}
}

static void hog_usage(FILE *f)
{
	fprintf(f, "usage: hog [--cpu N] [--seconds S] [--tick-us N] [--threads N]\n"
		   "  busy-loop as \"ig-hog\" on CPU N (default: anywhere) for S seconds\n"
		   "  (default 0: until killed); with --tick-us, as \"ig-ticker\": sleep N us,\n"
		   "  run ~20 us, and again; with --threads, N busy threads (1)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "tick-us", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	volatile unsigned long spins = 0;
	double seconds = 0, end, tick_us = 0;
	char *tail;
	long cpu = -1, nthreads = 1;
	int c;

	while ((c = getopt_long(argc, argv, "c:s:t:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			errno = 0;
			cpu = strtol(optarg, &tail, 10);
			if (errno || *tail || cpu < 0 || cpu >= CPU_SETSIZE) {
				fprintf(stderr, "hog: bad --cpu %s\n", optarg);
				return 2;
			}
			break;
		case 's':
			seconds = strtod(optarg, &tail);
			if (*tail || seconds < 0) {
				fprintf(stderr, "hog: bad --seconds %s\n", optarg);
				return 2;
			}
			break;
		case 't':
			tick_us = strtod(optarg, &tail);
			if (*tail || tick_us < 1 || tick_us > 1e6) {
				fprintf(stderr, "hog: bad --tick-us %s\n", optarg);
				return 2;
			}
			break;
		case 'n':
			nthreads = strtol(optarg, &tail, 10);
			if (*tail || nthreads < 1 || nthreads > 64) {
				fprintf(stderr, "hog: bad --threads %s (1 to 64)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			hog_usage(stdout);
			return 0;
		default:
			hog_usage(stderr);
			return 2;
		}
	}
	prctl(PR_SET_NAME, tick_us ? "ig-ticker" : "ig-hog", 0, 0, 0);
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "hog: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
			return 1;
		}
	}
	end = seconds > 0 ? hog_now() + seconds : 0;
	while (tick_us) {
		struct timespec nap = { 0, (long)(tick_us * 1e3) % 1000000000L };
		nap.tv_sec = (time_t)(tick_us / 1e6);
		nanosleep(&nap, NULL);
		double until = hog_now() + 20e-6;
		while (hog_now() < until)
			spins++;
		if (end && hog_now() >= end)
			return 0;
	}
	hog_end = end;
	for (long i = 1; i < nthreads; i++) { /* they inherit the name and the CPU */
		pthread_t t;
		if (pthread_create(&t, NULL, hog_spin, NULL)) {
			fprintf(stderr, "hog: cannot start thread %ld\n", i);
			return 1;
		}
	}
	hog_spin(NULL);
	return 0;
}
