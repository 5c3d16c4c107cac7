/* The model, the detector and the slowest calls, wired once (analysis.h). */
#include "analysis/analysis.h"

#include <errno.h>
#include <stdlib.h>

#include "analysis/slowcalls.h"
#include "detect/detect.h"
#include "model/model.h"

#define SEC 1000000000ULL

struct analysis *analysis_new(const struct ig_model_cfg *mcfg, const struct ig_detect_cfg *dcfg,
			      bool slow)
{
	struct analysis *a = calloc(1, sizeof(*a));
	struct ig_model_cfg dflt;

	if (!a)
		return NULL;
	if (!mcfg) {
		model_cfg_default(&dflt);
		mcfg = &dflt;
	}
	a->m = model_new(mcfg);
	a->d = detect_new(dcfg);
	if (slow)
		a->slow = slowcalls_new(0, 0);
	if (!a->m || !a->d || (slow && !a->slow)) {
		analysis_free(a);
		return NULL;
	}
	model_set_window_hook(a->m, detect_window, a->d);
	return a;
}

void analysis_free(struct analysis *a)
{
	if (!a)
		return;
	model_free(a->m);
	detect_free(a->d);
	slowcalls_free(a->slow);
	free(a);
}

int analysis_keep_slow(struct analysis *a)
{
	if (!a->slow)
		a->slow = slowcalls_new(0, 0);
	return a->slow ? 0 : -ENOMEM;
}

void analysis_ingest(struct analysis *a, const struct ig_event *e)
{
	model_ingest(a->m, e);
	if (a->slow)
		slowcalls_event(a->slow, e);
}

void analysis_advance(struct analysis *a, uint64_t to)
{
	model_advance(a->m, to);
}

void analysis_close(struct analysis *a, uint64_t last_ns)
{
	uint64_t t = last_ns ? last_ns : model_now(a->m);

	model_advance(a->m, (t / SEC + 1) * SEC);
}

void analysis_finish(struct analysis *a, uint64_t last_ns)
{
	detect_set_end(a->d, 1);
	analysis_close(a, last_ns);
	detect_set_end(a->d, 0);
}

void analysis_reset(struct analysis *a)
{
	model_reset(a->m);
	detect_reset(a->d);
	if (a->slow)
		slowcalls_reset(a->slow);
}

void analysis_set_model(struct analysis *a, struct ig_model *m)
{
	if (a->m != m)
		model_free(a->m);
	a->m = m;
	if (m)
		model_set_window_hook(m, detect_window, a->d);
}
