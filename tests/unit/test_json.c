/* core/json: strings from untrusted bytes (valid UTF-8 kept, invalid bytes
 * replaced, controls escaped, DEL/C1/U+2028 escaped for terminals), numbers
 * as the outputs spell them, one line per object, members with defaults,
 * and everything parses back to the same values. */
#include "check.h"
#include "core/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The written form of a string made from in (n bytes, or strlen). */
static char *spelt(const char *in, size_t n)
{
	json_t *s = n ? ig_json_strn(in, n) : ig_json_str(in);
	char *t = ig_json_dumps(s);
	json_decref(s);
	return t;
}

static void test_strings(void)
{
	static const struct {
		const char *in, *out, *value; /* value NULL: same as in */
	} t[] = {
	    {"plain", "\"plain\"", NULL},
	    {"a\"b\\c", "\"a\\\"b\\\\c\"", NULL},
	    {"l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"", NULL},
	    {"\x01\x1b]0;pwned\x07", "\"\\u0001\\u001B]0;pwned\\u0007\"", NULL},
	    {"\x7f", "\"\\u007F\"", NULL},
	    {"csi\xc2\x9b", "\"csi\\u009B\"", NULL},
	    {"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82",
	     "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82\"", NULL},
	    {"bad\xff", "\"bad\xef\xbf\xbd\"", "bad\xef\xbf\xbd"},
	    {"\xc0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong */
	    {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
	     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate */
	    {"cut\xe2\x82", "\"cut\xef\xbf\xbd\xef\xbf\xbd\"", "cut\xef\xbf\xbd\xef\xbf\xbd"},
	    {"\xe2\x80\xa8|\xe2\x80\xa9", "\"\\u2028|\\u2029\"", NULL},
	    {"", "\"\"", NULL},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *o = spelt(t[i].in, 0);
		CHECKF(o && !strcmp(o, t[i].out), "case %zu: %s", i, o ? o : "(null)");
		/* parses back to the text, with U+FFFD for invalid bytes */
		json_t *v = ig_json_parse(o);
		const char *want = t[i].value ? t[i].value : t[i].in;
		CHECKF(json_is_string(v) && !strcmp(json_string_value(v), want), "case %zu back",
		       i);
		json_decref(v);
		free(o);
	}
	char *o = spelt(NULL, 0);
	CHECK(o && !strcmp(o, "\"\""));
	free(o);
	o = spelt("a\0b\xff", 4);
	CHECK(o && !strcmp(o, "\"a\\u0000b\xef\xbf\xbd\""));
	free(o);
	/* a long hostile text: every byte value */
	char all[256 * 4];
	for (int i = 0; i < (int)sizeof(all) - 1; i++)
		all[i] = (char)(i % 255 + 1);
	all[sizeof(all) - 1] = 0;
	o = spelt(all, 0);
	int raw_ctl = 0;
	for (const unsigned char *p = (const unsigned char *)o; p && *p; p++)
		raw_ctl += *p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0);
	CHECK(o && raw_ctl == 0);
	json_t *v = ig_json_parse(o);
	CHECK(json_is_string(v));
	json_decref(v);
	free(o);
}

static void test_numbers(void)
{
	static const struct {
		double v;
		const char *out;
	} t[] = {
	    {0, "0"},	    {3.0, "3"},	    {-2.0, "-2"},
	    {0.5, "0.5"},   {39.8, "39.8"}, {352.4977, "352.498"},
	    {1e20, "1e20"}, {NAN, "null"},  {INFINITY, "null"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = ig_json_num(t[i].v);
		char *o = ig_json_dumps(j);
		CHECKF(o && !strcmp(o, t[i].out), "%g: %s", t[i].v, o ? o : "(null)");
		free(o);
		json_decref(j);
	}
	json_t *j = ig_json_u64(1774015605291250636ull);
	char *o = ig_json_dumps(j);
	CHECK(o && !strcmp(o, "1774015605291250636"));
	free(o);
	json_decref(j);
	j = ig_json_u64(UINT64_MAX);
	CHECK(json_is_real(j) && json_real_value(j) > 1.8e19);
	json_decref(j);
}

static void test_objects(void)
{
	json_t *o = json_object();
	int bad = 0;
	bad |= ig_json_set(o, "n", json_integer(7));
	bad |= ig_json_set(o, "s", ig_json_str("x\ny"));
	bad |= ig_json_set(o, "r", ig_json_num(1.25));
	CHECK(bad == 0);
	CHECK(ig_json_set(o, "missing", NULL) == 1 && ig_json_set(NULL, "k", json_true()) == 1);
	CHECK(ig_json_push(NULL, json_true()) == 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(ig_json_write_line(f, o) == 0);
	fclose(f);
	CHECKF(buf && !strcmp(buf, "{\"n\":7,\"s\":\"x\\ny\",\"r\":1.25}\n"), "%s", buf);
	free(buf);
	json_t *p = ig_json_parse("{\"n\":7,\"r\":1.25,\"f\":2.0,\"s\":\"t\",\"z\":null}");
	CHECK(ig_json_get_int(p, "n", -1) == 7 && ig_json_get_int(p, "f", -1) == 2 &&
	      ig_json_get_int(p, "r", -1) == -1 && ig_json_get_int(p, "s", -1) == -1 &&
	      ig_json_get_int(p, "none", -1) == -1);
	CHECK(ig_json_get_num(p, "r", 0) == 1.25 && ig_json_get_num(p, "n", 0) == 7 &&
	      ig_json_get_num(p, "z", 9) == 9);
	CHECK(!strcmp(ig_json_get_str(p, "s", "d"), "t") &&
	      !strcmp(ig_json_get_str(p, "n", "d"), "d"));
	CHECK(ig_json_get_int(NULL, "n", 5) == 5 && !strcmp(ig_json_get_str(o, "s", ""), "x\ny"));
	CHECK(ig_json_parse("[1,") == NULL && ig_json_parse(NULL) == NULL);
	json_decref(p);
	json_decref(o);
}

int main(void)
{
	test_strings();
	test_numbers();
	test_objects();
	return check_done("test_json");
}
