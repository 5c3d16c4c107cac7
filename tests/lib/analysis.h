/* A model with a detector hooked to its windows, set up the way the session
 * sets them up (a struct analysis, analysis/analysis.h), for tests and
 * benchmarks that feed synthetic events and read chains. an_detect(m) finds
 * the detector of a model made here. */
#ifndef IG_TEST_ANALYSIS_H
#define IG_TEST_ANALYSIS_H

#include "detect/detect.h"
#include "model/model.h"

/* cfg/dcfg NULL = defaults. NULL when out of memory. */
struct ig_model *an_model_new(const struct ig_model_cfg *cfg);
struct ig_model *an_model_new_det(const struct ig_model_cfg *cfg, const struct ig_detect_cfg *dcfg);
void an_model_free(struct ig_model *m);
/* model_reset and detect_reset together (what the r key does). */
void an_model_reset(struct ig_model *m);
struct ig_detect *an_detect(const struct ig_model *m);
/* The first active chain of class cls (in the detector's order), or NULL. */
const struct ig_chain *an_active_chain(const struct ig_model *m, int cls);

#endif
