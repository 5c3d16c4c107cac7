/* The session's pace and position for the views: pause and speed, seeking
 * (forward by ingesting, backward by rebuilding the model from the start
 * of the stream, so that what is shown is what the live view showed at that
 * moment), jumps between chains, and the batch replay's steps. A source
 * that runs on the wall clock (live) answers -ENOTSUP. */
#include "session/session_int.h"
#include "session/sources.h"

#include "core/clock.h" /* ig_unix_now_ns */
#include "detect/detect.h"
#include "model/model.h"
#include "stacks/stacks.h"

#include <errno.h>

#define ALL (1 << 20) /* events per pump when no one waits for keys */
#define SEC 1000000000ULL

/* Tells the source where the session is and how it goes on from there. */
static int set_pace(struct session *s, double speed, bool paused)
{
	struct ig_source *src = s->src;
	return src->ops->set_pace ? src->ops->set_pace(src, s->pos_ns, speed, paused) : -ENOTSUP;
}

void session_set_paused(struct session *s, bool paused)
{
	s->st.paused = paused; /* live: the views freeze, collection goes on */
	set_pace(s, s->st.replay_speed, paused);
}

int session_set_speed(struct session *s, double speed)
{
	int r = set_pace(s, speed, s->st.paused);
	if (!r)
		s->st.replay_speed = speed;
	return r;
}

/* A new model and a reset detector and stacks, fed again from the start. */
static int rebuild(struct session *s)
{
	struct ig_model_cfg cfg = *model_cfg(s->an->m);
	struct ig_model *m = model_new(&cfg);
	if (!m)
		return -ENOMEM;
	int r = s->src->ops->seek(s->src, s->st.replay_start_ns);
	if (r) {
		model_free(m);
		return r;
	}
	analysis_set_model(s->an, m);
	detect_reset(s->an->d);
	if (s->stacks)
		stacks_reset(s->stacks);
	s->pos_ns = s->st.replay_start_ns;
	s->at_end = false;
	/* the count is the events up to the position, not every one ingested
	 * again; the rate starts over rather than count the rebuild */
	s->st.events_total = s->rate_events0 = 0;
	s->rate_t0_ns = ig_unix_now_ns();
	ckpt_rewound(s);
	return 0;
}

/* Moves to event time `to`, within the span the source reported. */
static int seek_to(struct session *s, uint64_t to)
{
	if (!s->src->ops->seek)
		return -ENOTSUP;
	if (to < s->st.replay_start_ns)
		to = s->st.replay_start_ns;
	if (s->st.replay_end_ns && to > s->st.replay_end_ns)
		to = s->st.replay_end_ns;
	/* back (or far forward): from the nearest checkpoint; back without
	 * one, from the start */
	if (ckpt_restore(s, to) && to < s->pos_ns) {
		int r = rebuild(s);
		if (r)
			return r;
	}
	ckpt_target(s, to);
	while (session_pump_until(s, to, ALL) > 0)
		;
	ckpt_target(s, 0);
	s->pos_ns = to;
	session_advance(s);
	int r = set_pace(s, s->st.replay_speed, s->st.paused);
	return r == -ENOTSUP ? 0 : r; /* a stream that seeks at no pace */
}

int session_seek_to(struct session *s, uint64_t to_ns)
{
	return seek_to(s, to_ns);
}

size_t session_chain_marks(struct session *s, const uint64_t **marks)
{
	*marks = s->marks;
	return s->nmarks;
}

int session_seek(struct session *s, int64_t delta_ns)
{
	if (!s->src->ops->seek)
		return -ENOTSUP;
	int64_t to = (int64_t)s->pos_ns + delta_ns;
	return seek_to(s, to < 0 ? 0 : (uint64_t)to);
}

/* No recorded chains: the detector's own, forward a second at a time until
 * a new one shows, or back to the last one before the position. */
static int jump_detected(struct session *s, int dir)
{
	if (dir > 0) {
		uint64_t gen = detect_generation(s->an->d);
		while (!s->at_end && detect_generation(s->an->d) == gen) {
			uint64_t to = s->pos_ns + SEC;
			session_pump_until(s, to, ALL);
			s->pos_ns = to;
			session_advance(s);
		}
		set_pace(s, s->st.replay_speed, s->st.paused);
		return s->at_end ? -ENOENT : 0;
	}
	uint64_t best = 0;
	for (int i = 0; i < detect_count(s->an->d); i++) {
		uint64_t t = detect_chain(s->an->d, i)->first_seen_ns;
		if (t + SEC < s->pos_ns && t > best)
			best = t;
	}
	return best ? seek_to(s, best) : -ENOENT;
}

int session_jump_chain(struct session *s, int dir)
{
	if (!s->src->ops->seek)
		return -ENOTSUP;
	if (!s->nmarks)
		return jump_detected(s, dir);
	if (dir > 0) {
		for (size_t i = 0; i < s->nmarks; i++)
			if (s->marks[i] > s->pos_ns + SEC / 10)
				return seek_to(s, s->marks[i]);
	} else {
		for (size_t i = s->nmarks; i-- > 0;)
			if (s->marks[i] + SEC < s->pos_ns)
				return seek_to(s, s->marks[i]);
	}
	return -ENOENT;
}

int session_replay_to(struct session *s, uint64_t until)
{
	if (!s->src->ops->peek_ts)
		return -ENOTSUP; /* events come when they happen */
	/* the last frame takes all that is left (rows past the end: a bad index) */
	uint64_t take = s->st.replay_end_ns && until >= s->st.replay_end_ns ? UINT64_MAX : until;
	while (session_pump_until(s, take, ALL) > 0)
		;
	if (s->src->ops->tick) /* the source's status: refused rows, the next event */
		s->src->ops->tick(s->src, ig_unix_now_ns(), session_ingest, s, &s->st);
	if (s->st.failed)
		return -EIO;
	if (until > s->pos_ns)
		s->pos_ns = until;
	analysis_advance(s->an, until);
	s->st.replay_pos_ns = s->pos_ns;
	s->st.now_ns = model_now(s->an->m);
	session_record_chains(s);
	return s->at_end ? 0 : 1;
}

int session_set_range(struct session *s, uint64_t since_ns, uint64_t until_ns)
{
	if (!s->cli.nreplay)
		return -ENOTSUP;
	int r = replay_source_range(s->src, since_ns, until_ns);
	if (r)
		return r;
	size_t n = 0; /* the recorded chains to jump to: those in the range */
	for (size_t i = 0; i < s->nmarks; i++)
		if (s->marks[i] >= since_ns && (!until_ns || s->marks[i] <= until_ns))
			s->marks[n++] = s->marks[i];
	s->nmarks = n;
	s->pos_ns = 0;
	s->at_end = false;
	session_tick(s); /* the source's span into the status */
	s->pos_ns = s->st.replay_start_ns;
	session_advance(s);
	set_pace(s, s->st.replay_speed, s->st.paused);
	return 0;
}
