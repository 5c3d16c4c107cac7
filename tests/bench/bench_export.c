/* The exports: what a Prometheus scrape costs and what a Perfetto export
 * costs.
 *
 * Metrics: a model fed 20 s of the high-rate synthetic mix (many processes,
 * every kind of event) with its detector; the render on the loop's thread
 * and swap (what one publish costs the tracer per refresh), a scrape over
 * loopback (connect, GET /metrics, read to the end) against the endpoint,
 * and the publish time while a client scrapes without pause, beside the
 * same without it (the endpoint's thread must not slow the loop down:
 * ratio ~1; the machine has 2 cores, so more busy clients would compete
 * with the loop for a CPU, not for a lock).
 *
 * Perfetto: a recording of N events (default 1 000 000, the synthetic mix)
 * made on the fly in DIR (deleted after), then exported in a child process:
 * seconds, events/s, output size, and the child's peak RSS beside that of
 * an export of N/10 events (streaming: the ratio stays ~1). Target: 1M
 * events in under 10 s.
 *
 * Usage: bench_export [events] [dir] */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "core/status.h"
#include "report/perfetto.h"
#include "report/prom.h"
#include "serve/promsrv.h"
#include "store/rec.h"
#include "store/replay.h"
#include "synth.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* --- metrics ----------------------------------------------------------------------------- */

static char *render(const struct ig_model *m, const struct ig_status *st, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct prom_server_stats ss = {0};
	struct prom_opts o = {.srv = &ss};
	prom_write(f, m, an_detect(m), st, &o);
	fclose(f);
	return buf;
}

static int port_of(const char *addr)
{
	return atoi(strrchr(addr, ':') + 1);
}

/* One scrape: connect, request, read to the end. Returns the bytes read. */
static size_t scrape(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n";
	size_t got = 0;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(req) - 1)) {
		char b[65536];
		ssize_t r;
		while ((r = recv(fd, b, sizeof(b), 0)) > 0)
			got += (size_t)r;
	}
	close(fd);
	return got;
}

static atomic_int stop_scrapers;
static atomic_long scrapes_done;

static void *scraper(void *arg)
{
	int port = *(int *)arg;
	while (!stop_scrapers)
		if (scrape(port))
			scrapes_done++;
	return NULL;
}

/* Publish (render + swap) times, ms: median and max over n. */
static void publish_times(struct promsrv *s, const struct ig_model *m, const struct ig_status *st,
			  int n, double *med, double *max)
{
	double *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		size_t len;
		char *b = render(m, st, &len);
		promsrv_publish(s, b, len);
		t[i] = (now_s() - t0) * 1e3;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_d);
	*med = t[n / 2];
	*max = t[n - 1];
	free(t);
}

static void bench_metrics(void)
{
	struct synth_cfg c = {.scenario = SYNTH_BENCH, .seconds = 20};
	struct synth *sy = synth_new(&c);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	uint64_t nev = 0;
	while (synth_next(sy, &e)) {
		model_ingest(m, &e);
		nev++;
	}
	synth_free(sy);
	struct ig_status st = {.mode = IG_MODE_LIVE, .probes_attached = 64, .targets = 9};
	size_t len = 0;
	free(render(m, &st, &len));
	printf("metrics: model of %" PRIu64 " events (synthetic mix), %zu bytes per scrape\n", nev,
	       len);
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	int port = port_of(promsrv_address(s));
	size_t len2;
	promsrv_publish(s, render(m, &st, &len2), len2);
	int n = 2000;
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		scrape(port);
	double t_scrape = (now_s() - t0) / n;
	printf("  scrape over loopback (connect, GET, read) %.1f us  (client and server)\n",
	       t_scrape * 1e6);

	double med0, max0, med1, max1;
	publish_times(s, m, &st, 50, &med0, &max0); /* warm-up */
	publish_times(s, m, &st, 1000, &med0, &max0);
	pthread_t th;
	pthread_create(&th, NULL, scraper, &port);
	double ts = now_s();
	publish_times(s, m, &st, 1000, &med1, &max1);
	double span = now_s() - ts;
	stop_scrapers = 1;
	pthread_join(th, NULL);
	printf("  publish (render + swap) on the loop: median %.3f ms, max %.3f ms "
	       "(%.3f %% of a core at one publish/s)\n",
	       med0, max0, med0 / 10);
	printf("  the same while a client scrapes without pause (%.0f scrapes/s): median %.3f ms, "
	       "max %.3f ms; ratio of medians %.2f\n",
	       (double)scrapes_done / span, med1, max1, med1 / med0);
	promsrv_stop(s);
	an_model_free(m);
}

/* --- perfetto -------------------------------------------------------------------------------- */

/* A recording of n events of the synthetic mix at path. */
static int make_recording(const char *path, uint64_t n)
{
	const char *err;
	unlink(path);
	struct rec *r = rec_open(path, NULL, &err);
	if (!r) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	struct synth_cfg c = {.scenario = SYNTH_BENCH, .seconds = 100000};
	struct synth *sy = synth_new(&c);
	struct ig_event e;
	for (uint64_t i = 0; i < n && synth_next(sy, &e); i++)
		while (rec_event(r, &e) == -ENOBUFS)
			sched_yield();
	synth_free(sy);
	rec_flush(r);
	return rec_close(r);
}

struct run {
	double secs;
	long rss_kib;
	uint64_t bytes, read, slices;
};

/* Exports path in a child (its own peak RSS) into out. */
static int export_child(const char *path, const char *out, struct run *res)
{
	int pfd[2];
	if (pipe(pfd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		const char *paths[] = {path};
		const char *err;
		struct ig_source *src = replay_open(paths, 1, &err);
		FILE *f = fopen(out, "w");
		if (!src || !f)
			_exit(1);
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		struct perfetto_stats st;
		char e2[256];
		double t0 = now_s();
		int rc = perfetto_export(f, src, NULL, &st, e2, sizeof(e2));
		fclose(f);
		struct run r = {.secs = now_s() - t0, .read = st.read, .slices = st.calls + st.offcpu};
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r) || rc)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	int ok = read(pfd[0], res, sizeof(*res)) == sizeof(*res);
	close(pfd[0]);
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	struct stat sb;
	res->rss_kib = ru.ru_maxrss;
	res->bytes = stat(out, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	return ok && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void bench_perfetto(uint64_t n, const char *dir)
{
	char db[4096], small[4200], out[4200];
	snprintf(db, sizeof(db), "%s/ig-bench-export-%d.db", dir, (int)getpid());
	snprintf(small, sizeof(small), "%s.small", db);
	snprintf(out, sizeof(out), "%s.json", db);
	double t0 = now_s();
	if (make_recording(db, n) || make_recording(small, n / 10)) {
		fprintf(stderr, "cannot make the recordings in %s\n", dir);
		return;
	}
	printf("perfetto: recordings of %" PRIu64 " and %" PRIu64 " events made in %.1f s\n", n,
	       n / 10, now_s() - t0);
	struct run big, little;
	if (export_child(db, out, &big) || export_child(small, out, &little)) {
		fprintf(stderr, "the export failed\n");
	} else {
		printf("  export of %" PRIu64 " events: %.2f s, %.0f events/s, %.0f MB of JSON "
		       "(target < 10 s: %s)\n",
		       big.read, big.secs, (double)big.read / big.secs, (double)big.bytes / 1e6,
		       big.secs < 10 ? "met" : "NOT met");
		printf("  peak RSS of the exporting process: %ld MiB for %" PRIu64
		       " events, %ld MiB for %" PRIu64 " (ratio %.2f: streaming)\n",
		       big.rss_kib / 1024, big.read, little.rss_kib / 1024, little.read,
		       (double)big.rss_kib / (double)little.rss_kib);
	}
	unlink(db);
	unlink(small);
	unlink(out);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	bench_metrics();
	bench_perfetto(n, dir);
	return 0;
}
