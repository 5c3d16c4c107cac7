/* struct stacks_kernel over a collector: two adapters and the call that
 * sets them (see live_stacks.h). */
#include "session/live_stacks.h"

#include "collect/collector.h"
#include "stacks/stacks.h"

static int fetch_stack(void *ctx, uint64_t id, struct igb_stack *out)
{
	return collector_stack(ctx, id, out);
}

static int set_python(void *ctx, int pid, const struct igb_pyproc *cfg)
{
	return collector_set_python(ctx, pid, cfg);
}

void live_stacks_attach(struct stacks *st, struct collector *c)
{
	struct stacks_kernel k = {.fetch_stack = fetch_stack, .set_python = set_python, .ctx = c};
	stacks_set_kernel(st, &k);
}
