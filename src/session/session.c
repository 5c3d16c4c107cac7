/* The session: one source (core/source.h) feeding the model, the stacks,
 * the recorder and the flight ring through one ingest function, driven the
 * same way whatever the source is: its pace says how far event time may go,
 * its ticks do its periodic work. Which source, and the recording around
 * it, is open.c. */
#include "session/session_int.h"
#include "session/live_stacks.h"

#include "core/clock.h"
#include "core/escape.h"
#include "detect/detect.h"
#include "model/model.h"
#include "stacks/stacks.h"
#include "store/flight.h"
#include "store/rec.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The loop's longest sleep when the source has no descriptor and no wish. */
#define IDLE_MS 100
/* A source with a descriptor (the kernel's ring) is read in batches: after
 * a pump that got events, its descriptor is left out of the poll for this
 * long. A ring is readable whenever it holds a record, so under a storm a
 * reader that polls it again at once wakes for a few records each time
 * (19 000 times a second on the test VM): that reader's position, moved on
 * every read, is a cache line the traced threads' programs read at every
 * record, and its per-wake work (ticks) is spent thousands of times a
 * second. 20 ms of a storm is far less than the ring holds (16 MiB: about
 * 5 M records a second before one is lost), and less than any view shows. */
#define BATCH_MS 20
/* The caller's descriptors session_wait polls besides the session's. */
#define SESSION_WAIT_MAX_EXTRA 7

void session_ingest(void *ctx, const struct ig_event *e)
{
	struct session *s = ctx;
	analysis_ingest(s->an, e);
	if (s->stacks)
		stacks_event(s->stacks, e);
	if (e->ts_ns + e->dur_ns > s->last_ev_ns)
		s->last_ev_ns = e->ts_ns + e->dur_ns;
	if (s->flight)
		flight_push(s->flight, e);
	if (s->rotor)
		session_rotor_event(s, e->ts_ns + e->dur_ns);
	if (s->rec && rec_event(s->rec, e) < 0 && rec_error(s->rec) && !s->st.record_error[0])
		snprintf(s->st.record_error, sizeof(s->st.record_error), "recording stopped: %s",
			 rec_error(s->rec));
	s->st.events_total++;
	if (s->hook)
		s->hook(s->hook_ctx, e);
}

void session_set_event_hook(struct session *s, session_event_hook hook, void *ctx)
{
	s->hook = hook;
	s->hook_ctx = ctx;
}

/* ---- life cycle --------------------------------------------------------- */

/* A session without a source yet: the model and the detector beside it. */
static struct session *session_alloc(const struct cli *cli, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct ig_model_cfg cfg;
	struct ig_detect_cfg dcfg;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cli = *cli;
	s->st.cmd_status = -1;
	s->st.nvml_state = -1; /* no device meters (live sets them) */
	s->no_flight = "this session (--flight 0)";
	model_cfg_default(&cfg);
	cfg.window_s = (unsigned)(cli->window_s + 0.5);
	detect_cfg_default(&dcfg);
	dcfg.self_pid = (uint32_t)getpid(); /* named as itself when it is a culprit */
	s->an = analysis_new(&cfg, &dcfg, false);
	if (!s->an) {
		snprintf(err, errlen, "out of memory");
		session_free(s);
		return NULL;
	}
	if (gethostname(s->st.host, sizeof(s->st.host) - 1))
		snprintf(s->st.host, sizeof(s->st.host), "?");
	return s;
}

/* The first tick: the source fills its status, the rates start. */
static void session_start(struct session *s)
{
	s->rate_t0_ns = ig_unix_now_ns();
	session_tick(s);
}

struct session *session_new(const struct cli *cli, char *err, size_t errlen)
{
	struct session *s = session_alloc(cli, err, errlen);

	if (!s)
		return NULL;
	if (session_open(s, err, errlen)) {
		session_free(s);
		return NULL;
	}
	session_start(s);
	return s;
}

struct session *session_new_source(struct ig_source *src, const struct cli *cli, char *err,
				   size_t errlen)
{
	struct session *s = session_alloc(cli, err, errlen);

	if (!s) {
		src->ops->free(src);
		return NULL;
	}
	s->src = src;
	session_start(s);
	return s;
}

/* Copies msg into err on one line (a recording's error may quote anything). */
static void one_line(char *err, size_t errlen, const char *msg)
{
	size_t i = 0;

	for (; msg[i] && i + 1 < errlen; i++)
		err[i] = (unsigned char)msg[i] < ' ' || msg[i] == 0x7f ? ' ' : msg[i];
	err[i] = 0;
}

int session_stop(struct session *s, char *err, size_t errlen)
{
	char why[1100] = "";

	if (!s)
		return 0;
	int r = session_close_record(s, why, sizeof(why));
	if (r && err)
		one_line(err, errlen, why);
	return r;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	session_stop(s, NULL, 0);
	stacks_free(s->stacks); /* before the collector it reads from */
	flight_free(s->flight);
	if (s->src && s->src->ops->free)
		s->src->ops->free(s->src); /* stops a launched command still running */
	free(s->marks);
	ckpt_free(s);
	analysis_free(s->an);
	free(s);
}

/* ---- the loop ------------------------------------------------------------- */

int session_fd(struct session *s)
{
	return s->src->ops->fd ? s->src->ops->fd(s->src) : -1;
}

int session_timeout_ms(struct session *s)
{
	uint64_t now = ig_unix_now_ns();

	if (s->tick_due_ns <= now)
		return 0;
	if (s->tick_due_ns - now < IDLE_MS * 1000000ULL)
		return (int)((s->tick_due_ns - now) / 1000000) + 1;
	return IDLE_MS;
}

int session_pump_until(struct session *s, uint64_t until, int budget)
{
	struct ig_source *src = s->src;
	int total = 0;

	while (total < budget) {
		uint64_t ts = 0;
		int max = budget - total;
		if (src->ops->peek_ts) { /* one at a time up to until */
			int r = src->ops->peek_ts(src, &ts);
			if (r == -ENODATA)
				s->at_end = true;
			if (r < 0 || ts > until)
				break;
			if (s->ck)
				ckpt_before(s, ts);
			max = 1;
		}
		int n = src->ops->poll(src, session_ingest, s, max);
		if (n == -ENODATA)
			s->at_end = true;
		if (n < 0 && n != -ENODATA && !total)
			return n;
		if (n <= 0)
			break;
		total += n;
		if (ts > s->pos_ns)
			s->pos_ns = ts;
	}
	return total;
}

int session_pump(struct session *s, int budget)
{
	uint64_t until =
	    s->src->ops->pace ? s->src->ops->pace(s->src, ig_unix_now_ns()) : UINT64_MAX;
	int n = session_pump_until(s, until, budget);

	/* Everything due is in (or, without look-ahead, in the past by the
	 * source's lag: a flood must not stop the clock): the position is the
	 * pace's. As fast as possible, it is the last event's time. */
	if (until != UINT64_MAX && until > s->pos_ns && (n < budget || !s->src->ops->peek_ts))
		s->pos_ns = until;
	return n;
}

void session_advance(struct session *s)
{
	uint64_t to = s->pos_ns, next;

	if (s->src->ops->peek_ts && s->src->ops->peek_ts(s->src, &next) == 0 && next < to)
		to = next;
	analysis_advance(s->an, to);
	s->st.replay_pos_ns = s->pos_ns;
	s->st.now_ns = model_now(s->an->m);
}

void session_tick(struct session *s)
{
	uint64_t now = ig_unix_now_ns();

	s->tick_due_ns = UINT64_MAX;
	if (s->src->ops->tick)
		s->tick_due_ns = s->src->ops->tick(s->src, now, session_ingest, s, &s->st);
	if (!s->ck)
		ckpt_init(s); /* once the source told where it starts */
	session_advance(s);
	session_record_chains(s);
	session_record_tick(s);
	/* The thresholds of tail-only stacks, at every tick (about 10 a
	 * second): an op's first calls all walk their stack until it has one. */
	if (s->stack_tail)
		live_stacks_tail(s->stack_tail, s->an->m);
	if (now - s->rate_t0_ns >= 1000000000ULL) {
		s->st.events_per_s = (double)(s->st.events_total - s->rate_events0) * 1e9 /
				     (double)(now - s->rate_t0_ns);
		s->rate_t0_ns = now;
		s->rate_events0 = s->st.events_total;
	}
}

void session_set_slice(struct session *s, int slice_ms)
{
	s->slice_ms = slice_ms > 0 ? slice_ms : 0;
}

bool session_backlog(const struct session *s)
{
	return s->backlog;
}

/* Chunks of events until fewer come than asked or the slice is over. */
static int pump_slice(struct session *s)
{
	uint64_t t0 = ig_mono_ms();
	int total = 0;
	for (;;) {
		int n = session_pump(s, SESSION_SLICE_CHUNK);
		if (n < 0)
			return n;
		total += n;
		if (n < SESSION_SLICE_CHUNK)
			return total;
		if (ig_mono_ms() - t0 >= (uint64_t)s->slice_ms) {
			s->backlog = true;
			return total;
		}
	}
}

int session_wait(struct session *s, struct pollfd *extra, int nextra, uint64_t deadline_ms)
{
	struct pollfd p[1 + SESSION_WAIT_MAX_EXTRA];
	int n = 0, fd = session_fd(s), tmo = s->backlog ? 0 : session_timeout_ms(s);

	if (nextra < 0 || nextra > SESSION_WAIT_MAX_EXTRA)
		return -EINVAL;
	if (deadline_ms) {
		int64_t left = (int64_t)deadline_ms - (int64_t)ig_mono_ms();
		if (left < tmo)
			tmo = left < 0 ? 0 : (int)left;
	}
	for (int i = 0; i < nextra; i++)
		p[n++] = extra[i];
	uint64_t since = ig_mono_ms() - s->drained_ms;
	bool rest = fd >= 0 && !s->backlog && since < BATCH_MS;
	if (rest && tmo > (int)(BATCH_MS - since))
		tmo = (int)(BATCH_MS - since);
	if (fd >= 0 && !rest)
		p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	int r = poll(p, (nfds_t)n, tmo);
	for (int i = 0; i < nextra; i++)
		extra[i].revents = r < 0 ? 0 : p[i].revents;
	if (r < 0 && errno != EINTR)
		return -errno;
	s->backlog = false;
	int got = 0;
	if (!rest || ig_mono_ms() - s->drained_ms >= BATCH_MS) {
		got = s->slice_ms ? pump_slice(s) : session_pump(s, SESSION_WAIT_BUDGET);
		if (got > 0)
			s->drained_ms = ig_mono_ms();
	}
	session_tick(s);
	return got;
}

bool session_done(struct session *s)
{
	return s->src->ops->done && s->src->ops->done(s->src);
}

int session_cmd_status(struct session *s)
{
	return s->st.cmd_status;
}

void session_finish(struct session *s)
{
	/* A live session stopped (a signal, a key, a frame count): what the
	 * kernel already holds is read first, up to SESSION_WAIT_BUDGET
	 * events 16 times, as a storm may go on while it reads. */
	for (int i = 0; i < 16 && session_fd(s) >= 0; i++)
		if (session_pump(s, SESSION_WAIT_BUDGET) < SESSION_WAIT_BUDGET)
			break;
	/* Close the last second of event time so the detector sees it; live
	 * and replay of the same events end on the same boundary. */
	analysis_finish(s->an, s->last_ev_ns);
	s->st.now_ns = model_now(s->an->m);
	session_record_chains(s);
}

/* ---- what the views read -------------------------------------------------- */

struct ig_model *session_model(struct session *s)
{
	return s->an->m;
}

const struct ig_detect *session_detect(struct session *s)
{
	return s->an->d;
}

struct stacks *session_stacks(struct session *s)
{
	return s->stacks;
}

struct ig_status *session_status(struct session *s)
{
	return &s->st;
}

int session_keep_slowcalls(struct session *s)
{
	return analysis_keep_slow(s->an);
}

const struct slowcalls *session_slowcalls(struct session *s)
{
	return s->an->slow;
}

void session_reset(struct session *s)
{
	analysis_reset(s->an);
	if (s->stacks)
		stacks_reset(s->stacks);
}

void session_describe(struct session *s, FILE *f)
{
	if (s->src->ops->describe)
		s->src->ops->describe(s->src, f);
	if (s->rec) {
		fputs("record: ", f);
		esc_fputs(f, rec_path(s->rec), 0);
		fputc('\n', f);
	}
}
