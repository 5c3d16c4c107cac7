/* ingero-top: option handling, then either `check`, the batch loop, or the
 * full-screen viewer (tui/). */
#include "app/export.h"
#include "app/handover.h"
#include "collect/check.h"
#include "session/cli.h"
#include "report/evfmt.h"
#include "core/escape.h"
#include "core/log.h"
#include "model/model.h"
#include "report/promsrv.h"
#include "report/report.h"
#include "report/report_stacks.h"
#include "stacks/stacks.h"
#include "session/session.h"
#include "store/db.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The viewer lives in tui/ (curses stays out of src/). */
int tui_run(struct session *s, const struct cli *cli) __attribute__((weak));

static volatile sig_atomic_t stop_flag, flight_flag;

static void on_stop(int sig)
{
	stop_flag = sig;
	db_interrupt(); /* a replay's SQLite statement stops at once */
}

static void on_usr1(int sig)
{
	flight_flag = 1;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void print_event(void *ctx, const struct ig_event *e)
{
	char line[1024];
	fprintf(stdout, "%s\n", evfmt_line(line, sizeof(line), e));
}

static void print_event_json(void *ctx, const struct ig_event *e)
{
	evfmt_json(stdout, e);
}

/* --events: one line of text per event, or one JSON object with --json. */
static void print_events(struct session *s, const struct cli *cli)
{
	session_set_event_hook(s, cli->json ? print_event_json : print_event, NULL);
}

/* A notice of the session on stderr: it may quote a command or file name. */
static void print_notice(const char *msg)
{
	fputs("ingero-top: ", stderr);
	esc_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

/* --prometheus: the endpoint starts before the session, so that a bad
 * address or a taken port fails before anything is attached. Returns 0 or
 * the exit code after a one-line error. */
static int metrics_start(const struct cli *cli, bool batch)
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
	if (prom_serve_start(&cfg, cli->prometheus_procs, err, sizeof(err))) {
		fprintf(stderr, "ingero-top: %s\n", esc_str(a, sizeof(a), err, 0));
		return 1;
	}
	log_msg(LOG_INFO, "metrics at http://%s/metrics", prom_serve_address());
	if (batch)
		fprintf(stderr, "ingero-top: metrics at http://%s/metrics\n", prom_serve_address());
	return 0;
}

/* A new snapshot of the metrics, once per refresh interval (*next_ms 0: now). */
static void metrics_publish(struct session *s, uint64_t *next_ms, uint64_t interval_ms)
{
	uint64_t now = mono_ms();
	if (!prom_serve_address() || (*next_ms && now < *next_ms))
		return;
	prom_serve_publish(session_model(s), session_detect(s), session_status(s));
	*next_ms = now + interval_ms;
}

static int print_frame(struct session *s, const struct cli *cli, bool summary)
{
	struct report_opts o = { .summary = summary, .details = summary, .resolved = summary };
	const struct ig_model *m = session_model(s);
	struct ig_status *st = session_status(s);
	const struct ig_detect *d = session_detect(s);
	int r = cli->json ? report_json(stdout, m, d, st, &o) : report_text(stdout, m, d, st, &o);
	if (cli->stacks && session_stacks(s)) {
		if (summary)
			stacks_flush(session_stacks(s), 2000);
		if (cli->json)
			report_stacks_json(stdout, session_stacks(s), NULL);
		else
			report_stacks_text(stdout, session_stacks(s), NULL);
	}
	if (!cli->json)
		fputc('\n', stdout);
	fflush(stdout);
	return r;
}

/* Batch replay: as fast as possible, frames at the recorded interval of
 * event time. */
static int run_batch_replay(struct session *s, const struct cli *cli)
{
	struct ig_status *st = session_status(s);
	uint64_t step = (uint64_t)(cli->interval_s * 1e9 + 0.5);
	uint64_t win = (uint64_t)(cli->window_s * 1e9 + 0.5);
	uint64_t next = st->replay_start_ns + step, busy = next;
	int frames = 0, more = 1;

	if (cli->events)
		print_events(s, cli);
	if (!cli->json && !cli->events) {
		session_describe(s, stdout);
		fputc('\n', stdout);
	}
	while (more > 0 && !stop_flag) {
		/* The last frame ends at the last event, as the live run did. */
		if (st->replay_end_ns && next > st->replay_end_ns)
			next = st->replay_end_ns;
		if (st->replay_next_ns && st->replay_next_ns <= next)
			busy = next; /* this frame has events */
		more = session_replay_to(s, next);
		if (more < 0) {
			print_notice(st->message[0] ? st->message : strerror(-more));
			return 1;
		}
		prom_serve_publish(session_model(s), session_detect(s), st);
		if (!cli->summary && !cli->events) {
			if (print_frame(s, cli, false))
				return 1;
			if (cli->frames && ++frames >= cli->frames)
				return 0;
		}
		next += step;
		/* A gap without events (an outlier months later): once the window
		 * has emptied, the next frame is the one that holds the next event,
		 * so the replay takes time by rows, not by the span they claim. */
		if (st->replay_next_ns > next && next >= busy + win)
			next += (st->replay_next_ns - next + step - 1) / step * step;
	}
	session_finish(s);
	if (cli->summary)
		print_frame(s, cli, true);
	return 0;
}

static int run_batch(struct session *s, const struct cli *cli)
{
	if (cli->nreplay)
		return run_batch_replay(s, cli);
	uint64_t interval_ms = (uint64_t)(cli->interval_s * 1000.0 + 0.5);
	uint64_t next = mono_ms() + interval_ms, next_pub = 0;
	int frames = 0;
	bool framing = !cli->summary && !cli->events, frames_full = false;
	uint64_t framed = 0; /* events_total when the last frame was printed */
	char said[sizeof(session_status(s)->message)] = "";

	if (cli->events)
		print_events(s, cli);
	if (!cli->json && !cli->events) {
		session_describe(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	while (!stop_flag) {
		int fd = session_fd(s);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t to = (int64_t)next - (int64_t)mono_ms();
		int tmo = session_timeout_ms(s);
		if (!cli->summary && !cli->events && to < tmo)
			tmo = to < 0 ? 0 : (int)to;
		if (poll(&p, fd >= 0 ? 1 : 0, tmo) < 0 && errno != EINTR)
			break;
		if (session_pump(s, 1 << 16) < 0)
			break;
		session_tick(s);
		metrics_publish(s, &next_pub, interval_ms);
		if (flight_flag) {
			flight_flag = 0;
			session_flight_save(s);
		}
		/* Notices (flight recorder saved, recording stopped) go to stderr. */
		const char *msg = session_status(s)->message;
		if (msg[0] && strcmp(msg, said)) {
			print_notice(msg);
			snprintf(said, sizeof(said), "%s", msg);
		}
		if (framing && mono_ms() >= next) {
			if (print_frame(s, cli, false))
				return 1;
			framed = session_status(s)->events_total;
			next += interval_ms;
			if (cli->frames && ++frames >= cli->frames) {
				frames_full = true;
				break;
			}
		}
		if (session_done(s))
			break;
	}
	session_finish(s);
	/* The command ended between two frames: the last, partial interval
	 * gets its frame too, so that the frames account for every call. */
	if (framing && !frames_full && session_done(s) &&
	    (!frames || session_status(s)->events_total != framed) && print_frame(s, cli, false))
		return 1;
	if (cli->summary)
		print_frame(s, cli, true);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli;
	char err[512] = "";
	int r;

	handover_main_fn sub = handover_command(argc, argv); /* explain, query, mcp */
	if (sub)
		return sub(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "export"))
		return export_main(argc - 1, argv + 1);
	r = cli_parse(&cli, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (cli.check)
		return check_run(stdout);

	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	bool batch = cli.batch || !tui_run;
	log_capture_libbpf(cli.verbose >= 2);
	log_echo(batch ? stderr : NULL, cli.verbose ? LOG_INFO : LOG_ERROR);

	if (!cli.nreplay && !cli.demo) {
		if (check_privileges(err, sizeof(err)) || check_btf(err, sizeof(err))) {
			fprintf(stderr, "ingero-top: %s\n", err);
			return 1;
		}
	}
	if (!batch && (!isatty(0) || !isatty(1))) {
		fprintf(stderr, "ingero-top: the full-screen view needs a terminal; use --batch\n");
		return 2;
	}
	if ((r = metrics_start(&cli, batch)))
		return r;
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "ingero-top: %s\n", err);
		prom_serve_stop();
		return 1;
	}
	prom_serve_publish(session_model(s), session_detect(s), session_status(s));
	r = batch ? run_batch(s, &cli) : tui_run(s, &cli);
	int cmd_status = session_cmd_status(s);
	char rec_err[1100] = "";
	if (session_stop(s, rec_err, sizeof(rec_err))) {
		/* After the viewer is gone, whole, on one line. */
		fprintf(stderr, "ingero-top: %s\n", rec_err);
		r = 1;
	}
	prom_serve_stop();
	session_free(s);
	/* Exit status (README, --help): 1 when ingero-top failed (the recording
	 * included); with -- CMD, the command's status when it ended first
	 * (128 + N when killed by signal N, as shells report it); else 0. */
	if (r)
		return r;
	return cli.cmd && cmd_status >= 0 ? cmd_status : 0;
}
