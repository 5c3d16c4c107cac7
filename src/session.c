/* The session: one source (live collector or replay) feeding the model,
 * the recorder and the flight ring through one ingest function. */
#include "session.h"

#include "collector.h"
#include "event.h"
#include "log.h"
#include "model.h"
#include "hostinfo.h"

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

struct session {
	struct cli cli;
	struct ig_model *model;
	struct collector *coll;
	struct ig_source *src;
	struct ig_status st;
	session_event_hook hook;
	void *hook_ctx;
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
};

static void ingest(void *ctx, const struct ig_event *e)
{
	struct session *s = ctx;
	model_ingest(s->model, e);
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
	int start_fd = -1, err_fd = -1, pids[1];

	o.libs = s->cli.libs;
	o.nlibs = s->cli.nlibs;
	o.force_raw_tp = s->cli.raw_tp;
	o.no_system_libs = s->cli.no_system_libs;
	if (s->cli.npids) {
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
	model_cfg_default(&cfg);
	cfg.window_s = (unsigned)(cli->window_s + 0.5);
	s->model = model_new(&cfg);
	if (!s->model) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (gethostname(s->st.host, sizeof(s->st.host) - 1))
		snprintf(s->st.host, sizeof(s->st.host), "?");
	if (cli->nreplay) {
		snprintf(err, errlen, "replay is not available in this build");
		goto fail;
	}
	if (open_live(s, err, errlen))
		goto fail;
	s->rate_t0_ns = ig_unix_now_ns();
	hostinfo_cpu_read(&s->cpu_prev);
	session_tick(s);
	return s;
fail:
	session_free(s);
	return NULL;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	if (s->child > 0 && !s->child_gone) {
		kill(s->child, SIGTERM);
		for (int i = 0; i < 50 && waitpid(s->child, NULL, WNOHANG) == 0; i++)
			usleep(20000);
		if (kill(s->child, 0) == 0) {
			kill(s->child, SIGKILL);
			waitpid(s->child, NULL, 0);
		}
	}
	collector_free(s->coll);
	model_free(s->model);
	free(s);
}

/* ---- the loop ------------------------------------------------------------- */

int session_fd(struct session *s)
{
	return s->src && s->src->ops->fd ? s->src->ops->fd(s->src) : -1;
}

int session_timeout_ms(struct session *s)
{
	return 100;
}

int session_pump(struct session *s, int budget)
{
	int total = 0;

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

void session_tick(struct session *s)
{
	uint64_t now = ig_unix_now_ns();

	if (s->coll) {
		collector_tick(s->coll, now, ingest, s);
		collector_status(s->coll, &s->st);
		if (now - s->last_snapshot_ns >= 1000000000ULL) {
			take_snapshot(s, now);
			s->last_snapshot_ns = now;
		}
		model_advance(s->model, now);
	}
	s->st.now_ns = model_now(s->model);
	if (now - s->rate_t0_ns >= 1000000000ULL) {
		s->st.events_per_s = (double)(s->st.events_total - s->rate_events0) * 1e9 /
				     (double)(now - s->rate_t0_ns);
		s->rate_t0_ns = now;
		s->rate_events0 = s->st.events_total;
	}
	check_child(s);
	if (s->child_gone && !s->done) {
		/* Everything the command did is in the ring buffer by now: drain
		 * it twice more, then stop. */
		int n = session_pump(s, 1 << 20);
		if (n == 0 && ++s->drain_passes >= 2)
			s->done = true;
	}
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
}

int session_set_speed(struct session *s, double speed)
{
	return -ENOTSUP;
}

int session_seek(struct session *s, int64_t delta_ns)
{
	return -ENOTSUP;
}

int session_jump_chain(struct session *s, int dir)
{
	return -ENOTSUP;
}

int session_flight_save(struct session *s)
{
	return -ENOTSUP;
}

void session_describe(struct session *s, FILE *f)
{
	if (s->coll)
		collector_summary(s->coll, f);
}
