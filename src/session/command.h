/* A command the session starts (-- CMD ARGS): forked and held before its
 * exec, so that the collector can attach its libraries first; released,
 * reaped, and stopped at the end. */
#ifndef IG_COMMAND_H
#define IG_COMMAND_H

#include <stddef.h>
#include <sys/types.h>

struct command;

/* Finds argv[0] (on PATH unless it holds a '/') and forks it, held before
 * its exec. NULL with a one-line reason in err ("cannot run X: ..."). The
 * caller owns the result (command_free); argv must outlive it. */
struct command *command_new(char **argv, char *err, size_t errlen);
pid_t command_pid(const struct command *c);
/* Its name as given (argv[0]). */
const char *command_name(const struct command *c);
/* The executable as found on PATH (owned by c): the collector reads its
 * libraries before it runs. */
const char *command_exe(const struct command *c);
/* Lets it exec. 0, or -errno with "cannot run X: reason" in err when the
 * exec failed (the process is then reaped). */
int command_release(struct command *c, char *err, size_t errlen);
/* Reaps it if it ended, without waiting: its exit status (128 + N when
 * signal N killed it, as shells say), or -1 while it runs. */
int command_poll(struct command *c);
/* Stops it if it still runs (SIGTERM, SIGCONT in case it is held, SIGKILL
 * after a second), reaps it and frees c. NULL is a no-op. */
void command_free(struct command *c);

#endif
