/* `ingero-top export --perfetto OUT.json [--since T] [--until T] [--pid P,...]
 * [--max-events N] FILE.db...`: options, opening the recordings, the size
 * said before a large trace, writing the trace to a temporary file
 * (store/safefile.h: 0600, never through a link) renamed into place when
 * complete. */
#include "app/export.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/argcheck.h"
#include "core/escape.h"
#include "core/fmt.h"
#include "core/source.h"
#include "report/explain.h"
#include "report/perfetto.h"
#include "store/query.h"
#include "store/replay.h"
#include "store/safefile.h"

#define MAX_FILES 64
#define MAX_PIDS 64
/* JSON bytes of an event, about: 270 to 330 in the shipped recordings */
#define EVENT_BYTES 250
/* recording bytes of a row, about, when its rows cannot be counted */
#define ROW_BYTES 180
/* a trace estimated larger than this is said before it is written */
#define LARGE_BYTES (256ull << 20)

static const char usage[] =
    "usage: ingero-top export --perfetto OUT.json [--since T] [--until T] [--pid PID,...]\n"
    "                         [--max-events N] FILE.db [FILE2.db ...]\n"
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
    "  --max-events N       write the first N events only; the trace and stderr say\n"
    "                       it was cut and how many events were left out (exit 0)\n"
    "  -h, --help           this help\n"
    "\n"
    "OUT.json is created 0600 (an existing OUT.json must be a regular file of yours,\n"
    "not a link). A trace estimated above 256 MiB is said on stderr before it is\n"
    "written.\n";

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
	uint64_t max_events;
	struct when since, until;
	uint32_t pids[MAX_PIDS];
	int npids;
	const char *files[MAX_FILES];
	int nfiles;
};

static int parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option lo[] = {
	    {"perfetto", required_argument, NULL, 'o'},
	    {"since", required_argument, NULL, 's'},
	    {"until", required_argument, NULL, 'u'},
	    {"pid", required_argument, NULL, 'p'},
	    {"max-events", required_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
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
		case 'm': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || *end || errno || v < 1 ||
			    v > 1000000000000ull)
				return bad("--max-events", optarg, "expected a count, 1 to 10^12");
			a->max_events = v;
			break;
		}
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

static void say_error(const char *err)
{
	fputs("ingero-top: export: ", stderr);
	esc_fputs(stderr, err, 0);
	fputc('\n', stderr);
}

/* The events and snapshots the recordings hold: their rows counted, or
 * their sizes divided by a row's when a file cannot be counted. */
static uint64_t rows_of(const struct export_args *a)
{
	uint64_t total = 0;
	for (int i = 0; i < a->nfiles; i++) {
		char err[256];
		uint64_t n = 0;
		struct stat sb;
		struct query *q = query_open(&a->files[i], 1, err, sizeof(err));
		if (q && !query_event_rows(q, &n))
			total += n;
		else if (!stat(a->files[i], &sb))
			total += (uint64_t)sb.st_size / ROW_BYTES;
		query_free(q);
	}
	return total;
}

/* Before writing: a warning when the trace will be large (its rows in the
 * time range, a share of the span, at EVENT_BYTES each). */
static void say_size(const struct export_args *a, const struct perfetto_opts *o, uint64_t start,
		     uint64_t end)
{
	double rows = (double)rows_of(a);
	if (end > start && (o->since_ns || o->until_ns)) {
		uint64_t s = o->since_ns > start ? o->since_ns : start;
		uint64_t e = o->until_ns && o->until_ns < end ? o->until_ns : end;
		rows = e > s ? rows * (double)(e - s) / (double)(end - start) : 0;
	}
	if (o->max_events && rows > (double)o->max_events)
		rows = (double)o->max_events;
	double bytes = rows * EVENT_BYTES;
	if (bytes < (double)LARGE_BYTES)
		return;
	char n[32], b[32];
	/* --pid is not in the estimate: the rows of every process are counted */
	fprintf(stderr,
		"ingero-top: export: warning: a large trace: %s %s events, about %s of JSON; a "
		"browser may not open it: narrow it with --since/--until or --pid, or cut it with "
		"--max-events N\n",
		o->npids ? "at most" : "about", fmt_count(n, sizeof(n), (uint64_t)rows, 6),
		fmt_bytes(b, sizeof(b), (uint64_t)bytes));
}

/* The output: stdout for "-", else a safe temporary file beside path. */
static FILE *open_out(const char *path, struct safefile **sf)
{
	char err[PATH_MAX + 256];
	*sf = NULL;
	if (!strcmp(path, "-"))
		return stdout;
	if (safefile_out_open(path, sf, err, sizeof(err))) {
		say_error(err);
		return NULL;
	}
	int fd = fcntl(safefile_fd(*sf), F_DUPFD_CLOEXEC, 3);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(err, sizeof(err), "cannot write %s: %s", path, strerror(errno));
		say_error(err);
		if (fd >= 0)
			close(fd);
		safefile_unlink(*sf);
		safefile_close(*sf);
		*sf = NULL;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* An empty trace is not an export: -ENODATA with the reason when nothing
 * was drawn (every row refused, or none in the range and pids asked). */
static int nothing_exported(struct ig_source *src, const struct perfetto_stats *st, char *err,
			    size_t len)
{
	struct replay_stats rs;
	replay_get_stats(src, &rs);
	if (st->calls || st->offcpu || st->instants || st->counters)
		return 0;
	if (rs.refused && !st->filtered)
		snprintf(err, len,
			 "nothing to export: every row of the recording was refused (%" PRIu64
			 " rows with values out of range or NULL, docs/recording.md)",
			 rs.refused);
	else
		snprintf(err, len,
			 "nothing to export: no event of the recordings is in the range and "
			 "processes asked (--since, --until, --pid)%s",
			 rs.refused ? "; rows were refused too (docs/recording.md)" : "");
	return -ENODATA;
}

/* Writes the trace to f, then puts the file in place (sf); 0 or 1. */
static int write_trace(FILE *f, struct safefile *sf, struct ig_source *src,
		       const struct perfetto_opts *o, struct perfetto_stats *st)
{
	char err[PATH_MAX + 256] = "";
	int rc = perfetto_export(f, src, o, st, err, sizeof(err));
	if (!rc)
		rc = nothing_exported(src, st, err, sizeof(err));
	if (sf && fclose(f) && !rc) {
		rc = -EIO;
		snprintf(err, sizeof(err), "cannot write the trace: %s", strerror(errno));
	}
	if (sf && !rc)
		rc = safefile_out_commit(sf, err, sizeof(err));
	if (rc)
		say_error(err);
	if (sf && rc)
		safefile_unlink(sf);
	safefile_close(sf);
	return rc ? 1 : 0;
}

static void say_done(const struct export_args *a, const struct perfetto_stats *st, uint64_t start)
{
	char e[256], cut[64] = "";
	if (st->cut_ns)
		snprintf(cut, sizeof(cut), ", cut at %" PRIu64 " events", a->max_events);
	fprintf(stderr,
		"ingero-top: exported %s%s: %llu calls, %llu off-CPU intervals, %llu wake-ups, "
		"%llu chains, %llu threads in %llu processes\n",
		esc_str(e, sizeof(e), a->out, 0), cut, (unsigned long long)st->calls,
		(unsigned long long)st->offcpu, (unsigned long long)st->flows,
		(unsigned long long)st->chains, (unsigned long long)st->threads,
		(unsigned long long)st->processes);
	if (st->chains_ingero)
		fprintf(stderr,
			"ingero-top: export: %llu of the chains are Ingero's, recorded in the "
			"file (named \"(Ingero's)\"); the viewer and explain show ingero-top's own "
			"analysis of the same events (ingero-top explain FILE)\n",
			(unsigned long long)st->chains_ingero);
	if (st->summarised)
		fprintf(stderr,
			"ingero-top: export: %llu calls the recording summarised "
			"(--record-rate) are not in the trace: only the calls kept as "
			"rows (docs/recording.md)\n",
			(unsigned long long)st->summarised);
	if (st->cut_ns)
		fprintf(stderr,
			"ingero-top: export: the trace is cut: --max-events %" PRIu64
			" reached at +%.3f s; %" PRIu64 " more events (and chains) were left "
			"out: export a range with --since/--until, or raise --max-events\n",
			a->max_events,
			st->cut_ns > start ? (double)(st->cut_ns - start) / 1e9 : 0.0,
			st->left_out);
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
				  .npids = a.npids,
				  .max_events = a.max_events};
	if (o.since_ns && o.until_ns && o.until_ns < o.since_ns) {
		src->ops->free(src);
		fprintf(stderr, "ingero-top: export: --until is before --since\n");
		return 2;
	}
	struct perfetto_stats st;
	struct safefile *sf;
	FILE *f = open_out(a.out, &sf);
	if (f) {
		say_size(&a, &o, start, end);
		r = write_trace(f, sf, src, &o, &st);
	}
	struct replay_stats rs;
	replay_get_stats(src, &rs);
	uint64_t refused = rs.refused;
	src->ops->free(src);
	if (!f)
		return 1;
	if (!r)
		say_done(&a, &st, start);
	if (!r && refused) {
		char ref[160];
		explain_refused_words(ref, sizeof(ref), refused);
		fprintf(stderr, "ingero-top: export: %s\n", ref + 2);
	}
	return r;
}
