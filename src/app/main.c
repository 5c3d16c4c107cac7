/* ingero-top: a subcommand (`check`, ...), or the options, then a session
 * shown by the batch mode (app/batch.c) or the full-screen viewer (tui/). */
#include "app/batch.h"
#include "app/cmd_record.h"
#include "app/export.h"
#include "app/fleet_main.h"
#include "app/handover.h"
#include "app/replay_set.h"
#include "app/stream_loop.h"
#include "collect/check.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/timearg.h"
#include "serve/mcp.h"
#include "serve/promsrv.h"
#include "session/cli.h"
#include "session/demo.h"
#include "session/session.h"
#include "store/db.h"
#include "tui/tui.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ingero-top NAME ARGS...: argv[0] is NAME. Returns the exit code. */
struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
};

static int cmd_check(int argc, char **argv)
{
	return check_run(stdout);
}

/* One line per subcommand; the rest of argv goes to cli_parse. */
static const struct subcommand subcommands[] = {
    {"check", cmd_check},	{"explain", explain_main}, {"query", query_main},
    {"mcp", mcp_main},		{"export", export_main},	   {"record", record_main},
};

static const struct subcommand *find_subcommand(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

static void on_stop(int sig)
{
	batch_stop_flag = sig;
	db_interrupt(); /* a replay's SQLite statement stops at once */
}

static void on_usr1(int sig)
{
	batch_flight_flag = 1;
}

static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop};

	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
}

/* --demo NAME: a scenario that exists, or a usage error (exit 2) that
 * lists them, as any bad option value is. 0 when known or not asked. */
static int check_demo(const char *name)
{
	if (!name)
		return 0;
	for (const char *const *n = demo_names(); *n; n++)
		if (!strcmp(*n, name))
			return 0;
	char a[80];
	fprintf(stderr, "ingero-top: unknown scenario '%s' for --demo; known:",
		esc_str(a, sizeof(a), name, 0));
	for (const char *const *n = demo_names(); *n; n++)
		fprintf(stderr, " %s", *n);
	fprintf(stderr, "\n");
	return 2;
}

/* Errors about the arguments come first, before privileges and the
 * terminal: a theme that cannot be loaded, a recording that cannot be
 * read, an unknown demo. Returns the exit code, 0 to go on. */
static int check_arguments(const struct cli *cli)
{
	char err[512];
	if (tui_check_options(cli, err, sizeof(err))) {
		fprintf(stderr, "ingero-top: %s\n", err);
		return 2;
	}
	if (check_demo(cli->demo))
		return 2;
	for (int i = 0; i < cli->nreplay; i++)
		if (access(cli->replay[i], R_OK)) {
			fprintf(stderr, "ingero-top: cannot replay ");
			esc_fputs(stderr, cli->replay[i], 0);
			fprintf(stderr, ": %s\n", strerror(errno));
			return 1;
		}
	return 0;
}

/* Live tracing needs privileges and BTF; the viewer a terminal. 0, or the
 * exit code after a line on stderr. */
static int preflight(const struct cli *cli, bool batch)
{
	char err[512] = "";

	if (!cli->nreplay && !cli->demo &&
	    (check_privileges(err, sizeof(err)) || check_btf(err, sizeof(err)))) {
		fprintf(stderr, "ingero-top: %s\n", err);
		stream_fail(cli, err);
		return 1;
	}
	if (!batch && (!isatty(0) || !isatty(1))) {
		fprintf(stderr, "ingero-top: the full-screen view needs a terminal; use --batch\n");
		return 2;
	}
	return 0;
}

/* --prometheus: the endpoint starts before the session, so that a bad
 * address or a taken port fails before anything is attached. Returns 0 or
 * the exit code after a one-line error. */
static int metrics_start(const struct cli *cli, struct prom_endpoint **ep)
{
	char host[256], port[8], err[320], a[256];
	const char *why;
	if (!cli->prometheus)
		return 0;
	if (promsrv_parse_listen(cli->prometheus, host, sizeof(host), port, sizeof(port), &why)) {
		fprintf(stderr,
			"ingero-top: invalid --prometheus '%s': %s (see ingero-top --help)\n",
			esc_str(a, sizeof(a), cli->prometheus, 0), why);
		return 2;
	}
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = cli->prometheus;
	*ep = prom_endpoint_start(&cfg, cli->prometheus_procs, err, sizeof(err));
	if (!*ep) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(a, sizeof(a), err, 0));
		return 1;
	}
	log_msg(LOG_INFO, "metrics at http://%s/metrics", prom_endpoint_address(*ep));
	if (cli->batch)
		fprintf(stderr, "ingero-top: metrics at http://%s/metrics\n",
			prom_endpoint_address(*ep));
	return 0;
}

/* The loops' publish callback: the session's metrics to the endpoint. */
static void publish_metrics(void *ctx, struct session *s)
{
	prom_endpoint_publish(ctx, session_model(s), session_detect(s), session_status(s));
}

/* --since/--until of a replay, read against the recordings' span (the
 * forms of core/timearg.h, as explain takes them). 0, or the exit code
 * after a line on stderr. */
static int replay_range(struct session *s, const struct cli *cli)
{
	const struct ig_status *st = session_status(s);
	uint64_t start = st->replay_start_ns, end = st->replay_end_ns, since = 0, until = 0;
	char err[256], e[300], a1[40], a2[40];
	if (!cli->since && !cli->until)
		return 0;
	const char *bad = NULL;
	if (cli->since && timearg_parse(cli->since, start, end, &since, err, sizeof(err)))
		bad = "--since";
	else if (cli->until && timearg_parse(cli->until, start, end, &until, err, sizeof(err)))
		bad = "--until";
	if (bad) {
		fprintf(stderr, "ingero-top: %s: %s\n", bad, esc_str(e, sizeof(e), err, 0));
		return 2;
	}
	if (until && since >= until) {
		fprintf(stderr, "ingero-top: --since must be before --until\n");
		return 2;
	}
	int r = session_set_range(s, since, until);
	if (r == -ENODATA) {
		fprintf(stderr,
			"ingero-top: no events in the range of --since and --until (the "
			"recording spans %s .. %s)\n",
			timearg_iso(a1, sizeof(a1), start), timearg_iso(a2, sizeof(a2), end));
		return 2;
	}
	if (r) {
		fprintf(stderr, "ingero-top: cannot replay from --since: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct subcommand *sub = find_subcommand(argc, argv);
	struct cli cli;
	char err[512] = "";
	int r;

	if (sub)
		return sub->run(argc - 1, argv + 1);
	if (fleet_wanted(argc, argv)) /* --ssh, --hosts-file: docs/fleet.md */
		return fleet_main(argc, argv);
	r = cli_parse(&cli, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if ((r = replay_set_expand(&cli)) || (r = check_arguments(&cli)))
		return r;
	catch_signals();
	if (cli.stream) /* before the attach: the reader learns the version first */
		stream_hello(&cli);
	log_capture_libbpf(cli.verbose >= 2);
	log_echo(cli.batch ? stderr : NULL, cli.verbose ? LOG_INFO : LOG_ERROR);
	if ((r = preflight(&cli, cli.batch)))
		return r;
	struct prom_endpoint *ep = NULL;
	if ((r = metrics_start(&cli, &ep)))
		return r;
	struct session_publish pub = {ep ? publish_metrics : NULL, ep};
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "ingero-top: %s\n", err);
		stream_fail(&cli, err);
		prom_endpoint_stop(ep);
		return 1;
	}
	if ((r = replay_range(s, &cli))) {
		prom_endpoint_stop(ep);
		session_free(s);
		return r;
	}
	session_publish(&pub, s);
	r = cli.batch ? batch_run(s, &cli, &pub) : tui_run(s, &cli, &pub);
	int cmd_status = session_cmd_status(s);
	char rec_err[1100] = "";
	if (session_stop(s, rec_err, sizeof(rec_err))) {
		/* After the viewer is gone, whole, on one line. */
		fprintf(stderr, "ingero-top: %s\n", rec_err);
		r = 1;
	}
	prom_endpoint_stop(ep);
	session_free(s);
	/* Exit status (README, --help): 1 when ingero-top failed (the recording
	 * included); with -- CMD, the command's status when it ended first
	 * (128 + N when killed by signal N, as shells report it); else 0. */
	if (r)
		return r;
	return cli.cmd && cmd_status >= 0 ? cmd_status : 0;
}
