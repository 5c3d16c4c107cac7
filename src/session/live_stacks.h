/* The stacks module's kernel side in live mode: struct stacks_kernel
 * (stacks/stacks.h) backed by a collector's maps, so that stacks/ never
 * includes collect/ (docs/architecture.md). */
#ifndef IG_LIVE_STACKS_H
#define IG_LIVE_STACKS_H

#include <stdint.h>

struct stacks;
struct collector;
struct ig_model;

/* Tail-only stacks (the default, docs/stacks.md): besides the calls at or
 * above their op's p95, 1 in LIVE_STACK_SAMPLE of the others keep their
 * stack, so the top stacks still show where calls come from. 64: the walk
 * costs about as much as the rest of a traced call, so 1/64 of it adds
 * under 2 % to the cost per call, and a call site making 1 % of 10 000
 * calls/s still shows ~16 stacks a second. */
#define LIVE_STACK_SAMPLE 64

/* Raw stacks of st are fetched from c's stacks map (collector_stack) and
 * interpreters are written to its py_procs map (collector_set_python).
 * c must stay valid until stacks_free(st) or stacks_set_kernel(st, NULL). */
void live_stacks_attach(struct stacks *st, struct collector *c);

/* Pushes each op's tail threshold into c's kernel map (called at every
 * session tick): the lowest of the top of the op's window p95 (the end
 * of its histogram bucket: calls longer than the p95), the duration of the
 * last of its IG_SLOW_MAX slowest calls in the window (so that a call
 * that would enter the slowest-calls lists, and the chain proofs and
 * explain drawn from them, takes its stack) and the p99 of each of the
 * last two seconds (so that the threshold follows an op that gets faster
 * within two seconds, not the window's length); 0 (every call) for an op
 * with fewer calls than IG_SLOW_MAX in the window. */
void live_stacks_tail(struct collector *c, const struct ig_model *m);

#endif
