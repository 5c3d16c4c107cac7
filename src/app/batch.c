/* The batch loops (batch.h): a live session framed by wall time, a replay
 * framed by event time at the recorded interval, as fast as possible. */
#include "app/batch.h"
#include "app/stream_loop.h"

#include "core/escape.h"
#include "model/model.h"
#include "report/evfmt.h"
#include "report/report.h"
#include "report/report_stacks.h"
#include "session/cli.h"
#include "session/session.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"

volatile sig_atomic_t batch_stop_flag, batch_flight_flag;

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
	struct report_opts o = {.summary = summary,
				.details = summary,
				.resolved = summary,
				.stacks = session_stacks(s)};
	const struct ig_model *m = session_model(s);
	struct ig_status *st = session_status(s);
	const struct ig_detect *d = session_detect(s);
	if (summary && session_stacks(s)) /* the stacks shown, resolved: a chain's call site */
		stacks_flush(session_stacks(s), 2000);
	int r = cli->json ? report_json(stdout, m, d, st, &o) : report_text(stdout, m, d, st, &o);
	if (cli->stacks && session_stacks(s)) {
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

/* A new snapshot of the metrics, once per refresh interval (*next_ms 0: now). */
static void metrics_publish(struct session *s, const struct session_publish *pub,
			    uint64_t *next_ms, uint64_t interval_ms)
{
	uint64_t now = ig_mono_ms();
	if (!pub || !pub->fn || (*next_ms && now < *next_ms))
		return;
	session_publish(pub, s);
	*next_ms = now + interval_ms;
}

/* Before the first frame: --events, or the attach summary / the files. */
static void start(struct session *s, const struct cli *cli)
{
	if (cli->events)
		print_events(s, cli);
	if (!cli->json && !cli->events) {
		session_describe(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
}

/* Batch replay: as fast as possible, frames at the recorded interval of
 * event time. */
static int run_replay(struct session *s, const struct cli *cli, const struct session_publish *pub)
{
	struct ig_status *st = session_status(s);
	uint64_t step = (uint64_t)(cli->interval_s * 1e9 + 0.5);
	uint64_t win = (uint64_t)(cli->window_s * 1e9 + 0.5);
	uint64_t next = st->replay_start_ns + step, busy = next;
	int frames = 0, more = 1;

	start(s, cli);
	while (more > 0 && !batch_stop_flag) {
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
		session_publish(pub, s);
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

/* The notices of the session not printed yet (*said of them were), in
 * order; the count of those that scrolled out of the status's notes. */
void batch_print_notices(const struct ig_status *st, uint32_t *said)
{
	if (st->notes_n - *said > IG_STATUS_NOTES) {
		char lost[64];
		snprintf(lost, sizeof(lost), "(%u earlier notices not kept)",
			 st->notes_n - *said - IG_STATUS_NOTES);
		print_notice(lost);
		*said = st->notes_n - IG_STATUS_NOTES;
	}
	for (; *said != st->notes_n; (*said)++)
		print_notice(st->notes[*said % IG_STATUS_NOTES]);
}

/* Live: frames every interval of wall time; notices (a process attached
 * late, flight recorder saved, recording stopped, the command's exit) on
 * stderr, every one. */
static int run_live(struct session *s, const struct cli *cli, const struct session_publish *pub)
{
	uint64_t interval_ms = (uint64_t)(cli->interval_s * 1000.0 + 0.5);
	uint64_t next = ig_mono_ms() + interval_ms, next_pub = 0;
	int frames = 0;
	bool framing = !cli->summary && !cli->events, frames_full = false;
	uint64_t framed = 0; /* events_total when the last frame was printed */
	uint32_t said = 0;   /* notices printed */

	start(s, cli);
	while (!batch_stop_flag) {
		/* framing: wake for the next frame too */
		if (session_wait(s, NULL, 0, framing ? next : 0) < 0)
			break;
		/* --events: what was read is out now (a pipe or a file is block
		 * buffered), not when 4 KiB more come or at the exit */
		if (cli->events)
			fflush(stdout);
		metrics_publish(s, pub, &next_pub, interval_ms);
		if (batch_flight_flag) {
			batch_flight_flag = 0;
			session_flight_save(s);
		}
		batch_print_notices(session_status(s), &said);
		if (framing && ig_mono_ms() >= next) {
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
	batch_print_notices(session_status(s), &said);
	/* The command ended between two frames: the last, partial interval
	 * gets its frame too, so that the frames account for every call. */
	if (framing && !frames_full && session_done(s) &&
	    (!frames || session_status(s)->events_total != framed) && print_frame(s, cli, false))
		return 1;
	if (cli->summary)
		print_frame(s, cli, true);
	return 0;
}

int batch_run(struct session *s, const struct cli *cli, const struct session_publish *pub)
{
	if (cli->stream)
		return stream_run(s, cli, pub);
	return cli->nreplay ? run_replay(s, cli, pub) : run_live(s, cli, pub);
}
