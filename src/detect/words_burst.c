/* What a burst of slow calls says (when, how many, what they cost), and
 * the kind of process the advice is for: an inference server is not told
 * about DataLoader workers (docs/detection.md, "Advice for the process"). */
#include "detect/detect_int.h"

#include <ctype.h>
#include <string.h>

#include "core/fmt.h"
#include "core/ops.h"

/* Names of inference servers as their processes or threads call themselves
 * (the kernel's comm, 15 characters): vLLM's engine is "VLLM::EngineCor",
 * SGLang's "sglang::schedul", TGI's launcher "text-generation". */
static const char *const server_names[] = {"vllm",    "sglang", "tritonserver", "text-generation",
					   "trtllm",  "ollama", "llama-server", "tensorrt_llm",
					   "lmdeploy"};

static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (; *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && tolower((unsigned char)s[i]) == w[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

int detect_words_server(const struct ctx *x)
{
	for (size_t i = 0; i < sizeof(server_names) / sizeof(server_names[0]); i++)
		if (has_word(x->p->comm, server_names[i]) ||
		    (x->feeder && has_word(x->feeder->comm, server_names[i])))
			return 1;
	return 0;
}

void detect_words_burst(struct ctx *x, const struct cause *c, struct finding *f,
			const struct burst_words *b)
{
	const struct ig_series_stats *s = b->s;
	const char *op = ig_op_name(s->op);
	char fn[64], mx[24], st[24], sp[24], cost[24], pct[16], r[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_ns(mx, sizeof(mx), b->max_ns);
	fmt_ns(st, sizeof(st), s->life.p50);
	fmt_ns(sp, sizeof(sp), b->last_ns > b->first_ns ? b->last_ns - b->first_ns : 0);
	fmt_ns(cost, sizeof(cost), b->cost_ns);
	fmt_pct(pct, sizeof(pct), c->impact);
	fmt_ratio(r, sizeof(r), x->cfg->burst_x);
	const char *least = b->more ? "at least " : "";
	if (b->at_start) {
		detect_put(
		    f->c.summary, sizeof(f->c.summary),
		    "burst of slow %s calls in %s: %s%d calls up to %s "
		    "(from %s the settled p50 %s) in the first %s of its calls, %s beyond the p50",
		    op, fn, least, b->n, mx, r, st, sp, cost);
	} else {
		char after[24];
		fmt_ns(after, sizeof(after), b->first_ns - s->first_ns);
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "burst of slow %s calls in %s: %s%d calls up to %s "
			   "(from %s the settled p50 %s) within %s, %s after its first call, "
			   "%s beyond the p50",
			   op, fn, least, b->n, mx, r, st, sp, after, cost);
	}
	char why[160] = "";
	if (b->split && b->pre_ns * 2 >= b->dur_ns)
		detect_put(
		    why, sizeof(why),
		    " %.0f%% of their time they were runnable but not running: another task held "
		    "the CPU (%s's CPU contention).",
		    100.0 * (double)b->pre_ns / (double)b->dur_ns, fn);
	else if (b->split && b->blk_ns * 2 >= b->dur_ns)
		detect_put(why, sizeof(why), " %.0f%% of their time they slept in the call.",
			   100.0 * (double)b->blk_ns / (double)b->dur_ns);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "%s settles at %s, but %s%d of its calls took %s or more within %s (%s of the "
		   "feeding thread's wall time in the window): a burst, not a steady tail.%s%s",
		   op, st, least, b->n, r, sp, pct, why,
		   b->at_start
		       ? " It came with the first calls: warm-up (lazy module loading, CUDA graph "
			 "capture, allocator growth, the first requests or batches)."
		       : "");
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "burst_calls", b->n, "");
	detect_ev(f, "burst_span_ns", (double)(b->last_ns - b->first_ns), "ns");
	detect_ev(f, "burst_max_ns", (double)b->max_ns, "ns");
	detect_ev(f, "burst_cost_ns", (double)b->cost_ns, "ns");
	detect_ev(f, "settled_p50_ns", (double)s->life.p50, "ns");
	detect_ev(f, "after_first_ns", (double)(b->first_ns - s->first_ns), "ns");
	if (b->split)
		detect_ev(f, "burst_preempt_pct", 100.0 * (double)b->pre_ns / (double)b->dur_ns,
			  "%");
	int server = detect_words_server(x);
	if (b->split && b->pre_ns * 2 >= b->dur_ns)
		detect_rec(
		    f,
		    "Find what held the CPU then (the feeding thread's timeline at that time) and "
		    "keep it off the feeding thread's CPUs");
	else if (b->at_start && server)
		detect_rec(
		    f, "Warm the server up before it takes traffic (a few requests of each shape; "
		       "vLLM captures CUDA graphs at start-up unless --enforce-eager) and leave "
		       "start-up out of latency objectives");
	else if (b->at_start)
		detect_rec(
		    f,
		    "Leave the first steps out of latency measurements (warm-up iterations); "
		    "CUDA_MODULE_LOADING=EAGER loads the modules at start instead of in the first "
		    "launches");
	else
		detect_rec(
		    f, "Look at what the process did then: the slow calls' stacks and the feeding "
		       "thread's timeline at that time");
	detect_step(f, b->first_ns, "first slow %s call of the burst", op);
	detect_step(f, b->max_ts, "slowest %s call of the burst: %s", op, mx);
}
