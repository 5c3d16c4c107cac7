/* One ssh connection per host: the process (fork/exec, no shell, in a
 * session of its own so that it never reads our terminal, and killed when
 * we die), its three pipes (nonblocking, close-on-exec), the stdout line
 * reader with its cap, the end of the process read into a state and a
 * reason (fleet_classify), and the clock pings. */
#include "fleet/fleet_int.h"

#include "core/escape.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

void fconn_init(struct fleet_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->in = c->out = c->err = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The child's side: never returns. */
static void child_exec(char **argv, int in, int out, int err, int report, pid_t parent)
{
	setsid(); /* no controlling terminal: nothing can prompt */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent) /* it died before the line above */
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
		int e = errno;
		(void)!write(report, &e, sizeof(e));
		_exit(127);
	}
	execvp(argv[0], argv);
	int e = errno;
	(void)!write(report, &e, sizeof(e));
	_exit(127);
}

/* Starts argv with pipes to its stdin/stdout/stderr (ours nonblocking and
 * close-on-exec; NULL: /dev/null for stdin, out_fd for stdout when >= 0).
 * Returns the pid, or -1 with a line in why. */
pid_t fleet_spawn(char **argv, int *in, int *out, int *err, int out_fd, char *why, size_t len)
{
	int pi[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1}, rep[2] = {-1, -1};
	int ok = !pipe2(rep, O_CLOEXEC) && !pipe2(pe, O_CLOEXEC);
	ok = ok &&
	     (in ? !pipe2(pi, O_CLOEXEC) : (pi[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	ok = ok && (out ? !pipe2(po, O_CLOEXEC) : (po[1] = out_fd) >= 0);
	pid_t self = getpid(), pid = ok ? fork() : -1;
	if (pid == 0)
		child_exec(argv, pi[0], po[1], pe[1], rep[1], self);
	int e = errno;
	close_fd(&rep[1]);
	close_fd(&pi[0]);
	if (out)
		close_fd(&po[1]);
	close_fd(&pe[1]);
	if (pid > 0) { /* EOF at once when exec worked; the errno when not */
		ssize_t r;
		while ((r = read(rep[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (r == (ssize_t)sizeof(e)) {
			waitpid(pid, NULL, 0);
			pid = -1;
		}
	}
	close_fd(&rep[0]);
	if (pid < 0) {
		char a[200];
		snprintf(why, len, "cannot run %s: %s", esc_str(a, sizeof(a), argv[0], 0),
			 strerror(e));
		close_fd(&pi[1]);
		if (out)
			close_fd(&po[0]);
		close_fd(&pe[0]);
		return -1;
	}
	if (in) {
		fcntl(pi[1], F_SETFL, O_NONBLOCK);
		*in = pi[1];
	}
	if (out) {
		fcntl(po[0], F_SETFL, O_NONBLOCK);
		*out = po[0];
	}
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	*err = pe[0];
	return pid;
}

static void set_state(struct fleet_host *h, enum fleet_state s, const char *why)
{
	h->state = s;
	snprintf(h->why, sizeof(h->why), "%s", why ? why : "");
}

int fconn_start(struct fleet *f, int i, uint64_t now_ms)
{
	struct fleet_host *h = &f->hosts[i];
	struct fleet_conn *c = &f->conns[i];
	char line[8192], why[FLEET_WHY_LEN], q[200];
	char **argv = NULL;
	int r = fleet_remote_line(&f->o, true, line, sizeof(line));
	if (!r && c->record_path[0]) {
		fleet_shell_quote(c->record_path, q, sizeof(q));
		size_t l = strlen(line);
		r = snprintf(line + l, sizeof(line) - l, " --record %s", q) >=
		    (int)(sizeof(line) - l);
	}
	if (r || fleet_ssh_argv(f, i, false, line, &argv) < 0) {
		set_state(h, FLEET_FAILED, "the remote command line is too long");
		return -1;
	}
	c->len = 0;
	c->skipping = false;
	c->errlen = 0;
	c->errbuf[0] = 0;
	c->hello = c->got_error = c->got_end = c->mismatch = c->no_hello = false;
	c->message[0] = 0;
	c->ping_sent_ns = 0;
	c->pid = fleet_spawn(argv, &c->in, &c->out, &c->err, -1, why, sizeof(why));
	fleet_argv_free(argv);
	if (c->pid < 0) {
		c->pid = 0;
		set_state(h, FLEET_FAILED, why);
		return -1;
	}
	c->started_ms = now_ms;
	c->pings_left = FLEET_PINGS_AT_CONNECT;
	c->next_ping_ms = now_ms;
	h->connects++;
	h->state = FLEET_CONNECTING;
	return 0;
}

void fconn_close(struct fleet *f, int i, bool kill_it)
{
	struct fleet_conn *c = &f->conns[i];
	close_fd(&c->in);
	if (kill_it && c->pid > 0)
		kill(c->pid, SIGTERM);
}

/* Appends stderr bytes, keeping the last FLEET_ERR_KEEP. */
static void err_append(struct fleet_conn *c, const char *b, size_t n)
{
	if (n >= FLEET_ERR_KEEP) {
		b += n - FLEET_ERR_KEEP;
		n = FLEET_ERR_KEEP;
	}
	if (c->errlen + n > FLEET_ERR_KEEP) {
		size_t cut = c->errlen + n - FLEET_ERR_KEEP;
		memmove(c->errbuf, c->errbuf + cut, c->errlen - cut);
		c->errlen -= cut;
	}
	memcpy(c->errbuf + c->errlen, b, n);
	c->errlen += n;
	c->errbuf[c->errlen] = 0;
}

/* Stdout bytes into lines; each whole line to the parser. */
static void out_append(struct fleet *f, int i, const char *b, size_t n, uint64_t now_ms)
{
	struct fleet_conn *c = &f->conns[i];
	while (n) {
		const char *nl = memchr(b, '\n', n);
		size_t take = nl ? (size_t)(nl - b) : n;
		if (!c->skipping && c->len + take > FLEET_LINE_MAX) {
			c->skipping = true; /* dropped up to its end, counted once */
			c->len = 0;
			f->hosts[i].lines_dropped++;
		}
		if (!c->skipping) {
			if (c->len + take + 1 > c->cap) {
				size_t cap = c->cap ? c->cap : 4096;
				while (cap < c->len + take + 1)
					cap *= 2;
				char *nb = realloc(c->line, cap);
				if (!nb) { /* out of memory: this line is lost */
					c->skipping = true;
					c->len = 0;
					f->hosts[i].lines_dropped++;
				} else {
					c->line = nb;
					c->cap = cap;
				}
			}
			if (!c->skipping) {
				memcpy(c->line + c->len, b, take);
				c->len += take;
			}
		}
		if (!nl)
			return;
		if (!c->skipping) {
			c->line[c->len] = 0;
			if (c->len && fparse_line(f, i, c->line, now_ms))
				f->hosts[i].lines_dropped++;
		}
		c->skipping = false;
		c->len = 0;
		b = nl + 1;
		n -= take + 1;
	}
}

/* Reads what each pipe holds now, a bounded amount per call (a flooding
 * host cannot starve the others). */
void fconn_read(struct fleet *f, int i, uint64_t now_ms)
{
	struct fleet_conn *c = &f->conns[i];
	char buf[65536];
	for (int round = 0; round < 64 && c->out >= 0; round++) {
		ssize_t r = read(c->out, buf, sizeof(buf));
		if (r > 0) {
			out_append(f, i, buf, (size_t)r, now_ms);
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		close_fd(&c->out);
	}
	for (int round = 0; round < 8 && c->err >= 0; round++) {
		ssize_t r = read(c->err, buf, sizeof(buf));
		if (r > 0) {
			err_append(c, buf, (size_t)r);
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		close_fd(&c->err);
	}
}

/* The line of ssh's stderr that holds pat (trimmed, escaped) into out. */
static bool err_line(const char *text, const char *pat, char *out, size_t len)
{
	const char *m = strstr(text, pat);
	if (!m)
		return false;
	const char *s = m, *e = m;
	while (s > text && s[-1] != '\n')
		s--;
	while (*e && *e != '\n' && *e != '\r')
		e++;
	char line[512];
	snprintf(line, sizeof(line), "%.*s", (int)(e - s), s);
	esc_text(out, len, line, 0);
	return true;
}

/* The last non-empty line of text, escaped. */
static void last_line(const char *text, char *out, size_t len)
{
	const char *e = text + strlen(text);
	while (e > text && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	const char *s = e;
	while (s > text && s[-1] != '\n')
		s--;
	char line[512];
	snprintf(line, sizeof(line), "%.*s", (int)(e - s), s);
	esc_text(out, len, line, 0);
}

static bool any_of(const char *text, const char *const *pats, char *said, size_t len)
{
	for (; *pats; pats++)
		if (err_line(text, *pats, said, len))
			return true;
	return false;
}

enum fleet_state fleet_classify(const char *err_text, int wait_status, const char *remote,
				char *why, size_t len)
{
	static const char *const hostkey[] = {"Host key verification failed",
					      "REMOTE HOST IDENTIFICATION HAS CHANGED", NULL};
	static const char *const sudo[] = {"sudo: a password is required",
					   "sudo: a terminal is required", "not in the sudoers",
					   "is not allowed to execute", NULL};
	static const char *const older[] = {"unknown option", "unknown or ambiguous option",
					    "unrecognized option", "unrecognised option", NULL};
	static const char *const absent[] = {"command not found", "No such file or directory",
					     "not found", NULL};
	static const char *const unreach[] = {"Connection refused",
					      "timed out",
					      "No route to host",
					      "Could not resolve",
					      "Name or service not known",
					      "Network is unreachable",
					      "Connection closed",
					      "Connection reset",
					      "closed by remote host",
					      "not responding",
					      "Broken pipe",
					      NULL};
	char said[160], rn[64];
	const char *t = err_text ? err_text : "";
	int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
	esc_str(rn, sizeof(rn), remote ? remote : "ingero-top", 0);

	if (any_of(t, hostkey, said, sizeof(said))) {
		/* a key that differs from known_hosts' (ssh's banner says so), or
		 * none there for the host (StrictHostKeyChecking) */
		const char *what = strstr(t, "REMOTE HOST IDENTIFICATION HAS CHANGED")
				       ? "does not match known_hosts"
				   : strstr(t, "host key is known") ? "is not in known_hosts"
								    : "was not verified";
		snprintf(why, len, "host key %s: refused (ssh said: %s)", what, said);
		return FLEET_REFUSED;
	}
	if (code == 255 && err_line(t, "Permission denied", said, sizeof(said))) {
		snprintf(why, len,
			 "authentication refused (BatchMode: no password prompt; ssh said: %s)",
			 said);
		return FLEET_REFUSED;
	}
	if (code != 255 && any_of(t, sudo, said, sizeof(said))) {
		snprintf(why, len, "sudo -n refused: no passwordless sudo for %s (sudo said: %s)",
			 rn, said);
		return FLEET_FAILED;
	}
	if (code != 255 && any_of(t, older, said, sizeof(said))) {
		snprintf(why, len, "%s there is older (no --stream; stream 1 needed)", rn);
		return FLEET_FAILED;
	}
	if (code == 127 || (code != 255 && code != 0 && any_of(t, absent, said, sizeof(said)))) {
		snprintf(why, len, "%s is not installed there (not on the remote PATH)", rn);
		return FLEET_FAILED;
	}
	if (any_of(t, unreach, said, sizeof(said))) {
		snprintf(why, len, "%s", said);
		return FLEET_RETRY;
	}
	last_line(t, said, sizeof(said));
	if (WIFSIGNALED(wait_status))
		snprintf(why, len, "ssh ended by signal %d%s%s", WTERMSIG(wait_status),
			 said[0] ? ": " : "", said);
	else if (code == 255)
		snprintf(why, len, "ssh failed%s%s", said[0] ? ": " : " (exit 255)", said);
	else
		snprintf(why, len, "the connection ended (exit %d)%s%s", code, said[0] ? ": " : "",
			 said);
	return FLEET_RETRY;
}

/* The process ended: its state and why, and when to try again. */
static void conn_ended(struct fleet *f, int i, int status, uint64_t now_ms)
{
	struct fleet_host *h = &f->hosts[i];
	struct fleet_conn *c = &f->conns[i];
	char why[FLEET_WHY_LEN];
	enum fleet_state s;
	if (c->mismatch) {
		s = FLEET_FAILED;
		snprintf(why, sizeof(why), "%s", c->message);
	} else if (c->got_error) {
		s = FLEET_FAILED;
		snprintf(why, sizeof(why), "%s", c->message);
	} else if (c->got_end) {
		s = FLEET_ENDED;
		snprintf(why, sizeof(why), "%s", c->message);
	} else if (c->no_hello) {
		s = FLEET_RETRY;
		snprintf(why, sizeof(why), "no answer in %ds: ended, to be tried again",
			 FLEET_HELLO_WAIT_MS / 1000);
	} else {
		s = fleet_classify(c->errbuf, status, f->o.remote_cmd, why, sizeof(why));
	}
	set_state(h, s, why);
	if (s == FLEET_RETRY) {
		c->backoff_s = c->backoff_s ? c->backoff_s * 2 : 1;
		if (c->backoff_s > FLEET_BACKOFF_MAX_S)
			c->backoff_s = FLEET_BACKOFF_MAX_S;
		h->next_try_ms = now_ms + (uint64_t)c->backoff_s * 1000;
	} else if (s == FLEET_REFUSED) {
		h->next_try_ms = now_ms + FLEET_REFUSED_RETRY_MS;
	} else {
		h->next_try_ms = 0;
	}
}

void fconn_reap(struct fleet *f, int i, uint64_t now_ms)
{
	struct fleet_conn *c = &f->conns[i];
	int status;
	if (c->pid <= 0)
		return;
	pid_t r = waitpid(c->pid, &status, WNOHANG);
	if (r == 0 && (c->out >= 0 || c->err >= 0))
		return; /* running */
	if (r == 0)
		return; /* pipes closed, the process not yet gone: next step */
	if (r < 0)
		status = 0;
	fconn_read(f, i, now_ms); /* what it wrote before it went */
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->err);
	c->pid = 0;
	conn_ended(f, i, status, now_ms);
}

void fconn_ping(struct fleet *f, int i, uint64_t now_ms)
{
	struct fleet_conn *c = &f->conns[i];
	char line[80];
	if (c->ping_sent_ns && fleet_now_ns() - c->ping_sent_ns > 10000000000ULL)
		c->ping_sent_ns = 0; /* no pong in 10 s: that ping is lost */
	if (c->in < 0 || !c->hello || c->ping_sent_ns || now_ms < c->next_ping_ms)
		return;
	int n = snprintf(line, sizeof(line), "{\"type\":\"ping\",\"id\":%u}\n", ++c->ping_id);
	c->ping_sent_ns = fleet_now_ns();
	if (write(c->in, line, (size_t)n) != n) { /* a full pipe: try again later */
		c->ping_sent_ns = 0;
		c->next_ping_ms = now_ms + 1000;
		if (errno == EPIPE)
			close_fd(&c->in);
		return;
	}
	if (c->pings_left > 0)
		c->pings_left--;
	/* four at once; then every 2 s while the best round trip leaves the
	 * clock uncertain by more than 1 ms (a loaded host answers late), else
	 * every 30 s */
	uint64_t unc = f->hosts[i].unc_ns;
	c->next_ping_ms = now_ms + (c->pings_left		       ? 0
				    : !unc || unc > FLEET_PING_GOOD_NS ? FLEET_PING_FAST_MS
								       : FLEET_PING_EVERY_MS);
}
