/* The session: one source (live collector or replay) feeding the model,
 * the recorder and the flight ring through one ingest function. */
#include "session/session.h"

#include "collect/check.h"
#include "collect/collector.h"
#include "collect/nvml.h"
#include "session/demo.h"
#include "core/escape.h"
#include "core/event.h"
#include "core/log.h"
#include "detect/detect.h"
#include "model/model.h"
#include "store/flight.h"
#include "store/rec.h"
#include "store/replay.h"
#include "collect/hostinfo.h"
#include "collect/sysinfo.h"
#include "core/ops.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE_LAG_NS 300000000ULL

struct session {
	struct cli cli;
	struct ig_model *model;
	struct ig_detect *det; /* judges the model's windows (model/window.h) */
	struct collector *coll;
	struct nvml *nvml; /* GPU device meters, live */
	struct ig_source *src;
	struct ig_status st;
	session_event_hook hook;
	void *hook_ctx;
	struct demo_run *demo;   /* --demo scenario (live) */
	/* launched command */
	pid_t child;
	int child_status;  /* -1 while running */
	bool child_gone;
	int drain_passes;
	/* rates */
	uint64_t rate_t0_ns, rate_events0;
	uint64_t last_snapshot_ns;
	struct hostinfo_cpu cpu_prev;
	bool done;
	uint64_t last_ev_ns;     /* latest completion time ingested */
	/* recording */
	struct rec *rec;
	struct flight *flight;
	struct stacks *stacks;
	uint64_t rec_chain_gen;
	/* replay pacing: event-time position moves at speed x wall time */
	bool replay;
	double speed;            /* 0 = as fast as possible */
	uint64_t pos_ns;         /* event time shown */
	uint64_t wall_anchor_ns; /* wall time when pos_ns was last set */
	uint64_t pos_anchor_ns;
	bool at_end;
	uint64_t *chain_ts;      /* recorded chain detection times, sorted */
	size_t nchain_ts;
};

static void tick(struct session *s, bool child);

static void record_stack(void *ctx, uint64_t id, const char *ips, const char *frames)
{
	rec_stack(ctx, id, ips, frames);
}

static int flight_stack(void *ctx, uint64_t id, char **ips, char **frames)
{
	return stacks_json(ctx, id, ips, frames);
}

static void ingest(void *ctx, const struct ig_event *e)
{
	struct session *s = ctx;
	model_ingest(s->model, e);
	if (s->stacks)
		stacks_event(s->stacks, e);
	if (e->ts_ns + e->dur_ns > s->last_ev_ns)
		s->last_ev_ns = e->ts_ns + e->dur_ns;
	if (s->flight)
		flight_push(s->flight, e);
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

/* ---- launching a command ---------------------------------------------- */

static int resolve_exe(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, X_OK) ? -errno : 0;
	}
	const char *path = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", d, cmd);
		if (!access(out, X_OK))
			return 0;
	}
	return -ENOENT;
}

/* Forks the command stopped on a pipe; start_fd releases it. */
static pid_t spawn_stopped(char **argv, int *start_fd, int *err_fd)
{
	int go[2], ef[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(ef, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		close(go[1]);
		close(ef[0]);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		if (write(ef[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ef[1]);
	*start_fd = go[1];
	*err_fd = ef[0];
	return pid;
}

/* ---- life cycle --------------------------------------------------------- */

static int open_live(struct session *s, char *err, size_t errlen)
{
	struct collector_opts o = { 0 };
	char exe[PATH_MAX] = "";
	int start_fd = -1, err_fd = -1, pids[64];

	o.libs = s->cli.libs;
	o.nlibs = s->cli.nlibs;
	o.force_raw_tp = s->cli.raw_tp;
	/* Kernels before 6.6, or to compare: one perf event per probe. */
	o.no_multi = getenv("INGERO_TOP_NO_UPROBE_MULTI") != NULL;
	/* To compare, or where stopping a target is not wanted: no holds. */
	o.no_hold = getenv("INGERO_TOP_NO_HOLD") != NULL;
	o.no_system_libs = s->cli.no_system_libs;
	o.stacks = !s->cli.no_stacks;
	if (s->cli.demo) {
		s->demo = demo_start(s->cli.demo, err, errlen);
		if (!s->demo)
			return -EINVAL;
		o.target = COLL_PIDS;
		o.pids = pids;
		o.npids = demo_pids(s->demo, pids, 64);
		o.no_system_libs = true;
	} else if (s->cli.npids) {
		o.target = COLL_PIDS;
		o.pids = s->cli.pids;
		o.npids = s->cli.npids;
		for (int i = 0; i < o.npids; i++)
			if (kill(o.pids[i], 0) && errno == ESRCH) {
				snprintf(err, errlen, "no process with pid %d", o.pids[i]);
				return -ESRCH;
			}
	} else if (s->cli.cmd) {
		int r = resolve_exe(s->cli.cmd[0], exe, sizeof(exe));
		if (r) {
			snprintf(err, errlen, "cannot run %s: %s", s->cli.cmd[0], strerror(-r));
			return r;
		}
		s->child = spawn_stopped(s->cli.cmd, &start_fd, &err_fd);
		if (s->child < 0) {
			snprintf(err, errlen, "cannot start %s: %s", s->cli.cmd[0], strerror(errno));
			return -errno;
		}
		pids[0] = s->child;
		o.target = COLL_COMMAND;
		o.pids = pids;
		o.npids = 1;
		o.exe = exe;
	} else {
		o.target = COLL_ALL_CUDA;
	}

	s->coll = collector_new(&o, err, errlen);
	if (!s->coll) {
		if (s->child > 0) {
			kill(s->child, SIGKILL);
			waitpid(s->child, NULL, 0);
			s->child = 0;
		}
		return -EINVAL;
	}
	s->src = collector_source(s->coll);
	collector_status(s->coll, &s->st);
	s->nvml = nvml_start(NULL, (unsigned)(s->cli.interval_s * 1000 + 0.5)); /* device meters */
	if (s->st.stacks_on && (s->stacks = stacks_new(NULL))) {
		stacks_set_collector(s->stacks, s->coll);
		for (int i = 0; i < o.npids; i++)
			stacks_watch_pid(s->stacks, (uint32_t)o.pids[i]);
	}
	if (s->demo)
		demo_release(s->demo);
	if (s->child > 0) {
		int e = 0;
		if (write(start_fd, "g", 1) != 1 || read(err_fd, &e, sizeof(e)) == sizeof(e)) {
			snprintf(err, errlen, "cannot run %s: %s", s->cli.cmd[0],
				 strerror(e ? e : EPIPE));
			close(start_fd);
			close(err_fd);
			waitpid(s->child, NULL, 0);
			s->child = 0;
			return -EINVAL;
		}
		close(start_fd);
		close(err_fd);
	}
	s->st.mode = IG_MODE_LIVE;
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

static int open_replay(struct session *s, char *err, size_t errlen)
{
	const char *why = NULL;
	struct rec_chain *chains = NULL;
	size_t n = 0;

	s->src = replay_open(s->cli.replay, s->cli.nreplay, &why);
	if (!s->src) {
		snprintf(err, errlen, "%s", why ? why : "cannot open the recording");
		return -EINVAL;
	}
	s->replay = true;
	if (!s->cli.no_stacks && (s->stacks = stacks_new(NULL)))
		replay_stacks(s->src, load_stack, s->stacks);
	s->speed = s->cli.batch ? 0 : s->cli.speed;
	s->st.mode = IG_MODE_REPLAY;
	s->st.replay_speed = s->speed;
	replay_span(s->src, &s->st.replay_start_ns, &s->st.replay_end_ns);
	s->pos_ns = s->pos_anchor_ns = s->st.replay_start_ns;
	s->wall_anchor_ns = ig_unix_now_ns();
	if (!replay_chains(s->src, &chains, &n) && n) {
		s->chain_ts = calloc(n, sizeof(*s->chain_ts));
		for (size_t i = 0; s->chain_ts && i < n; i++)
			s->chain_ts[s->nchain_ts++] = chains[i].detected_at_ns;
		if (s->chain_ts)
			qsort(s->chain_ts, s->nchain_ts, sizeof(*s->chain_ts), cmp_u64);
	}
	replay_chains_free(chains, n);
	return 0;
}

/* Session facts for recordings and flight-recorder files: the host's
 * (sysinfo, read into *facts, which rs points into) and this session's. */
static void describe_session(struct session *s, struct rec_session *rs, struct sysinfo_facts *facts,
			     char *pids, size_t plen)
{
	pids[0] = 0;
	for (int i = 0; i < s->cli.npids; i++) {
		size_t l = strlen(pids);
		snprintf(pids + l, plen - l, "%s%d", i ? "," : "", s->cli.pids[i]);
	}
	sysinfo_read(facts);
	*rs = (struct rec_session){
	    .started_at_ns = ig_unix_now_ns(),
	    .cpu_model = facts->cpu_model,
	    .cpu_cores = facts->cpu_cores,
	    .mem_total_mb = facts->mem_total_mb,
	    .kernel = facts->kernel,
	    .os_release = facts->os_release,
	    .version = "ingero-top " IG_VERSION,
	    .pid_filter = pids,
	    .flags = s->cli.cmd ? s->cli.cmd[0] : "",
	    .node = s->st.host,
	};
}

static int open_record(struct session *s, char *err, size_t errlen)
{
	struct rec_opts ro = { .max_db_bytes = s->cli.max_db, .node_name = s->st.host };
	const char *why = NULL;
	char pids[256];
	struct sysinfo_facts facts;
	struct rec_session rs;

	s->rec = rec_open(s->cli.record, &ro, &why);
	if (!s->rec) { /* rec_open's messages name the file already */
		if (why && !strncmp(why, "cannot record to ", 17))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "cannot record to %s: %s", s->cli.record,
				 why ? why : "unknown error");
		return -EINVAL;
	}
	describe_session(s, &rs, &facts, pids, sizeof(pids));
	rec_session_info(s->rec, &rs);
	snprintf(s->st.recording, sizeof(s->st.recording), "%s", s->cli.record);
	return 0;
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

/* Records the chains that changed since the last call. */
static void record_chains(struct session *s)
{
	const struct ig_detect *d = s->det;
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

struct session *session_new(const struct cli *cli, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct ig_model_cfg cfg;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cli = *cli;
	s->child_status = -1;
	s->st.nvml_state = -1;
	model_cfg_default(&cfg);
	cfg.window_s = (unsigned)(cli->window_s + 0.5);
	s->model = model_new(&cfg);
	struct ig_detect_cfg dcfg;
	detect_cfg_default(&dcfg);
	dcfg.self_pid = (uint32_t)getpid(); /* named as itself when it is a culprit */
	s->det = detect_new(&dcfg);
	if (!s->model || !s->det) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	model_set_window_hook(s->model, detect_window, s->det);
	if (gethostname(s->st.host, sizeof(s->st.host) - 1))
		snprintf(s->st.host, sizeof(s->st.host), "?");
	if (cli->demo) {
		bool known = false;
		for (const char *const *n = demo_names(); *n; n++)
			known |= !strcmp(*n, cli->demo);
		if (!known) {
			size_t l = (size_t)snprintf(err, errlen, "unknown scenario '%s'; known:",
						    cli->demo);
			for (const char *const *n = demo_names(); *n && l < errlen; n++)
				l += (size_t)snprintf(err + l, errlen - l, " %s", *n);
			goto fail;
		}
	}
	if (cli->demo && check_privileges(err, errlen)) {
		/* Without root, show the recording of the same scenario. */
		const char *rec = demo_recording(cli->demo);
		if (!rec) {
			snprintf(err, errlen,
				 "--demo %s needs root to trace live, and no recording of it is "
				 "shipped (run 'sudo ingero-top --demo %s')",
				 cli->demo, cli->demo);
			goto fail;
		}
		s->cli.replay[0] = rec;
		s->cli.nreplay = 1;
		s->cli.demo = NULL;
		fprintf(stderr, "ingero-top: not root: replaying the recording of the %s demo (%s)\n",
			cli->demo, rec);
	}
	if (s->cli.nreplay) {
		if (open_replay(s, err, errlen))
			goto fail;
	} else {
		if (open_live(s, err, errlen))
			goto fail;
		if (cli->record && open_record(s, err, errlen))
			goto fail;
		if (cli->flight_s > 0) {
			char pids[256];
			struct sysinfo_facts facts;
			struct rec_session rs;
			s->flight = flight_new(cli->flight_s, FLIGHT_DEFAULT_MAX_EVENTS);
			describe_session(s, &rs, &facts, pids, sizeof(pids));
			if (s->flight)
				flight_set_session(s->flight, &rs);
			if (s->flight && s->stacks)
				flight_set_stacks(s->flight, flight_stack, s->stacks);
		}
	}
	s->rate_t0_ns = ig_unix_now_ns();
	hostinfo_cpu_read(&s->cpu_prev);
	/* Not the exit of a launched command yet: the caller sets its event
	 * hook after this returns, and a short command may already be done. */
	tick(s, false);
	return s;
fail:
	session_free(s);
	return NULL;
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
	int r = 0;

	if (!s)
		return 0;
	if (s->child > 0 && !s->child_gone) {
		kill(s->child, SIGTERM);
		kill(s->child, SIGCONT); /* it may be held (stopped) by the collector */
		for (int i = 0; i < 50 && waitpid(s->child, NULL, WNOHANG) == 0; i++)
			usleep(20000);
		if (kill(s->child, 0) == 0) {
			kill(s->child, SIGKILL);
			waitpid(s->child, NULL, 0);
		}
		s->child_gone = true;
	}
	if (s->stacks && s->rec) {
		stacks_flush(s->stacks, 2000);
		stacks_drain(s->stacks, record_stack, s->rec);
	}
	if (s->rec) {
		record_chains(s);
		const char *why = rec_error(s->rec);
		if (why && err)
			one_line(err, errlen, why);
		int c = rec_close(s->rec);
		if (!why && c && err)
			snprintf(err, errlen, "cannot finish the recording %s: %s", s->cli.record,
				 strerror(-c));
		r = why || c ? -EIO : 0;
		s->rec = NULL;
	}
	return r;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	demo_stop(s->demo);
	session_stop(s, NULL, 0);
	stacks_free(s->stacks); /* before the collector it reads from */
	flight_free(s->flight);
	nvml_stop(s->nvml);
	collector_free(s->coll);
	if (s->replay && s->src)
		s->src->ops->free(s->src);
	free(s->chain_ts);
	model_free(s->model);
	detect_free(s->det);
	free(s);
}

/* ---- the loop ------------------------------------------------------------- */

int session_fd(struct session *s)
{
	return s->src && s->src->ops->fd ? s->src->ops->fd(s->src) : -1;
}

int session_timeout_ms(struct session *s)
{
	int ms = 100;
	if (s->coll) { /* a look at a process's mappings due sooner */
		uint64_t due = collector_next_due_ns(s->coll), now = collector_now_ns(s->coll);
		if (due <= now)
			ms = 0;
		else if (due - now < 100000000ULL)
			ms = (int)((due - now) / 1000000) + 1;
	}
	return ms;
}

/* Replay: the event-time position the wall clock has reached. */
static uint64_t replay_target(struct session *s)
{
	if (s->st.paused)
		return s->pos_ns;
	if (s->speed <= 0)
		return UINT64_MAX;
	uint64_t wall = ig_unix_now_ns() - s->wall_anchor_ns;
	return s->pos_anchor_ns + (uint64_t)((double)wall * s->speed);
}

static void replay_anchor(struct session *s)
{
	s->pos_anchor_ns = s->pos_ns;
	s->wall_anchor_ns = ig_unix_now_ns();
}

/* Replay: ingests the events up to event time until, at most budget. */
static int replay_pump_until(struct session *s, uint64_t until, int budget)
{
	int total = 0;

	while (total < budget) {
		uint64_t ts;
		int r = s->src->ops->peek_ts(s->src, &ts);
		if (r == -ENODATA) {
			s->at_end = true;
			break;
		}
		if (r < 0 || ts > until)
			break;
		int n = s->src->ops->poll(s->src, ingest, s, 1);
		if (n <= 0) {
			if (n == -ENODATA)
				s->at_end = true;
			break;
		}
		total += n;
		if (ts > s->pos_ns)
			s->pos_ns = ts;
	}
	return total;
}

int session_pump(struct session *s, int budget)
{
	int total = 0;

	if (s->replay) {
		uint64_t until = replay_target(s);
		total = replay_pump_until(s, until, budget);
		if (until != UINT64_MAX && !s->st.paused && total < budget && until > s->pos_ns)
			s->pos_ns = until;
		return total;
	}
	while (total < budget) {
		int n = s->src->ops->poll(s->src, ingest, s, budget - total);
		if (n < 0)
			return total ? total : n;
		if (n == 0)
			break;
		total += n;
	}
	return total;
}

static void take_snapshot(struct session *s, uint64_t now)
{
	struct hostinfo_cpu cur;
	struct hostinfo_mem mem;
	struct ig_event e;

	hostinfo_cpu_read(&cur);
	hostinfo_mem_read(&mem);
	ig_snapshot_fill(&e, now, hostinfo_cpu_pct(&s->cpu_prev, &cur), mem.used_pct,
			 mem.avail_mb, mem.swap_used_mb, hostinfo_load1());
	s->cpu_prev = cur;
	ingest(s, &e);
}

static void check_child(struct session *s)
{
	int status;

	if (s->child <= 0 || s->child_gone)
		return;
	if (waitpid(s->child, &status, WNOHANG) == s->child) {
		s->child_gone = true;
		s->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		snprintf(s->st.message, sizeof(s->st.message), "%s exited with status %d",
			 s->cli.cmd[0], s->child_status);
	}
}

struct stacks *session_stacks(struct session *s)
{
	return s->stacks;
}

static void tick(struct session *s, bool child)
{
	uint64_t now = ig_unix_now_ns();

	if (s->coll) {
		/* Event time runs LIVE_LAG_NS behind the wall clock: records wait
		 * up to one poll interval in the ring buffer, and the model must
		 * not close a second before they are in, or live and replay of
		 * the same events would differ. */
		uint64_t evnow = now - LIVE_LAG_NS;
		collector_tick(s->coll, evnow, ingest, s);
		collector_status(s->coll, &s->st);
		if (s->nvml)
			nvml_tick(s->nvml, evnow, ingest, s, &s->st);
		if (now - s->last_snapshot_ns >= 1000000000ULL) {
			take_snapshot(s, evnow);
			s->last_snapshot_ns = now;
		}
		model_advance(s->model, evnow);
	}
	if (s->replay) {
		uint64_t next;
		if (s->pos_ns > s->st.replay_end_ns && s->st.replay_end_ns)
			s->pos_ns = s->st.replay_end_ns;
		uint64_t adv = s->pos_ns;
		if (s->src->ops->peek_ts(s->src, &next) == 0 && next < adv)
			adv = next;
		model_advance(s->model, adv);
		s->st.replay_pos_ns = s->pos_ns;
		if (s->at_end && s->cli.batch)
			s->done = true;
	}
	record_chains(s);
	if (s->stacks && s->rec)
		stacks_drain(s->stacks, record_stack, s->rec);
	if (s->flight && flight_poll(s->flight, s->st.message, sizeof(s->st.message)))
		log_msg(LOG_INFO, "%s", s->st.message);
	if (s->rec && rec_error(s->rec) && !s->st.record_error[0])
		snprintf(s->st.record_error, sizeof(s->st.record_error), "recording stopped: %s",
			 rec_error(s->rec));
	s->st.now_ns = model_now(s->model);
	if (now - s->rate_t0_ns >= 1000000000ULL) {
		s->st.events_per_s = (double)(s->st.events_total - s->rate_events0) * 1e9 /
				     (double)(now - s->rate_t0_ns);
		s->rate_t0_ns = now;
		s->rate_events0 = s->st.events_total;
	}
	if (!child)
		return;
	check_child(s);
	if (s->demo && !s->child_gone && demo_done(s->demo)) {
		s->child_gone = true;
		s->child_status = 0;
		snprintf(s->st.message, sizeof(s->st.message), "demo %s finished", s->cli.demo);
	}
	if (s->child_gone && !s->done) {
		/* Everything the command did is in the ring buffer by now: drain
		 * it twice more, then stop. */
		int n = session_pump(s, 1 << 20);
		if (n == 0 && ++s->drain_passes >= 2)
			s->done = true;
	}
}

void session_tick(struct session *s)
{
	tick(s, true);
}

bool session_done(struct session *s)
{
	return s->done;
}

int session_cmd_status(struct session *s)
{
	return s->child_gone ? s->child_status : -1;
}

struct ig_model *session_model(struct session *s)
{
	return s->model;
}

const struct ig_detect *session_detect(struct session *s)
{
	return s->det;
}

struct ig_status *session_status(struct session *s)
{
	return &s->st;
}

void session_set_paused(struct session *s, bool paused)
{
	s->st.paused = paused;
}

void session_reset(struct session *s)
{
	model_reset(s->model);
	detect_reset(s->det);
	if (s->stacks)
		stacks_reset(s->stacks);
}

int session_set_speed(struct session *s, double speed)
{
	if (!s->replay)
		return -ENOTSUP;
	replay_anchor(s);
	s->speed = speed;
	s->st.replay_speed = speed;
	return 0;
}

/* Moves the replay to event time `to`: forward by ingesting, backward by
 * rebuilding the model from the start of the recording, so what is shown is
 * what the live view showed at that moment. */
static int seek_to(struct session *s, uint64_t to)
{
	if (to < s->st.replay_start_ns)
		to = s->st.replay_start_ns;
	if (s->st.replay_end_ns && to > s->st.replay_end_ns)
		to = s->st.replay_end_ns;
	if (to < s->pos_ns) {
		struct ig_model_cfg cfg = *model_cfg(s->model);
		struct ig_model *m = model_new(&cfg);
		if (!m)
			return -ENOMEM;
		model_free(s->model);
		s->model = m;
		model_set_window_hook(m, detect_window, s->det);
		detect_reset(s->det);
		if (s->stacks)
			stacks_reset(s->stacks);
		int r = replay_seek(s->src, s->st.replay_start_ns);
		if (r)
			return r;
		s->pos_ns = s->st.replay_start_ns;
		s->at_end = false;
	}
	while (replay_pump_until(s, to, 1 << 20) > 0)
		;
	s->pos_ns = to;
	model_advance(s->model, to);
	replay_anchor(s);
	return 0;
}

int session_seek(struct session *s, int64_t delta_ns)
{
	if (!s->replay)
		return -ENOTSUP;
	int64_t to = (int64_t)s->pos_ns + delta_ns;
	return seek_to(s, to < 0 ? 0 : (uint64_t)to);
}

int session_jump_chain(struct session *s, int dir)
{
	const uint64_t gap = 1000000000ULL;

	if (!s->replay)
		return -ENOTSUP;
	if (s->nchain_ts) {
		if (dir > 0) {
			for (size_t i = 0; i < s->nchain_ts; i++)
				if (s->chain_ts[i] > s->pos_ns + gap / 10)
					return seek_to(s, s->chain_ts[i]);
		} else {
			for (size_t i = s->nchain_ts; i-- > 0;)
				if (s->chain_ts[i] + gap < s->pos_ns)
					return seek_to(s, s->chain_ts[i]);
		}
		return -ENOENT;
	}
	/* No recorded chains: look for the detector's own. */
	if (dir > 0) {
		uint64_t gen = detect_generation(s->det);
		while (!s->at_end && detect_generation(s->det) == gen) {
			uint64_t to = s->pos_ns + gap;
			replay_pump_until(s, to, 1 << 20);
			s->pos_ns = to;
			model_advance(s->model, to);
		}
		replay_anchor(s);
		return s->at_end ? -ENOENT : 0;
	}
	uint64_t best = 0;
	for (int i = 0; i < detect_count(s->det); i++) {
		uint64_t t = detect_chain(s->det, i)->first_seen_ns;
		if (t + gap < s->pos_ns && t > best)
			best = t;
	}
	return best ? seek_to(s, best) : -ENOENT;
}

int session_flight_save(struct session *s)
{
	char path[512];

	if (!s->flight) {
		snprintf(s->st.message, sizeof(s->st.message),
			 "no flight recorder in %s", s->replay ? "replay" : "this session (--flight 0)");
		return -ENOTSUP;
	}
	int r = flight_save(s->flight, s->cli.flight_dir ? s->cli.flight_dir : ".", path,
			    sizeof(path));
	if (r)
		snprintf(s->st.message, sizeof(s->st.message), "flight recorder: %s",
			 r == -EBUSY ? "a save is already running" : strerror(-r));
	else
		snprintf(s->st.message, sizeof(s->st.message), "flight recorder: saving %s", path);
	log_msg(LOG_INFO, "%s", s->st.message);
	return r;
}

void session_describe(struct session *s, FILE *f)
{
	if (s->coll)
		collector_summary(s->coll, f);
	for (int i = 0; s->replay && i < replay_file_count(s->src); i++) {
		struct replay_file_info fi;
		if (replay_file_info(s->src, i, &fi))
			continue;
		fputs("replay: ", f); /* the writer and version come from the file */
		esc_fputs(f, fi.path, 0);
		fputs(" (", f);
		esc_fputs(f, fi.writer, 0);
		fputs(", schema ", f);
		esc_fputs(f, fi.version, 0);
		fputs(")\n", f);
	}
	if (s->rec) {
		fputs("record: ", f);
		esc_fputs(f, rec_path(s->rec), 0);
		fputc('\n', f);
	}
}

int session_replay_to(struct session *s, uint64_t until)
{
	if (!s->replay)
		return -ENOTSUP;
	while (replay_pump_until(s, until, 1 << 20) > 0)
		;
	if (until > s->pos_ns)
		s->pos_ns = until;
	model_advance(s->model, until);
	s->st.replay_pos_ns = s->pos_ns;
	s->st.now_ns = model_now(s->model);
	record_chains(s);
	return s->at_end ? 0 : 1;
}

void session_finish(struct session *s)
{
	/* Close the last second of event time so the detector sees it; live
	 * and replay of the same events end on the same boundary. */
	uint64_t t = s->last_ev_ns ? s->last_ev_ns : model_now(s->model);
	model_advance(s->model, (t / 1000000000ULL + 1) * 1000000000ULL);
	s->st.now_ns = model_now(s->model);
	record_chains(s);
}
