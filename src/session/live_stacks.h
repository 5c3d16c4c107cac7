/* The stacks module's kernel side in live mode: struct stacks_kernel
 * (stacks/stacks.h) backed by a collector's maps, so that stacks/ never
 * includes collect/ (docs/architecture.md). */
#ifndef IG_LIVE_STACKS_H
#define IG_LIVE_STACKS_H

struct stacks;
struct collector;

/* Raw stacks of st are fetched from c's stacks map (collector_stack) and
 * interpreters are written to its py_procs map (collector_set_python).
 * c must stay valid until stacks_free(st) or stacks_set_kernel(st, NULL). */
void live_stacks_attach(struct stacks *st, struct collector *c);

#endif
