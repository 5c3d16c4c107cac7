/* One spelling of numbers for every output (core/fmt.h). */
#include "core/fmt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

char *fmt_ns(char *b, size_t n, uint64_t ns)
{
	double v = (double)ns;
	if (ns < 1000)
		snprintf(b, n, "%luns", (unsigned long)ns);
	else if (v < 999.5e3)
		snprintf(b, n, v < 9.995e3 ? "%.2fus" : v < 99.95e3 ? "%.1fus" : "%.0fus", v / 1e3);
	else if (v < 999.5e6)
		snprintf(b, n, v < 9.995e6 ? "%.2fms" : v < 99.95e6 ? "%.1fms" : "%.0fms", v / 1e6);
	else if (v < 59.95e9)
		snprintf(b, n, v < 9.995e9 ? "%.2fs" : "%.1fs", v / 1e9);
	else {
		uint64_t s = (ns + 500000000ull) / 1000000000ull;
		snprintf(b, n, "%lum%02lus", (unsigned long)(s / 60), (unsigned long)(s % 60));
	}
	return b;
}

char *fmt_bytes(char *b, size_t n, uint64_t bytes)
{
	double v = (double)bytes;
	if (bytes < 1024)
		snprintf(b, n, "%luB", (unsigned long)bytes);
	else if (v < 1048576.0 * 0.9995)
		snprintf(b, n, "%.1fKiB", v / 1024);
	else if (v < 1073741824.0 * 0.9995)
		snprintf(b, n, "%.1fMiB", v / 1048576);
	else if (v < 1099511627776.0 * 0.9995)
		snprintf(b, n, "%.1fGiB", v / 1073741824.0);
	else
		snprintf(b, n, "%.1fTiB", v / 1099511627776.0);
	return b;
}

char *fmt_count(char *buf, size_t n, uint64_t v, int width)
{
	static const char suf[] = "kMGTPE";
	if (width < 4)
		width = 4;
	snprintf(buf, n, "%llu", (unsigned long long)v);
	if ((int)strlen(buf) <= width)
		return buf;
	double d = (double)v;
	int i = -1;
	while (d >= 1000.0 && i < 5)
		d /= 1000.0, i++;
	if (d < 9.995 && width >= 5)
		snprintf(buf, n, "%.2f%c", d, suf[i]);
	else if (d < 99.95)
		snprintf(buf, n, "%.1f%c", d, suf[i]);
	else
		snprintf(buf, n, "%.0f%c", d, suf[i]);
	if ((int)strlen(buf) > width) /* 999.5k rounds to 1000k: take the next unit */
		snprintf(buf, n, "%.0f%c", d, suf[i]);
	return buf;
}

char *fmt_rate(char *buf, size_t n, double r)
{
	if (r <= 0)
		snprintf(buf, n, "0");
	else if (r < 9.995)
		snprintf(buf, n, "%.2f", r);
	else if (r < 99.95)
		snprintf(buf, n, "%.1f", r);
	else if (r < 99999.5)
		snprintf(buf, n, "%.0f", r);
	else
		fmt_count(buf, n, (uint64_t)(r + 0.5), 5);
	return buf;
}

char *fmt_pct(char *buf, size_t n, double f)
{
	double p = f * 100.0;
	if (f < 0)
		snprintf(buf, n, "-");
	else if (p == 0)
		snprintf(buf, n, "0%%");
	else if (p < 0.1)
		snprintf(buf, n, "<0.1%%");
	else if (p < 9.95)
		snprintf(buf, n, "%.1f%%", p);
	else
		snprintf(buf, n, "%.0f%%", p);
	return buf;
}

char *fmt_ratio(char *buf, size_t n, double r)
{
	if (r <= 0)
		snprintf(buf, n, "-");
	else if (r < 9.95)
		snprintf(buf, n, "%.1fx", r);
	else if (r < 99999)
		snprintf(buf, n, "%.0fx", r);
	else
		snprintf(buf, n, ">99999x");
	return buf;
}

char *fmt_age(char *buf, size_t n, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;
	if (s < 60)
		snprintf(buf, n, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, n, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, n, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, n, "%llud%02lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	return buf;
}

char *fmt_window_span(char *buf, size_t n, uint64_t span_ns, unsigned window_s)
{
	char a[24];
	if (!span_ns) {
		snprintf(buf, n, "0s of %us", window_s);
		return buf;
	}
	if (span_ns < 1000000000ull)
		span_ns = 1000000000ull; /* rates count a first second as a second */
	fmt_ns(a, sizeof(a), span_ns);
	if (span_ns + 1000000000ull < (uint64_t)window_s * 1000000000ull)
		snprintf(buf, n, "%s of %us", a, window_s);
	else
		snprintf(buf, n, "%s", a);
	return buf;
}

char *fmt_clock(char *buf, size_t n, uint64_t unix_ns)
{
	if (!unix_ns) {
		snprintf(buf, n, "--:--:--");
		return buf;
	}
	time_t t = (time_t)(unix_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, n, "%H:%M:%S", &tm);
	return buf;
}
