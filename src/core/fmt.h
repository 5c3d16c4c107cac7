/* Numbers for people: one spelling of durations, sizes, counts, rates,
 * shares and ratios for every output (viewer, batch text, chain summaries,
 * reports). Each writes at most n bytes into buf, NUL-terminated, and
 * returns buf. Pure functions. */
#ifndef IG_FMT_H
#define IG_FMT_H

#include <stddef.h>
#include <stdint.h>

/* A duration in ns: "850ns", "12.3us", "4.56ms", "1.23s", "2m03s"; three
 * significant digits below a minute. */
char *fmt_ns(char *buf, size_t n, uint64_t ns);
/* A byte count: "512B", "1.5KiB", "12.0MiB", "3.2GiB", "1.0TiB". */
char *fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* A count for a fixed-width column: "999999", "1.23M", "12.3k"; never wider
 * than width columns when width >= 4. */
char *fmt_count(char *buf, size_t n, uint64_t v, int width);
/* A rate per second, without the unit: "0.50", "39.8", "1234", "12.3k". */
char *fmt_rate(char *buf, size_t n, double per_s);
/* A fraction 0..1 as a percentage: "71%", "0.4%", "<0.1%", "0%"; a
 * negative fraction (no value) is "-". */
char *fmt_pct(char *buf, size_t n, double frac);
/* A ratio such as p99/p50: "3.2x", "12x", ">99999x"; "-" when <= 0. */
char *fmt_ratio(char *buf, size_t n, double r);
/* An age or span in whole seconds: "5s", "2m03s", "1h02m", "3d04h". */
char *fmt_age(char *buf, size_t n, uint64_t ns);
/* The span every rate of a screen or frame is per second of, as headers
 * say it: span_ns, the event time the window covers, at least a second
 * ("9.06s"); "3.40s of 10s" while the window (window_s) fills; "0s of
 * 10s" before any event (span_ns 0). Returns buf. */
char *fmt_window_span(char *buf, size_t n, uint64_t span_ns, unsigned window_s);
/* "12:03:04" (local time) of a Unix-ns time; "--:--:--" for 0. */
char *fmt_clock(char *buf, size_t n, uint64_t unix_ns);

#endif
