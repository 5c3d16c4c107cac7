/* JSON helpers over jansson: untrusted strings, numbers, one-line output
 * with terminal-safe escapes, members with defaults. See json.h. */
#include "core/json.h"

#include "core/escape.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6))

json_t *ig_json_strn(const char *s, size_t n)
{
	if (!s)
		return json_string("");
	json_t *j = json_stringn(s, n); /* NULL when not valid UTF-8 */
	if (j)
		return j;
	char *buf = malloc(n * 3 + 1); /* each invalid byte becomes 3 bytes */
	if (!buf)
		return NULL;
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		int len = esc_utf8_len_n(p + i, n - i);
		if (!len) {
			memcpy(buf + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
			i++;
			continue;
		}
		memcpy(buf + o, p + i, (size_t)len);
		o += (size_t)len;
		i += (size_t)len;
	}
	j = json_stringn_nocheck(buf, o);
	free(buf);
	return j;
}

json_t *ig_json_str(const char *s)
{
	return ig_json_strn(s ? s : "", s ? strlen(s) : 0);
}

json_t *ig_json_num(double v)
{
	if (isnan(v) || isinf(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *ig_json_u64(uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	return json_real((double)v);
}

int ig_json_set(json_t *o, const char *key, json_t *v)
{
	if (!o || !v) {
		json_decref(v);
		return 1;
	}
	return json_object_set_new(o, key, v) ? 1 : 0;
}

int ig_json_push(json_t *a, json_t *v)
{
	if (!a || !v) {
		json_decref(v);
		return 1;
	}
	return json_array_append_new(a, v) ? 1 : 0;
}

/* The escape for the sequence at s that jansson leaves raw but a terminal
 * or a JavaScript parser would act on: DEL, C1 controls (U+0080..U+009F),
 * U+2028 and U+2029. Such bytes only occur inside strings of jansson's
 * output (everything outside strings is ASCII), so replacing them there
 * keeps the text valid and equal by value. Returns the bytes it covers, 0
 * when none; *esc gets the 6-character escape. */
static int extra_escape(const unsigned char *s, char esc[7])
{
	unsigned cp = 0;
	int len = 0;
	if (s[0] == 0x7f) {
		cp = 0x7f;
		len = 1;
	} else if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
		cp = s[1];
		len = 2;
	} else if (s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
		cp = 0x2000 + (unsigned)(s[2] - 0x80);
		len = 3;
	}
	if (len)
		snprintf(esc, 7, "\\u%04X", cp);
	return len;
}

/* Copies raw into out (NULL: only counts), with the extra escapes. */
static size_t escape_into(const char *raw, char *out)
{
	const unsigned char *s = (const unsigned char *)raw;
	size_t o = 0;
	char esc[7];
	while (*s) {
		int len = extra_escape(s, esc);
		if (len) {
			if (out)
				memcpy(out + o, esc, 6);
			o += 6;
			s += len;
		} else {
			if (out)
				out[o] = (char)*s;
			o++;
			s++;
		}
	}
	if (out)
		out[o] = 0;
	return o;
}

static char *dumps_flags(const json_t *v, size_t flags)
{
	char *raw = v ? json_dumps(v, flags) : NULL;
	if (!raw)
		return NULL;
	size_t need = escape_into(raw, NULL);
	if (need == strlen(raw))
		return raw;
	char *out = malloc(need + 1);
	if (out)
		escape_into(raw, out);
	free(raw);
	return out;
}

char *ig_json_dumps(const json_t *v)
{
	return dumps_flags(v, DUMP_FLAGS);
}

char *ig_json_dumps_exact(const json_t *v)
{
	return dumps_flags(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

int ig_json_write_line(FILE *f, const json_t *v)
{
	char *s = ig_json_dumps(v);
	if (!s)
		return -EIO;
	int bad = fputs(s, f) == EOF || fputc('\n', f) == EOF;
	free(s);
	return bad || ferror(f) ? -EIO : 0;
}

json_t *ig_json_parse(const char *text)
{
	if (!text)
		return NULL;
	return json_loads(text, JSON_DECODE_ANY, NULL);
}

int64_t ig_json_get_int(const json_t *o, const char *key, int64_t dflt)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == floor(d) && fabs(d) < 9.2e18)
			return (int64_t)d;
	}
	return dflt;
}

double ig_json_get_num(const json_t *o, const char *key, double dflt)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *ig_json_get_str(const json_t *o, const char *key, const char *dflt)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : dflt;
}
