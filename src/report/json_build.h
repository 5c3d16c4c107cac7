/* Shorthands the report layer's JSON builders share (jansson through
 * core/json.h): each member setter returns 0, or 1 when it failed, ORed into
 * a `bad` flag; built() then returns the object or NULL (freed). */
#ifndef IG_REPORT_JSON_BUILD_H
#define IG_REPORT_JSON_BUILD_H

#include <string.h>

#include "core/event.h"
#include "core/json.h"

#define JU(o, k, v) ig_json_set(o, k, ig_json_u64(v))
#define JI(o, k, v) ig_json_set(o, k, json_integer(v))
#define JD(o, k, v) ig_json_set(o, k, ig_json_num(v))
#define JS(o, k, v) ig_json_set(o, k, ig_json_str(v))
/* a comm field: at most IG_COMM_LEN bytes, NUL-terminated or not */
#define JC(o, k, v) ig_json_set(o, k, ig_json_strn(v, strnlen(v, IG_COMM_LEN)))

/* o, or NULL (o freed) when building it failed. */
static inline json_t *built(json_t *o, int bad)
{
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

#endif
