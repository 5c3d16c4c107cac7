/* ingero-top --ssh HOSTS and `explain --ssh HOSTS` (docs/fleet.md): the
 * fleet options and the target options forwarded to every host, checked
 * here with one-line errors (exit 2); then the fleet table (--batch), its
 * JSON (--json), the fleet screen (tui/fleet*.c) or the fleet's report,
 * and with --record DIR the hosts' recordings copied back at the end. */
#include "app/fleet_main.h"

#include "core/argcheck.h"
#include "core/clock.h"
#include "core/escape.h"
#include "fleet/fleet.h"
#include "session/cli.h"
#include "tui/fleet_tui.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLEET_MAX_ARGS 256

static const char fleet_usage[] =
    "usage: ingero-top --ssh HOST[,HOST...] [FLEET OPTIONS] [TARGET OPTIONS]\n"
    "                  [-- CMD ARGS]\n"
    "       ingero-top --hosts-file FILE ...\n"
    "       ingero-top explain --ssh HOST[,HOST...] [--seconds N] [--json] ...\n"
    "\n"
    "ingero-top on every host over your own ssh (BatchMode): one screen for the\n"
    "fleet, worst first, the NCCL straggler marked (docs/fleet.md).\n"
    "\n"
    "  --ssh LIST           hosts, comma-separated, each [user@]host[:port]\n"
    "  --hosts-file FILE    one [user@]host[:port] a line; # comments\n"
    "  --ssh-sudo           run sudo -n ingero-top there (tracing needs root)\n"
    "  --ssh-config FILE    ssh -F FILE\n"
    "  --ssh-remote PATH    the remote ingero-top (default: ingero-top on its PATH)\n"
    "  --ssh-program PATH   the ssh client (default: ssh)\n"
    "  --ssh-jobs N         connections being made at once (default 16)\n"
    "  -b, --batch          print the fleet table every -d seconds\n"
    "  -n, --frames N       with --batch or --json: N tables, then exit\n"
    "      --json           one JSON object per -d seconds (docs/json.md, Fleet)\n"
    "      --record DIR     record on each host, copied to DIR/HOST.db at the end\n"
    "      --theme NAME, --no-color, --ascii   the fleet screen's look\n"
    "  forwarded to every host: -p/--pid PID,..., --demo [NAME], -d SECS,\n"
    "  -w/--window SECS, --stack-mode tail|all|off, --no-waits, -- CMD ARGS\n"
    "  explain only: --seconds N (default 10), --json\n";

enum {
	F_SSH = 500,
	F_HOSTS_FILE,
	F_SUDO,
	F_CONFIG,
	F_REMOTE,
	F_PROGRAM,
	F_JOBS,
	F_DEMO,
	F_STACK_MODE,
	F_NO_WAITS,
	F_RECORD,
	F_JSON,
	F_SECONDS,
	F_THEME,
	F_NO_COLOR,
	F_ASCII,
};

static const struct option fleet_long[] = {
    {"ssh", required_argument, NULL, F_SSH},
    {"hosts-file", required_argument, NULL, F_HOSTS_FILE},
    {"ssh-sudo", no_argument, NULL, F_SUDO},
    {"ssh-config", required_argument, NULL, F_CONFIG},
    {"ssh-remote", required_argument, NULL, F_REMOTE},
    {"ssh-program", required_argument, NULL, F_PROGRAM},
    {"ssh-jobs", required_argument, NULL, F_JOBS},
    {"pid", required_argument, NULL, 'p'},
    {"demo", no_argument, NULL, F_DEMO},
    {"delay", required_argument, NULL, 'd'},
    {"window", required_argument, NULL, 'w'},
    {"stack-mode", required_argument, NULL, F_STACK_MODE},
    {"no-waits", no_argument, NULL, F_NO_WAITS},
    {"record", required_argument, NULL, F_RECORD},
    {"batch", no_argument, NULL, 'b'},
    {"frames", required_argument, NULL, 'n'},
    {"json", no_argument, NULL, F_JSON},
    {"seconds", required_argument, NULL, F_SECONDS},
    {"theme", required_argument, NULL, F_THEME},
    {"no-color", no_argument, NULL, F_NO_COLOR},
    {"ascii", no_argument, NULL, F_ASCII},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct fargs {
	const char *prog; /* "ingero-top" or "ingero-top explain" */
	bool explain;
	char **hosts;
	int nhosts;
	struct fleet_opts o;
	bool batch, json;
	const char *theme;
	bool no_color, ascii;
	int frames;
	double seconds;
	int targets; /* --pid, --demo, -- CMD given */
	char *fwd[FLEET_MAX_ARGS];
	int nfwd;
};

static volatile sig_atomic_t fleet_stop_flag;

static void on_fleet_stop(int sig)
{
	fleet_stop_flag = sig;
}

bool fleet_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--ssh") || !strncmp(argv[i], "--ssh=", 6) ||
		    !strcmp(argv[i], "--hosts-file") || !strncmp(argv[i], "--hosts-file=", 13))
			return true;
	return false;
}

static int fbad(const struct fargs *a, const char *what, const char *arg, const char *why)
{
	arg_bad(a->prog, a->prog, what, arg, why);
	return 2;
}

static int fwd(struct fargs *a, const char *w1, const char *w2)
{
	if (a->nfwd + 2 >= FLEET_MAX_ARGS) {
		fprintf(stderr, "%s: too many arguments to forward (%d at most)\n", a->prog,
			FLEET_MAX_ARGS - 2);
		return 2;
	}
	a->fwd[a->nfwd++] = (char *)w1;
	if (w2)
		a->fwd[a->nfwd++] = (char *)w2;
	return 0;
}

/* A --pid list: numbers and commas. */
static bool pid_list_ok(const char *s)
{
	if (!*s || *s == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return false;
	for (; *s; s++)
		if ((*s < '0' || *s > '9') && *s != ',')
			return false;
	return true;
}

static int host_opt(struct fargs *a, int opt, const char *arg)
{
	char err[600];
	double v;
	switch (opt) {
	case F_SSH:
	case F_HOSTS_FILE:
		if ((opt == F_SSH ? fleet_split_hosts(arg, &a->hosts, &a->nhosts, err, sizeof(err))
				  : fleet_read_hosts_file(arg, &a->hosts, &a->nhosts, err,
							  sizeof(err))) < 0) {
			fprintf(stderr, "%s: %s\n", a->prog, err);
			return 2;
		}
		return 0;
	case F_SUDO:
		a->o.sudo = true;
		return 0;
	case F_CONFIG:
		a->o.ssh_config = arg;
		return *arg ? 0 : fbad(a, "--ssh-config", arg, "an empty file name");
	case F_REMOTE:
		a->o.remote_cmd = arg;
		return *arg ? 0 : fbad(a, "--ssh-remote", arg, "an empty path");
	case F_PROGRAM:
		a->o.ssh_program = arg;
		return *arg ? 0 : fbad(a, "--ssh-program", arg, "an empty path");
	case F_JOBS:
		if (arg_double(arg, 1, 256, &v) || v != (int)v)
			return fbad(a, "--ssh-jobs", arg, "expected a whole number from 1 to 256");
		a->o.jobs = (int)v;
		return 0;
	}
	return -1;
}

static int target_opt(struct fargs *a, int opt, int argc, char **argv)
{
	double v;
	switch (opt) {
	case 'p':
		if (!pid_list_ok(optarg))
			return fbad(a, "--pid", optarg, "expected process ids separated by commas");
		a->targets++;
		return fwd(a, "--pid", optarg);
	case F_DEMO:
		a->targets++;
		if (optind < argc && argv[optind][0] != '-')
			return fwd(a, "--demo", argv[optind++]);
		return fwd(a, "--demo", NULL);
	case 'd':
		if (arg_double(optarg, CLI_DELAY_MIN, CLI_DELAY_MAX, &v))
			return fbad(a, "-d", optarg, "expected seconds between 0.05 and 3600");
		a->o.interval_s = v;
		return fwd(a, "-d", optarg);
	case 'w':
		if (arg_double(optarg, CLI_WINDOW_MIN, CLI_WINDOW_MAX, &v))
			return fbad(a, "--window", optarg, "expected seconds between 1 and 300");
		return fwd(a, "--window", optarg);
	case F_STACK_MODE:
		if (!cli_stack_mode_ok(optarg))
			return fbad(a, "--stack-mode", optarg, "expected tail, all or off");
		return fwd(a, "--stack-mode", optarg);
	case F_NO_WAITS:
		return fwd(a, "--no-waits", NULL);
	}
	return -1;
}

static int view_opt(struct fargs *a, int opt, int argc, char **argv)
{
	double v;
	struct stat st;
	switch (opt) {
	case F_RECORD:
		if (a->explain)
			break;
		if (stat(optarg, &st) || !S_ISDIR(st.st_mode))
			return fbad(a, "--record", optarg,
				    "with --ssh, a directory that exists (DIR/HOST.db)");
		a->o.record_dir = optarg;
		return 0;
	case 'b':
		if (a->explain)
			break;
		a->batch = true;
		return 0;
	case 'n':
		if (a->explain)
			break;
		if (arg_double(optarg, 1, 1e9, &v) || v != (int)v)
			return fbad(a, "-n", optarg, "expected a whole number of tables, 1 to 1e9");
		a->frames = (int)v;
		return 0;
	case F_JSON:
		a->json = true;
		return 0;
	case F_THEME:
		a->theme = optarg;
		return 0;
	case F_NO_COLOR:
		a->no_color = true;
		return 0;
	case F_ASCII:
		a->ascii = true;
		return 0;
	case F_SECONDS:
		if (!a->explain)
			break;
		if (arg_double(optarg, 1, 86400, &a->seconds))
			return fbad(a, "--seconds", optarg, "expected seconds between 1 and 86400");
		return 0;
	case 'h':
		fputs(fleet_usage, stdout);
		return -1;
	case ':':
		return fbad(a, "option", argv[optind - 1], "it needs a value");
	default:
		return -2;
	}
	return fbad(a, "option", argv[optind - 1],
		    a->explain ? "not an option of explain --ssh" : "not an option of --ssh");
}

/* The words after "--": forwarded as the command. */
static int take_command(struct fargs *a, int argc, char **argv)
{
	if (optind < argc && !strcmp(argv[optind - 1], "--")) {
		a->targets++;
		if (fwd(a, "--", NULL))
			return 2;
		for (int k = optind; k < argc; k++)
			if (fwd(a, argv[k], NULL))
				return 2;
		return 0;
	}
	if (optind < argc)
		return fbad(a, "argument", argv[optind], "a command goes after --");
	if (optind > 1 && !strcmp(argv[optind - 1], "--"))
		return fbad(a, "option", "--", "it must be followed by a command");
	return 0;
}

static int parse_fleet(struct fargs *a, int argc, char **argv)
{
	int opt, r;
	opterr = 0;
	optind = 0;
	a->o.interval_s = 1;
	a->seconds = 10;
	while ((opt = getopt_long(argc, argv, "+:p:bn:d:w:h", fleet_long, NULL)) != -1) {
		if ((r = host_opt(a, opt, optarg)) >= 0 ||
		    (r = target_opt(a, opt, argc, argv)) >= 0)
			;
		else if ((r = view_opt(a, opt, argc, argv)) == -2)
			r = fbad(a, "option", argv[optind - 1],
				 "not an option of --ssh (docs/fleet.md lists them)");
		if (r)
			return r;
	}
	if ((r = take_command(a, argc, argv)))
		return r;
	if (!a->nhosts) {
		fprintf(stderr, "%s: --ssh or --hosts-file names no host\n", a->prog);
		return 2;
	}
	if (a->targets > 1) {
		fprintf(stderr, "%s: give one of --pid, --demo or -- CMD (each host runs it)\n",
			a->prog);
		return 2;
	}
	if (a->frames && !a->batch && !a->json) {
		fprintf(stderr, "%s: -n counts the tables of --batch or --json\n", a->prog);
		return 2;
	}
	a->o.hosts = (const char **)a->hosts;
	a->o.nhosts = a->nhosts;
	a->o.remote_args = a->fwd;
	a->o.nremote_args = a->nfwd;
	if (!a->o.ssh_program)
		a->o.ssh_program = "ssh";
	if (!a->o.remote_cmd)
		a->o.remote_cmd = "ingero-top";
	if (!a->o.jobs)
		a->o.jobs = 16;
	return 0;
}

static void free_args(struct fargs *a)
{
	for (int i = 0; i < a->nhosts; i++)
		free(a->hosts[i]);
	free(a->hosts);
}

static void catch_fleet_signals(void)
{
	struct sigaction sa = {.sa_handler = on_fleet_stop};
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* One poll over the hosts' pipes (at most until deadline_ms), then a step. */
static void fleet_wait(struct fleet *f, uint64_t deadline_ms)
{
	static struct pollfd pfd[2 * FLEET_MAX_HOSTS];
	int n = fleet_pollfds(f, pfd, 2 * FLEET_MAX_HOSTS);
	uint64_t now = ig_mono_ms();
	int to = fleet_timeout_ms(f);
	if (deadline_ms > now && deadline_ms - now < (uint64_t)to)
		to = (int)(deadline_ms - now);
	if (deadline_ms <= now)
		to = 0;
	poll(pfd, (nfds_t)n, to);
	fleet_step(f, ig_mono_ms());
}

static bool ever_live(const struct fleet *f)
{
	for (int i = 0; i < fleet_nhosts(f); i++)
		if (fleet_host(f, i)->frames)
			return true;
	return false;
}

/* true while a host is being connected or has sent no frame yet since its
 * hello: the first table waits for them (FIRST_WAIT_MS at most). */
static bool unsettled(const struct fleet *f)
{
	for (int i = 0; i < fleet_nhosts(f); i++) {
		const struct fleet_host *h = fleet_host(f, i);
		if (h->state == FLEET_CONNECTING || (h->state == FLEET_LIVE && !h->frames))
			return true;
	}
	return false;
}

#define FIRST_WAIT_MS 10000

/* --batch and --json: a table (an object) every -d seconds, -n of them. */
static int run_print(struct fleet *f, const struct fargs *a)
{
	uint64_t every = (uint64_t)(a->o.interval_s * 1000), start = ig_mono_ms(),
		 next = start + every;
	int printed = 0, r = 0;
	fleet_step(f, ig_mono_ms());
	while (!fleet_stop_flag) {
		/* the first table waiting for the hosts' first frames: wait for
		 * them, not for a deadline already past (a busy loop) */
		uint64_t t = ig_mono_ms();
		fleet_wait(f, !printed && t >= next ? t + fleet_timeout_ms(f) : next);
		bool done = fleet_done(f);
		uint64_t now = ig_mono_ms();
		if (now < next && !done)
			continue;
		if (!printed && !done && now < start + FIRST_WAIT_MS && unsettled(f))
			continue;
		if (!printed)
			next = now;
		r = a->json ? fleet_print_json(stdout, f) : fleet_print_text(stdout, f);
		if (r || fflush(stdout)) {
			r = errno == EPIPE ? 0 : 1;
			break;
		}
		next += every;
		if ((a->frames && ++printed >= a->frames) || done)
			break;
	}
	return r ? r : (fleet_done(f) && !ever_live(f) ? 1 : 0);
}

int fleet_main(int argc, char **argv)
{
	struct fargs a = {.prog = "ingero-top"};
	int r = parse_fleet(&a, argc, argv);
	if (r) {
		free_args(&a);
		return r < 0 ? 0 : r;
	}
	bool screen = !a.batch && !a.json;
	if (screen && (!isatty(0) || !isatty(1))) {
		fprintf(stderr,
			"ingero-top: the fleet screen needs a terminal; use --batch or --json\n");
		free_args(&a);
		return 2;
	}
	struct fleet *f = fleet_new(&a.o);
	if (!f) {
		fprintf(stderr, "ingero-top: out of memory\n");
		free_args(&a);
		return 1;
	}
	if (!screen)
		catch_fleet_signals();
	else
		signal(SIGPIPE, SIG_IGN);
	tui_fleet_display(a.theme, a.no_color, a.ascii);
	r = screen ? tui_fleet_run(f, &a.o) : run_print(f, &a);
	if (a.o.record_dir) {
		int n = fleet_fetch_recordings(f, stderr);
		fprintf(stderr, "ingero-top: %d of %d recordings copied to ", n, a.nhosts);
		esc_fputs(stderr, a.o.record_dir, 0);
		fputc('\n', stderr);
		if (n < a.nhosts && !r)
			r = 1;
	}
	fleet_free(f);
	free_args(&a);
	return r;
}

int fleet_explain_main(int argc, char **argv)
{
	struct fargs a = {.prog = "ingero-top explain", .explain = true};
	int r = parse_fleet(&a, argc, argv);
	if (r) {
		free_args(&a);
		return r < 0 ? 0 : r;
	}
	struct fleet *f = fleet_new(&a.o);
	if (!f) {
		fprintf(stderr, "ingero-top: out of memory\n");
		free_args(&a);
		return 1;
	}
	catch_fleet_signals();
	fprintf(stderr, "ingero-top: observing %d hosts for %gs (Ctrl-C to stop sooner)\n",
		a.nhosts, a.seconds);
	uint64_t end = ig_mono_ms() + (uint64_t)(a.seconds * 1000);
	fleet_step(f, ig_mono_ms());
	while (!fleet_stop_flag && ig_mono_ms() < end && !fleet_done(f))
		fleet_wait(f, end);
	r = a.json ? fleet_explain_json(stdout, f, a.seconds)
		   : fleet_explain_text(stdout, f, a.seconds);
	if (fflush(stdout) || r)
		r = errno == EPIPE ? 0 : 1;
	else if (!ever_live(f))
		r = 1;
	fleet_free(f);
	free_args(&a);
	return r;
}
