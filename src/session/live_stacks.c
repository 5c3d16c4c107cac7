/* struct stacks_kernel over a collector: two adapters and the call that
 * sets them; the tail thresholds of tail-only stacks (see live_stacks.h). */
#include "session/live_stacks.h"

#include "collect/collector.h"
#include "core/hist.h"
#include "core/ops.h"
#include "model/model.h"
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

void live_stacks_tail(struct collector *c, const struct ig_model *m)
{
	uint64_t tail[IG_OP_MAX] = {0};
	struct ig_series_stats st;
	struct ig_call_rec slow[IG_SLOW_MAX];
	int ops[IG_OP_MAX];
	int n = model_ops(m, ops, IG_OP_MAX);

	for (int i = 0; i < n; i++) {
		int op = ops[i];
		if (op <= 0 || op >= IG_OP_MAX || model_op_stats(m, op, &st) ||
		    st.calls_win < IG_SLOW_MAX ||
		    model_slow_calls(m, op, 0, slow, IG_SLOW_MAX) < IG_SLOW_MAX)
			continue;
		/* longer than the p95: past the top of its bucket, or an op
		 * whose calls all last the same to 1 % would walk far more than
		 * 5 % of its stacks (the bucket's middle is the p95 reported) */
		tail[op] = hist_bucket_hi(hist_bucket(st.win.p95)) + 1;
		if (slow[IG_SLOW_MAX - 1].dur_ns < tail[op])
			tail[op] = slow[IG_SLOW_MAX - 1].dur_ns;
		/* the p99 of the last two seconds: when the op gets faster, the
		 * window keeps its slow calls for its whole length, and the calls
		 * that will be its slowest once they are gone are made now */
		for (int k = st.spark_n - 2; k < st.spark_n; k++) {
			uint64_t p99 = k >= 0 && st.spark_p99[k]
					   ? hist_bucket_hi(hist_bucket(st.spark_p99[k])) + 1
					   : UINT64_MAX;
			if (p99 < tail[op])
				tail[op] = p99;
		}
	}
	for (int op = 1; op < IG_OP_MAX; op++)
		collector_set_stack_tail(c, op, tail[op]);
}
