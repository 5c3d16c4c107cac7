/* Model + detector pairs for tests (analysis.h): each a struct analysis
 * (analysis/analysis.h), the product's one wiring, found by its model. */
#include "analysis.h"

#include "analysis/analysis.h"

#include <stddef.h>

#define AN_MAX 64

static struct analysis *pairs[AN_MAX];

static struct analysis *of(const struct ig_model *m)
{
	for (int i = 0; i < AN_MAX; i++)
		if (m && pairs[i] && pairs[i]->m == m)
			return pairs[i];
	return NULL;
}

struct ig_model *an_model_new_det(const struct ig_model_cfg *cfg, const struct ig_detect_cfg *dcfg)
{
	for (int i = 0; i < AN_MAX; i++) {
		if (pairs[i])
			continue;
		pairs[i] = analysis_new(cfg, dcfg, false);
		return pairs[i] ? pairs[i]->m : NULL;
	}
	return NULL;
}

struct ig_model *an_model_new(const struct ig_model_cfg *cfg)
{
	return an_model_new_det(cfg, NULL);
}

struct ig_detect *an_detect(const struct ig_model *m)
{
	struct analysis *a = of(m);
	return a ? a->d : NULL;
}

void an_model_reset(struct ig_model *m)
{
	struct analysis *a = of(m);
	if (a)
		analysis_reset(a);
	else
		model_reset(m);
}

void an_model_free(struct ig_model *m)
{
	for (int i = 0; i < AN_MAX; i++)
		if (m && pairs[i] && pairs[i]->m == m) {
			analysis_free(pairs[i]);
			pairs[i] = NULL;
			return;
		}
	model_free(m);
}

const struct ig_chain *an_active_chain(const struct ig_model *m, int cls)
{
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		const struct ig_chain *c = detect_chain(an_detect(m), i);
		if (c->cls == cls && c->active)
			return c;
	}
	return NULL;
}
