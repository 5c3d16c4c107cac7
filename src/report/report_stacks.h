/* Batch output of the top stacks per op (--stacks): a text section after
 * each text frame, or one JSON object per line after each JSON frame. Reads
 * only the stacks module; the caller owns the FILE*. */
#ifndef IG_REPORT_STACKS_H
#define IG_REPORT_STACKS_H

#include <stdint.h>
#include <stdio.h>

#include "core/json.h"

struct stacks;
struct stacks_stat;

struct report_stacks_opts {
	int per_op;  /* stacks listed per op, 0 = 3 */
	int frames;  /* frames listed per stack, 0 = 12 (notes always) */
	int order;   /* enum stacks_order, default STACKS_BY_TAIL */
	int max_ops; /* ops listed (by total time in their stacks), 0 = all */
};

/* Text, stable for tests (fields separated by runs of spaces):
 *
 *   STACKS  top 3 per op by tail time
 *   cudaMalloc  stack 0x1f2e3d4c5b6a7988  calls 20  total 1.21ms  max 60.3us  tail 2 150us
 *       [py] train.py:142 in forward()
 *       chain_inner+0x1d (stackchain)
 *       ...
 *       (3 more frames)
 *
 * "STACKS none" when no call had a stack. Returns 0 or -EIO. */
int report_stacks_text(FILE *f, struct stacks *st, const struct report_stacks_opts *o);

/* One line: {"type":"stacks","order":"tail","ops":[{"op":"cudaMalloc",
 * "stacks":[{"id":"0x..","pid":..,"calls":..,"total_ns":..,"max_ns":..,
 * "tail_calls":..,"tail_ns":..,"state":"resolved","frames":[{"kind":"native",
 * "text":..,"sym":..,"file":..,"off":..},{"kind":"py","text":..,"file":..,
 * "func":..,"line":..},{"kind":"note","text":..}],"more_frames":0}]}]}
 * Returns 0 or -EIO. */
int report_stacks_json(FILE *f, struct stacks *st, const struct report_stacks_opts *o);

/* The objects of that JSON for other outputs (explain, the MCP server): one
 * stack of stacks_top (its "op" added) with at most frames frames (0 = 12;
 * notes always), and the frames array of stack id, *state (may be NULL)
 * set to "resolved", "resolving", "missing" or "unknown". The caller owns
 * the result; NULL when out of memory. */
json_t *report_stacks_stack_json(struct stacks *st, const struct stacks_stat *s, int frames);
json_t *report_stacks_frames_json(struct stacks *st, uint64_t id, int frames, const char **state);

/* Where a chain's cause was seen (ig_chain.stack_id: the user stack of a
 * timer sleep, a lock or GIL wait): at most max display lines, innermost
 * first, the program's own frames (its Python frames when it has any, else
 * the native ones after those of the C library; when the stack has only
 * the C library's, those and its notes). Returns the count (0: none
 * known). */
#define REPORT_SITE_LEN 200
int report_call_site(struct stacks *st, uint64_t id, char (*lines)[REPORT_SITE_LEN], int max);
/* The same for the stack of a thread that ended a lock wait (a chain's
 * wake_stack_id): its innermost native frame first, whatever library it
 * is in (the unlock or signal that woke the waiter: __lll_lock_wake,
 * pthread_rwlock_unlock...), then the program's frames as above; a Python
 * waker's frames as above (Condition.notify, Queue.put, its caller). */
int report_waker_site(struct stacks *st, uint64_t id, char (*lines)[REPORT_SITE_LEN], int max);
/* A chain's stack id into o[idkey] ("0x...") and up to 3 display lines
 * into o[lineskey] ([] when not resolved): a waker's (report_waker_site)
 * or a call site. Nonzero on failure. */
int report_site_json(json_t *o, const char *idkey, const char *lineskey, struct stacks *stk,
		     uint64_t id, int waker);

#endif
