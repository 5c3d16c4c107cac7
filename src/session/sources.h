/* The session's sources (core/source.h): the live one around the collector
 * and the replay one around the recordings. The synthetic source of the
 * tests is tests/lib/synth.h. Inside the session layer. */
#ifndef IG_SOURCES_H
#define IG_SOURCES_H

#include <stddef.h>

#include "core/source.h"
#include "session/cli.h"

struct collector;

/* Live collection of what cli asks (--demo, --pid, -- CMD, or every CUDA
 * process), with its probes attached and its command or scenario still held:
 * live_source_start lets them run. NULL with a one-line reason in err. Free
 * with s->ops->free (stops the command and the scenario). */
struct ig_source *live_source_new(const struct cli *cli, char *err, size_t errlen);
/* Releases the command or the scenario. 0, or -EINVAL with the reason in err
 * (the command cannot be run). */
int live_source_start(struct ig_source *s, char *err, size_t errlen);
/* The collector (owned by s) and the pids traced from the start (owned by s;
 * returns how many), for the stacks module. */
struct collector *live_source_collector(struct ig_source *s);
int live_source_pids(struct ig_source *s, const int **pids);

/* The replay of n recordings at speed (event ns per wall ns, 0 = as fast as
 * possible), from their first event. NULL with a one-line reason in err.
 * Free with s->ops->free. */
struct ig_source *replay_source_new(const char *const *paths, int n, double speed, char *err,
				    size_t errlen);
/* --since/--until: the replay holds only the events from since_ns to
 * until_ns (Unix ns, event time, both included; 0: no bound) and its span
 * is theirs (it starts at the first of them). 0, -ENODATA when the range
 * holds no event, or -errno. */
int replay_source_range(struct ig_source *s, uint64_t since_ns, uint64_t until_ns);
/* The recordings' stream (store/replay.h; owned by s): chains, stacks, files. */
struct ig_source *replay_source_stream(struct ig_source *s);

#endif
