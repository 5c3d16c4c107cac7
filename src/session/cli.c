/* Option parsing for ingero-top (getopt_long), with one-line errors. */
#include "session/cli.h"

#include "store/rec.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: ingero-top [OPTIONS] [--pid PID[,PID...]] [-- CMD [ARGS...]]\n"
    "       ingero-top --replay FILE.db [FILE2.db ...] [OPTIONS]\n"
    "       ingero-top check\n"
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
    "      --events         print every event, one line each (debugging, scripts)\n"
    "      --stacks         also print the top call stacks per op\n"
    "  -w, --window SECS    rolling window of the statistics (default 10)\n"
    "\n"
    "recording:\n"
    "      --record FILE    record the session to a SQLite file\n"
    "      --max-db SIZE    bound the recording (e.g. 500M, 2G): oldest seconds pruned\n"
    "      --flight SECS    keep the last SECS of events in memory (default 300)\n"
    "      --flight-dir DIR where the flight recorder saves (default: .)\n"
    "      --replay FILE... replay recordings (ingero-top or Ingero databases)\n"
    "      --speed X        replay speed (0.25..1000, 0 = as fast as possible)\n"
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
    "other:\n"
    "      --raw-tp         use raw tracepoints even where tp_btf works\n"
    "      --no-stacks      do not capture user stacks (on by default)\n"
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
	OPT_FLIGHT,
	OPT_FLIGHT_DIR,
	OPT_REPLAY,
	OPT_SPEED,
	OPT_THEME,
	OPT_NO_COLOR,
	OPT_ASCII,
	OPT_RAW_TP,
	OPT_NO_SYSTEM_LIBS,
	OPT_NO_STACKS,
	OPT_DEMO,
	OPT_STACKS,
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
	{ "flight", required_argument, NULL, OPT_FLIGHT },
	{ "flight-dir", required_argument, NULL, OPT_FLIGHT_DIR },
	{ "replay", no_argument, NULL, OPT_REPLAY },
	{ "speed", required_argument, NULL, OPT_SPEED },
	{ "theme", required_argument, NULL, OPT_THEME },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "raw-tp", no_argument, NULL, OPT_RAW_TP },
	{ "no-system-libs", no_argument, NULL, OPT_NO_SYSTEM_LIBS },
	{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },
	{ "demo", no_argument, NULL, OPT_DEMO },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int bad(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "ingero-top: invalid %s '%s': %s (see ingero-top --help)\n", opt, arg, why);
	return -1;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_pids(struct cli *c, const char *arg)
{
	char buf[1024], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(t, &end, 10);
		if (*end || v <= 0 || v > 4194304)
			return bad("pid", t, "not a process id");
		if (c->npids == CLI_MAX_PIDS)
			return bad("pid", t, "too many pids (64 at most)");
		c->pids[c->npids++] = (int)v;
	}
	return 0;
}

int cli_parse(struct cli *c, int argc, char **argv)
{
	int opt;
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
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+p:bn:d:w:vhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pids(c, optarg))
				return -1;
			break;
		case 'b':
			c->batch = true;
			break;
		case 'n': {
			double v;
			if (parse_double(optarg, 1, 1e9, &v))
				return bad("-n", optarg, "expected a number of frames >= 1");
			c->frames = (int)v;
			break;
		}
		case 'd':
			if (parse_double(optarg, 0.05, 3600, &c->interval_s))
				return bad("-d", optarg, "expected seconds between 0.05 and 3600");
			break;
		case 'w':
			if (parse_double(optarg, 1, 300, &c->window_s))
				return bad("--window", optarg, "expected seconds between 1 and 300");
			break;
		case OPT_SUMMARY:
			c->summary = true;
			c->batch = true;
			break;
		case OPT_JSON:
			c->json = true;
			c->batch = true;
			break;
		case OPT_EVENTS:
			c->events = true;
			c->batch = true;
			break;
		case OPT_LIB:
			if (c->nlibs == CLI_MAX_LIBS)
				return bad("--lib", optarg, "too many libraries (16 at most)");
			c->libs[c->nlibs++] = optarg;
			break;
		case OPT_RECORD:
			c->record = optarg;
			break;
		case OPT_MAX_DB: {
			uint64_t v = 0;
			if (rec_parse_size(optarg, &v) || v < 65536)
				return bad("--max-db", optarg, "expected a size like 500M or 2G");
			c->max_db = v;
			break;
		}
		case OPT_FLIGHT:
			if (parse_double(optarg, 0, 86400, &c->flight_s))
				return bad("--flight", optarg, "expected seconds between 0 and 86400");
			break;
		case OPT_FLIGHT_DIR:
			c->flight_dir = optarg;
			break;
		case OPT_REPLAY:
			/* Every following word that is not an option is a file. */
			replay = true;
			while (optind < argc && argv[optind][0] != '-') {
				if (c->nreplay == CLI_MAX_REPLAY)
					return bad("--replay", argv[optind], "too many files (16 at most)");
				c->replay[c->nreplay++] = argv[optind++];
			}
			break;
		case OPT_SPEED:
			if (!strcmp(optarg, "max"))
				c->speed = 0;
			else if (parse_double(optarg, 0, 1000, &c->speed) ||
				 (c->speed > 0 && c->speed < 0.25))
				return bad("--speed", optarg, "expected 0.25 to 1000, or 0/max");
			break;
		case OPT_THEME:
			c->theme = optarg;
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
			break;
		case OPT_STACKS:
			c->stacks = true;
			break;
		case OPT_DEMO:
			/* An optional scenario name follows as a separate word. */
			c->demo = "cpu-contention";
			if (optind < argc && argv[optind][0] != '-')
				c->demo = argv[optind++];
			break;
		case 'v':
			c->verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("ingero-top %s\n", IG_VERSION);
			return 1;
		case ':':
			fprintf(stderr, "ingero-top: option %s needs a value (see --help)\n",
				argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "ingero-top: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (replay) {
		if (!c->nreplay) {
			fprintf(stderr, "ingero-top: --replay needs at least one FILE.db\n");
			return -1;
		}
	}
	if (optind < argc && !strcmp(argv[optind - 1], "--")) {
		c->cmd = &argv[optind];
		c->ncmd = argc - optind;
	} else if (optind < argc) {
		fprintf(stderr, "ingero-top: unexpected argument '%s' (a command goes after --)\n",
			argv[optind]);
		return -1;
	}
	if (replay && (c->npids || c->cmd || c->record)) {
		fprintf(stderr, "ingero-top: --replay cannot be combined with --pid, --record or a "
				"command\n");
		return -1;
	}
	if (c->npids && c->cmd) {
		fprintf(stderr, "ingero-top: give either --pid or a command, not both\n");
		return -1;
	}
	return 0;
}
