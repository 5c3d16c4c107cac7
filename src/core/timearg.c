/* Relative and absolute times for --since/--until (timearg.h). */
#include "core/timearg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int timearg_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *u;
		double mul;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
	double total = 0;
	int parts = 0;
	if (!s || !*s)
		return -EINVAL;
	while (*s) {
		char *end;
		if (!isdigit((unsigned char)*s) && *s != '.')
			return -EINVAL;
		double v = strtod(s, &end);
		if (end == s || !isfinite(v) || v < 0)
			return -EINVAL;
		s = end;
		size_t ul = strspn(s, "abcdefghijklmnopqrstuvwxyz");
		double mul = 0;
		if (!ul) {
			if (*s || parts)
				return -EINVAL; /* a bare number only alone */
			mul = 1e9;
		}
		for (size_t u = 0; ul && u < sizeof(units) / sizeof(units[0]); u++)
			if (strlen(units[u].u) == ul && !strncmp(units[u].u, s, ul))
				mul = units[u].mul;
		if (!mul)
			return -EINVAL;
		total += v * mul;
		s += ul;
		parts++;
	}
	if (total > 1e19)
		return -EINVAL;
	*ns = (uint64_t)(total + 0.5);
	return 0;
}

/* ISO 8601: date, 'T' or ' ', hh:mm[:ss[.fff]], optional Z or +hh[:mm]. */
static int parse_iso(const char *s, uint64_t *out)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, n = 0;
	double sec = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -EINVAL;
	s += n;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return -EINVAL;
	s++;
	if (sscanf(s, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5)
		return -EINVAL;
	s += n;
	if (*s == ':') {
		char *end;
		sec = strtod(s + 1, &end);
		if (end == s + 1 || !isfinite(sec) || sec < 0 || sec >= 61)
			return -EINVAL;
		s = end;
	}
	long off = 0;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int oh = 0, om = 0, sign = *s == '-' ? -1 : 1;
		if (sscanf(s + 1, "%2d%n", &oh, &n) != 1 || n != 2)
			return -EINVAL;
		s += 3;
		if (*s == ':')
			s++;
		if (isdigit((unsigned char)*s)) {
			if (sscanf(s, "%2d%n", &om, &n) != 1 || n != 2)
				return -EINVAL;
			s += 2;
		}
		off = sign * (oh * 3600L + om * 60L);
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || y < 1970)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	time_t t = timegm(&tm);
	if (t == (time_t)-1 || (double)t - (double)off < 0)
		return -EINVAL;
	*out = (uint64_t)(t - off) * 1000000000ull + (uint64_t)(sec * 1e9 + 0.5);
	return 0;
}

/* "14:02", "14:02:30.5": that time (UTC) on the day of start_ns, or on the
 * next day when it falls before start_ns (data that crosses midnight). */
static int parse_clock(const char *s, uint64_t start_ns, uint64_t *out)
{
	char buf[64];
	time_t t = (time_t)(start_ns / 1000000000ull);
	struct tm tm;
	if (!isdigit((unsigned char)s[0]) || strlen(s) > 40 || !gmtime_r(&t, &tm))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%sZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, s);
	if (strchr(s, 'Z') || strchr(s, '+') || parse_iso(buf, out))
		return -EINVAL;
	if (*out < start_ns - start_ns % 1000000000ull)
		*out += 86400ull * 1000000000ull;
	return 0;
}

/* "10m ago", "1h30m ago": that long before now (the wall clock, not the
 * data: the form of below's and journalctl's --since). */
static int parse_ago(const char *s, uint64_t *out)
{
	char d[48];
	size_t n = strlen(s);
	uint64_t ns;
	struct timespec now;
	if (n < 5 || n >= sizeof(d) + 4 || strcmp(s + n - 4, " ago"))
		return -EINVAL;
	snprintf(d, sizeof(d), "%.*s", (int)(n - 4), s);
	if (timearg_duration(d, &ns) || clock_gettime(CLOCK_REALTIME, &now))
		return -EINVAL;
	uint64_t t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	*out = t > ns ? t - ns : 0;
	return 0;
}

int timearg_parse(const char *s, uint64_t start_ns, uint64_t end_ns, uint64_t *out, char *err,
		  size_t errlen)
{
	uint64_t d;
	if (!s)
		s = "";
	if ((*s == '+' || *s == '-') && !timearg_duration(s + 1, &d)) {
		if (*s == '+')
			*out = start_ns + d;
		else
			*out = end_ns > d ? end_ns - d : 0;
		return 0;
	}
	if (!parse_ago(s, out))
		return 0;
	if (strlen(s) >= 16 && !s[strspn(s, "0123456789")] && strlen(s) <= 20) {
		unsigned long long v = strtoull(s, NULL, 10);
		*out = v;
		return 0;
	}
	if (!parse_iso(s, out) || (start_ns && strlen(s) <= 12 && !parse_clock(s, start_ns, out)))
		return 0;
	if (err && errlen)
		snprintf(err, errlen,
			 "'%.60s' is not a time: give +DURATION from the start (+30s), -DURATION "
			 "before the end (-5m), DURATION ago (10m ago), a time of day (14:02, UTC), an ISO 8601 time "
			 "(2026-03-20T14:02:00Z) or Unix ns",
			 s);
	return -EINVAL;
}

/* A time of day ("14:02", "14:02:05.5"): only digits, colons and a dot. */
static int is_clock(const char *s)
{
	if (!strchr(s, ':'))
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && *s != ':' && *s != '.')
			return 0;
	return 1;
}

int timearg_parse_local(const char *s, uint64_t start_ns, uint64_t end_ns, uint64_t *out, char *err,
			size_t errlen)
{
	while (s && *s == ' ')
		s++;
	/* the clock read in UTC on a day shifted by the zone's offset at the
	 * start, and shifted back: that time of day on the local clock */
	int64_t off = 0;
	struct tm tm;
	time_t t0 = (time_t)(start_ns / 1000000000ull);
	if (s && is_clock(s) && localtime_r(&t0, &tm))
		off = (int64_t)tm.tm_gmtoff * 1000000000ll;
	uint64_t x;
	if (timearg_parse(s, start_ns + (uint64_t)off, end_ns + (uint64_t)off, &x, NULL, 0)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "'%.40s' is not a time: 14:02 or 14:02:05 (local time), +30s "
				 "from the start, -5m before the end, ISO 8601 or Unix ns",
				 s ? s : "");
		return -EINVAL;
	}
	*out = x - (uint64_t)off;
	return 0;
}

char *timearg_iso(char *b, size_t n, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char s[32];
	if (!ns || !gmtime_r(&t, &tm)) {
		snprintf(b, n, "-");
		return b;
	}
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(b, n, "%s.%03uZ", s, (unsigned)(ns / 1000000 % 1000));
	return b;
}
