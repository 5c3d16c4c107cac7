/* `ingero-top export --perfetto OUT.json [--since T] [--until T] [--pid P,...]
 * FILE.db...`: options, opening the recordings, writing the trace to a
 * temporary file renamed into place when complete. */
#include "app/export.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/argcheck.h"
#include "core/escape.h"
#include "core/source.h"
#include "report/perfetto.h"
#include "store/replay.h"

#define MAX_FILES 64
#define MAX_PIDS 64

static const char usage[] =
    "usage: ingero-top export --perfetto OUT.json [--since T] [--until T] [--pid PID,...]\n"
    "                         FILE.db [FILE2.db ...]\n"
    "\n"
    "Writes recordings (ingero-top's, flight-recorder saves, Ingero databases) as a\n"
    "Chrome trace-event JSON file for ui.perfetto.dev: a track per thread, CUDA calls\n"
    "and off-CPU intervals as slices, wake-up arrows, chains. Several files are\n"
    "merged, one process group per node. OUT.json '-' writes to stdout.\n"
    "\n"
    "  --perfetto OUT.json  the file to write\n"
    "  --since T, --until T keep what overlaps this range; T is seconds from the start\n"
    "                       of the recordings (+12.5), Unix seconds (1767225600.5) or a\n"
    "                       UTC time (2026-01-01T00:00:05Z, 2026-01-01T00:00:05.25Z)\n"
    "  --pid PID,...        keep these processes only\n"
    "  -h, --help           this help\n";

struct when {
	int set, rel;
	double secs;   /* rel: from the start; else Unix seconds (integral part) */
	uint64_t frac; /* ns of an absolute time */
};

static int bad(const char *opt, const char *arg, const char *why)
{
	arg_bad("ingero-top: export", "ingero-top export", opt, arg, why);
	return 2;
}

static int parse_when(const char *s, struct when *w)
{
	char *end;
	memset(w, 0, sizeof(*w));
	w->set = 1;
	if (s[0] == '+') {
		w->rel = 1;
		errno = 0;
		w->secs = strtod(s + 1, &end);
		return errno || end == s + 1 || *end || !isfinite(w->secs) || w->secs < 0 ? -1 : 0;
	}
	if (strchr(s, 'T')) {
		struct tm tm = {0};
		const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
		if (!p)
			return -1;
		if (*p == '.') {
			uint64_t mul = 100000000;
			for (p++; *p >= '0' && *p <= '9'; p++, mul /= 10)
				w->frac += (uint64_t)(*p - '0') * mul;
		}
		if (strcmp(p, "Z"))
			return -1;
		time_t t = timegm(&tm);
		if (t < 0)
			return -1;
		w->secs = (double)t;
		return 0;
	}
	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > 1e11)
		return -1;
	w->secs = floor(v);
	w->frac = (uint64_t)llround((v - floor(v)) * 1e9);
	return 0;
}

static uint64_t resolve(const struct when *w, uint64_t start)
{
	if (!w->set)
		return 0;
	if (w->rel)
		return start + (uint64_t)llround(w->secs * 1e9);
	return (uint64_t)w->secs * 1000000000ull + w->frac;
}

static int parse_pids(const char *arg, uint32_t *pids, int *n)
{
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		if (!len || len > 7 || strspn(p, "0123456789") < len || *n == MAX_PIDS)
			return -1;
		long v = strtol(p, NULL, 10);
		if (v < 1 || v > 4194304)
			return -1;
		pids[(*n)++] = (uint32_t)v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

struct export_args {
	const char *out;
	struct when since, until;
	uint32_t pids[MAX_PIDS];
	int npids;
	const char *files[MAX_FILES];
	int nfiles;
};

static int parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option lo[] = {
	    {"perfetto", required_argument, NULL, 'o'}, {"since", required_argument, NULL, 's'},
	    {"until", required_argument, NULL, 'u'},	{"pid", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},		{NULL, 0, NULL, 0},
	};
	int opt;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":p:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'o':
			a->out = optarg;
			break;
		case 's':
		case 'u':
			if (parse_when(optarg, opt == 's' ? &a->since : &a->until))
				return bad(
				    opt == 's' ? "--since" : "--until", optarg,
				    "expected +SECS, Unix seconds or YYYY-MM-DDTHH:MM:SS[.frac]Z");
			break;
		case 'p':
			if (parse_pids(optarg, a->pids, &a->npids))
				return bad("--pid", optarg, "expected PID[,PID...] (64 at most)");
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		case ':':
			fprintf(stderr, "ingero-top: export: missing value for %s\n",
				argv[optind - 1]);
			return 2;
		default: {
			char e[256];
			fprintf(stderr, "ingero-top: export: unknown option '%s' (see --help)\n",
				esc_str(e, sizeof(e), argv[optind - 1], 0));
			return 2;
		}
		}
	}
	for (; optind < argc; optind++) {
		if (a->nfiles == MAX_FILES)
			return bad("FILE", argv[optind], "too many files (64 at most)");
		a->files[a->nfiles++] = argv[optind];
	}
	if (!a->out) {
		fprintf(stderr, "ingero-top: export: give the output: --perfetto OUT.json\n");
		return 2;
	}
	if (!a->nfiles) {
		fprintf(stderr, "ingero-top: export: give at least one recording (FILE.db)\n");
		return 2;
	}
	return 0;
}

/* Writes the trace to path through a temporary file in the same folder. */
static int write_trace(const char *path, struct ig_source *src, const struct perfetto_opts *o,
		       struct perfetto_stats *st)
{
	char err[512] = "", tmp[4200];
	FILE *f = stdout;
	int to_stdout = !strcmp(path, "-");
	if (!to_stdout) {
		snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
		f = fopen(tmp, "wex");
		if (!f) {
			char e[256];
			fprintf(stderr, "ingero-top: export: cannot write %s: %s\n",
				esc_str(e, sizeof(e), tmp, 0), strerror(errno));
			return 1;
		}
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	}
	int rc = perfetto_export(f, src, o, st, err, sizeof(err));
	if (to_stdout)
		return rc ? (fprintf(stderr, "ingero-top: export: %s\n", err), 1) : 0;
	if (fclose(f) && !rc) {
		rc = -EIO;
		snprintf(err, sizeof(err), "cannot write the trace: %s", strerror(errno));
	}
	if (!rc && rename(tmp, path)) {
		rc = -errno;
		snprintf(err, sizeof(err), "cannot rename the trace into place: %s",
			 strerror(errno));
	}
	if (rc) {
		unlink(tmp);
		fputs("ingero-top: export: ", stderr);
		esc_fputs(stderr, err, 0);
		fputc('\n', stderr);
		return 1;
	}
	return 0;
}

int export_main(int argc, char **argv)
{
	struct export_args a = {0};
	int r = parse_args(argc, argv, &a);
	if (r)
		return r < 0 ? 0 : r;
	const char *err = NULL;
	/* a trace shows measured calls: not the ones a --record-rate run
	 * summarised, whose times a replay estimates (counted, said below) */
	struct replay_opts ro = {.no_summaries = 1};
	struct ig_source *src = replay_open_opts(a.files, a.nfiles, &ro, &err);
	if (!src) {
		fputs("ingero-top: export: ", stderr);
		esc_fputs(stderr, err ? err : "cannot open the recordings", 0);
		fputc('\n', stderr);
		return 1;
	}
	uint64_t start = 0, end = 0;
	replay_span(src, &start, &end);
	struct perfetto_opts o = {.since_ns = resolve(&a.since, start),
				  .until_ns = resolve(&a.until, start),
				  .pids = a.pids,
				  .npids = a.npids};
	if (o.since_ns && o.until_ns && o.until_ns < o.since_ns) {
		src->ops->free(src);
		fprintf(stderr, "ingero-top: export: --until is before --since\n");
		return 2;
	}
	struct perfetto_stats st;
	r = write_trace(a.out, src, &o, &st);
	src->ops->free(src);
	if (!r) {
		char e[256];
		fprintf(
		    stderr,
		    "ingero-top: exported %s: %llu calls, %llu off-CPU intervals, %llu wake-ups, "
		    "%llu chains, %llu threads in %llu processes\n",
		    esc_str(e, sizeof(e), a.out, 0), (unsigned long long)st.calls,
		    (unsigned long long)st.offcpu, (unsigned long long)st.flows,
		    (unsigned long long)st.chains, (unsigned long long)st.threads,
		    (unsigned long long)st.processes);
		if (st.summarised)
			fprintf(stderr,
				"ingero-top: export: %llu calls the recording summarised "
				"(--record-rate) are not in the trace: only the calls kept as "
				"rows (docs/recording.md)\n",
				(unsigned long long)st.summarised);
	}
	return r;
}
