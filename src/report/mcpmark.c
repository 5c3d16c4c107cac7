/* Marking untrusted text in MCP answers (mcpmark.h). */
#include "report/mcpmark.h"

#include <stdlib.h>
#include <string.h>

#include "core/escape.h"

/* Code point of the valid UTF-8 sequence of length n at s. */
static unsigned cp_of(const unsigned char *s, int n)
{
	if (n == 1)
		return s[0];
	if (n == 2)
		return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	if (n == 3)
		return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
}

static int is_control(unsigned c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029 ||
	       c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

size_t mcp_strip(char *dst, size_t cap, const char *src)
{
	static const char fffd[] = "\xef\xbf\xbd";
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t o = 0, end = 0; /* end: where the NUL goes */
	int cut = !cap;
	while (*s) {
		int n = esc_utf8_len(s);
		const char *put = (const char *)s;
		size_t len = (size_t)(n ? n : 1);
		if (!n) {
			put = fffd;
			len = 3;
		} else {
			unsigned c = cp_of(s, n);
			if (is_control(c)) {
				put = " ";
				len = 1;
			} else if (c == 0x27e6 || c == 0x27e7) {
				put = fffd;
				len = 3;
			}
		}
		if (!cut && o + len < cap) {
			memcpy(dst + o, put, len);
			end = o + len;
		} else {
			cut = 1; /* never half a sequence */
		}
		o += len;
		s += n ? n : 1;
	}
	if (cap)
		dst[end] = 0;
	return o;
}

static char *stripped(const char *s)
{
	size_t need = mcp_strip(NULL, 0, s) + 1;
	char *b = malloc(need);
	if (b)
		mcp_strip(b, need, s);
	return b;
}

json_t *mcp_untrusted(const char *s)
{
	char *b = stripped(s);
	json_t *o = b ? json_object() : NULL;
	if (o && ig_json_set(o, "untrusted_text", json_string(b))) {
		json_decref(o);
		o = NULL;
	}
	free(b);
	return o;
}

static json_t *bracketed(const char *s)
{
	char *b = stripped(s);
	size_t n = b ? strlen(b) : 0;
	char *w = b ? malloc(n + 7) : NULL;
	json_t *j = NULL;
	if (w) {
		memcpy(w, "\xe2\x9f\xa6", 3);
		memcpy(w + 3, b, n);
		memcpy(w + 3 + n, "\xe2\x9f\xa7", 4); /* with the NUL */
		j = json_string(w);
	}
	free(b);
	free(w);
	return j;
}

/* Members whose string values ingero-top spells itself. */
static const char *const trusted[] = {
    "type",	    "op",     "class",	  "title",    "severity",    "max_severity",
    "min_severity", "id",     "chain",	  "mode",     "time",	     "start",
    "end",	    "state",  "kind",	  "stack_id", "stack_state", "order",
    "scope",	    "status", "name",	  "source",   "truncated",   "stream",
    "version",	    "note",   "protocol", "ip",	      "format",	     NULL,
};
/* Members under which everything is ingero-top's own. */
static const char *const trusted_trees[] = {
    "evidence", "evidence_text", "parts", "range", "filter", NULL,
};

static int in(const char *const *l, const char *k)
{
	for (; k && *l; l++)
		if (!strcmp(*l, k))
			return 1;
	return 0;
}

static json_t *mark_value(json_t *v, const char *key, int how);

static void mark_object(json_t *o, int how)
{
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(o, tmp, k, v)
	{
		if (in(trusted_trees, k) || (json_is_string(v) && in(trusted, k)))
			continue;
		json_t *m = mark_value(v, k, how);
		if (m != v)
			json_object_set_new(o, k, m ? m : json_null());
	}
}

/* v marked (a new value for a string, v itself otherwise). */
static json_t *mark_value(json_t *v, const char *key, int how)
{
	if (json_is_string(v))
		return how == MARK_BRACKETS ? bracketed(json_string_value(v))
					    : mcp_untrusted(json_string_value(v));
	if (json_is_object(v)) {
		mark_object(v, how);
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);
			if (json_is_string(e) && in(trusted, key))
				continue;
			json_t *m = mark_value(e, key, how);
			if (m != e)
				json_array_set_new(v, i, m ? m : json_null());
		}
	}
	return v;
}

json_t *mcp_mark(json_t *v, int how)
{
	if (v)
		mark_value(v, NULL, how);
	return v;
}
