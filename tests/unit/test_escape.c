/* The escaping rule of text outputs (core/escape.h): the table of cases,
 * cut outputs, a round trip of random bytes (the escape is lossless and
 * its output holds no control byte and only valid UTF-8), and the text
 * writers fed hostile process names: the batch frame and --events lines
 * keep their shape and their numbers, with no control byte in them. */
#include "analysis.h"
#include "check.h"
#include "core/escape.h"
#include "core/ops.h"
#include "core/status.h"
#include "model/model.h"
#include "report/evfmt.h"
#include "report/report.h"
#include "synth.h"

#include <stdlib.h>
#include <string.h>

static void test_table(void)
{
	static const struct {
		const char *in;
		unsigned flags;
		const char *out;
	} t[] = {
	    {"plain", 0, "plain"},
	    {"", 0, ""},
	    {"\x1b]0;pwned\x07", 0, "\\x1b]0;pwned\\x07"},
	    {"a\nb\rc\td", 0, "a\\nb\\rc\\td"},
	    {"back\\slash", 0, "back\\\\slash"},
	    {"\x01\x1f\x7f", 0, "\\x01\\x1f\\x7f"},
	    {"a b", 0, "a b"},
	    {"a b", ESC_FIELD, "a_b"},
	    {"Web Content\n", ESC_FIELD, "Web_Content\\n"},
	    {"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82", 0,
	     "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82"},
	    {"nb\xc2\xa0sp", 0, "nb\xc2\xa0sp"}, /* U+00A0 is printable */
	    {"\xc2\x9b"
	     "31m",
	     0, "\\xc2\\x9b31m"},			     /* C1 CSI */
	    {"\xc2\x85", 0, "\\xc2\\x85"},		     /* C1 NEL */
	    {"bad\xff\xfe", 0, "bad\\xff\\xfe"},	     /* never valid */
	    {"\xc0\xaf", 0, "\\xc0\\xaf"},		     /* overlong '/' */
	    {"\xed\xa0\x80", 0, "\\xed\\xa0\\x80"},	     /* surrogate */
	    {"\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"}, /* > U+10FFFF */
	    {"cut\xe2\x82", 0, "cut\\xe2\\x82"},	     /* sequence cut short */
	    {"\x80x", 0, "\\x80x"},			     /* stray continuation */
	};
	char b[128];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = esc_text(b, sizeof(b), t[i].in, t[i].flags);
		CHECKF(!strcmp(b, t[i].out) && n == strlen(t[i].out), "case %zu: '%s'", i, b);
	}
	CHECK(esc_text(b, sizeof(b), NULL, 0) == 0 && !b[0]);
	CHECK(!strcmp(esc_str(b, sizeof(b), "x\ty", ESC_FIELD), "x\\ty"));
}

/* A cut output ends on a whole unit and says how much it needed. */
static void test_cut(void)
{
	char b[16];
	memset(b, 'Z', sizeof(b));
	CHECK(esc_text(b, 5,
		       "\x1b"
		       "ab",
		       0) == 6 &&
	      !strcmp(b, "\\x1b"));
	CHECK(esc_text(b, 4,
		       "\x1b"
		       "ab",
		       0) == 6 &&
	      !strcmp(b, ""));
	CHECK(esc_text(b, 3, "\xc3\xa9\xc3\xa9", 0) == 4 && !strcmp(b, "\xc3\xa9"));
	CHECK(esc_text(b, 0, "xyz", 0) == 3);
	CHECK(esc_text(b, 1, "xyz", 0) == 3 && !b[0]);

	/* esc_fputs has no length limit */
	char *big = malloc(5001), *want = malloc(20001), *got = NULL;
	size_t len = 0;
	for (int i = 0; i < 5000; i++)
		big[i] = i % 3 ? 'a' : '\x1b';
	big[5000] = 0;
	size_t n = esc_text(want, 20001, big, 0);
	FILE *f = open_memstream(&got, &len);
	esc_fputs(f, big, 0);
	fclose(f);
	CHECK(n == len && !strcmp(got, want));
	free(big);
	free(want);
	free(got);
}

/* Undoes esc_text without ESC_FIELD; returns the length or -1 on a bad escape. */
static int unescape(const char *s, char *out)
{
	int n = 0;
	while (*s) {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;
		if (*s == '\\' || *s == 'n' || *s == 'r' || *s == 't') {
			out[n++] = *s == '\\' ? '\\' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : '\t';
			s++;
		} else if (*s == 'x' && s[1] && s[2]) {
			char h[3] = {s[1], s[2], 0};
			out[n++] = (char)strtol(h, NULL, 16);
			s += 3;
		} else {
			return -1;
		}
	}
	out[n] = 0;
	return n;
}

/* Output bytes: no C0 control, no DEL, no C1, and valid UTF-8 throughout. */
static int clean(const char *s, int allow_newline)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if ((*p < 0x20 && !(allow_newline && *p == '\n')) || *p == 0x7f)
			return 0;
		int l = esc_utf8_len(p);
		if (!l || (p[0] == 0xc2 && p[1] < 0xa0))
			return 0;
		p += l;
	}
	return 1;
}

static void test_roundtrip(void)
{
	unsigned seed = 12345;
	int bad = 0;
	char in[40], out[40 * 4 + 1], back[41];
	for (int k = 0; k < 200000; k++) {
		int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 39;
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned v = (seed >> 16) & 0xff;
			in[i] = (char)(v ? v : 'x');
		}
		in[n] = 0;
		esc_text(out, sizeof(out), in, 0);
		if (!clean(out, 0) || unescape(out, back) != n || memcmp(back, in, (size_t)n))
			bad++;
		esc_text(out, sizeof(out), in, ESC_FIELD);
		if (!clean(out, 0) || strchr(out, ' '))
			bad++;
	}
	CHECKF(bad == 0, "%d of 200000 random strings not escaped cleanly", bad);
}

static void test_utf8_valid(void)
{
	char b[64];
	CHECK(esc_utf8_valid(b, sizeof(b),
			     "a\xff"
			     "b") == 5 &&
	      !strcmp(b, "a\xef\xbf\xbd"
			 "b"));
	CHECK(esc_utf8_valid(b, sizeof(b), "\x1b\xc3\xa9") == 3 && !strcmp(b, "\x1b\xc3\xa9"));
	CHECK(esc_utf8_valid(b, 3, "\xff") == 3 && !b[0]);
}

/* --- the writers, fed hostile names -------------------------------------------------- */

static const char *const hostile[] = {
    "\x1b]0;pwned\x07", "a\nb\rc\td", "\n1 call op=x", "e\x1b[2J\xff", "sp ace\\x1b",
};

static void make_hostile(char *comm, int on)
{
	if (!on || !comm[0])
		return;
	unsigned h = 0;
	for (const char *p = comm; *p; p++)
		h = h * 31 + (unsigned char)*p;
	snprintf(comm, IG_COMM_LEN, "%s", hostile[h % 5]);
}

static char *frame(int hostile_names, int details)
{
	struct synth_cfg c = {.scenario = SYNTH_CPU_CONTENTION, .seconds = 15};
	struct synth *s = synth_new(&c);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e)) {
		make_hostile(e.comm, hostile_names);
		make_hostile(e.other_comm, hostile_names);
		model_ingest(m, &e);
	}
	synth_free(s);
	struct ig_status st = {.mode = IG_MODE_LIVE};
	if (hostile_names) {
		strcpy(st.message, "saved \x1b[31mred\x1b[0m");
		strcpy(st.recording, "/tmp/\x1b]0;x\x07.db");
		strcpy(st.record_error, "bad\rname");
	} else {
		strcpy(st.message, "saved 1234567890123456789");
		strcpy(st.recording, "/tmp/x.db");
		strcpy(st.record_error, "bad name");
	}
	struct report_opts o = {.summary = 1, .details = details, .resolved = 1};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(report_text(f, m, an_detect(m), &st, &o) == 0);
	fclose(f);
	an_model_free(m);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Column k (0-based, whitespace-separated) of every line starting with key. */
static void column_sum(const char *t, const char *key, int k, double *sum, int *rows)
{
	*sum = 0;
	*rows = 0;
	for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, strlen(key)))
			continue;
		char line[1024];
		size_t n = strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		char *save = NULL, *w = strtok_r(line, " ", &save);
		for (int i = 0; w && i < k; i++)
			w = strtok_r(NULL, " ", &save);
		if (w) {
			*sum += atof(w);
			(*rows)++;
		}
	}
}

/* The number of whitespace-separated fields of each line starting with key,
 * as "20,19,...". */
static void shape(const char *t, const char *key, char *out, size_t n)
{
	size_t o = 0;
	out[0] = 0;
	for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, strlen(key)))
			continue;
		int fields = 0, in = 0;
		for (const char *p = l; *p && *p != '\n'; p++) {
			fields += !in && *p != ' ';
			in = *p != ' ';
		}
		o += (size_t)snprintf(out + o, o < n ? n - o : 0, "%d,", fields);
	}
}

static void test_report_text(void)
{
	for (int details = 0; details < 2; details++) {
		char *good = frame(0, details), *bad = frame(1, details);
		CHECKF(clean(bad, 1), "control bytes in the frame:\n%s", bad);
		CHECK(strstr(bad, " \\n1_call_op=x ") && strstr(bad, " top a\\nb\\rc\\td[2231] "));
		CHECK(strstr(bad, "message saved \\x1b[31mred\\x1b[0m\n"));
		CHECK(strstr(bad, "error: bad\\rname\n"));
		CHECKF(count_lines(good) == count_lines(bad), "%d lines vs %d", count_lines(good),
		       count_lines(bad));
		/* the same processes and calls: pid column and calls/s */
		double a, b;
		int ra, rb;
		column_sum(good, "pid ", 1, &a, &ra);
		column_sum(bad, "pid ", 1, &b, &rb);
		CHECK(ra > 0 && ra == rb && a == b);
		column_sum(good, "pid ", 4, &a, &ra);
		column_sum(bad, "pid ", 4, &b, &rb);
		CHECK(ra == rb && a == b);
		column_sum(good, "cuda", 1, &a, &ra);
		column_sum(bad, "cuda", 1, &b, &rb);
		CHECK(ra > 0 && ra == rb && a == b);
		/* the process rows keep their fields, row by row */
		char sg[256], sb[256];
		shape(good, "pid ", sg, sizeof(sg));
		shape(bad, "pid ", sb, sizeof(sb));
		CHECKF(sg[0] && !strcmp(sg, sb), "fields per row: %s vs %s", sg, sb);
		free(good);
		free(bad);
	}
}

/* key=value tokens after "<ts> <kind>"; -1 when a token has no '='. */
static int kv_tokens(const char *line, char keys[][24], int max)
{
	char b[1024];
	snprintf(b, sizeof(b), "%s", line);
	char *save = NULL, *w = strtok_r(b, " ", &save);
	int n = 0;
	w = w ? strtok_r(NULL, " ", &save) : NULL;
	for (w = w ? strtok_r(NULL, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		if (!eq || n == max)
			return -1;
		snprintf(keys[n++], 24, "%.*s", (int)(eq - w), w);
	}
	return n;
}

static void test_evfmt(void)
{
	struct ig_event e = {.kind = IG_EV_CALL,
			     .ts_ns = 1767225600000000000ull,
			     .dur_ns = 1000,
			     .pid = 9,
			     .tid = 10,
			     .op = IG_OP_CUDA_MALLOC,
			     .other_pid = 7};
	char line[1024], good[32][24], bad[32][24];
	for (int kind = IG_EV_CALL; kind < IG_EV_KIND_MAX; kind++) {
		e.kind = (uint16_t)kind;
		strcpy(e.comm, "python3");
		strcpy(e.other_comm, "stress-ng");
		int ng = kv_tokens(evfmt_line(line, sizeof(line), &e), good, 32);
		for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++) {
			snprintf(e.comm, IG_COMM_LEN, "%s", hostile[h]);
			snprintf(e.other_comm, IG_COMM_LEN, "%s", hostile[(h + 1) % 5]);
			evfmt_line(line, sizeof(line), &e);
			CHECKF(clean(line, 0), "kind %d: %s", kind, line);
			int nb = kv_tokens(line, bad, 32);
			CHECKF(nb == ng, "kind %d: %d fields vs %d: %s", kind, nb, ng, line);
			for (int i = 0; i < ng && nb == ng; i++)
				CHECK(!strcmp(good[i], bad[i]));
		}
	}
	/* a name that is not NUL-terminated within the field stays in it */
	e.kind = IG_EV_COMM;
	memset(e.comm, 'A', sizeof(e.comm));
	evfmt_line(line, sizeof(line), &e);
	CHECK(strstr(line, " comm=AAAAAAAAAAAAAAAA ppid="));

	/* JSON: one line, names as valid UTF-8 */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	e.kind = IG_EV_CALL;
	strcpy(e.comm, "\n1 call\xff");
	CHECK(evfmt_json(f, &e) == 0);
	fclose(f);
	CHECK(count_lines(buf) == 1 && buf[len - 1] == '\n');
	CHECKF(strstr(buf, "\"comm\":\"\\n1 call\xef\xbf\xbd\""), "%s", buf);
	free(buf);
}

int main(void)
{
	test_table();
	test_cut();
	test_roundtrip();
	test_utf8_valid();
	test_report_text();
	test_evfmt();
	return check_done("test_escape");
}
