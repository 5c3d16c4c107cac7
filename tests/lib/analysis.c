/* Model + detector pairs for tests (analysis.h). */
#include "analysis.h"

#include <stddef.h>

#define AN_MAX 64

static struct {
	const struct ig_model *m;
	struct ig_detect *d;
} pairs[AN_MAX];

struct ig_model *an_model_new_det(const struct ig_model_cfg *cfg, const struct ig_detect_cfg *dcfg)
{
	for (int i = 0; i < AN_MAX; i++) {
		if (pairs[i].m)
			continue;
		struct ig_model *m = model_new(cfg);
		struct ig_detect *d = detect_new(dcfg);
		if (!m || !d) {
			model_free(m);
			detect_free(d);
			return NULL;
		}
		model_set_window_hook(m, detect_window, d);
		pairs[i].m = m;
		pairs[i].d = d;
		return m;
	}
	return NULL;
}

struct ig_model *an_model_new(const struct ig_model_cfg *cfg)
{
	return an_model_new_det(cfg, NULL);
}

struct ig_detect *an_detect(const struct ig_model *m)
{
	for (int i = 0; i < AN_MAX; i++)
		if (m && pairs[i].m == m)
			return pairs[i].d;
	return NULL;
}

void an_model_reset(struct ig_model *m)
{
	model_reset(m);
	detect_reset(an_detect(m));
}

void an_model_free(struct ig_model *m)
{
	for (int i = 0; i < AN_MAX; i++)
		if (m && pairs[i].m == m) {
			detect_free(pairs[i].d);
			pairs[i].m = NULL;
			pairs[i].d = NULL;
		}
	model_free(m);
}
