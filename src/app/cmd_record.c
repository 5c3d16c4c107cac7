/* `ingero-top record`: the always-on recorder, a service. A live session
 * whose recording rotates into time-named files in a directory (session/
 * rotate.c, store/recdir.h), summarising storms by default (--record-rate
 * 100), with no frames: its notices go to stderr, one line each (the
 * journal). docs/recording.md, "Always-on recording". */
#include "app/cmd_record.h"

#include "collect/check.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/timearg.h"
#include "session/cli.h"
#include "session/session.h"
#include "store/rec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_DIR "/var/lib/ingero-top"
#define RECORD_RATE 100
#define NS 1000000000ull

static const char usage[] =
    "usage: ingero-top record [--dir DIR] [--rotate DUR] [--max-size SIZE] [--retain DUR]\n"
    "                         [--record-rate N] [live options] [-- CMD ARGS]\n"
    "\n"
    "Records all the time, as a service: files that rotate by time, named by the\n"
    "second they start (DIR/ingero-2026-11-27T09-00-00.db, UTC), each a normal\n"
    "recording; the oldest are pruned. Replay: ingero-top --replay DIR --since\n"
    "'10m ago' (docs/recording.md, \"Always-on recording\").\n"
    "\n"
    "  --dir DIR          where the files go (default " RECORD_DIR ", made 0700)\n"
    "  --rotate DUR       a new file at every multiple of DUR, UTC (default 1h;\n"
    "                     whole seconds: 5s, 10m, 1h)\n"
    "  --max-size SIZE    all the files together (default 20G; at least 2M); the\n"
    "                     file being written holds at most half of it\n"
    "  --retain DUR       files that ended longer ago are removed (default 7d;\n"
    "                     30m, 12h, 7d; 0 = kept until --max-size)\n"
    "  --record-rate N    per thread, the first N calls of a second as rows, the\n"
    "                     rest counted per run (default 100; 0 = every call)\n"
    "  live options       --pid, --lib, --no-system-libs, --no-stacks, --no-waits,\n"
    "                     --flight, -v (ingero-top --help)\n"
    "\n"
    "A kill -9 loses at most the last second. SIGTERM or SIGINT close the file\n"
    "being written (a self-contained file) and exit 0.\n";

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	stop_flag = sig;
}

/* A duration with d (days) besides timearg's units; 0 allowed when zero_ok. */
static int parse_span(const char *s, uint64_t *ns)
{
	size_t n = strlen(s);
	if (n > 1 && s[n - 1] == 'd') {
		char num[32];
		char *end;
		snprintf(num, sizeof(num), "%.*s", (int)(n - 1), s);
		double d = strtod(num, &end);
		if (end == num || *end || !(d > 0) || d > 36500)
			return -EINVAL;
		*ns = (uint64_t)(d * 86400.0 * 1e9);
		return 0;
	}
	return timearg_duration(s, ns);
}

static int bad(const char *opt, const char *arg, const char *why)
{
	char a[128];
	fprintf(stderr, "ingero-top record: invalid %s '%s': %s (see ingero-top record --help)\n",
		opt, esc_str(a, sizeof(a), arg, 0), why);
	return -1;
}

/* The options of the service, taken out of argv (the rest is for
 * cli_parse). 0, 1 after --help, -1 after a one-line error. */
static int take_own(struct cli *c, int *argc, char **argv)
{
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *o = argv[i], *v = i + 1 < *argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--")) { /* the command and its arguments are its own */
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(usage, stdout);
			return 1;
		}
		if (!strcmp(o, "--flight") || !strncmp(o, "--flight=", 9))
			c->flight_s = 1; /* given: cli_parse reads it */
		int own = !strcmp(o, "--dir") || !strcmp(o, "--rotate") ||
			  !strcmp(o, "--max-size") || !strcmp(o, "--retain") ||
			  !strcmp(o, "--record-rate");
		if (!own) {
			argv[out++] = argv[i];
			continue;
		}
		if (!v) {
			fprintf(stderr, "ingero-top record: missing value for %s\n", o);
			return -1;
		}
		i++;
		uint64_t x;
		if (!strcmp(o, "--dir")) {
			if (!*v)
				return bad(o, v, "expected a directory");
			c->record_dir = v;
		} else if (!strcmp(o, "--rotate")) {
			if (parse_span(v, &x) || x < NS || x % NS || x > 7 * 86400 * NS)
				return bad(o, v,
					   "expected whole seconds from 1s to 7d (5s, 10m, 1h)");
			c->rotate_ns = x;
		} else if (!strcmp(o, "--retain")) {
			if (strcmp(v, "0") && parse_span(v, &x))
				return bad(o, v, "expected a duration (30m, 12h, 7d) or 0");
			c->retain_ns = strcmp(v, "0") ? x : 0;
		} else if (!strcmp(o, "--max-size")) {
			if (rec_parse_size(v, &x) || x < 2 * CLI_MIN_MAX_DB)
				return bad(o, v, "expected a size of at least 2M (500M, 20G)");
			c->max_size = x;
		} else {
			char *end;
			long r = strtol(v, &end, 10);
			if (end == v || *end || r < 0 || r > 100000000)
				return bad(o, v, "expected calls a second, 0 to 1e8");
			c->record_rate = (unsigned)r;
		}
	}
	argv[out] = NULL;
	*argc = out;
	return 0;
}

/* The service's options: its own and the live ones. 0, 1 (help), -1. */
static int parse(struct cli *c, int argc, char **argv)
{
	struct cli own = {.record_dir = RECORD_DIR,
			  .rotate_ns = 3600 * NS,
			  .max_size = 20ull << 30,
			  .retain_ns = 7 * 86400 * NS,
			  .record_rate = RECORD_RATE};
	int r = take_own(&own, &argc, argv);
	if (r)
		return r;
	argv[0] = "ingero-top";
	if ((r = cli_parse(c, argc, argv)))
		return r > 0 ? 1 : -1;
	if (c->nreplay || c->record || c->max_db || c->demo || c->batch || c->since ||
	    c->prometheus) {
		fprintf(stderr, "ingero-top record: --replay, --record, --max-db, --demo, "
				"--prometheus and the batch options are not for the service (see "
				"ingero-top record --help)\n");
		return -1;
	}
	c->record_dir = own.record_dir;
	c->rotate_ns = own.rotate_ns;
	c->max_size = own.max_size;
	c->retain_ns = own.retain_ns;
	c->record_rate = own.record_rate;
	if (!own.flight_s) /* a service keeps no flight ring unless asked */
		c->flight_s = 0;
	/* the file being written holds at most half the cap: the rest is for
	 * the files before it (store/rec.h, --max-db) */
	c->max_db = c->max_size ? c->max_size / 2 : 0;
	c->batch = true;
	return 0;
}

static void say(const char *msg)
{
	fputs("ingero-top record: ", stderr);
	esc_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

/* The notices not said yet, in order (*said of them were). */
static void say_notices(const struct ig_status *st, uint32_t *said)
{
	if (st->notes_n - *said > IG_STATUS_NOTES)
		*said = st->notes_n - IG_STATUS_NOTES;
	for (; *said != st->notes_n; (*said)++)
		say(st->notes[*said % IG_STATUS_NOTES]);
}

static int run(struct session *s)
{
	uint32_t said = 0;
	char err[1100] = "";
	while (!stop_flag) {
		if (session_wait(s, NULL, 0, 0) < 0)
			break;
		say_notices(session_status(s), &said); /* a full disk among them */
		if (session_done(s))
			break;
	}
	session_finish(s);
	say_notices(session_status(s), &said);
	if (session_stop(s, err, sizeof(err))) {
		say(err);
		return 1;
	}
	return 0;
}

int record_main(int argc, char **argv)
{
	struct cli cli;
	char err[512] = "";
	int r = parse(&cli, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	struct sigaction sa = {.sa_handler = on_stop};
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	log_capture_libbpf(cli.verbose >= 2);
	log_echo(stderr, cli.verbose ? LOG_INFO : LOG_ERROR);
	if (check_privileges(err, sizeof(err)) || check_btf(err, sizeof(err))) {
		fprintf(stderr, "ingero-top record: %s\n", err);
		return 1;
	}
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "ingero-top record: %s\n", err);
		return 1;
	}
	char cap[32] = "no cap", keep[32] = "until the cap";
	if (cli.max_size)
		snprintf(cap, sizeof(cap), "%.1f MiB", (double)cli.max_size / 1048576.0);
	if (cli.retain_ns)
		snprintf(keep, sizeof(keep), "%.0f s", (double)cli.retain_ns / 1e9);
	char d[300];
	fprintf(stderr,
		"ingero-top record: recording to %s: a file every %.0f s, at most %s, kept %s, "
		"--record-rate %u\n",
		esc_str(d, sizeof(d), cli.record_dir, 0), (double)cli.rotate_ns / 1e9, cap, keep,
		cli.record_rate);
	r = run(s);
	session_free(s);
	return r;
}
