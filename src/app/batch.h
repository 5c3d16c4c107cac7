/* The batch mode (--batch, --json, --summary, --events): frames of text or
 * JSON on stdout instead of the screen (docs/batch.md, docs/json.md). */
#ifndef IG_BATCH_H
#define IG_BATCH_H

#include <signal.h>
#include <stdint.h>

struct session;
struct session_publish;
struct cli;

/* Set by main's signal handlers: stop (SIGINT, SIGTERM, SIGHUP) and save
 * the flight recorder (SIGUSR1). */
extern volatile sig_atomic_t batch_stop_flag, batch_flight_flag;

/* Runs the batch loop on s until the end (the command exited, the replay
 * ended, -n frames) or a stop signal; the last frame or the summary. Returns
 * the exit code: 0, or 1 when writing or the replay failed. With --stream,
 * the stream's loop instead (app/stream_loop.h). */
int batch_run(struct session *s, const struct cli *cli, const struct session_publish *pub);

/* The session's notices not printed yet (*said of them were) on stderr,
 * in order, and the count of those that scrolled out of the status. */
struct ig_status;
void batch_print_notices(const struct ig_status *st, uint32_t *said);

#endif
