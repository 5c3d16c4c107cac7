/* The streaming mode's loop (stream_loop.h): one poll over the session's
 * descriptor and stdin; frames every -d of wall time (a replay moves at its
 * --speed meanwhile, as in the viewer), a pong as soon as a ping is read,
 * the end line when it stops. */
#include "app/stream_loop.h"

#include "app/batch.h"
#include "core/clock.h"
#include "report/stream.h"
#include "session/cli.h"
#include "session/session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define LINE_MAX_LEN 65536 /* longer lines from stdin are dropped */

/* The stream's lines go to stdout as it was at the start; fd 1 then points
 * at stderr, so that what a launched command, a demo's workload or a
 * library prints on its stdout cannot fall between or inside them. */
static FILE *out_f;

static FILE *out(void)
{
	return out_f ? out_f : stdout;
}

static void take_stdout(void)
{
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return;
	fflush(stdout);
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || !(out_f = fdopen(fd, "w"))) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

/* What the session traces, in the hello's words. */
static void target_of(const struct cli *cli, char *b, size_t n)
{
	if (cli->nreplay)
		snprintf(b, n, "replay %s%s", cli->replay[0],
			 cli->nreplay > 1 ? " (and more)" : "");
	else if (cli->demo)
		snprintf(b, n, "demo %s", cli->demo);
	else if (cli->cmd)
		snprintf(b, n, "command %s", cli->cmd[0]);
	else if (cli->npids) {
		size_t l = (size_t)snprintf(b, n, "pid ");
		for (int i = 0; i < cli->npids && l < n; i++)
			l += (size_t)snprintf(b + l, n - l, "%s%d", i ? "," : "", cli->pids[i]);
	} else
		snprintf(b, n, "all CUDA processes");
}

void stream_hello(const struct cli *cli)
{
	struct utsname u;
	char target[512];
	if (uname(&u))
		snprintf(u.nodename, sizeof(u.nodename), "?");
	target_of(cli, target, sizeof(target));
	take_stdout();
	struct stream_hello h = {.version = IG_VERSION,
				 .host = u.nodename,
				 .pid = (uint32_t)getpid(),
				 .realtime_ns = stream_realtime_ns(),
				 .interval_s = cli->interval_s,
				 .window_s = cli->window_s,
				 .target = target};
	stream_put(out(), stream_hello_json(&h));
}

void stream_fail(const struct cli *cli, const char *msg)
{
	if (cli->stream)
		stream_put(out(), stream_error_json(msg));
}

/* stdin, a line at a time: the bytes of a line not ended yet. */
struct lines {
	char buf[LINE_MAX_LEN];
	size_t n;
	int skipping; /* inside a line too long to keep */
};

/* Reads what stdin has (poll said so: one read does not block) and answers
 * each whole line. Returns 0, 1 when stdin ended, or the -errno of a
 * failed write of an answer. */
static int read_stdin(struct lines *L)
{
	char tmp[4096];
	ssize_t got = read(STDIN_FILENO, tmp, sizeof(tmp));
	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (got <= 0)
		return 1;
	for (ssize_t i = 0; i < got; i++) {
		if (tmp[i] != '\n') {
			if (L->n < sizeof(L->buf) - 1)
				L->buf[L->n++] = tmp[i];
			else
				L->skipping = 1;
			continue;
		}
		L->buf[L->n] = 0;
		int r = L->skipping
			    ? 0
			    : stream_put(out(), stream_answer(L->buf, stream_realtime_ns()));
		if (r && r != -ENOMEM) /* -ENOMEM: no answer (not a ping) */
			return r;
		L->n = 0;
		L->skipping = 0;
	}
	return 0;
}

struct run {
	struct stream_writer *w;
	struct lines in;
	bool stdin_open;
	uint64_t next_ms, interval_ms;
	int frames;
	uint32_t said;	    /* notices printed */
	const char *reason; /* why it ends (NULL: it goes on) */
	int out_err;	    /* stdout failed: -EPIPE (its reader went), -EIO */
	const struct session_publish *pub; /* once per frame (the metrics) */
};

static void put(struct run *R, json_t *o)
{
	int r = stream_put(out(), o);
	if (r && r != -ENOMEM && !R->out_err) {
		R->out_err = r;
		R->reason = "stdout closed";
	}
}

static void frame(struct run *R, struct session *s, bool done)
{
	put(R, stream_frame_json(R->w, session_model(s), session_detect(s), session_status(s), done,
				 stream_realtime_ns()));
	R->frames++;
}

/* Waits for events, a line on stdin or the next frame, pumps and ticks
 * the session (session_wait); reads stdin. A signal is seen by the caller. */
static void wait_input(struct run *R, struct session *s)
{
	struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
	if (session_wait(s, &in, R->stdin_open ? 1 : 0, R->next_ms) < 0) {
		R->reason = "reading events failed";
		return;
	}
	if (R->stdin_open && (in.revents & (POLLIN | POLLHUP | POLLERR))) {
		int r = read_stdin(&R->in);
		if (r == 1)
			R->reason = "stdin closed";
		else if (r < 0 && !R->out_err)
			R->out_err = r, R->reason = "stdout closed";
	}
}

/* One turn after wait_input: the flight recorder, notices, a frame when
 * due. Returns false when the traced work ended (the last frame written). */
static bool turn(struct run *R, struct session *s, const struct cli *cli)
{
	if (batch_flight_flag) {
		batch_flight_flag = 0;
		session_flight_save(s);
	}
	batch_print_notices(session_status(s), &R->said);
	if (session_done(s)) {
		session_finish(s);
		batch_print_notices(session_status(s), &R->said);
		frame(R, s, true);
		return false;
	}
	uint64_t now = ig_mono_ms();
	if (now >= R->next_ms) {
		frame(R, s, false);
		session_publish(R->pub, s);
		R->next_ms += R->interval_ms;
		if (R->next_ms <= now) /* far behind (a stopped process): from now */
			R->next_ms = now + R->interval_ms;
		if (cli->frames && R->frames >= cli->frames && !R->reason)
			R->reason = "frames";
	}
	return true;
}

/* The reason of the end when the traced work ended, and the exit code. */
static const char *ended(struct session *s, const struct cli *cli, char *b, size_t n, int *code)
{
	const struct ig_status *st = session_status(s);
	int cs = session_cmd_status(s);
	if (st->mode == IG_MODE_REPLAY)
		return "replay ended";
	*code = cli->cmd && cs >= 0 ? cs : 0;
	snprintf(b, n, "command exited %d", cs < 0 ? 0 : cs);
	return b;
}

int stream_run(struct session *s, const struct cli *cli, const struct session_publish *pub)
{
	struct run R = {.w = stream_writer_new(),
			.pub = pub,
			.stdin_open = !isatty(STDIN_FILENO),
			.interval_ms = (uint64_t)(cli->interval_s * 1000.0 + 0.5)};
	char why[64], err[1100] = "";
	int code = 0, rc = 0;

	R.next_ms = ig_mono_ms() + R.interval_ms;
	if (!R.w)
		return 1;
	while (!R.reason) {
		if (batch_stop_flag) {
			R.reason = "signal";
			break;
		}
		wait_input(&R, s);
		if (R.reason || batch_stop_flag)
			continue;
		if (!turn(&R, s, cli) && !R.reason)
			R.reason = ended(s, cli, why, sizeof(why), &code);
	}
	if (!strcmp(R.reason, "reading events failed")) {
		const char *m = session_status(s)->message;
		fprintf(stderr, "ingero-top: %s\n", m[0] ? m : R.reason);
		code = rc = 1;
	}
	if (session_stop(s, err, sizeof(err))) { /* the recording, before the end line */
		fprintf(stderr, "ingero-top: %s\n", err);
		code = rc = 1;
	}
	if (!R.out_err)
		put(&R, stream_end_json(R.reason, code));
	stream_writer_free(R.w);
	if (R.out_err == -EIO)
		rc = 1;
	return rc;
}
