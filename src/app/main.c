/* ingero-top: option handling, then either `check`, the batch loop, or the
 * full-screen viewer (tui/). */
#include "collect/check.h"
#include "session/cli.h"
#include "report/evfmt.h"
#include "core/escape.h"
#include "core/log.h"
#include "model/model.h"
#include "report/report.h"
#include "report/report_stacks.h"
#include "stacks/stacks.h"
#include "session/session.h"

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
int tui_check_options(const struct cli *cli, char *err, size_t errlen) __attribute__((weak));

/* Errors about the arguments come first, before privileges and the
 * terminal: a theme that cannot be loaded, a recording that cannot be
 * read. Returns the exit code, 0 to go on. */
static int check_arguments(const struct cli *cli)
{
	char err[512];
	if (tui_check_options && tui_check_options(cli, err, sizeof(err))) {
		fprintf(stderr, "ingero-top: %s\n", err);
		return 2;
	}
	for (int i = 0; i < cli->nreplay; i++)
		if (access(cli->replay[i], R_OK)) {
			fprintf(stderr, "ingero-top: cannot replay ");
			esc_fputs(stderr, cli->replay[i], 0);
			fprintf(stderr, ": %s\n", strerror(errno));
			return 1;
		}
	return 0;
}

static volatile sig_atomic_t stop_flag, flight_flag;

static void on_stop(int sig)
{
	stop_flag = sig;
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
	uint64_t next = st->replay_start_ns + step;
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
		more = session_replay_to(s, next);
		if (more < 0) {
			fprintf(stderr, "ingero-top: replay failed: %s\n", strerror(-more));
			return 1;
		}
		if (!cli->summary && !cli->events) {
			if (print_frame(s, cli, false))
				return 1;
			if (cli->frames && ++frames >= cli->frames)
				return 0;
		}
		next += step;
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
	uint64_t next = mono_ms() + interval_ms;
	int frames = 0;
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
		if (!cli->summary && !cli->events && mono_ms() >= next) {
			if (print_frame(s, cli, false))
				return 1;
			next += interval_ms;
			if (cli->frames && ++frames >= cli->frames)
				break;
		}
		if (session_done(s))
			break;
	}
	session_finish(s);
	if (cli->summary)
		print_frame(s, cli, true);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli;
	char err[512] = "";
	int r;

	r = cli_parse(&cli, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (cli.check)
		return check_run(stdout);
	r = check_arguments(&cli);
	if (r)
		return r;

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
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "ingero-top: %s\n", err);
		return 1;
	}
	r = batch ? run_batch(s, &cli) : tui_run(s, &cli);
	int cmd_status = session_cmd_status(s);
	session_free(s);
	if (stop_flag && batch)
		return r;
	return r ? r : (cmd_status > 0 && cli.cmd ? 0 : 0);
}
