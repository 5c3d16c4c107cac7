/* --replay DIR or a glob: the files of a directory of rotated recordings
 * that --since/--until need (app/replay_set.c). */
#ifndef IG_REPLAY_SET_H
#define IG_REPLAY_SET_H

#include "session/cli.h"

/* Replaces each directory or glob in cli->replay by its recordings in the
 * range of cli->since/until (read against the whole set; they become Unix
 * ns), in time order, at most CLI_MAX_REPLAY in all (the newest; said on
 * stderr). 0, or the exit code after a line on stderr. The paths live until
 * exit. */
int replay_set_expand(struct cli *cli);

#endif
