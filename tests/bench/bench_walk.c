/* Walking a replay: how long a step of one window back takes (t in the
 * viewer: session_seek_to, which restores the nearest checkpoint at or
 * before the target and reads on from it, or reads from the start where
 * there is none), measured at the end, the middle and near the start of a
 * recording, a jump to a place not visited yet, and a step forward for
 * comparison; the checkpoints held. The target (the issue of time
 * travel): a step back in a one-hour file <= 200 ms. A one-hour file:
 * tests/bench/long_replay.py makes one from a shipped recording.
 * Usage: bench_walk FILE [steps] (default: the shipped cpu-contention.db). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model/model.h"
#include "session/cli.h"
#include "session/session.h"
#include "core/status.h"

#define SEC 1000000000ull

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The mean time of n moves to `to` from `from` (both Unix ns), in ms. */
static double walk_ms(struct session *s, uint64_t from, uint64_t to, int n)
{
	double total = 0;
	for (int i = 0; i < n; i++) {
		session_seek_to(s, from);
		double t0 = now_ms();
		int r = session_seek_to(s, to);
		total += now_ms() - t0;
		if (r) {
			fprintf(stderr, "seek: %d\n", r);
			exit(1);
		}
	}
	return total / n;
}

int main(int argc, char **argv)
{
	const char *file = argc > 1 ? argv[1] : "tests/scenarios/cpu-contention.db";
	int n = argc > 2 ? atoi(argv[2]) : 5;
	char *args[] = {"ingero-top", "--replay", (char *)file, "--speed", "0", NULL};
	struct cli cli;
	char err[256];
	if (cli_parse(&cli, 5, args))
		return 2;
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "%s: %s\n", file, err);
		return 1;
	}
	session_set_paused(s, true);
	session_tick(s);
	const struct ig_status *st = session_status(s);
	uint64_t a = st->replay_start_ns, b = st->replay_end_ns;
	uint64_t win = (uint64_t)model_cfg(session_model(s))->window_s * SEC;
	double t0 = now_ms();
	session_seek_to(s, b);
	double all = now_ms() - t0;
	double total = (double)st->events_total; /* every event of the file */
	printf("%s: %.1f s, %llu events, played from the start to the end in %.1f ms\n", file,
	       (double)(b - a) / 1e9, (unsigned long long)st->events_total, all);
	uint64_t at[3] = {b, a + (b - a) / 2, a + win + SEC};
	const char *name[3] = {"the end", "the middle", "near the start"};
	for (int i = 0; i < 3; i++) {
		if (at[i] <= a + win)
			continue;
		double ms = walk_ms(s, at[i], at[i] - win, n);
		printf("step back from %-14s (%5.1f s in): %8.1f ms\n", name[i],
		       (double)(at[i] - a) / 1e9, ms);
	}
	printf("step forward from the start:                  %8.1f ms\n",
	       walk_ms(s, a, a + win, n));
	/* a place not visited: from the start, to 3/7 of the file, then a
	 * step back from there */
	uint64_t far = a + (b - a) / 7 * 3;
	if (far > a + 2 * win) {
		session_seek_to(s, a);
		double j0 = now_ms();
		session_seek_to(s, far);
		double jump = now_ms() - j0;
		j0 = now_ms();
		session_seek_to(s, far - win);
		printf("jump to %.1f s in (first visit): %.1f ms, then a step back: %.1f ms\n",
		       (double)(far - a) / 1e9, jump, now_ms() - j0);
	}
	int nck;
	uint64_t taken, restored;
	session_ckpt_stats(s, &nck, &taken, &restored);
	printf("checkpoints: %d held, %llu taken, %llu restored\n", nck,
	       (unsigned long long)taken, (unsigned long long)restored);
	(void)total;
	session_free(s);
	return 0;
}
