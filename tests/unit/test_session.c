/* The session over any source (core/source.h). The synthetic source fills
 * the whole vtable: driven by the batch loop (pump, tick, done, finish) it
 * gives what feeding its events to a model directly gives; paused it holds,
 * resumed it goes on; seeking back rebuilds the model to what feeding up to
 * that time gives, seeking forward too; the batch replay's steps give the
 * loop's result. A source without look-ahead (live-like: no peek, no seek,
 * no pace control) answers -ENOTSUP to the replay controls, its events are
 * all taken, its tick's wish sets the poll timeout, its done ends the loop,
 * its describe is the session's; a source with a descriptor that is
 * always readable (a live ring under a storm) is read in batches. No root, no kernel, no wall-clock limit. */
#include "analysis.h"
#include "analysis/analysis.h"
#include "analysis/slowcalls.h"
#include "check.h"
#include "collect/collector.h"
#include "core/clock.h"
#include "core/ops.h"
#include "session/session.h"
#include "synth.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEC 1000000000ULL

static struct cli opts(void)
{
	struct cli c;
	memset(&c, 0, sizeof(c));
	c.window_s = 10;
	c.speed = 1;
	c.interval_s = 1;
	return c;
}

static struct synth_cfg scenario(void)
{
	return (struct synth_cfg){.scenario = SYNTH_CPU_CONTENTION, .seconds = 12};
}

static struct session *synth_session(void)
{
	struct synth_cfg cfg = scenario();
	struct cli c = opts();
	char err[256] = "";
	struct session *s = session_new_source(synth_source_new(&cfg), &c, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	return s;
}

/* The model fed directly: every event up to event time upto (all when
 * UINT64_MAX, then the last second closed as session_finish does). */
static struct ig_model *reference(uint64_t upto, uint64_t *nevents)
{
	struct synth_cfg cfg = scenario();
	struct synth *sy = synth_new(&cfg);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	uint64_t ts, last = 0;

	*nevents = 0;
	while (synth_peek_ts(sy, &ts) == 0 && ts <= upto && synth_next(sy, &e)) {
		model_ingest(m, &e);
		if (e.ts_ns + e.dur_ns > last)
			last = e.ts_ns + e.dur_ns;
		(*nevents)++;
	}
	model_advance(m, upto != UINT64_MAX ? upto : (last / SEC + 1) * SEC);
	synth_free(sy);
	return m;
}

/* The same calls per op, and the same chains (class, severity, first seen). */
static int same_analysis(const struct ig_model *a, const struct ig_detect *da,
			 const struct ig_model *b, const struct ig_detect *db, const char *what)
{
	int ok = 1;
	for (int op = 1; op < IG_OP_MAX; op++) {
		struct ig_series_stats x, y;
		int rx = model_op_stats(a, op, &x), ry = model_op_stats(b, op, &y);
		if (rx != ry ||
		    (!rx && (x.calls_life != y.calls_life || x.life.p99 != y.life.p99))) {
			fprintf(stderr, "%s: %s differs\n", what, ig_op_name(op));
			ok = 0;
		}
	}
	if (detect_count(da) != detect_count(db)) {
		fprintf(stderr, "%s: %d chains, want %d\n", what, detect_count(da),
			detect_count(db));
		return 0;
	}
	for (int i = 0; i < detect_count(da); i++) {
		const struct ig_chain *x = detect_chain(da, i), *y = detect_chain(db, i);
		if (x->cls != y->cls || x->severity != y->severity ||
		    x->first_seen_ns != y->first_seen_ns) {
			fprintf(stderr, "%s: chain %d differs: %s/%s\n", what, i,
				detect_class_name(x->cls), detect_class_name(y->cls));
			ok = 0;
		}
	}
	return ok;
}

/* The batch loop: pump, tick until done, finish. */
static void test_loop(void)
{
	struct session *s = synth_session();
	uint64_t n;
	struct ig_model *ref = reference(UINT64_MAX, &n);
	int rounds = 0;

	CHECK(session_fd(s) == -1);
	CHECK(session_status(s)->mode == IG_MODE_REPLAY); /* the source's tick filled it */
	while (!session_done(s) && rounds++ < 1000000) {
		CHECK(session_pump(s, 1000) >= 0);
		session_tick(s);
	}
	session_finish(s);
	CHECK(session_done(s));
	CHECKF(session_status(s)->events_total == n, "%llu events, want %llu",
	       (unsigned long long)session_status(s)->events_total, (unsigned long long)n);
	CHECK(detect_count(session_detect(s)) > 0);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "loop"));
	CHECK(session_cmd_status(s) == -1);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	session_describe(s, f);
	fclose(f);
	CHECKF(text && !strncmp(text, "synthetic: cpu_contention, 12 s", 31), "%s", text);
	free(text);
	an_model_free(ref);
	session_free(s);
}

/* The loop turned by session_wait (the batch loop's): the same analysis;
 * a readable descriptor of the caller's is told in its revents; the
 * slowest calls kept from session_keep_slowcalls on, forgotten by reset. */
static void test_wait(void)
{
	struct session *s = synth_session();
	uint64_t n;
	struct ig_model *ref = reference(UINT64_MAX, &n);
	int rounds = 0, fds[2];

	CHECK(!session_slowcalls(s) && session_keep_slowcalls(s) == 0 && session_slowcalls(s));
	CHECK(pipe(fds) == 0);
	struct pollfd in = {.fd = fds[0], .events = POLLIN};
	CHECK(session_wait(s, &in, 1, 1) >= 0 && !(in.revents & POLLIN)); /* deadline past */
	CHECK(write(fds[1], "x", 1) == 1);
	CHECK(session_wait(s, &in, 1, 0) >= 0 && (in.revents & POLLIN));
	struct pollfd many[8];
	CHECK(session_wait(s, many, 8, 0) == -EINVAL);
	while (!session_done(s) && rounds++ < 1000000)
		CHECK(session_wait(s, NULL, 0, 0) >= 0);
	session_finish(s);
	CHECKF(session_status(s)->events_total == n, "%llu events, want %llu",
	       (unsigned long long)session_status(s)->events_total, (unsigned long long)n);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "wait"));
	struct ig_event out[4];
	CHECK(slowcalls_get(session_slowcalls(s), -1, 0, 0, 0, out, 4) == 4);
	session_reset(s);
	CHECK(slowcalls_get(session_slowcalls(s), -1, 0, 0, 0, out, 4) == 0);
	close(fds[0]);
	close(fds[1]);
	an_model_free(ref);
	session_free(s);
}

/* The viewer's loop: session_wait with a time slice. Every event is read
 * once and the analysis is the batch loop's; a turn that stops for the
 * slice stops after whole chunks and leaves the backlog flag, a turn that
 * read everything due clears it. (Whether a slice runs out depends on the
 * machine's speed: counted, not required.) */
static void test_wait_slice(void)
{
	struct session *s = synth_session();
	uint64_t n, got = 0;
	struct ig_model *ref = reference(UINT64_MAX, &n);
	int rounds = 0, outs = 0;

	session_set_slice(s, 1);
	CHECK(!session_backlog(s));
	while (!session_done(s) && rounds++ < 1000000) {
		int k = session_wait(s, NULL, 0, 0);
		CHECK(k >= 0);
		if (session_backlog(s)) {
			CHECKF(k > 0 && k % SESSION_SLICE_CHUNK == 0, "a slice ran out after %d", k);
			outs++;
		}
		got += (uint64_t)(k > 0 ? k : 0);
	}
	CHECK(!session_backlog(s));
	session_finish(s);
	CHECKF(session_status(s)->events_total == n && got == n, "%llu events (%llu), want %llu",
	       (unsigned long long)session_status(s)->events_total, (unsigned long long)got,
	       (unsigned long long)n);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "slice"));
	printf("  slice: %d turns, %d ran out\n", rounds, outs);
	an_model_free(ref);
	session_free(s);
}

/* struct analysis fed directly: what the session's gives; the slowest
 * calls kept when asked for; reset forgets chains and calls. */
static void test_analysis(void)
{
	struct synth_cfg cfg = scenario();
	struct synth *sy = synth_new(&cfg);
	struct analysis *a = analysis_new(NULL, NULL, true);
	struct ig_event e, out[4];
	uint64_t n, last = 0;
	struct ig_model *ref = reference(UINT64_MAX, &n);

	CHECK(a && a->m && a->d && a->slow);
	while (synth_next(sy, &e)) {
		analysis_ingest(a, &e);
		if (e.ts_ns + e.dur_ns > last)
			last = e.ts_ns + e.dur_ns;
	}
	analysis_finish(a, last);
	CHECK(detect_count(a->d) > 0);
	CHECK(same_analysis(a->m, a->d, ref, an_detect(ref), "analysis"));
	CHECK(slowcalls_get(a->slow, -1, 0, 0, 0, out, 4) == 4);
	analysis_reset(a);
	CHECK(detect_count(a->d) == 0 && slowcalls_get(a->slow, -1, 0, 0, 0, out, 4) == 0);
	struct analysis *b = analysis_new(NULL, NULL, false);
	CHECK(b && !b->slow);
	analysis_ingest(b, &e); /* without the keeper */
	CHECK(analysis_keep_slow(b) == 0 && b->slow && analysis_keep_slow(b) == 0);
	analysis_free(b);
	analysis_free(a);
	an_model_free(ref);
	synth_free(sy);
}

/* Paused, the pace holds at the position; resumed, it goes on. */
static void test_pause(void)
{
	struct session *s = synth_session();

	CHECK(session_pump(s, 500) == 500);
	session_tick(s);
	session_set_paused(s, true);
	CHECK(session_status(s)->paused);
	uint64_t pos = session_status(s)->replay_pos_ns;
	session_pump(s, 1000); /* events at the very position (ties) may come */
	uint64_t held = session_status(s)->events_total;
	for (int i = 0; i < 5; i++) {
		CHECK(session_pump(s, 1000) == 0);
		session_tick(s);
	}
	CHECK(session_status(s)->events_total == held);
	CHECK(session_status(s)->replay_pos_ns == pos);
	CHECK(!session_done(s));
	session_set_paused(s, false);
	CHECK(session_pump(s, 1000) == 1000);
	CHECK(session_set_speed(s, 4) == 0 && session_status(s)->replay_speed == 4);
	session_free(s);
}

/* Back: the model is rebuilt from the start up to the new position (the
 * views fetch it again); forward: ingested up to it. */
static void test_seek(void)
{
	struct session *s = synth_session();
	uint64_t n;

	while (!session_done(s)) {
		session_pump(s, 4096);
		session_tick(s);
	}
	uint64_t end = session_status(s)->replay_pos_ns;
	CHECK(end > session_status(s)->replay_start_ns + 10 * SEC);
	CHECK(session_seek(s, -(int64_t)(5 * SEC)) == 0);
	CHECK(session_status(s)->replay_pos_ns == end - 5 * SEC);
	struct ig_model *ref = reference(end - 5 * SEC, &n);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "back"));
	an_model_free(ref);

	CHECK(session_seek(s, 2 * SEC) == 0);
	ref = reference(end - 3 * SEC, &n);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "forward"));
	an_model_free(ref);

	/* before the start: clamped to it, an empty model */
	CHECK(session_seek(s, -(int64_t)(60 * SEC)) == 0);
	struct ig_model_totals t;
	model_totals(session_model(s), &t);
	CHECK(t.calls == 0);
	/* recorded chains: none in a synthetic stream, so the detector's own */
	CHECK(session_jump_chain(s, 1) == 0 && detect_count(session_detect(s)) > 0);
	session_free(s);
}

/* Chain ids and the event count do not depend on the seeks that led to a
 * position: after going back and forth, the chains have the ids of a
 * straight run (a chain first detected at the same event time keeps its
 * id) and the count is the events delivered up to the position, not every
 * event ingested again by a rebuild. */
static void run_to_end(struct session *s)
{
	while (!session_done(s)) {
		session_pump(s, 4096);
		session_tick(s);
	}
	session_finish(s);
}

static void test_seek_ids(void)
{
	struct session *a = synth_session(), *b = synth_session();
	uint64_t n;
	struct ig_model *ref = reference(UINT64_MAX, &n);

	run_to_end(a);
	CHECK(detect_count(session_detect(a)) > 0);
	session_pump(b, 4096 * 4); /* part of the way, then back and forth */
	session_tick(b);
	CHECK(session_seek(b, -(int64_t)(60 * SEC)) == 0);
	uint64_t n0; /* the events at the very start */
	struct ig_model *r0 = reference(session_status(b)->replay_start_ns, &n0);
	CHECKF(session_status(b)->events_total == n0, "%llu events at the start, want %llu",
	       (unsigned long long)session_status(b)->events_total, (unsigned long long)n0);
	an_model_free(r0);
	CHECK(session_seek(b, 8 * SEC) == 0);
	CHECK(session_seek(b, -(int64_t)(3 * SEC)) == 0);
	CHECK(session_seek(b, 20 * SEC) == 0);
	CHECK(session_seek(b, -(int64_t)(60 * SEC)) == 0);
	run_to_end(b);
	CHECKF(session_status(b)->events_total == n, "%llu events after seeks, want %llu",
	       (unsigned long long)session_status(b)->events_total, (unsigned long long)n);
	const struct ig_detect *da = session_detect(a), *db = session_detect(b);
	CHECK(detect_count(db) == detect_count(da));
	for (int i = 0; i < detect_count(da) && i < detect_count(db); i++) {
		const struct ig_chain *x = detect_chain(da, i), *y = detect_chain(db, i);
		CHECKF(x->id == y->id && !strcmp(x->id_str, y->id_str) &&
			   x->first_seen_ns == y->first_seen_ns && x->cls == y->cls,
		       "chain %d: %s after seeks, %s straight", i, y->id_str, x->id_str);
	}
	an_model_free(ref);
	session_free(a);
	session_free(b);
}

/* A seek back restores the nearest checkpoint at or before the target and
 * reads on from there: the same analysis, events and chain ids as a
 * session that read the stream from its start to the target. */
static void test_ckpt(void)
{
	struct synth_cfg cfg = {.scenario = SYNTH_CPU_CONTENTION, .seconds = 45};
	struct cli c = opts();
	char err[256] = "";
	struct session *b = session_new_source(synth_source_new(&cfg), &c, err, sizeof(err));
	int n;
	uint64_t taken, restored;

	CHECKF(b != NULL, "%s", err);
	while (!session_done(b)) { /* the whole stream: checkpoints on the way */
		session_pump(b, 4096);
		session_tick(b);
	}
	session_ckpt_stats(b, &n, &taken, &restored);
	CHECKF(n >= 4 && taken == (uint64_t)n, "%d checkpoints held, %llu taken", n,
	       (unsigned long long)taken);
	uint64_t start = session_status(b)->replay_start_ns;
	const uint64_t at[] = {25 * SEC + SEC / 2, 12 * SEC, 41 * SEC, 3 * SEC, 30 * SEC};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct session *a = session_new_source(synth_source_new(&cfg), &c, err, sizeof(err));
		char what[64];
		CHECKF(a != NULL, "%s", err);
		session_tick(a);
		CHECK(session_seek_to(a, start + at[i]) == 0); /* forward from the start */
		CHECK(session_seek_to(b, start + at[i]) == 0); /* from a checkpoint */
		snprintf(what, sizeof(what), "at +%.1fs", (double)at[i] / 1e9);
		CHECKF(same_analysis(session_model(a), session_detect(a), session_model(b),
				     session_detect(b), what),
		       "%s: the analysis differs", what);
		CHECKF(session_status(a)->events_total == session_status(b)->events_total,
		       "%s: %llu events, want %llu", what,
		       (unsigned long long)session_status(b)->events_total,
		       (unsigned long long)session_status(a)->events_total);
		const struct ig_detect *da = session_detect(a), *db = session_detect(b);
		for (int k = 0; k < detect_count(da) && k < detect_count(db); k++)
			CHECKF(detect_chain(da, k)->id == detect_chain(db, k)->id,
			       "%s: chain %d id %u, want %u", what, k, detect_chain(db, k)->id,
			       detect_chain(da, k)->id);
		session_free(a);
	}
	session_ckpt_stats(b, &n, &taken, &restored);
	CHECKF(restored >= 4, "%llu restores for 5 seeks (one before the first checkpoint)",
	       (unsigned long long)restored);
	session_free(b);
}

/* A batch session never walks back: it takes no checkpoint, and reads the
 * same analysis as a viewer's session that takes them. */
static void test_batch_no_ckpt(void)
{
	struct synth_cfg cfg = {.scenario = SYNTH_CPU_CONTENTION, .seconds = 45};
	struct cli c = opts(), cb = opts();
	char err[256] = "";
	cb.batch = true;
	struct session *a = session_new_source(synth_source_new(&cfg), &c, err, sizeof(err));
	struct session *b = session_new_source(synth_source_new(&cfg), &cb, err, sizeof(err));
	int na, nb;
	uint64_t ta, tb, restored;

	CHECKF(a && b, "%s", err);
	run_to_end(a);
	run_to_end(b);
	session_ckpt_stats(a, &na, &ta, &restored);
	session_ckpt_stats(b, &nb, &tb, &restored);
	CHECKF(na >= 4 && nb == 0 && tb == 0, "checkpoints: %d held by the viewer's, %d (%llu "
	       "taken) by the batch session", na, nb, (unsigned long long)tb);
	CHECK(same_analysis(session_model(a), session_detect(a), session_model(b),
			    session_detect(b), "batch"));
	CHECK(session_status(a)->events_total == session_status(b)->events_total);
	session_free(a);
	session_free(b);
}

/* The batch replay's steps (session_replay_to) give the loop's result. */
static void test_steps(void)
{
	struct session *s = synth_session();
	uint64_t n;
	struct ig_model *ref = reference(UINT64_MAX, &n);
	const struct ig_status *st = session_status(s);
	uint64_t next = st->replay_start_ns + SEC;
	int more = 1, steps = 0;

	while (more > 0 && steps++ < 1000) {
		more = session_replay_to(s, next);
		CHECK(st->replay_pos_ns == next);
		next += SEC;
	}
	CHECK(more == 0 && steps >= 12);
	session_finish(s);
	CHECK(st->events_total == n);
	CHECK(same_analysis(session_model(s), session_detect(s), ref, an_detect(ref), "steps"));
	an_model_free(ref);
	session_free(s);
}

/* A live-like source: whatever it holds has happened; no look-ahead, no
 * seeking, no pace control. */
struct fake {
	struct ig_source src;
	struct ig_event ev[3];
	int next, ticks;
	uint64_t due_ns; /* what its tick asks for */
	uint64_t paced;	 /* the last pace it gave */
	int freed;
};

static int fake_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct fake *f = src->priv;
	int n = 0;
	while (n < max && f->next < 3) {
		emit(ctx, &f->ev[f->next++]);
		n++;
	}
	return n;
}

static uint64_t fake_tick(struct ig_source *src, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			  struct ig_status *st)
{
	struct fake *f = src->priv;
	f->ticks++;
	st->mode = IG_MODE_LIVE;
	st->probes_attached = 7;
	if (f->ticks == 2) { /* two notices in one tick: a late attach, the exit */
		ig_status_say(st, "attached to PID %d late", 42);
		ig_status_say(st, "cmd exited with status %d", 0);
	}
	return f->due_ns;
}

static uint64_t fake_pace(struct ig_source *src, uint64_t now_ns)
{
	struct fake *f = src->priv;
	return f->paced = now_ns - SEC;
}

static bool fake_done(struct ig_source *src)
{
	struct fake *f = src->priv;
	return f->next == 3 && f->ticks >= 3;
}

static void fake_describe(struct ig_source *src, FILE *out)
{
	fputs("fake: 3 events\n", out);
}

static void fake_free(struct ig_source *src)
{
	((struct fake *)src->priv)->freed = 1;
}

static const struct ig_source_ops fake_ops = {
    .name = "fake",
    .poll = fake_poll,
    .tick = fake_tick,
    .pace = fake_pace,
    .done = fake_done,
    .describe = fake_describe,
    .free = fake_free,
};

static void test_live_like(void)
{
	static struct fake f; /* outlives the session: it says it was freed */
	struct cli c = opts();
	char err[256] = "";
	uint64_t now = ig_unix_now_ns();

	f.src = (struct ig_source){.ops = &fake_ops, .priv = &f};
	for (int i = 0; i < 3; i++)
		f.ev[i] = (struct ig_event){.kind = IG_EV_CALL,
					    .op = IG_OP_CUDA_LAUNCH_KERNEL,
					    .ts_ns = now - 5 * SEC + (uint64_t)i * 1000,
					    .dur_ns = 500,
					    .pid = 42,
					    .tid = 42};
	f.ev[0] =
	    (struct ig_event){.kind = IG_EV_COMM, .ts_ns = now - 5 * SEC, .pid = 42, .tid = 42};
	strcpy(f.ev[0].comm, "trainer");
	f.ev[0].container = "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a";
	f.due_ns = now + 5000000; /* 5 ms */
	struct session *s = session_new_source(&f.src, &c, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	CHECK(f.ticks == 1 && session_status(s)->mode == IG_MODE_LIVE &&
	      session_status(s)->probes_attached == 7);
	CHECK(session_fd(s) == -1);
	int tmo = session_timeout_ms(s);
	CHECKF(tmo >= 0 && tmo <= 6, "timeout %d ms for a tick due in 5 ms", tmo);
	f.due_ns = 0; /* overdue */
	session_tick(s);
	CHECK(session_timeout_ms(s) == 0);
	/* both notices of the tick are kept, in order; message is the last */
	const struct ig_status *st = session_status(s);
	CHECK(st->notes_n == 2 && !strcmp(st->notes[0], "attached to PID 42 late") &&
	      !strcmp(st->notes[1], "cmd exited with status 0") &&
	      !strcmp(st->message, "cmd exited with status 0"));
	f.due_ns = UINT64_MAX; /* no wish: the idle timeout */
	session_tick(s);
	CHECK(session_timeout_ms(s) == 100);

	CHECK(session_seek(s, SEC) == -ENOTSUP);
	CHECK(session_set_speed(s, 2) == -ENOTSUP);
	CHECK(session_jump_chain(s, 1) == -ENOTSUP);
	CHECK(session_replay_to(s, now) == -ENOTSUP);
	session_set_paused(s, true); /* the views freeze; the source goes on */
	CHECK(session_pump(s, 2) == 2 && session_pump(s, 2) == 1 && session_pump(s, 2) == 0);
	session_tick(s);
	CHECK(session_done(s));
	/* the clock follows the pace, events or not */
	CHECK(session_status(s)->replay_pos_ns == f.paced);
	CHECK(model_now(session_model(s)) >= f.paced);
	struct ig_proc_stats p;
	CHECK(model_proc(session_model(s), 42, &p) == 0 && p.calls_life == 2 &&
	      !strcmp(p.container, "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a"));
	char *text = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&text, &len);
	session_describe(s, o);
	fclose(o);
	CHECK(text && !strcmp(text, "fake: 3 events\n"));
	free(text);
	session_free(s);
	CHECK(f.freed);
}

/* A storm on a source with a descriptor (the live ring): readable all the
 * time, an event every 10 us since it began, each read taking what came. */
struct storm {
	struct ig_source src;
	int fds[2];
	uint64_t t0_ns, taken, ts;
};

static int storm_fd(struct ig_source *src)
{
	return ((struct storm *)src->priv)->fds[0];
}

static int storm_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct storm *f = src->priv;
	uint64_t made = (ig_mono_ns() - f->t0_ns) / 10000 + 1;
	int n = 0;
	for (; n < max && f->taken < made; n++, f->taken++) {
		struct ig_event e = {.kind = IG_EV_CALL,
				     .op = IG_OP_CUDA_LAUNCH_KERNEL,
				     .ts_ns = f->ts += 1000,
				     .dur_ns = 500,
				     .pid = 42,
				     .tid = 42};
		emit(ctx, &e);
	}
	return n;
}

static uint64_t storm_tick(struct ig_source *src, uint64_t now_ns, ig_emit_fn emit, void *ctx,
			   struct ig_status *st)
{
	st->mode = IG_MODE_LIVE;
	return UINT64_MAX;
}

static uint64_t storm_pace(struct ig_source *src, uint64_t now_ns)
{
	return now_ns - SEC;
}

static const struct ig_source_ops storm_ops = {
    .name = "storm",
    .fd = storm_fd,
    .poll = storm_poll,
    .tick = storm_tick,
    .pace = storm_pace,
};

/* The ring is read in batches: however fast the loop turns, a source whose
 * descriptor is always readable is read at most once in 20 ms (a machine
 * slower than this one reads it less often, never more), and a turn woken
 * by the caller's descriptor within those 20 ms reads nothing. */
static void test_batched_reads(void)
{
	static struct storm f;
	struct cli c = opts();
	char err[256] = "";
	int xfd[2];

	f.src = (struct ig_source){.ops = &storm_ops, .priv = &f};
	f.ts = ig_unix_now_ns() - 5 * SEC;
	f.t0_ns = ig_mono_ns();
	CHECK(pipe(f.fds) == 0 && write(f.fds[1], "x", 1) == 1 && pipe(xfd) == 0 &&
	      write(xfd[1], "k", 1) == 1);
	struct session *s = session_new_source(&f.src, &c, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	CHECK(session_fd(s) == f.fds[0]);
	CHECK(session_wait(s, NULL, 0, 0) > 0); /* the first read at once */
	uint64_t read_ms = ig_mono_ms(), taken = f.taken;
	/* a key while resting: answered, nothing read */
	struct pollfd key = {.fd = xfd[0], .events = POLLIN};
	int r = session_wait(s, &key, 1, 0);
	if (ig_mono_ms() - read_ms < 20)
		CHECKF(r == 0 && f.taken == taken && (key.revents & POLLIN),
		       "woken by a key within 20 ms of a read: %d events read", r);
	uint64_t t0 = ig_mono_ms();
	int turns = 0, reads = 0;
	while (ig_mono_ms() - t0 < 200 || reads < 4) {
		r = session_wait(s, NULL, 0, 0);
		CHECK(r >= 0);
		reads += r > 0;
		turns++;
	}
	uint64_t ms = ig_mono_ms() - t0;
	CHECKF(reads <= (int)(ms / 20) + 1, "%d reads in %llu ms (%d turns)", reads,
	       (unsigned long long)ms, turns);
	CHECK(session_status(s)->events_total == f.taken);
	printf("  storm: %d reads of the ring in %llu ms, %d turns\n", reads,
	       (unsigned long long)ms, turns);
	session_free(s);
	close(f.fds[0]);
	close(f.fds[1]);
	close(xfd[0]);
	close(xfd[1]);
}

/* The notes keep the last IG_STATUS_NOTES notices; a notice written into
 * message by other means (the flight recorder's poll) is one too. */
static void test_notes(void)
{
	static struct ig_status st;
	for (int i = 1; i <= 6; i++)
		ig_status_say(&st, "notice %d", i);
	CHECK(st.notes_n == 6 && !strcmp(st.message, "notice 6"));
	for (uint32_t n = st.notes_n - IG_STATUS_NOTES; n < st.notes_n; n++)
		CHECKF(atoi(st.notes[n % IG_STATUS_NOTES] + 7) == (int)n + 1, "note %u: %s", n,
		       st.notes[n % IG_STATUS_NOTES]);
	snprintf(st.message, sizeof(st.message), "flight recorder: saved");
	ig_status_said(&st);
	CHECK(st.notes_n == 7 && !strcmp(st.notes[6 % IG_STATUS_NOTES], "flight recorder: saved"));
}

int main(void)
{
	test_notes();
	test_loop();
	test_wait();
	test_wait_slice();
	test_analysis();
	test_pause();
	test_seek();
	test_seek_ids();
	test_ckpt();
	test_batch_no_ckpt();
	test_steps();
	test_live_like();
	test_batched_reads();
	return check_done("test_session");
}
