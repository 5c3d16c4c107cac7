/* The streaming mode (`--stream`): what each host of a fleet runs
 * (docs/fleet.md). Versioned JSON lines on stdout (docs/json.md, "Stream";
 * built by report/stream.c), pings read on stdin; it ends when stdin ends,
 * stdout goes, a signal comes, or the traced work ends. */
#ifndef IG_STREAM_LOOP_H
#define IG_STREAM_LOOP_H

struct session;
struct session_publish;
struct cli;

/* The hello line, at once: before the privileges are checked and the
 * probes attached, so that the reader knows the version whatever follows.
 * From then on the stream's lines own stdout: fd 1 is pointed at stderr,
 * so that a launched command's output goes there. */
void stream_hello(const struct cli *cli);

/* A failure before tracing: the error line on stdout (with --stream; msg
 * is the one-line error without "ingero-top: ", which the caller also
 * writes on stderr). */
void stream_fail(const struct cli *cli, const char *msg);

/* Runs the stream on s until the end; the end line. Returns the exit code:
 * 0, or 1 when the recording or the replay failed or stdout failed other
 * than by its reader going away. */
int stream_run(struct session *s, const struct cli *cli, const struct session_publish *pub);

#endif
