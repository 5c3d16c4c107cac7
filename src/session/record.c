/* What the session writes: the recording (--record) and the flight
 * recorder's ring (--flight), their session facts, the chains when the
 * detector's generation changes, the stacks as they are resolved. */
#include "session/session_int.h"

#include "core/clock.h"
#include "collect/sysinfo.h"
#include "core/log.h"
#include "core/ops.h"
#include "detect/detect.h"
#include "stacks/stacks.h"
#include "store/flight.h"
#include "store/rec.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void record_stack(void *ctx, uint64_t id, const char *ips, const char *frames)
{
	rec_stack(ctx, id, ips, frames);
}

static int flight_stack(void *ctx, uint64_t id, char **ips, char **frames)
{
	return stacks_json(ctx, id, ips, frames);
}

/* Session facts for recordings and flight-recorder files: the host's
 * (sysinfo, read once into s->facts, which rs points into) and this
 * session's (its host name, pids, command). */
static void describe_session(struct session *s, struct rec_session *rs, char *pids, size_t plen)
{
	const struct sysinfo_facts *facts = &s->facts;

	/* the command with its arguments (explain names the launched process's
	 * command line with it: docs/explain.md), whole words that fit, and the
	 * probe cost measured here (replay corrects with it) */
	size_t k = 0, room = sizeof(s->flags) - sizeof(" probe_ns=4294967295");
	for (int i = 0; s->cli.cmd && s->cli.cmd[i]; i++) {
		size_t w = strlen(s->cli.cmd[i]) + (i ? 1 : 0);
		if (k + w > room)
			break;
		k += (size_t)snprintf(s->flags + k, sizeof(s->flags) - k, "%s%s", i ? " " : "",
				      s->cli.cmd[i]);
	}
	snprintf(s->flags + k, sizeof(s->flags) - k, "%sprobe_ns=%u", k ? " " : "", s->st.probe_ns);
	pids[0] = 0;
	for (int i = 0; i < s->cli.npids; i++) {
		size_t l = strlen(pids);
		snprintf(pids + l, plen - l, "%s%d", i ? "," : "", s->cli.pids[i]);
	}
	if (!s->have_facts)
		s->have_facts = !sysinfo_read(&s->facts);
	*rs = (struct rec_session){
	    .started_at_ns = ig_unix_now_ns(),
	    .cpu_model = facts->cpu_model,
	    .cpu_cores = facts->cpu_cores,
	    .mem_total_mb = facts->mem_total_mb,
	    .kernel = facts->kernel,
	    .os_release = facts->os_release,
	    .version = "ingero-top " IG_VERSION,
	    .pid_filter = pids,
	    .flags = s->flags,
	    .node = s->st.host,
	};
}

void session_rec_opts(struct session *s, struct rec_opts *ro)
{
	*ro = (struct rec_opts){
	    .max_db_bytes = s->cli.max_db, .sum_rate = s->cli.record_rate, .node_name = s->st.host};
	if (s->cli.record_dir) /* the service: a file a second behind at most */
		ro->commit_ms = ro->run_ms = SESSION_REC_LAG_MS;
}

void session_rec_begin(struct session *s, struct rec *r)
{
	char pids[256];
	struct rec_session rs;
	describe_session(s, &rs, pids, sizeof(pids));
	rec_session_info(r, &rs);
	snprintf(s->st.recording, sizeof(s->st.recording), "%s", rec_path(r));
}

struct rec *session_rec_create(const char *path, const struct rec_opts *ro, char *err,
			       size_t errlen)
{
	const char *why = NULL;
	struct rec *r = rec_open(path, ro, &why);
	if (!r) { /* rec_open's messages name the file already */
		if (why && !strncmp(why, "cannot record to ", 17))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "cannot record to %s: %s", path,
				 why ? why : "unknown error");
	}
	return r;
}

struct rec *session_rec_open(struct session *s, const char *path, char *err, size_t errlen)
{
	struct rec_opts ro;
	session_rec_opts(s, &ro);
	struct rec *r = session_rec_create(path, &ro, err, errlen);
	if (r)
		session_rec_begin(s, r);
	return r;
}

int session_open_record(struct session *s, char *err, size_t errlen)
{
	if (s->cli.record_dir)
		return session_rotor_open(s, err, errlen);
	s->rec = session_rec_open(s, s->cli.record, err, errlen);
	return s->rec ? 0 : -EINVAL;
}

void session_open_flight(struct session *s)
{
	char pids[256];
	struct rec_session rs;

	s->flight = flight_new(s->cli.flight_s, FLIGHT_DEFAULT_MAX_EVENTS);
	describe_session(s, &rs, pids, sizeof(pids));
	if (s->flight)
		flight_set_session(s->flight, &rs);
	if (s->flight && s->stacks)
		flight_set_stacks(s->flight, flight_stack, s->stacks);
}

/* A detector chain as a causal_chains row, pointing into c and into the
 * caller's recs[IG_CHAIN_MAX_RECS] and tl[IG_CHAIN_MAX_TIMELINE]. */
static void chain_row(const struct ig_chain *c, struct rec_chain *row, const char **recs,
		      struct rec_tl *tl)
{
	int nrecs = c->nrecs < IG_CHAIN_MAX_RECS ? c->nrecs : IG_CHAIN_MAX_RECS;
	int ntl = c->ntimeline < IG_CHAIN_MAX_TIMELINE ? c->ntimeline : IG_CHAIN_MAX_TIMELINE;
	for (int k = 0; k < nrecs; k++)
		recs[k] = c->recs[k];
	for (int k = 0; k < ntl; k++)
		tl[k] = (struct rec_tl){.ts_ns = c->timeline[k].ts_ns, .text = c->timeline[k].text};
	*row = (struct rec_chain){
	    .id = c->id_str,
	    .detected_at_ns = c->first_seen_ns,
	    .severity = detect_sev_name(c->severity),
	    .summary = c->summary,
	    .root_cause = detect_class_name(c->cls),
	    .explanation = c->explanation,
	    .recs = recs,
	    .nrecs = (size_t)(nrecs > 0 ? nrecs : 0),
	    .cuda_op = c->op ? ig_op_name(c->op) : "",
	    .p99_us = c->p99_ns / 1000,
	    .p50_us = c->p50_ns / 1000,
	    .tail_ratio = c->tail_ratio,
	    .timeline = tl,
	    .ntimeline = (size_t)(ntl > 0 ? ntl : 0),
	};
}

void session_record_chains(struct session *s)
{
	const struct ig_detect *d = s->an->d;
	uint64_t gen = detect_generation(d);
	const char *recs[IG_CHAIN_MAX_RECS];
	struct rec_tl tl[IG_CHAIN_MAX_TIMELINE];

	if ((!s->rec && !s->flight) || gen == s->rec_chain_gen)
		return;
	s->rec_chain_gen = gen;
	for (int i = 0; i < detect_count(d); i++) {
		struct rec_chain rc;
		chain_row(detect_chain(d, i), &rc, recs, tl);
		if (s->rec)
			rec_chain(s->rec, &rc);
		if (s->flight)
			flight_chain(s->flight, &rc);
	}
}

/* The writer's queue figures into the status: waits for room, and events
 * lost when it made none. */
static void record_stats(struct session *s)
{
	struct rec_stats rs;
	if (!s->rec)
		return;
	rec_get_stats(s->rec, &rs);
	s->st.record_dropped = rs.dropped;
	s->st.record_waits = rs.waits;
	s->st.record_wait_ns = rs.wait_ns;
	s->st.record_summarised = rs.summarised;
	s->st.record_rate_hint = !s->cli.record_rate && (rs.waits || rs.dropped);
}

void session_record_tick(struct session *s)
{
	if (s->rotor)
		session_rotor_tick(s);
	if (s->rec)
		rec_tick(s->rec, s->pos_ns);
	if (s->stacks && s->rec)
		stacks_drain(s->stacks, record_stack, s->rec);
	if (s->flight && flight_poll(s->flight, s->st.message, sizeof(s->st.message))) {
		ig_status_said(&s->st);
		log_msg(LOG_INFO, "%s", s->st.message);
	}
	if (s->rec && rec_error(s->rec) && !s->st.record_error[0])
		snprintf(s->st.record_error, sizeof(s->st.record_error), "recording stopped: %s",
			 rec_error(s->rec));
	record_stats(s);
}

int session_close_record(struct session *s, char *err, size_t errlen)
{
	if (!s->rec) {
		session_rotor_free(s);
		return 0;
	}
	if (s->stacks) {
		stacks_flush(s->stacks, 2000);
		stacks_drain(s->stacks, record_stack, s->rec);
		struct stacks_stats ss;
		stacks_get_stats(s->stacks, &ss);
		if (ss.pending) /* not lost silently: their calls name them */
			log_msg(LOG_WARN,
				"recording: %" PRIu64 " stack(s) still being resolved after 2 s "
				"are not in the file (their calls show no stack)",
				ss.pending);
	}
	session_record_chains(s);
	record_stats(s);
	const char *why = rec_error(s->rec);
	const char *path = s->cli.record ? s->cli.record : s->st.recording;
	if (why && err)
		snprintf(err, errlen, "%s", why);
	int c = rec_close(s->rec);
	if (!why && c && err)
		snprintf(err, errlen, "cannot finish the recording %s: %s", path, strerror(-c));
	/* a recording with a hole is a failed one, though the file is sound */
	int lost = !why && !c && s->st.record_dropped;
	if (lost && err)
		snprintf(err, errlen,
			 "the recording %s misses %" PRIu64 " events: its writer made no room for "
			 "them in 2 s (a stuck or full disk?); the file holds the rest",
			 path, s->st.record_dropped);
	s->rec = NULL;
	session_rotor_free(s); /* the files closed before, and the last pruning */
	return why || c || lost ? -EIO : 0;
}

/* Where a flight save goes without --flight-dir: the user's state
 * directory ($XDG_STATE_HOME/ingero-top, else ~/.local/state/ingero-top),
 * made on first use (mode 0700); else /var/tmp. Never the current
 * directory, which may be a checkout. */
static const char *flight_dir(char *buf, size_t n)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		snprintf(buf, n, "%s/ingero-top", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, n, "%s/.local/state/ingero-top", home);
	else
		return "/var/tmp";
	/* mkdir -p: the components up to the last one may be missing too */
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(buf, 0700);
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return "/var/tmp";
	return access(buf, W_OK | X_OK) ? "/var/tmp" : buf;
}

int session_flight_save(struct session *s)
{
	char path[512], dir[PATH_MAX];

	if (!s->flight) {
		ig_status_say(&s->st, "no flight recorder in %s", s->no_flight);
		return -ENOTSUP;
	}
	const char *to = s->cli.flight_dir ? s->cli.flight_dir : flight_dir(dir, sizeof(dir));
	int r = flight_save(s->flight, to, path, sizeof(path));
	if (r)
		ig_status_say(&s->st, "flight recorder: %s",
			      r == -EBUSY ? "a save is already running" : flight_error(s->flight));
	else
		ig_status_say(&s->st, "flight recorder: saving %s", path);
	log_msg(LOG_INFO, "%s", s->st.message);
	return r;
}
