/* Which source a session reads (the options decide: a replay, a demo
 * scenario, or live collection, with the demo's recording for users without
 * root), and what goes with it: the stacks (from the kernel live, from the
 * recordings in replay), the recorded chains to jump between, and, live,
 * the recording and the flight recorder. The only place that knows live
 * from replay; the loop (session.c) does not. */
#include "session/session_int.h"

#include "collect/check.h"
#include "collect/cgcpu.h"
#include "collect/collector.h"
#include "detect/detect.h"
#include "model/model.h"
#include "session/demo.h"
#include "session/live_stacks.h"
#include "session/sources.h"
#include "stacks/stacks.h"
#include "store/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --demo NAME: a known scenario; without root, its shipped recording. */
static int choose_demo(struct session *s, char *err, size_t errlen)
{
	const char *name = s->cli.demo;
	bool known = false;

	for (const char *const *n = demo_names(); *n; n++)
		known |= !strcmp(*n, name);
	if (!known) {
		size_t l = (size_t)snprintf(err, errlen, "unknown scenario '%s'; known:", name);
		for (const char *const *n = demo_names(); *n && l < errlen; n++)
			l += (size_t)snprintf(err + l, errlen - l, " %s", *n);
		return -EINVAL;
	}
	if (!check_privileges(err, errlen))
		return 0;
	const char *rec = demo_recording(name);
	if (!rec) {
		snprintf(err, errlen,
			 "--demo %s needs root to trace live, and no recording of it is shipped "
			 "(run 'sudo ingero-top --demo %s')",
			 name, name);
		return -EPERM;
	}
	s->cli.replay[0] = rec;
	s->cli.nreplay = 1;
	s->cli.demo = NULL;
	fprintf(stderr, "ingero-top: not root: replaying the recording of the %s demo (%s)\n", name,
		rec);
	return 0;
}

/* Live stacks come from the collector's stacks and py_procs maps, for the
 * processes traced from the start and their children. */
static void live_stacks(struct session *s, struct collector *coll)
{
	const int *pids;
	int npids = live_source_pids(s->src, &pids);

	collector_status(coll, &s->st);
	if (s->st.stacks_on && (s->stacks = stacks_new(NULL))) {
		live_stacks_attach(s->stacks, coll);
		if (!s->cli.stacks_all)
			s->stack_tail = coll;
		for (int i = 0; i < npids; i++)
			stacks_watch_pid(s->stacks, (uint32_t)pids[i]);
	}
}

static int open_live(struct session *s, char *err, size_t errlen)
{
	s->src = live_source_new(&s->cli, err, errlen);
	if (!s->src)
		return -EINVAL;
	live_stacks(s, live_source_collector(s->src));
	model_set_probe_ns(s->an->m, s->st.probe_ns); /* measured by collector_new */
	if (live_source_start(s->src, err, errlen))
		return -EINVAL;
	if ((s->cli.record || s->cli.record_dir) && session_open_record(s, err, errlen))
		return -EINVAL;
	if (s->cli.flight_s > 0)
		session_open_flight(s);
	return 0;
}

/* A stack_traces row of the recording into the stacks module. */
static int load_stack(void *ctx, uint64_t hash, const char *ips, const char *frames)
{
	return hash ? stacks_add_json(ctx, hash, ips, frames) : -EINVAL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The detection times of the recorded chains, for session_jump_chain. */
static void load_marks(struct session *s, struct ig_source *stream)
{
	struct rec_chain *chains = NULL;
	size_t n = 0;

	if (!replay_chains(stream, &chains, &n) && n) {
		s->marks = calloc(n, sizeof(*s->marks));
		for (size_t i = 0; s->marks && i < n; i++)
			s->marks[s->nmarks++] = chains[i].detected_at_ns;
		if (s->marks)
			qsort(s->marks, s->nmarks, sizeof(*s->marks), cmp_u64);
	}
	replay_chains_free(chains, n);
}

/* The probe cost the recording machine measured ("probe_ns=N" in the
 * sessions row's flags; 0 when none said it: no correction). */
static uint32_t recorded_probe_ns(struct ig_source *stream)
{
	struct rec_session *v = NULL;
	size_t n = 0;
	unsigned long ns = 0;
	if (!replay_sessions(stream, &v, &n))
		for (size_t i = 0; i < n && !ns; i++) {
			const char *p = v[i].flags ? strstr(v[i].flags, "probe_ns=") : NULL;
			if (p)
				ns = strtoul(p + 9, NULL, 10);
		}
	replay_sessions_free(v, n);
	return ns < 1000000 ? (uint32_t)ns : 0;
}

static int open_replay(struct session *s, char *err, size_t errlen)
{
	/* batch: as fast as possible; the viewer and the stream: at --speed */
	double speed = s->cli.batch && !s->cli.stream ? 0 : s->cli.speed;

	s->src = replay_source_new(s->cli.replay, s->cli.nreplay, speed, err, errlen);
	if (!s->src)
		return -EINVAL;
	struct ig_source *stream = replay_source_stream(s->src);
	if (!s->cli.no_stacks && (s->stacks = stacks_new(NULL)))
		replay_stacks(stream, load_stack, s->stacks);
	load_marks(s, stream);
	s->st.probe_ns = recorded_probe_ns(stream);
	model_set_probe_ns(s->an->m, s->st.probe_ns);
	replay_status(stream, &s->st); /* chains refused at open count too */
	s->no_flight = "replay";
	return 0;
}

static int lock_kind_of(void *ctx, uint64_t stack_id, uint64_t wake_id)
{
	return stacks_lock_kind(ctx, stack_id, wake_id);
}

/* The CPU scheduling group of pid, and the last ones read: a process that
 * has exited keeps its group for the words of the chains it still has
 * (the summary of a run is worded after its end). */
static int sched_group_of(void *ctx, uint32_t pid, struct ig_sched_group *g)
{
	static struct {
		uint32_t pid;
		struct ig_sched_group g;
	} seen[32];
	static unsigned next;
	(void)ctx;
	int r = cgcpu_sched_group(pid, g);
	for (unsigned i = 0; i < 32; i++)
		if (seen[i].pid == pid) {
			if (r)
				*g = seen[i].g;
			else
				seen[i].g = *g;
			return 0;
		}
	if (r)
		return r;
	seen[next % 32].pid = pid;
	seen[next++ % 32].g = *g;
	return 0;
}

int session_open(struct session *s, char *err, size_t errlen)
{
	if (s->cli.demo && choose_demo(s, err, errlen))
		return -EINVAL;
	int r = s->cli.nreplay ? open_replay(s, err, errlen) : open_live(s, err, errlen);
	/* a lock wait's words follow what its call site waited on */
	if (!r && s->stacks)
		detect_set_lock_kind(s->an->d, lock_kind_of, s->stacks);
	/* live, the CPU scheduling groups of a contention's two sides */
	if (!r && !s->cli.nreplay)
		detect_set_sched_group(s->an->d, sched_group_of, NULL);
	return r;
}
