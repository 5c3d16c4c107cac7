/* `ingero-top explain`: the incident report of a recording (or of a few
 * seconds of live tracing) as text, Markdown or JSON (report/explain.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/fleet_main.h"
#include "app/handover.h"
#include "core/argcheck.h"
#include "core/escape.h"
#include "core/timearg.h"
#include "report/explain.h"
#include "serve/ho_run.h"
#include "session/session.h"
#include "stacks/stacks.h"

static const char explain_usage[] =
    "usage: ingero-top explain --replay FILE.db [FILE2.db ...] [OPTIONS]\n"
    "       ingero-top explain --pid PID[,PID...] [-d SECS] [OPTIONS]\n"
    "       ingero-top explain [-d SECS] [OPTIONS] -- CMD [ARGS...]\n"
    "\n"
    "An incident report: when and where, the causes ranked by impact with their\n"
    "evidence and proof, the slowest calls with their stacks, what to do, the\n"
    "per-op latency and where the feeding threads' time went.\n"
    "\n"
    "  --replay FILE...   recordings (ingero-top's or Ingero's)\n"
    "  -p, --pid PID,...  live: trace these processes (root); with --replay: only\n"
    "                     this process's chains, calls and ops\n"
    "  -- CMD ARGS        start CMD and trace it (root)\n"
    "  -d, --duration S   seconds of live observation (default 10; a command\n"
    "                     that exits first ends it)\n"
    "  --since T          only from T: +30s (from the start), -5m (before the\n"
    "  --until T          end), 2026-03-20T14:02:00Z, or Unix ns (recordings)\n"
    "  --chain ID         only this chain (chain-0003 or 3)\n"
    "  --md               Markdown for a ticket\n"
    "  --json             one JSON object (docs/json.md)\n"
    "  --width N          text width (default: $COLUMNS, the terminal, or 80)\n"
    "  -w, --window SECS  rolling window of the detector (default 10)\n"
    "  --no-stacks        do not capture or load stacks\n"
    "  -h, --help         this help\n";

enum {
	E_REPLAY = 400,
	E_SINCE,
	E_UNTIL,
	E_CHAIN,
	E_MD,
	E_JSON,
	E_WIDTH,
	E_NOSTACKS,
};

static const struct option explain_opts_long[] = {
    {"replay", no_argument, NULL, E_REPLAY},
    {"pid", required_argument, NULL, 'p'},
    {"duration", required_argument, NULL, 'd'},
    {"since", required_argument, NULL, E_SINCE},
    {"until", required_argument, NULL, E_UNTIL},
    {"chain", required_argument, NULL, E_CHAIN},
    {"md", no_argument, NULL, E_MD},
    {"json", no_argument, NULL, E_JSON},
    {"width", required_argument, NULL, E_WIDTH},
    {"window", required_argument, NULL, 'w'},
    {"no-stacks", no_argument, NULL, E_NOSTACKS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct eargs {
	struct ho_target t;
	double duration_s;
	const char *since, *until, *chain, *pidarg;
	uint32_t only_pid;
	int md, json, width;
};

static int ebad(const char *what, const char *arg, const char *why)
{
	arg_bad("ingero-top explain", "ingero-top explain", what, arg, why);
	return 2;
}

/* One option into a: 0, or the exit status. */
static int explain_opt(struct eargs *a, int opt, int argc, char **argv)
{
	double v;
	switch (opt) {
	case E_REPLAY:
		while (optind < argc && argv[optind][0] != '-') {
			if (a->t.nreplay == CLI_MAX_REPLAY)
				return ebad("--replay", argv[optind],
					    "too many files (64 at most)");
			a->t.replay[a->t.nreplay++] = argv[optind++];
		}
		if (!a->t.nreplay)
			return ebad("--replay", "", "give at least one FILE.db");
		return 0;
	case 'p':
		a->pidarg = optarg;
		return 0;
	case 'd':
		if (arg_double(optarg, 0.5, 86400, &a->duration_s))
			return ebad("-d", optarg, "expected seconds between 0.5 and 86400");
		return 0;
	case 'w':
		a->t.window = optarg;
		return 0;
	case E_SINCE:
		a->since = optarg;
		return 0;
	case E_UNTIL:
		a->until = optarg;
		return 0;
	case E_CHAIN:
		a->chain = optarg;
		return 0;
	case E_MD:
		a->md = 1;
		return 0;
	case E_JSON:
		a->json = 1;
		return 0;
	case E_WIDTH:
		if (arg_double(optarg, 40, 1000, &v))
			return ebad("--width", optarg, "expected 40 to 1000 columns");
		a->width = (int)v;
		return 0;
	case E_NOSTACKS:
		a->t.no_stacks = true;
		return 0;
	case 'h':
		fputs(explain_usage, stdout);
		return -1;
	case ':':
		return ebad("option", argv[optind - 1], "it needs a value");
	}
	return ebad("option", argv[optind - 1], "unknown option");
}

static int parse_explain(struct eargs *a, int argc, char **argv)
{
	int opt, r;
	a->duration_s = 10;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+:p:d:w:h", explain_opts_long, NULL)) != -1)
		if ((r = explain_opt(a, opt, argc, argv)))
			return r;
	if (optind < argc && !strcmp(argv[optind - 1], "--"))
		a->t.cmd = &argv[optind];
	else if (optind < argc)
		return ebad("argument", argv[optind], "a command goes after --");
	else if (optind > 1 && !strcmp(argv[optind - 1], "--"))
		return ebad("option", "--", "it must be followed by a command");
	if (a->pidarg && a->t.nreplay) { /* a recording: the pid filters */
		double v;
		if (arg_double(a->pidarg, 1, 4194304, &v) || v != floor(v))
			return ebad("--pid", a->pidarg,
				    "with --replay, one process id to report on");
		a->only_pid = (uint32_t)v;
	} else if (a->pidarg) {
		a->t.pids = a->pidarg;
		if (!strchr(a->pidarg, ','))
			a->only_pid = (uint32_t)strtoul(a->pidarg, NULL, 10);
	}
	int sources = !!a->t.nreplay + !!a->t.pids + !!a->t.cmd;
	if (sources != 1) {
		fprintf(stderr,
			"ingero-top explain: give exactly one of --replay FILE..., --pid PID or "
			"-- CMD (see ingero-top explain --help)\n");
		return 2;
	}
	if (!a->t.nreplay && (a->since || a->until)) {
		fprintf(stderr,
			"ingero-top explain: --since and --until select a part of a recording; "
			"live, -d sets how long to observe\n");
		return 2;
	}
	if (a->md && a->json) {
		fprintf(stderr, "ingero-top explain: give --md or --json, not both\n");
		return 2;
	}
	return 0;
}

/* $COLUMNS, else the terminal of stdout, else 80. */
static int text_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	if (c && atoi(c) > 0)
		return atoi(c);
	if (isatty(1) && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static volatile sig_atomic_t explain_stop;

static void on_explain_stop(int sig)
{
	explain_stop = sig;
}

/* Ingests what the report covers: the recording's range, or -d seconds
 * of live tracing. 0, or the exit status. */
static int gather(struct ho_run *run, struct eargs *a, uint64_t *since, uint64_t *until)
{
	char err[256], e[300];
	if (run->live) {
		fprintf(stderr, "ingero-top: observing for %gs (Ctrl-C to stop sooner)\n",
			a->duration_s);
		ho_live_for(run, (int)(a->duration_s * 1000), &explain_stop);
		session_finish(run->s);
		return 0;
	}
	uint64_t start, end;
	ho_span(run, &start, &end);
	if ((a->since && timearg_parse(a->since, start, end, since, err, sizeof(err))) ||
	    (a->until && timearg_parse(a->until, start, end, until, err, sizeof(err)))) {
		fprintf(stderr, "ingero-top explain: %s\n", esc_str(e, sizeof(e), err, 0));
		return 2;
	}
	if (*until && *since >= *until) {
		fprintf(stderr, "ingero-top explain: --since must be before --until\n");
		return 2;
	}
	int r = ho_replay(run, *since, *until, &explain_stop);
	const struct ig_status *st = session_status(run->s);
	if (r) { /* the replay's own words say why (the file, the table, the row) */
		if (r == -EIO && st->message[0])
			fprintf(stderr, "ingero-top explain: %s\n",
				esc_str(e, sizeof(e), st->message, 0));
		else
			fprintf(stderr, "ingero-top explain: replay failed: %s\n", strerror(-r));
		return 1;
	}
	if (!run->events && st->rows_refused && !st->replay_start_ns) {
		fprintf(stderr,
			"ingero-top explain: nothing to explain: every row of the recording was "
			"refused (%" PRIu64 " rows with values out of range or NULL, "
			"docs/recording.md)\n",
			st->rows_refused);
		return 1;
	}
	if (!run->events) {
		char a1[40], a2[40], ref[160];
		explain_refused_words(ref, sizeof(ref), st->rows_refused);
		fprintf(stderr,
			"ingero-top explain: no events in the range (the data spans %s .. %s)%s\n",
			timearg_iso(a1, sizeof(a1), start), timearg_iso(a2, sizeof(a2), end), ref);
		return 1;
	}
	return 0;
}

int explain_main(int argc, char **argv)
{
	struct eargs a = {0};
	if (fleet_wanted(argc, argv)) /* explain --ssh HOSTS: the fleet's report */
		return fleet_explain_main(argc, argv);
	int r = parse_explain(&a, argc, argv);
	if (r)
		return r < 0 ? 0 : r;
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = on_explain_stop};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct ho_run run;
	char err[1024], e[1200];
	if (ho_open(&run, &a.t, 0, 0, err, sizeof(err))) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(e, sizeof(e), err, 0));
		return 1;
	}
	uint64_t since = 0, until = 0;
	if ((r = gather(&run, &a, &since, &until))) {
		ho_close(&run);
		return r;
	}
	if (session_stacks(run.s))
		stacks_flush(session_stacks(run.s), 2000);
	struct explain_in in;
	ho_explain_in(&run, &in);
	in.since_ns = since;
	in.until_ns = until;
	struct explain_opts o = {
	    .pid = a.only_pid,
	    .chain = a.chain,
	    .max_chains = a.json ? 0 : 5,
	};
	json_t *rep = explain_build(&in, &o, err, sizeof(err));
	if (!rep) {
		fprintf(stderr, "ingero-top explain: %s\n", esc_str(e, sizeof(e), err, 0));
		ho_close(&run);
		return 1;
	}
	if (a.json)
		r = ig_json_write_line(stdout, rep);
	else if (a.md)
		r = explain_md(stdout, rep);
	else
		r = explain_text(stdout, rep, a.width ? a.width : text_width());
	json_decref(rep);
	if (fflush(stdout) || r)
		r = errno == EPIPE ? 0 : 1;
	ho_close(&run);
	return r;
}
