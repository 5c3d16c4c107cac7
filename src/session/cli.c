/* Option parsing for ingero-top (getopt_long), with one-line errors. */
#include "session/cli.h"

#include "core/argcheck.h"
#include "core/escape.h"
#include "store/rec.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: ingero-top [OPTIONS] [--pid PID[,PID...]] [-- CMD [ARGS...]]\n"
    "       ingero-top --replay FILE.db [FILE2.db ...] [OPTIONS]\n"
    "       ingero-top --replay DIR|'GLOB' [--since T] [--until T] [OPTIONS]\n"
    "       ingero-top record [--dir DIR] [--rotate 1h] [--max-size 20G] [--retain 7d]\n"
    "       ingero-top check\n"
    "       ingero-top export --perfetto OUT.json FILE.db [FILE2.db ...]\n"
    "       ingero-top explain|query|mcp ...   (docs/explain.md; each has --help)\n"
    "       ingero-top --ssh HOST[,HOST...] [--batch|--json] ...  (many hosts over\n"
    "                       ssh: docs/fleet.md; ingero-top --ssh x --help)\n"
    "\n"
    "Live top for GPU workloads: CUDA runtime/driver calls (eBPF uprobes) joined\n"
    "with scheduler, memory and block-I/O events, per op and per thread.\n"
    "\n"
    "targets (live, needs root or CAP_BPF+CAP_PERFMON):\n"
    "  (default)            every process that maps a CUDA library\n"
    "  -p, --pid PID,...    these processes, their threads and future children\n"
    "  -- CMD ARGS          start CMD and trace it; batch mode exits when it exits\n"
    "  --lib PATH           also attach this library or executable (repeatable)\n"
    "  --no-system-libs     do not attach ldconfig and /usr/local/cuda libraries\n"
    "\n"
    "output:\n"
    "  -b, --batch          print text frames like top -b instead of the screen\n"
    "  -n, --frames N       stop after N frames\n"
    "  -d, --delay SECS     refresh interval (default 1)\n"
    "      --summary        print one final frame over the whole run\n"
    "      --json           one JSON object per frame, one per line\n"
    "      --events         print every event, one line each (with --json: one\n"
    "                       JSON object each; docs/batch.md, docs/json.md)\n"
    "      --stacks         also print the top call stacks per op\n"
    "      --stream         versioned JSON lines for `--ssh` (the fleet): a hello,\n"
    "                       a frame per refresh, pongs to pings read on stdin;\n"
    "                       ends when stdin ends (docs/json.md, \"Stream\")\n"
    "  -w, --window SECS    rolling window of the statistics (default 10)\n"
    "\n"
    "recording:\n"
    "      --record FILE    record the session to a SQLite file\n"
    "      --max-db SIZE    bound the recording (e.g. 500M, 2G; at least 1M):\n"
    "                       oldest seconds pruned\n"
    "      --record-rate N  keep at most N calls a second of each thread as rows\n"
    "                       and count the rest per run (a sync storm's millions);\n"
    "                       slow calls and calls that left the CPU are kept\n"
    "      --flight SECS    keep the last SECS of events in memory (default 300)\n"
    "      --flight-dir DIR where the flight recorder saves (default:\n"
    "                       $XDG_STATE_HOME/ingero-top or ~/.local/state/ingero-top)\n"
    "      --replay FILE... replay recordings (ingero-top or Ingero databases); a\n"
    "                       directory of `ingero-top record` or a quoted glob: its\n"
    "                       files that --since/--until need, as one\n"
    "      --speed X        replay speed (0.25..1000, 0 = as fast as possible)\n"
    "      --since T        replay from T: +30s (from the start), -5m (before the\n"
    "      --until T        end), 10m ago (before now), 14:02[:30] (UTC, the\n"
    "                       recording's day),\n"
    "                       2026-03-20T14:02:00Z, or Unix ns; the viewer starts\n"
    "                       there, batch counts only the events in the range\n"
    "\n"
    "screen:\n"
    "      --theme NAME     theme name or file (themes/*.theme)\n"
    "      --no-color       monochrome (also NO_COLOR=1)\n"
    "      --ascii          ASCII box and bar characters\n"
    "\n"
    "demo:\n"
    "      --demo [NAME]    run a scenario with a known root cause and trace it\n"
    "                       (default cpu-contention; see docs/scenarios.md)\n"
    "\n"
    "metrics:\n"
    "      --prometheus [HOST:]PORT  serve Prometheus metrics at /metrics (a bare\n"
    "                       port listens on 127.0.0.1; docs/prometheus.md)\n"
    "      --prometheus-procs N  processes with a label of their own (default 10)\n"
    "\n"
    "other:\n"
    "      --raw-tp         use raw tracepoints even where tp_btf works\n"
    "      --stack-mode M   which calls get their user stack: tail (default: calls\n"
    "                       longer than their op's p95, and 1 in 64 of the others),\n"
    "                       all, or off (docs/stacks.md)\n"
    "      --no-stacks      do not capture user stacks (--stack-mode off)\n"
    "      --no-waits       do not trace the syscalls, page faults and wait channels\n"
    "                       of the traced threads (on by default; docs/detection.md)\n"
    "  -v, --verbose        more messages (libbpf debug output with -vv)\n"
    "  -h, --help           this help;  -V, --version  the version\n"
    "\n"
    "exit status: with -- CMD, the command's (its exit code, or 128+N when signal N\n"
    "killed it) if it ended first; 1 when ingero-top failed, a recording that stopped\n"
    "on an error included (the reason goes to stderr); 2 for a bad option; else 0.\n";

enum {
	OPT_SUMMARY = 256,
	OPT_JSON,
	OPT_EVENTS,
	OPT_LIB,
	OPT_RECORD,
	OPT_MAX_DB,
	OPT_RECORD_RATE,
	OPT_FLIGHT,
	OPT_FLIGHT_DIR,
	OPT_REPLAY,
	OPT_SPEED,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_THEME,
	OPT_NO_COLOR,
	OPT_ASCII,
	OPT_RAW_TP,
	OPT_NO_SYSTEM_LIBS,
	OPT_NO_STACKS,
	OPT_STACK_MODE,
	OPT_NO_WAITS,
	OPT_DEMO,
	OPT_STACKS,
	OPT_PROMETHEUS,
	OPT_PROMETHEUS_PROCS,
	OPT_STREAM,
};

static const struct option longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "batch", no_argument, NULL, 'b' },
	{ "frames", required_argument, NULL, 'n' },
	{ "delay", required_argument, NULL, 'd' },
	{ "window", required_argument, NULL, 'w' },
	{ "summary", no_argument, NULL, OPT_SUMMARY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "events", no_argument, NULL, OPT_EVENTS },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "max-db", required_argument, NULL, OPT_MAX_DB },
	{ "record-rate", required_argument, NULL, OPT_RECORD_RATE },
	{ "flight", required_argument, NULL, OPT_FLIGHT },
	{ "flight-dir", required_argument, NULL, OPT_FLIGHT_DIR },
	{ "replay", no_argument, NULL, OPT_REPLAY },
	{ "speed", required_argument, NULL, OPT_SPEED },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "theme", required_argument, NULL, OPT_THEME },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "raw-tp", no_argument, NULL, OPT_RAW_TP },
	{ "no-system-libs", no_argument, NULL, OPT_NO_SYSTEM_LIBS },
	{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },
	{ "stack-mode", required_argument, NULL, OPT_STACK_MODE },
	{ "no-waits", no_argument, NULL, OPT_NO_WAITS },
	{ "demo", no_argument, NULL, OPT_DEMO },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "prometheus", required_argument, NULL, OPT_PROMETHEUS },
	{ "prometheus-procs", required_argument, NULL, OPT_PROMETHEUS_PROCS },
	{ "stream", no_argument, NULL, OPT_STREAM },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* One-line errors: the argument is escaped (it may hold any byte). */
static int bad(const char *opt, const char *arg, const char *why)
{
	arg_bad("ingero-top", "ingero-top", opt, arg, why);
	return -1;
}

static int missing(const char *opt)
{
	char a[128];
	fprintf(stderr, "ingero-top: missing value for %s (see ingero-top --help)\n",
		esc_str(a, sizeof(a), opt, 0));
	return -1;
}

/* A whole number of decimal digits only, in [lo, hi]. */
static int parse_uint(const char *s, long lo, long hi, long *out)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18)
		return -1;
	long v = strtol(s, NULL, 10);
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* PID[,PID...]: no empty item, digits only. */
static int parse_pids(struct cli *c, const char *arg)
{
	if (!*arg)
		return bad("--pid", arg, "expected PID[,PID...]");
	for (const char *p = arg;;) {
		size_t n = strcspn(p, ",");
		char item[32];
		long v;
		snprintf(item, sizeof(item), "%.*s", (int)(n < 31 ? n : 31), p);
		if (!n)
			return bad("--pid", arg, "empty item in the list");
		if (n > 31 || parse_uint(item, 1, 4194304, &v))
			return bad("--pid", arg, "not a list of process ids");
		if (c->npids == CLI_MAX_PIDS)
			return bad("--pid", arg, "too many pids (64 at most)");
		c->pids[c->npids++] = (int)v;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int cli_pid_warning(int pid, char *buf, size_t len)
{
	char path[64], st[512];
	buf[0] = 0;
	if (pid == 1) {
		snprintf(buf, len,
			 "--pid 1 is init: it makes no CUDA calls, and every process it starts "
			 "from now on is traced as its child");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(st, 1, sizeof(st) - 1, f);
	fclose(f);
	st[n] = 0;
	/* pid (comm) state ppid pgrp session tty tpgid flags: comm may hold ')' */
	char *open = strchr(st, '('), *close = strrchr(st, ')');
	unsigned long flags = 0;
	if (!open || !close || close < open ||
	    sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	if (!(flags & 0x00200000)) /* PF_KTHREAD */
		return 0;
	char comm[64], e[64 * 4 + 1];
	snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1), open + 1);
	snprintf(buf, len, "--pid %d is a kernel thread (%s): it makes no CUDA calls", pid,
		 esc_str(e, sizeof(e), comm, 0));
	return 1;
}

/* --prometheus ADDR (checked when the endpoint starts) and
 * --prometheus-procs N. */
static int parse_prometheus(struct cli *c, int opt, const char *arg)
{
	long v;
	if (opt == OPT_PROMETHEUS) {
		if (!*arg)
			return bad("--prometheus", arg, "expected [HOST:]PORT");
		c->prometheus = arg;
		return 0;
	}
	if (parse_uint(arg, 1, 256, &v))
		return bad("--prometheus-procs", arg, "expected a whole number from 1 to 256");
	c->prometheus_procs = (int)v;
	return 0;
}

/* After the loop: the combinations and the lone "--". */
static int check_combinations(struct cli *c, int argc, char **argv, bool replay)
{
	if (replay && !c->nreplay) {
		fprintf(stderr, "ingero-top: --replay needs at least one FILE.db\n");
		return -1;
	}
	if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		if (optind == argc) {
			fprintf(stderr, "ingero-top: -- must be followed by a command to trace\n");
			return -1;
		}
		c->cmd = &argv[optind];
		c->ncmd = argc - optind;
	} else if (optind < argc) {
		char a[256];
		fprintf(stderr, "ingero-top: unexpected argument '%s' (a command goes after --)\n",
			esc_str(a, sizeof(a), argv[optind], 0));
		return -1;
	}
	if (replay && (c->npids || c->cmd || c->record)) {
		fprintf(stderr, "ingero-top: --replay cannot be combined with --pid, --record or a "
				"command\n");
		return -1;
	}
	if ((c->since || c->until) && !replay) {
		fprintf(stderr, "ingero-top: --since and --until select a part of a recording: "
				"they need --replay FILE.db\n");
		return -1;
	}
	if (c->npids && c->cmd) {
		fprintf(stderr, "ingero-top: give either --pid or a command, not both\n");
		return -1;
	}
	if (c->stream && (c->batch || c->json || c->events || c->summary)) {
		fprintf(stderr, "ingero-top: --stream writes its own lines: it cannot be combined "
				"with --batch, --json, --events or --summary\n");
		return -1;
	}
	c->batch |= c->stream; /* no terminal: the batch mode's loop and checks */
	if (c->prometheus_procs && !c->prometheus) {
		fprintf(stderr, "ingero-top: --prometheus-procs needs --prometheus [HOST:]PORT\n");
		return -1;
	}
	if (c->max_db && !c->record) {
		fprintf(stderr,
			"ingero-top: --max-db bounds a recording: it needs --record FILE\n");
		return -1;
	}
	if (c->record_rate && !c->record) {
		fprintf(stderr, "ingero-top: --record-rate shapes a recording: it needs --record FILE\n");
		return -1;
	}
	char w[256];
	for (int i = 0; i < c->npids; i++)
		if (cli_pid_warning(c->pids[i], w, sizeof(w)))
			fprintf(stderr, "ingero-top: warning: %s\n", w);
	return 0;
}

/* An option getopt did not take: unknown, or given a value it does not take. */
static int unknown(char **argv)
{
	const char *a = argv[optind - 1], *eq = strchr(a, '=');
	char e[256], o[8];
	if (optopt && strncmp(a, "--", 2)) {
		snprintf(o, sizeof(o), "-%c", optopt);
		a = o;
	} else if (eq && !strncmp(a, "--", 2)) {
		for (const struct option *lo = longopts; lo->name; lo++)
			if (strlen(lo->name) == (size_t)(eq - a - 2) &&
			    !strncmp(lo->name, a + 2, (size_t)(eq - a - 2))) {
				fprintf(stderr,
					"ingero-top: option --%s takes no value (see --help)\n",
					lo->name);
				return -1;
			}
	}
	fprintf(stderr, "ingero-top: unknown or ambiguous option '%s' (see --help)\n",
		esc_str(e, sizeof(e), a, 0));
	return -1;
}

/* The options that take a number: 0, or -1 after the error line. */
static int parse_number(struct cli *c, int opt, const char *arg)
{
	long v;
	switch (opt) {
	case 'n':
		if (parse_uint(arg, 1, 1000000000, &v))
			return bad("-n", arg, "expected a whole number of frames, 1 to 1e9");
		c->frames = (int)v;
		return 0;
	case 'd':
		if (arg_double(arg, CLI_DELAY_MIN, CLI_DELAY_MAX, &c->interval_s))
			return bad("-d", arg, "expected seconds between 0.05 and 3600");
		return 0;
	case 'w':
		if (arg_double(arg, CLI_WINDOW_MIN, CLI_WINDOW_MAX, &c->window_s))
			return bad("--window", arg, "expected seconds between 1 and 300");
		return 0;
	case OPT_FLIGHT:
		if (arg_double(arg, 0, 86400, &c->flight_s))
			return bad("--flight", arg, "expected seconds between 0 and 86400");
		return 0;
	case OPT_RECORD_RATE:
		if (parse_uint(arg, 1, 100000000, &v))
			return bad("--record-rate", arg, "expected calls a second, 1 to 1e8");
		c->record_rate = (unsigned)v;
		return 0;
	case OPT_SPEED:
		if (!strcmp(arg, "max"))
			c->speed = 0;
		else if (arg_double(arg, 0, 1000, &c->speed) || (c->speed > 0 && c->speed < 0.25))
			return bad("--speed", arg, "expected 0.25 to 1000, or 0/max");
		return 0;
	case OPT_MAX_DB: {
		uint64_t b = 0;
		char *end;
		double num = strtod(arg, &end); /* rec_parse_size reads the unit */
		if (end == arg || !isfinite(num) || rec_parse_size(arg, &b))
			return bad("--max-db", arg, "expected a size like 500M or 2G");
		if (b < CLI_MIN_MAX_DB)
			return bad("--max-db", arg,
				   "the smallest bound is 1M (the schema and one second of events "
				   "must fit)");
		c->max_db = b;
		return 0;
	}
	}
	return -1;
}

/* The options without a value, and those that take a word as it is. */
static void set_flag(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'b':
		c->batch = true;
		break;
	case OPT_SUMMARY:
		c->summary = c->batch = true;
		break;
	case OPT_JSON:
		c->json = c->batch = true;
		break;
	case OPT_EVENTS:
		c->events = c->batch = true;
		break;
	case OPT_RECORD:
		c->record = arg;
		break;
	case OPT_FLIGHT_DIR:
		c->flight_dir = arg;
		break;
	case OPT_SINCE:
		c->since = arg;
		break;
	case OPT_UNTIL:
		c->until = arg;
		break;
	case OPT_THEME:
		c->theme = arg;
		break;
	case OPT_NO_COLOR:
		c->no_color = true;
		break;
	case OPT_ASCII:
		c->ascii = true;
		break;
	case OPT_RAW_TP:
		c->raw_tp = true;
		break;
	case OPT_NO_SYSTEM_LIBS:
		c->no_system_libs = true;
		break;
	case OPT_NO_STACKS:
		c->no_stacks = true;
		c->stacks_all = false;
		break;
	case OPT_NO_WAITS:
		c->no_waits = true;
		break;
	case OPT_STACKS:
		c->stacks = true;
		break;
	case OPT_STREAM:
		c->stream = true;
		break;
	case 'v':
		c->verbose++;
		break;
	}
}

/* One option getopt returned (its value in optarg): 0 to go on, 1 after
 * the help or the version, -1 after an error line. Options that take the
 * following words (--replay FILE..., --demo [NAME]) move optind. */
static int take_option(struct cli *c, int opt, int argc, char **argv, bool *replay)
{
	switch (opt) {
	case 'p':
		return parse_pids(c, optarg) ? -1 : 0;
	case 'n':
	case 'd':
	case 'w':
	case OPT_FLIGHT:
	case OPT_SPEED:
	case OPT_MAX_DB:
	case OPT_RECORD_RATE:
		return parse_number(c, opt, optarg) ? -1 : 0;
	case OPT_PROMETHEUS:
	case OPT_PROMETHEUS_PROCS:
		return parse_prometheus(c, opt, optarg) ? -1 : 0;
	case OPT_STACK_MODE:
		if (!cli_stack_mode_ok(optarg))
			return bad("--stack-mode", optarg, "expected tail, all or off");
		c->no_stacks = !strcmp(optarg, "off");
		c->stacks_all = !strcmp(optarg, "all");
		return 0;
	case OPT_LIB:
		if (c->nlibs == CLI_MAX_LIBS)
			return bad("--lib", optarg, "too many libraries (16 at most)");
		c->libs[c->nlibs++] = optarg;
		return 0;
	case OPT_REPLAY:
		/* Every following word that is not an option is a file. */
		*replay = true;
		while (optind < argc && argv[optind][0] != '-') {
			if (c->nreplay == CLI_MAX_REPLAY)
				return bad("--replay", argv[optind], "too many files (64 at most)");
			c->replay[c->nreplay++] = argv[optind++];
		}
		return 0;
	case OPT_DEMO:
		/* An optional scenario name follows as a separate word. */
		c->demo = "cpu-contention";
		if (optind < argc && argv[optind][0] != '-')
			c->demo = argv[optind++];
		return 0;
	case 'h':
		fputs(usage, stdout);
		return 1;
	case 'V':
		printf("ingero-top %s\n", IG_VERSION);
		return 1;
	case ':': {
		char o[4] = {'-', (char)optopt, 0};
		return missing(!strncmp(argv[optind - 1], "--", 2) ? argv[optind - 1] : o);
	}
	case '?':
		return unknown(argv);
	default:
		set_flag(c, opt, optarg);
		return 0;
	}
}

int cli_parse(struct cli *c, int argc, char **argv)
{
	int opt, r;
	bool replay = false;

	memset(c, 0, sizeof(*c));
	c->interval_s = 1.0;
	c->window_s = 10.0;
	c->speed = 1.0;
	c->flight_s = 300;

	if (argc > 1 && !strcmp(argv[1], "check")) {
		c->check = true;
		return 0;
	}
	opterr = 0;
	optind = 0; /* 0, not 1: glibc then also forgets a half-read "-bd" */
	while ((opt = getopt_long(argc, argv, "+:p:bn:d:w:vhV", longopts, NULL)) != -1) {
		/* "--record --batch": the next option is not a value (a value
		 * attached with '=' is taken as given) */
		if (optarg && optarg == argv[optind - 1] && !strncmp(optarg, "--", 2) &&
		    optind >= 2)
			return missing(argv[optind - 2]);
		if ((r = take_option(c, opt, argc, argv, &replay)))
			return r;
	}
	return check_combinations(c, argc, argv, replay);
}

bool cli_stack_mode_ok(const char *s)
{
	return !strcmp(s, "tail") || !strcmp(s, "all") || !strcmp(s, "off");
}
