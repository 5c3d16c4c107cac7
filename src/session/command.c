/* Launching a command (command.h): a fork held on a pipe until the probes
 * are attached, its exec error reported through a close-on-exec pipe. */
#include "session/command.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct command {
	pid_t pid;
	const char *name; /* argv[0] */
	char exe[PATH_MAX];
	int start_fd, err_fd; /* -1 once released */
	int status;	      /* -1 until reaped */
	bool reaped;
};

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

/* Forks argv held on a pipe (start_fd releases it); an exec failure comes
 * back on err_fd as the errno. */
static pid_t spawn_held(char **argv, int *start_fd, int *err_fd)
{
	int go[2], ef[2];

	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(ef, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ef[0]);
		close(ef[1]);
		errno = e;
		return -1;
	}
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

struct command *command_new(char **argv, char *err, size_t errlen)
{
	struct command *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->name = argv[0];
	c->status = -1;
	c->start_fd = c->err_fd = -1;
	int r = resolve_exe(argv[0], c->exe, sizeof(c->exe));
	if (r) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(-r));
		free(c);
		return NULL;
	}
	c->pid = spawn_held(argv, &c->start_fd, &c->err_fd);
	if (c->pid < 0) {
		snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
		free(c);
		return NULL;
	}
	return c;
}

pid_t command_pid(const struct command *c)
{
	return c->pid;
}

const char *command_name(const struct command *c)
{
	return c->name;
}

const char *command_exe(const struct command *c)
{
	return c->exe;
}

static void close_pipes(struct command *c)
{
	if (c->start_fd >= 0)
		close(c->start_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->start_fd = c->err_fd = -1;
}

int command_release(struct command *c, char *err, size_t errlen)
{
	int e = 0;

	if (write(c->start_fd, "g", 1) != 1 || read(c->err_fd, &e, sizeof(e)) == sizeof(e)) {
		snprintf(err, errlen, "cannot run %s: %s", c->name, strerror(e ? e : EPIPE));
		close_pipes(c);
		waitpid(c->pid, NULL, 0);
		c->reaped = true;
		return -(e ? e : EPIPE);
	}
	close_pipes(c);
	return 0;
}

int command_poll(struct command *c)
{
	int status;

	if (!c->reaped && waitpid(c->pid, &status, WNOHANG) == c->pid) {
		c->reaped = true;
		c->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	return c->status;
}

void command_free(struct command *c)
{
	if (!c)
		return;
	close_pipes(c); /* a command never released gets EOF: it exits */
	if (!c->reaped) {
		kill(c->pid, SIGTERM);
		kill(c->pid, SIGCONT); /* it may be held (stopped) by the collector */
		for (int i = 0; i < 50 && waitpid(c->pid, NULL, WNOHANG) == 0; i++)
			usleep(20000);
		if (kill(c->pid, 0) == 0) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, NULL, 0);
		}
	}
	free(c);
}
