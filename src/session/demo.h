/* Demo scenarios: sets of real processes (the shim CUDA workload, CPU hogs,
 * forked workers, pipes, disk writes) with a known root cause, started by
 * `ingero-top --demo NAME` and traced live. See docs/scenarios.md. */
#ifndef IG_DEMO_H
#define IG_DEMO_H

#include <stddef.h>

struct demo_run;

/* Names of the scenarios, NULL-terminated, default first. */
const char *const *demo_names(void);

/* Starts the processes of scenario name, stopped before their first CUDA
 * call (they wait to be released). Returns NULL with a one-line reason in
 * err (unknown scenario: lists the known ones; programs not built...).
 * The caller owns the result (demo_stop). */
struct demo_run *demo_start(const char *name, char *err, size_t errlen);

/* The processes to trace (fills at most max); returns how many. */
int demo_pids(const struct demo_run *d, int *pids, int max);

/* Lets the scenario run (after the probes are attached). */
void demo_release(struct demo_run *d);

/* 1 once the scenario's main process has exited (bounded duration). */
int demo_done(struct demo_run *d);

/* Stops every process of the scenario and frees d; NULL is a no-op. */
void demo_stop(struct demo_run *d);

/* Path of the shipped recording of scenario name (for users without
 * root), or NULL when there is none. Owned by the module. */
const char *demo_recording(const char *name);

#endif
