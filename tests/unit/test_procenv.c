/* The CUDA and PyTorch settings of a process's environment
 * (collect/procenv.c): the strings that count, a live environment changed
 * at run time (as Python's os.environ does: not in /proc/PID/environ), one
 * long enough to take several batches, environ copied into the executable,
 * and when the events go out. (tests/integration/test_launch_blocking.sh:
 * a Python process, environ in libc.so.) */
#include "check.h"
#include "collect/procenv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Referring to environ here makes the linker copy the variable into this
 * executable, where the C library then keeps it (a copy relocation): the
 * children read below have their environ there, not in libc.so. */
extern char **environ;

static int var(const char *s)
{
	return (int)procenv_var(s, strlen(s));
}

/* A child that sets (or unsets) the variables it reads from its pipe, one
 * command a line, and says "ok" after each. */
static void child_loop(int in, int out)
{
	char cmd[128];
	FILE *f = fdopen(in, "r");
	/* 300 variables before ours: the environ array takes several batches */
	for (int i = 0; i < 300; i++) {
		char n[32];
		snprintf(n, sizeof(n), "IG_FILLER_%d", i);
		setenv(n, "a value of some length to read past", 1);
	}
	while (f && fgets(cmd, sizeof(cmd), f)) {
		cmd[strcspn(cmd, "\n")] = 0;
		if (!strncmp(cmd, "set ", 4))
			setenv(cmd + 4, "1", 1);
		else if (!strncmp(cmd, "unset ", 6))
			unsetenv(cmd + 6);
		if (write(out, "ok", 2) != 2)
			_exit(1);
	}
	_exit(0);
}

static int do_cmd(int to, int from, const char *cmd)
{
	char ok[2];
	return write(to, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) && read(from, ok, 2) == 2;
}

static int nev;
static uint32_t last_flags;
static void emit(void *ctx, const struct ig_event *e)
{
	(void)ctx;
	if (e->kind == IG_EV_ENV) {
		nev++;
		last_flags = (uint32_t)e->arg0;
	}
}

int main(void)
{
	CHECK(var("CUDA_LAUNCH_BLOCKING=1") == IG_ENV_LAUNCH_BLOCKING);
	CHECK(var("PYTORCH_NO_CUDA_MEMORY_CACHING=1") == IG_ENV_NO_ALLOC_CACHE);
	CHECK(var("CUDA_LAUNCH_BLOCKING=0") == 0);
	CHECK(var("CUDA_LAUNCH_BLOCKING=") == 0);
	CHECK(var("CUDA_LAUNCH_BLOCKING=10") == 0);
	CHECK(var("CUDA_LAUNCH_BLOCKING") == 0);
	CHECK(var("XCUDA_LAUNCH_BLOCKING=1") == 0);
	CHECK(procenv_var("CUDA_LAUNCH_BLOCKING=1xyz", 22) == IG_ENV_LAUNCH_BLOCKING);

	CHECK(environ != NULL);
	int down[2], up[2];
	CHECK(!pipe(down) && !pipe(up));
	unsetenv("CUDA_LAUNCH_BLOCKING");
	unsetenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
	pid_t pid = fork();
	if (!pid) {
		close(down[1]);
		close(up[0]);
		child_loop(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	uint32_t flags = 99, initial = 99;
	CHECK(do_cmd(down[1], up[0], "hello\n"));
	CHECKF(procenv_read((uint32_t)pid, &flags, &initial) == IG_ENV_SRC_LIVE && flags == 0,
	       "nothing set: flags %u", flags);
	CHECK(do_cmd(down[1], up[0], "set CUDA_LAUNCH_BLOCKING\n"));
	CHECKF(procenv_read((uint32_t)pid, &flags, &initial) == IG_ENV_SRC_LIVE &&
		   flags == IG_ENV_LAUNCH_BLOCKING && initial == 0,
	       "set at run time, after 300 others: flags %u, started with %u", flags, initial);
	CHECK(do_cmd(down[1], up[0], "set PYTORCH_NO_CUDA_MEMORY_CACHING\n"));
	CHECKF(procenv_read((uint32_t)pid, &flags, &initial) == IG_ENV_SRC_LIVE &&
		   flags == IG_ENV_ALL,
	       "both: flags %u", flags);

	/* the events: at once when set, none while nothing changes, again
	 * after 10 s; at once when it changes */
	struct procenv pe;
	memset(&pe, 0, sizeof(pe));
	uint32_t p = (uint32_t)pid;
	procenv_tick(&pe, &p, 1, 1, emit, NULL);
	CHECKF(nev == 0, "first tick (the session's start): %d events", nev);
	procenv_tick(&pe, &p, 1, 2, emit, NULL);
	CHECKF(nev == 1 && last_flags == IG_ENV_ALL, "second tick: %d events", nev);
	for (int t = 3; t <= 11; t++)
		procenv_tick(&pe, &p, 1, (uint64_t)t, emit, NULL);
	CHECKF(nev == 1, "ticks 3-11: %d events", nev);
	for (int t = 12; t <= 21; t++)
		procenv_tick(&pe, &p, 1, (uint64_t)t, emit, NULL);
	CHECKF(nev == 2, "ticks 12-21 (read every 5 s, sent every 10 s): %d events", nev);
	CHECK(do_cmd(down[1], up[0], "unset CUDA_LAUNCH_BLOCKING\n"));
	for (int t = 22; t <= 26; t++)
		procenv_tick(&pe, &p, 1, (uint64_t)t, emit, NULL);
	CHECKF(nev == 3 && last_flags == IG_ENV_NO_ALLOC_CACHE, "the change: %d events, flags %u",
	       nev, last_flags);

	close(down[1]);
	waitpid(pid, NULL, 0);
	CHECK(procenv_read((uint32_t)pid, &flags, &initial) < 0);

	/* started with it: found in the live environment too */
	pid = fork();
	if (!pid) {
		setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	flags = initial = 0;
	for (int i = 0; i < 5000 && !initial; i++) { /* until it has exec'd */
		usleep(1000);
		procenv_read((uint32_t)pid, &flags, &initial);
	}
	CHECKF(flags == IG_ENV_LAUNCH_BLOCKING && initial == IG_ENV_LAUNCH_BLOCKING,
	       "sleep started with it: flags %u, started with %u", flags, initial);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return check_done("procenv");
}
