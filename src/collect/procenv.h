/* What the traced processes' environments say about how CUDA and PyTorch
 * run them (core/event.h IG_ENV_*): CUDA_LAUNCH_BLOCKING=1 makes every
 * launch wait for its kernel, PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns
 * PyTorch's caching allocator off. Read from the process's live
 * environment (the C library's environ, through process_vm_readv: a
 * Python program's os.environ[...] = "1" counts), else from
 * /proc/PID/environ (what it was started with), and sent as IG_EV_ENV
 * events (arg0 the settings, arg1 where they were read, arg2 those of
 * what it was started with) when they change and every 10 s while any is
 * set. The parser is
 * pure. */
#ifndef IG_PROCENV_H
#define IG_PROCENV_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/source.h"

#define PROCENV_PROCS 64 /* processes followed at once */

struct procenv_proc {
	uint32_t pid;
	uint32_t flags;	  /* IG_ENV_* when last read */
	uint32_t initial; /* the same in what it was started with */
	int src;	  /* IG_ENV_SRC_*, 0 never read */
	uint64_t cpus;	  /* IG_CPUS_PACK of its CPUs when last read, 0 none */
	uint64_t seen;	  /* the tick that last saw the process */
	uint64_t first;	  /* the tick that first saw it */
	uint64_t sent;	  /* the tick of the last event, 0 none */
};

struct procenv {
	struct procenv_proc p[PROCENV_PROCS];
	int n;
	uint64_t ticks;
};

/* Once a second with the target processes (and the CPUs each may run on,
 * collect/cpuaff.h): each is read from the second
 * tick that sees it (the first is the session's start, before anyone
 * listens), every second for 10 s, then every 5 s; an event when its
 * settings change and every 10 s while any is set. now_ns: event time. */
void procenv_tick(struct procenv *pe, const uint32_t *pids, int n, uint64_t now_ns, ig_emit_fn emit,
		  void *ctx);

/* The settings of pid's environment: IG_ENV_* into *flags (its live
 * environment when it can be read, else what it was started with) and into
 * *initial (what it was started with, 0 unknown); the source of *flags
 * (IG_ENV_SRC_*) returned, or -errno when neither could be read. */
int procenv_read(uint32_t pid, uint32_t *flags, uint32_t *initial);

/* One "NAME=value" string (len bytes, not NUL-terminated): the IG_ENV_*
 * flag it sets, 0 for anything else. */
uint32_t procenv_var(const char *s, size_t len);

#endif
