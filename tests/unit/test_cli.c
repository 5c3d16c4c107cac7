/* Option parsing, table-driven: each row is an argv, the return wanted
 * (0 go on, 1 help/version, -1 error: exit 2) and a piece of what stderr
 * must say (NULL: stderr stays empty). Errors are one line. Then the values
 * parsed from good rows, and the warnings for pid 1 and kernel threads. */
#include "check.h"
#include "session/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define A(...)                                                                                     \
	{                                                                                          \
		"ingero-top", __VA_ARGS__, NULL                                                    \
	}

static const struct row {
	const char *argv[12];
	int ret;
	const char *err; /* substring of stderr; NULL = no output on stderr */
} rows[] = {
    /* good */
    {A("--replay", "a.db", "b.db", "--speed", "20", "--batch"), 0, NULL},
    {A("-b", "-n", "3", "-d", "0.5", "--pid", "4000012,4000034"), 0, NULL},
    {A("--summary", "--", "./train", "--lr", "3"), 0, NULL},
    {A("--max-db", "500M", "--record", "r.db"), 0, NULL},
    {A("--max-db", "1M", "--record", "r.db"), 0, NULL},
    {A("--record-rate", "500", "--record", "r.db"), 0, NULL},
    {A("--demo"), 0, NULL},
    {A("--demo", "io-stall", "--batch"), 0, NULL},
    {A("check"), 0, NULL},
    {A("--speed", "max", "--replay", "x.db"), 0, NULL},
    {A("--replay", "x.db", "--since", "+30s", "--until", "14:05"), 0, NULL},
    {A("--since", "-5m", "--batch", "--replay", "x.db"), 0, NULL},
    {A("--since", "+30s", "--batch"), -1, "they need --replay FILE.db"},
    {A("--until", "+30s", "--", "true"), -1, "they need --replay FILE.db"},
    {A("--replay", "x.db", "--since"), -1, "--since"},
    {A("--speed", "0", "--replay", "x.db"), 0, NULL},
    {A("--flight", "0"), 0, NULL},
    {A("--record=--odd-name.db"), 0, NULL},
    {A("--json", "--events", "--replay", "x.db"), 0, NULL},
    {A("--stack-mode", "all"), 0, NULL},
    {A("--stack-mode", "tail", "--no-stacks"), 0, NULL},
    {A("--stack-mode", "sometimes"), -1, "invalid --stack-mode 'sometimes': expected tail, all or off"},
    {A("--stack-mode"), -1, "stack-mode"},
    {A("-h"), 1, NULL},
    {A("--version"), 1, NULL},
    /* numbers: nan, inf, negative, absurd, trailing text, empty */
    {A("-d", "nan"), -1, "invalid -d 'nan': expected seconds between 0.05 and 3600"},
    {A("-d", "inf"), -1, "invalid -d 'inf'"},
    {A("-d", "-1"), -1, "invalid -d '-1'"},
    {A("-d", "1e308"), -1, "invalid -d '1e308'"},
    {A("-d", "0"), -1, "invalid -d '0'"},
    {A("-d", "1s"), -1, "invalid -d '1s'"},
    {A("-d", ""), -1, "invalid -d ''"},
    {A("-w", "nan"), -1, "invalid --window 'nan': expected seconds between 1 and 300"},
    {A("-w", "-inf"), -1, "invalid --window '-inf'"},
    {A("--window", "301"), -1, "invalid --window '301'"},
    {A("--flight", "nan"), -1, "invalid --flight 'nan': expected seconds between 0 and 86400"},
    {A("--flight", "-1"), -1, "invalid --flight '-1'"},
    {A("--flight", "1e30"), -1, "invalid --flight '1e30'"},
    {A("--speed", "nan", "--replay", "x.db"), -1, "invalid --speed 'nan'"},
    {A("--speed", "inf", "--replay", "x.db"), -1, "invalid --speed 'inf'"},
    {A("--speed", "-2", "--replay", "x.db"), -1, "invalid --speed '-2'"},
    {A("--speed", "0.1", "--replay", "x.db"), -1, "expected 0.25 to 1000, or 0/max"},
    {A("--speed", "1e9", "--replay", "x.db"), -1, "invalid --speed '1e9'"},
    {A("-n", "nan"), -1, "invalid -n 'nan': expected a whole number of frames"},
    {A("-n", "1.5"), -1, "invalid -n '1.5'"},
    {A("-n", "0"), -1, "invalid -n '0'"},
    {A("-n", "-3"), -1, "invalid -n '-3'"},
    {A("-n", "99999999999999999999"), -1, "invalid -n"},
    /* --max-db */
    {A("--max-db", "nan", "--record", "r.db"), -1, "invalid --max-db 'nan': expected a size"},
    {A("--max-db", "infM", "--record", "r.db"), -1, "invalid --max-db 'infM'"},
    {A("--max-db", "-1M", "--record", "r.db"), -1, "invalid --max-db '-1M'"},
    {A("--max-db", "lots", "--record", "r.db"), -1, "expected a size like 500M or 2G"},
    {A("--max-db", "1e30T", "--record", "r.db"), -1, "invalid --max-db '1e30T'"},
    {A("--max-db", "64K", "--record", "r.db"), -1, "'64K': the smallest bound is 1M"},
    {A("--max-db", "1023K", "--record", "r.db"), -1, "the smallest bound is 1M"},
    {A("--max-db", "2G"), -1, "--max-db bounds a recording: it needs --record FILE"},
    /* --record-rate */
    {A("--record-rate", "0", "--record", "r.db"), -1, "invalid --record-rate '0': expected calls a second, 1 to 1e8"},
    {A("--record-rate", "-5", "--record", "r.db"), -1, "invalid --record-rate '-5'"},
    {A("--record-rate", "1.5", "--record", "r.db"), -1, "invalid --record-rate '1.5'"},
    {A("--record-rate", "lots", "--record", "r.db"), -1, "invalid --record-rate 'lots'"},
    {A("--record-rate", "100000001", "--record", "r.db"), -1, "invalid --record-rate '100000001'"},
    {A("--record-rate", "500"), -1, "--record-rate shapes a recording: it needs --record FILE"},
    /* --pid lists */
    {A("--pid", ""), -1, "invalid --pid '': expected PID[,PID...]"},
    {A("--pid", "1,,2"), -1, "invalid --pid '1,,2': empty item in the list"},
    {A("--pid", ",1"), -1, "empty item in the list"},
    {A("--pid", "12,"), -1, "empty item in the list"},
    {A("--pid", "abc"), -1, "invalid --pid 'abc': not a list of process ids"},
    {A("--pid", "+12"), -1, "not a list of process ids"},
    {A("--pid", "0"), -1, "not a list of process ids"},
    {A("--pid", "4194305"), -1, "not a list of process ids"},
    {A("--pid", "1 2"), -1, "not a list of process ids"},
    {A("--pid", "12", "--", "./x"), -1, "give either --pid or a command, not both"},
    /* "--" and stray words */
    {A("--"), -1, "-- must be followed by a command to trace"},
    {A("-b", "--"), -1, "-- must be followed by a command to trace"},
    {A("stray"), -1, "unexpected argument 'stray' (a command goes after --)"},
    /* missing values, unknown options */
    {A("--record"), -1, "missing value for --record"},
    {A("-d"), -1, "missing value for -d"},
    {A("-bd"), -1, "missing value for -d"},
    {A("--pid"), -1, "missing value for --pid"},
    {A("--max-db"), -1, "missing value for --max-db"},
    {A("--record", "--batch"), -1, "missing value for --record"},
    {A("--theme", "--ascii"), -1, "missing value for --theme"},
    {A("--json=yes"), -1, "option --json takes no value"},
    {A("-x"), -1, "unknown or ambiguous option '-x'"},
    {A("--frobnicate"), -1, "unknown or ambiguous option '--frobnicate'"},
    {A("--s"), -1, "unknown or ambiguous option '--s'"},
    /* combinations */
    {A("--replay"), -1, "--replay needs at least one FILE.db"},
    {A("--replay", "x.db", "--record", "y.db"), -1, "--replay cannot be combined"},
    {A("--stream", "-d", "0.5", "--pid", "4000012"), 0, NULL},
    {A("--stream", "--demo", "io-stall", "--record", "r.db"), 0, NULL},
    {A("--stream", "--replay", "x.db"), 0, NULL},
    {A("--stream", "--", "./train"), 0, NULL},
    {A("--stream", "--batch"), -1, "--stream writes its own lines: it cannot be combined with --batch, --json, --events or --summary"},
    {A("--json", "--stream"), -1, "--stream writes its own lines"},
    {A("--stream", "--events"), -1, "--stream writes its own lines"},
    {A("--summary", "--stream"), -1, "--stream writes its own lines"},
    {A("--stream=1"), -1, "option --stream takes no value"},
    /* hostile bytes in an argument stay on one line, escaped */
    {A("--pid", "1\n2\x1b[2J"), -1, "invalid --pid '1\\n2\\x1b[2J'"},
    {A("--window", "\x1b]0;x\x07"), -1, "invalid --window '\\x1b]0;x\\x07'"},
    /* --prometheus (the address itself is checked when the endpoint starts) */
    {A("--prometheus", "9400"), 0, NULL},
    {A("--prometheus", "0.0.0.0:9400", "--prometheus-procs", "20"), 0, NULL},
    {A("--prometheus"), -1, "missing value for --prometheus"},
    {A("--prometheus", ""), -1, "invalid --prometheus '': expected [HOST:]PORT"},
    {A("--prometheus-procs", "3"), -1, "--prometheus-procs needs --prometheus [HOST:]PORT"},
    {A("--prometheus", "1", "--prometheus-procs", "0"), -1, "invalid --prometheus-procs '0'"},
    {A("--prometheus", "1", "--prometheus-procs", "257"), -1, "expected a whole number from 1 to 256"},
};

/* Runs cli_parse on argv with stderr captured into err (NUL-terminated). */
static int parse(struct cli *c, const char *const *argv, char *err, size_t n)
{
	static char store[16][256];
	char *av[16];
	int ac = 0;
	for (; argv[ac] && ac < 15; ac++) {
		snprintf(store[ac], sizeof(store[ac]), "%s", argv[ac]);
		av[ac] = store[ac];
	}
	av[ac] = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *saved = stderr, *out = stdout;
	stderr = open_memstream(&buf, &len);
	stdout = fopen("/dev/null", "w");
	int r = cli_parse(c, ac, av);
	fclose(stderr);
	fclose(stdout);
	stderr = saved;
	stdout = out;
	snprintf(err, n, "%s", buf ? buf : "");
	free(buf);
	return r;
}

static void test_rows(void)
{
	struct cli c;
	char err[1024];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		int r = parse(&c, w->argv, err, sizeof(err));
		char *nl = strchr(err, '\n');
		CHECKF(r == w->ret, "row %zu (%s %s): returned %d, want %d; stderr: %s", i,
		       w->argv[1], w->argv[2] ? w->argv[2] : "", r, w->ret, err);
		if (!w->err) {
			CHECKF(!err[0], "row %zu (%s): unexpected stderr: %s", i, w->argv[1], err);
			continue;
		}
		CHECKF(strstr(err, w->err), "row %zu (%s): stderr '%s' lacks '%s'", i, w->argv[1],
		       err, w->err);
		CHECKF(!strncmp(err, "ingero-top: ", 12) && nl && !nl[1],
		       "row %zu: not one line starting with 'ingero-top: ': %s", i, err);
	}
}

/* The values the good rows set. */
static void test_values(void)
{
	struct cli c;
	char err[512];
	CHECK(!parse(&c,
		     (const char *const[])A("--replay", "a.db", "b.db", "--speed", "20", "--batch"),
		     err, sizeof(err)));
	CHECK(c.nreplay == 2 && !strcmp(c.replay[1], "b.db") && c.speed == 20 && c.batch);
	CHECK(!parse(
	    &c, (const char *const[])A("-b", "-n", "3", "-d", "0.5", "--pid", "4000012,4000034"),
	    err, sizeof(err)));
	CHECK(c.frames == 3 && c.interval_s == 0.5 && c.npids == 2 && c.pids[1] == 4000034);
	CHECK(!parse(&c, (const char *const[])A("--summary", "--", "./train", "--lr", "3"), err,
		     sizeof(err)));
	CHECK(c.summary && c.batch && c.ncmd == 3 && !strcmp(c.cmd[2], "3"));
	CHECK(!parse(&c, (const char *const[])A("--max-db", "500M", "--record", "r.db"), err,
		     sizeof(err)));
	CHECK(c.max_db == 500ULL << 20 && !strcmp(c.record, "r.db"));
	CHECK(!parse(&c, (const char *const[])A("--max-db", "1M", "--record", "r.db"), err,
		     sizeof(err)));
	CHECK(c.max_db == CLI_MIN_MAX_DB && c.max_db == 1048576);
	CHECK(!parse(&c, (const char *const[])A("--demo"), err, sizeof(err)));
	CHECK(!strcmp(c.demo, "cpu-contention"));
	CHECK(
	    !parse(&c, (const char *const[])A("--demo", "io-stall", "--batch"), err, sizeof(err)));
	CHECK(!strcmp(c.demo, "io-stall") && c.batch);
	CHECK(!parse(&c, (const char *const[])A("check"), err, sizeof(err)) && c.check);
	CHECK(!parse(&c, (const char *const[])A("--speed", "max", "--replay", "x.db"), err,
		     sizeof(err)));
	CHECK(c.speed == 0);
	CHECK(!parse(&c, (const char *const[])A("--record=--odd-name.db"), err, sizeof(err)));
	CHECK(!strcmp(c.record, "--odd-name.db"));
	CHECK(!parse(&c, (const char *const[])A("--json", "--events", "--replay", "x.db"), err,
		     sizeof(err)));
	CHECK(c.json && c.events && c.batch);
	/* --stream: batch's loop and checks, none of its outputs */
	CHECK(!parse(&c, (const char *const[])A("--stream", "--demo"), err, sizeof(err)));
	CHECK(c.stream && c.batch && !c.json && !c.events && !c.summary);
	/* stacks: the tail by default; the last of --stack-mode/--no-stacks wins */
	CHECK(!parse(&c, (const char *const[])A("--stack-mode", "all"), err, sizeof(err)));
	CHECK(c.stacks_all && !c.no_stacks);
	CHECK(!parse(&c, (const char *const[])A("--stack-mode", "off"), err, sizeof(err)));
	CHECK(!c.stacks_all && c.no_stacks);
	CHECK(!parse(&c, (const char *const[])A("--stack-mode", "all", "--no-stacks"), err,
		     sizeof(err)));
	CHECK(!c.stacks_all && c.no_stacks);
	CHECK(!parse(&c, (const char *const[])A("--no-stacks", "--stack-mode", "tail"), err,
		     sizeof(err)));
	CHECK(!c.stacks_all && !c.no_stacks);
	/* defaults */
	CHECK(!parse(&c, (const char *const[])A("-b"), err, sizeof(err)));
	CHECK(!c.no_stacks && !c.stacks_all);
	CHECK(c.interval_s == 1.0 && c.window_s == 10.0 && c.speed == 1.0 && c.flight_s == 300 &&
	      !c.max_db && !c.npids && !c.cmd);
}

/* pid 1 and kernel threads warn (on stderr, parsing goes on); a user
 * process does not. */
static void test_pid_warnings(void)
{
	char w[256], err[512];
	struct cli c;
	CHECK(cli_pid_warning(1, w, sizeof(w)) == 1 && strstr(w, "--pid 1 is init"));
	CHECK(cli_pid_warning(getpid(), w, sizeof(w)) == 0 && !w[0]);
	CHECK(cli_pid_warning(4194304, w, sizeof(w)) == 0); /* no such process */
	/* kthreadd is pid 2 on Linux, unless pid namespaces hide it */
	FILE *f = fopen("/proc/2/comm", "re");
	char comm[32] = "";
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
	}
	if (!strcmp(comm, "kthreadd\n")) {
		CHECK(cli_pid_warning(2, w, sizeof(w)) == 1 &&
		      !strcmp(w, "--pid 2 is a kernel thread (kthreadd): it makes no CUDA calls"));
		CHECK(parse(&c, (const char *const[])A("--pid", "2", "-b"), err, sizeof(err)) == 0);
		CHECKF(!strcmp(err,
			       "ingero-top: warning: --pid 2 is a kernel thread (kthreadd): it "
			       "makes no CUDA calls\n"),
		       "%s", err);
	} else {
		printf("test_cli: pid 2 is not kthreadd here (a pid namespace): kernel-thread "
		       "warning checked through pid 1 only\n");
	}
	CHECK(parse(&c, (const char *const[])A("--pid", "1", "-b"), err, sizeof(err)) == 0);
	CHECK(!strncmp(err, "ingero-top: warning: --pid 1 is init", 36));
	char own[32];
	snprintf(own, sizeof(own), "%d", (int)getpid());
	CHECK(parse(&c, (const char *const[])A("--pid", own, "-b"), err, sizeof(err)) == 0 &&
	      !err[0]);
}

int main(void)
{
	test_rows();
	test_values();
	test_pid_warnings();
	return check_done("test_cli");
}
