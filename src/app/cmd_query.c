/* `ingero-top query FILE.db... "SELECT ..."`: read-only SQL over
 * recordings (store/query.h), printed as a table, CSV or JSON; the
 * shortcuts --ops, --chains, --slowest OP, --timeline PID. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/handover.h"
#include "core/argcheck.h"
#include "core/escape.h"
#include "report/qout.h"
#include "store/query.h"

static const char query_usage[] =
    "usage: ingero-top query [OPTIONS] FILE.db [FILE2.db ...] \"SELECT ...\"\n"
    "       ingero-top query [OPTIONS] FILE.db... --ops | --chains | --slowest OP | --timeline "
    "PID\n"
    "\n"
    "Read-only SQL over recordings (ingero-top's or Ingero's). Several files are one\n"
    "view with a node column. The schema and examples: docs/recording.md.\n"
    "\n"
    "  --csv              CSV instead of an aligned table\n"
    "  --json             one JSON object: columns, rows, row_count, truncated\n"
    "  --ops              per-op calls and exact percentiles\n"
    "  --chains           the causal chains recorded\n"
    "  --slowest OP       the 20 slowest calls of OP (e.g. cudaStreamSynchronize)\n"
    "  --timeline PID     the events of a process in time order\n"
    "  --timeout SECS     time limit of the statement (default 10)\n"
    "  --max-rows N       rows printed before the result is cut (default 100000)\n"
    "  --max-bytes N      memory the rows may take before the result is cut: 16 bytes\n"
    "                     a value and its text (default 64M)\n"
    "  -h, --help         this help\n"
    "\n"
    "Refused, with what and why: anything that writes, ATTACH, pragmas that set a\n"
    "value or do not only report (as PRAGMA or pragma_NAME()), load_extension,\n"
    "several statements. Exit 0 on success, 1 when refused, failed or cut, 2 on usage.\n";

enum { Q_CSV = 300, Q_JSON, Q_OPS, Q_CHAINS, Q_SLOWEST, Q_TIMELINE, Q_TIMEOUT, Q_ROWS, Q_BYTES };

static const struct option query_opts[] = {
    {"csv", no_argument, NULL, Q_CSV},
    {"json", no_argument, NULL, Q_JSON},
    {"ops", no_argument, NULL, Q_OPS},
    {"chains", no_argument, NULL, Q_CHAINS},
    {"slowest", required_argument, NULL, Q_SLOWEST},
    {"timeline", required_argument, NULL, Q_TIMELINE},
    {"timeout", required_argument, NULL, Q_TIMEOUT},
    {"max-rows", required_argument, NULL, Q_ROWS},
    {"max-bytes", required_argument, NULL, Q_BYTES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int qbad(const char *what, const char *arg, const char *why)
{
	arg_bad("ingero-top query", "ingero-top query", what, arg, why);
	return 2;
}

/* A whole number in [lo, hi], with an optional K/M/G suffix (powers of 1024). */
static int parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		v *= 1024.0 * 1024 * 1024, end++;
	if (*end || v != floor(v) || v < (double)lo || v > (double)hi)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

struct qargs {
	int fmt, shortcut;
	const char *param;
	struct query_limits lim;
};

/* The options into a; returns 0, or the exit status. */
static int parse_query_opts(struct qargs *a, int argc, char **argv)
{
	int opt;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":h", query_opts, NULL)) != -1) {
		switch (opt) {
		case Q_CSV:
			a->fmt = QOUT_CSV;
			break;
		case Q_JSON:
			a->fmt = QOUT_JSON;
			break;
		case Q_OPS:
		case Q_CHAINS:
		case Q_SLOWEST:
		case Q_TIMELINE:
			if (a->shortcut)
				return qbad("option", argv[optind - 1],
					    "give one shortcut at most");
			a->shortcut = opt == Q_OPS	 ? QS_OPS
				      : opt == Q_CHAINS	 ? QS_CHAINS
				      : opt == Q_SLOWEST ? QS_SLOWEST
							 : QS_TIMELINE;
			a->param = optarg;
			if (opt == Q_TIMELINE && optarg[strspn(optarg, "0123456789")])
				return qbad("--timeline", optarg, "expected a process id");
			break;
		case Q_TIMEOUT: {
			char *end;
			a->lim.timeout_s = strtod(optarg, &end);
			if (*end || end == optarg || !isfinite(a->lim.timeout_s) ||
			    a->lim.timeout_s < 0.01 || a->lim.timeout_s > 3600)
				return qbad("--timeout", optarg, "expected seconds, 0.01 to 3600");
			break;
		}
		case Q_ROWS:
			if (parse_count(optarg, 1, 100000000, &a->lim.max_rows))
				return qbad("--max-rows", optarg, "expected 1 to 100000000");
			break;
		case Q_BYTES:
			if (parse_count(optarg, 1024, 1ull << 32, &a->lim.max_bytes))
				return qbad("--max-bytes", optarg, "expected 1K to 4G");
			break;
		case 'h':
			fputs(query_usage, stdout);
			return -1;
		case ':':
			return qbad("option", argv[optind - 1], "it needs a value");
		default:
			return qbad("option", argv[optind - 1], "unknown option");
		}
	}
	return 0;
}

int query_main(int argc, char **argv)
{
	struct qargs a = {0};
	int r = parse_query_opts(&a, argc, argv);
	if (r)
		return r < 0 ? 0 : r;
	int npos = argc - optind;
	const char *sql = NULL;
	if (!a.shortcut) {
		if (npos < 2) {
			fprintf(stderr,
				"ingero-top query: give FILE.db and one SQL statement, or a "
				"shortcut (--ops, --chains, --slowest OP, --timeline PID)\n");
			return 2;
		}
		sql = argv[argc - 1];
		npos--;
	} else if (npos < 1) {
		fprintf(stderr, "ingero-top query: give at least one FILE.db\n");
		return 2;
	}
	if (npos > QUERY_MAX_FILES) {
		fprintf(stderr, "ingero-top query: too many files (%d at most)\n", QUERY_MAX_FILES);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	char err[1024], e[1200];
	struct query *q = query_open((const char *const *)&argv[optind], npos, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(e, sizeof(e), err, 0));
		return 1;
	}
	/* a shortcut reads the trace tables: say what the file is not, as
	 * replay does, rather than SQLite's "no such table" */
	const char *tb = a.shortcut == QS_CHAINS ? "causal_chains" : "events";
	const char *lacks = a.shortcut ? query_file_without(q, tb, "id") : NULL;
	if (lacks && a.shortcut != QS_CHAINS)
		snprintf(err, sizeof(err),
			 "cannot query %s: not an Ingero or ingero-top trace database (no events "
			 "table)",
			 lacks);
	else if (lacks)
		snprintf(err, sizeof(err),
			 "cannot query %s: no causal_chains table (not an Ingero or ingero-top "
			 "trace database, or one recorded without chains)",
			 lacks);
	if (lacks) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(e, sizeof(e), err, 0));
		query_free(q);
		return 1;
	}
	char *own = a.shortcut ? query_shortcut_sql(q, a.shortcut, a.param) : NULL;
	if (a.shortcut && !own) {
		fprintf(stderr, "ingero-top: out of memory\n");
		query_free(q);
		return 1;
	}
	struct query_result *res = NULL;
	r = query_run(q, own ? own : sql, a.param, &a.lim, &res, err, sizeof(err));
	free(own);
	if (r) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(e, sizeof(e), err, 0));
		query_free(q);
		return 1;
	}
	int rc = 0;
	errno = 0;
	if ((qout_write(stdout, res, a.fmt) || fflush(stdout)) && errno != EPIPE) {
		fprintf(stderr, "ingero-top: cannot write the result: %s\n", strerror(errno));
		rc = 1;
	}
	if (res->cut) {
		fprintf(stderr, "ingero-top: %s\n", qout_cut_msg(err, sizeof(err), res));
		rc = 1;
	}
	query_result_free(res);
	query_free(q);
	return rc;
}
