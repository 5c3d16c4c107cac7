/* The analysis path under load: synthetic events (8 processes x 4 threads,
 * calls, off-CPU intervals inside and between calls of every kind the time
 * decomposition tells apart (preempted; asleep until a task woke it, in D
 * state, on a timer, in a page fault), page allocs, block I/O) through
 * model_ingest, detector and window rotation included. Prints events/s on one core and RSS after 100k
 * and after 10M events (target: >= 5 M events/s, RSS growth <= 10 %), then
 * the same with thread/process churn that keeps the capped tables evicting.
 * Usage: bench_analysis [total_events]   (default 10000000) */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "model/model.h"
#include "report/report.h"
#include "synth.h"

#define CHUNK 65536 /* pre-generated events, replayed shifted in time */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n))
			v = strtol(line + n, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* Feeds total events from buf (n of them, spanning span_ns) replayed with a
 * growing time offset; calls mark() after `at` events. Returns seconds. */
static double feed(struct ig_model *m, const struct ig_event *buf, int n, uint64_t span_ns,
		   long total, long at, long *rss_at, int churn)
{
	struct ig_event e;
	long done = 0;
	uint64_t shift = 0;
	uint32_t gen = 0;
	double t0 = now_s();
	while (done < total) {
		for (int i = 0; i < n && done < total; i++, done++) {
			e = buf[i];
			e.ts_ns += shift;
			if (churn) { /* new threads and processes all the time */
				e.tid += gen * 1000;
				e.pid += (gen % 64) * 1000;
			}
			model_ingest(m, &e);
			if (done + 1 == at)
				*rss_at = rss_kib("VmRSS:");
		}
		shift += span_ns;
		gen++;
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	long total = argc > 1 ? atol(argv[1]) : 10000000;
	/* pinned to the first CPU it may use (CPU 0 may be excluded) */
	cpu_set_t allowed, one;
	int first_cpu = -1;
	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int c = 0; c < CPU_SETSIZE && first_cpu < 0; c++)
			if (CPU_ISSET(c, &allowed))
				first_cpu = c;
	CPU_ZERO(&one);
	CPU_SET(first_cpu < 0 ? 0 : first_cpu, &one);
	int pinned = !sched_setaffinity(0, sizeof(one), &one);

	/* pre-generate so that the generator is not measured */
	static struct ig_event buf[CHUNK];
	struct synth_cfg cfg = {.scenario = SYNTH_BENCH, .seconds = 1e6};
	struct synth *s = synth_new(&cfg);
	int n = 0;
	while (n < CHUNK && synth_next(s, &buf[n]))
		n++;
	synth_free(s);
	uint64_t first = buf[0].ts_ns, last = 0;
	for (int i = 0; i < n; i++)
		if (buf[i].ts_ns + buf[i].dur_ns > last)
			last = buf[i].ts_ns + buf[i].dur_ns;
	uint64_t span = last - first + 1000;

	/* the generator alone, for reference */
	s = synth_new(&cfg);
	struct ig_event e;
	double g0 = now_s();
	for (long i = 0; i < 2000000; i++)
		synth_next(s, &e);
	double gen_s = now_s() - g0;
	synth_free(s);

	long base = rss_kib("VmRSS:");
	struct ig_model *m = an_model_new(NULL);
	long rss_100k = 0;
	double t = feed(m, buf, n, span, total, 100000, &rss_100k, 0);
	long rss_end = rss_kib("VmRSS:");
	struct ig_model_totals tot;
	model_totals(m, &tot);
	if (pinned)
		printf("bench_analysis: pinned to CPU %d, ", first_cpu < 0 ? 0 : first_cpu);
	else
		printf("bench_analysis: not pinned, ");
	printf("%d distinct events replayed, %.1f s of event time per pass\n", n,
	       (double)span / 1e9);
	printf("bench_analysis: synth generator alone: %.2f M events/s\n", 2.0 / gen_s);
	printf("bench_analysis: ingest %ld events in %.3f s: %.2f M events/s on one core "
	       "(%lu detector runs, %u procs, %u threads, %u op-proc and %u op-thread series)\n",
	       total, t, (double)total / t / 1e6, (unsigned long)tot.windows, tot.procs,
	       tot.threads, tot.op_procs, tot.op_threads);
	printf("bench_analysis: RSS before model %ld KiB, after 100k events %ld KiB, after %ld "
	       "events %ld KiB (%+.2f %%), model %ld KiB\n",
	       base, rss_100k, total, rss_end,
	       rss_100k ? 100.0 * (double)(rss_end - rss_100k) / (double)rss_100k : 0.0,
	       rss_end - base);

	/* read side: a batch frame */
	FILE *null = fopen("/dev/null", "w");
	double r0 = now_s();
	for (int i = 0; i < 100; i++)
		report_json(null, m, an_detect(m), NULL, NULL);
	printf("bench_analysis: report_json frame %.3f ms\n", (now_s() - r0) * 1e3 / 100);
	fclose(null);
	an_model_free(m);

	/* churn: every pass brings 32 new threads and new processes */
	struct ig_model_cfg mc;
	model_cfg_default(&mc);
	m = an_model_new(&mc);
	long churn_total = total / 2, rss_c100k = 0;
	long cbase = rss_kib("VmRSS:");
	/* the tables fill up within the first passes; after that memory must
	 * stay flat: compare the middle with the end */
	t = feed(m, buf, n, span, churn_total, churn_total / 2, &rss_c100k, 1);
	long rss_cend = rss_kib("VmRSS:");
	model_totals(m, &tot);
	printf("bench_analysis: churn: %ld events in %.3f s: %.2f M events/s, evicted %lu procs "
	       "%lu threads %lu series; RSS half-way %ld KiB, at end %ld KiB (%+.2f %%), model %ld "
	       "KiB\n",
	       churn_total, t, (double)churn_total / t / 1e6, (unsigned long)tot.evicted_procs,
	       (unsigned long)tot.evicted_threads, (unsigned long)tot.evicted_series, rss_c100k,
	       rss_cend,
	       rss_c100k ? 100.0 * (double)(rss_cend - rss_c100k) / (double)rss_c100k : 0.0,
	       rss_cend - cbase);
	printf("bench_analysis: peak RSS %ld KiB\n", rss_kib("VmHWM:"));
	an_model_free(m);
	return 0;
}
