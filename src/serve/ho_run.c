/* A session for explain and mcp (ho_run.h). */
#include "serve/ho_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/check.h"
#include "core/clock.h"
#include "core/log.h"
#include "model/model.h"
#include "session/evring.h"
#include "session/session.h"
#include "store/query.h"

/* --- command lines of live processes ------------------------------------------- */

#define CMD_SLOTS 1024 /* pids remembered (the first CMD_SLOTS/2 seen) */
#define CMD_LEN 512

struct ho_cmdlines {
	uint32_t pid[CMD_SLOTS];
	char *text[CMD_SLOTS];
	int used;
};

/* Reads /proc/pid/cmdline, arguments joined by spaces; "" when gone. */
static char *read_cmdline(uint32_t pid)
{
	char path[64], buf[CMD_LEN];
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && !buf[n - 1])
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strdup(buf);
}

static void cmdline_seen(struct ho_cmdlines *c, uint32_t pid)
{
	if (!c || !pid)
		return;
	unsigned i = (pid * 2654435761u) % CMD_SLOTS;
	for (unsigned k = 0; k < CMD_SLOTS; k++, i = (i + 1) % CMD_SLOTS) {
		if (c->pid[i] == pid)
			return;
		if (!c->pid[i])
			break;
	}
	if (c->used >= CMD_SLOTS / 2 || c->pid[i])
		return;
	c->pid[i] = pid;
	c->text[i] = read_cmdline(pid);
	c->used++;
}

/* The command ingero-top launched (-- CMD ARGS): live, its own; replayed,
 * the recording's, when every session of the files ran the same one. */
static const char *launched(const struct ho_run *r)
{
	if (r->live)
		return r->command;
	for (int i = 1; i < r->nhosts; i++)
		if (strcmp(r->host_cmd[i], r->host_cmd[0]))
			return "";
	return r->nhosts ? r->host_cmd[0] : "";
}

/* pid's command line when it is the launched command or a fork of it that
 * did not exec (same name, its parent the launched one): the words
 * ingero-top started it with, which /proc no longer has once it exited
 * and a recording never had. "" otherwise. */
static const char *launched_for(const struct ho_run *r, uint32_t pid)
{
	const char *cmd = launched(r);
	char name[IG_COMM_LEN] = "";
	const char *w = cmd, *e = cmd + strcspn(cmd, " ");
	for (const char *c = cmd; c < e; c++)
		if (*c == '/')
			w = c + 1;
	snprintf(name, sizeof(name), "%.*s", (int)(e - w), w); /* the kernel's comm: 15 bytes */
	const struct ig_model *m = session_model(r->s);
	struct ig_proc_stats p, q;
	if (!name[0] || model_proc(m, pid, &p))
		return "";
	for (int depth = 0; depth < 64; depth++) {
		if (strncmp(p.comm, name, IG_COMM_LEN))
			return "";
		if (!p.ppid || model_proc(m, p.ppid, &q))
			return cmd; /* the root of the traced tree: what ingero-top started */
		p = q;
	}
	return "";
}

const char *ho_cmdline(void *ctx, uint32_t pid)
{
	struct ho_run *r = ctx;
	struct ho_cmdlines *c = r ? r->cmds : NULL;
	if (!r || !pid)
		return "";
	unsigned i = (pid * 2654435761u) % CMD_SLOTS;
	for (unsigned k = 0; c && k < CMD_SLOTS && c->pid[i]; k++, i = (i + 1) % CMD_SLOTS)
		if (c->pid[i] == pid && c->text[i] && c->text[i][0])
			return c->text[i];
	return launched_for(r, pid);
}

static void cmdlines_free(struct ho_cmdlines *c)
{
	for (int i = 0; c && i < CMD_SLOTS; i++)
		free(c->text[i]);
	free(c);
}

/* --- the session ------------------------------------------------------------------ */

static void on_event(void *ctx, const struct ig_event *e)
{
	struct ho_run *r = ctx;
	if (r->ring)
		evring_push(r->ring, e);
	if (e->kind == IG_EV_SNAPSHOT || e->kind == IG_EV_COMM)
		return;
	if (r->cmds)
		cmdline_seen(r->cmds, e->pid);
	if (!r->first_ns || e->ts_ns < r->first_ns)
		r->first_ns = e->ts_ns;
	if (e->ts_ns + e->dur_ns > r->last_ns)
		r->last_ns = e->ts_ns + e->dur_ns;
	r->events++;
}

/* The words cli_parse reads for t, into r->argv. */
static int target_argv(struct ho_run *r, const struct ho_target *t)
{
	int n = 0;
	r->argv[n++] = "ingero-top";
	r->argv[n++] = "--batch";
	r->argv[n++] = "--flight";
	r->argv[n++] = "0";
	if (t->window) {
		r->argv[n++] = "--window";
		r->argv[n++] = (char *)t->window;
	}
	if (t->no_stacks)
		r->argv[n++] = "--no-stacks";
	if (t->nreplay) {
		r->argv[n++] = "--replay";
		for (int i = 0; i < t->nreplay; i++)
			r->argv[n++] = (char *)t->replay[i];
	}
	if (t->pids) {
		r->argv[n++] = "--pid";
		r->argv[n++] = (char *)t->pids;
	}
	if (t->record) {
		r->argv[n++] = "--record";
		r->argv[n++] = (char *)t->record;
	}
	r->argv[n] = NULL;
	return n;
}

/* The recordings' sessions rows, or the live host, as report facts. */
static void read_hosts(struct ho_run *r, const struct ho_target *t)
{
	if (r->live) {
		sysinfo_read(&r->facts);
		size_t l = 0;
		for (int i = 0; t->cmd && t->cmd[i] && l < sizeof(r->command); i++)
			l += (size_t)snprintf(r->command + l, sizeof(r->command) - l, "%s%s",
					      i ? " " : "", t->cmd[i]);
		r->hosts[0] = (struct explain_host){
		    .node = session_status(r->s)->host, /* the recordings' node name */
		    .kernel = r->facts.kernel,
		    .os = r->facts.os_release,
		    .cpu_model = r->facts.cpu_model,
		    .writer = "ingero-top " IG_VERSION " (live)",
		    .command = r->command,
		    .cpu_cores = r->facts.cpu_cores,
		    .mem_total_mb = r->facts.mem_total_mb,
		};
		r->nhosts = 1;
		return;
	}
	char err[256];
	struct query *q = query_open(t->replay, t->nreplay, err, sizeof(err));
	if (!q || query_sessions(q, &r->sess, &r->nsess))
		r->nsess = 0;
	query_free(q);
	for (size_t i = 0; i < r->nsess && r->nhosts < HO_HOSTS_MAX; i++) {
		const struct rec_session *s = &r->sess[i];
		/* the command, without the probe cost the recorder keeps after it */
		char *hc = r->host_cmd[r->nhosts];
		snprintf(hc, sizeof(r->host_cmd[0]), "%s", s->flags ? s->flags : "");
		char *pc = strstr(hc, "probe_ns=");
		if (pc && (pc == hc || pc[-1] == ' ') && !pc[strspn(pc + 9, "0123456789") + 9])
			*(pc > hc ? pc - 1 : pc) = 0;
		r->hosts[r->nhosts++] = (struct explain_host){
		    .node = s->node,
		    .kernel = s->kernel,
		    .os = s->os_release,
		    .cpu_model = s->cpu_model,
		    .writer = s->version,
		    .command = hc,
		    .cpu_cores = s->cpu_cores,
		    .mem_total_mb = s->mem_total_mb,
		    .started_ns = s->started_at_ns,
		    .stopped_ns = s->stopped_at_ns,
		};
	}
}

int ho_open(struct ho_run *r, const struct ho_target *t, double ring_s, size_t ring_max, char *err,
	    size_t len)
{
	memset(r, 0, sizeof(*r));
	r->live = !t->nreplay;
	int argc = target_argv(r, t), ncmd = 0;
	while (t->cmd && t->cmd[ncmd])
		ncmd++;
	if (ncmd >= HO_MAX_CMD - 1) {
		snprintf(err, len, "the command has too many words (%d at most)", HO_MAX_CMD - 2);
		return -1;
	}
	if (ncmd) { /* cli_parse points into these words: they live in r */
		r->argv[argc++] = "--";
		for (int i = 0; i < ncmd; i++)
			r->argv[argc++] = t->cmd[i];
		r->argv[argc] = NULL;
	}
	if (cli_parse(&r->cli, argc, r->argv)) { /* it said why on stderr */
		snprintf(err, len, "invalid options (see above)");
		return -1;
	}
	if (r->live && (check_privileges(err, len) || check_btf(err, len)))
		return -1;
	log_capture_libbpf(0);
	log_echo(stderr, LOG_ERROR);
	if (r->live)
		r->cmds = calloc(1, sizeof(*r->cmds));
	if (ring_s > 0)
		r->ring = evring_new(ring_s, ring_max);
	if ((r->live && !r->cmds) || (ring_s > 0 && !r->ring)) {
		snprintf(err, len, "out of memory");
		ho_close(r);
		return -1;
	}
	r->ring_s = ring_s;
	r->ring_max = ring_max;
	r->s = session_new(&r->cli, err, len);
	if (!r->s || session_keep_slowcalls(r->s)) {
		if (r->s)
			snprintf(err, len, "out of memory");
		ho_close(r);
		return -1;
	}
	session_set_event_hook(r->s, on_event, r);
	read_hosts(r, t);
	return 0;
}

void ho_close(struct ho_run *r)
{
	session_free(r->s);
	evring_free(r->ring);
	cmdlines_free(r->cmds);
	query_sessions_free(r->sess, r->nsess);
	memset(r, 0, sizeof(*r));
}

static void forget(struct ho_run *r)
{
	session_reset(r->s);
	if (r->ring) { /* the ring holds what the statistics cover */
		double s = r->ring_s;
		size_t m = r->ring_max;
		evring_free(r->ring);
		r->ring = evring_new(s, m);
	}
	r->first_ns = r->last_ns = r->events = 0;
}

int ho_replay(struct ho_run *r, uint64_t since, uint64_t until, volatile sig_atomic_t *stop)
{
	struct ig_status *st = session_status(r->s);
	const uint64_t step = 1000000000ull;
	uint64_t next = st->replay_start_ns + step;
	int more = 1, reset = !since;
	while (more > 0 && !(stop && *stop)) {
		if (st->replay_end_ns && next > st->replay_end_ns)
			next = st->replay_end_ns;
		if (!reset && next >= since) {
			more = session_replay_to(r->s, since);
			forget(r);
			reset = 1;
			if (more <= 0)
				break;
		}
		if (until && next >= until) {
			more = session_replay_to(r->s, until);
			break;
		}
		more = session_replay_to(r->s, next);
		next += step;
	}
	if (more < 0)
		return more;
	session_finish(r->s);
	return 0;
}

int ho_live_for(struct ho_run *r, int ms, volatile sig_atomic_t *stop)
{
	uint64_t end = ig_mono_ms() + (uint64_t)(ms > 0 ? ms : 0);
	for (;;) {
		if ((int64_t)end - (int64_t)ig_mono_ms() <= 0 || (stop && *stop))
			return session_done(r->s);
		if (session_wait(r->s, NULL, 0, end) < 0) /* poll or read failed */
			return session_done(r->s);
		if (session_done(r->s))
			return 1;
	}
}

void ho_span(struct ho_run *r, uint64_t *start_ns, uint64_t *end_ns)
{
	struct ig_status *st = session_status(r->s);
	if (!r->live && st->replay_start_ns) {
		*start_ns = st->replay_start_ns;
		*end_ns = st->replay_end_ns;
		return;
	}
	*start_ns = r->first_ns;
	*end_ns = r->last_ns;
}

void ho_explain_in(struct ho_run *r, struct explain_in *in)
{
	*in = (struct explain_in){
	    .m = session_model(r->s),
	    .d = session_detect(r->s),
	    .st = session_stacks(r->s),
	    .slow = session_slowcalls(r->s),
	    .status = session_status(r->s),
	    .hosts = r->hosts,
	    .nhosts = r->nhosts,
	    .files = r->cli.replay,
	    .nfiles = r->cli.nreplay,
	    .first_ns = r->first_ns,
	    .last_ns = r->last_ns,
	    .cmdline = ho_cmdline,
	    .cmdline_ctx = r,
	};
}
