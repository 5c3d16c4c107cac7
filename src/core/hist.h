/* Fixed-size log-linear latency histograms: 2048 buckets, exact below
 * 64 ns, then 64 linear sub-buckets per power of two up to 2^37 ns (137 s).
 * A value is reported as the middle of its bucket, so the relative error of
 * any percentile is at most 1/128 (0.79 %). Mergeable and subtractable (the
 * rolling window is a sum of 1-second slices). Pure data, no allocation. */
#ifndef IG_HIST_H
#define IG_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS) /* linear sub-buckets per octave */
#define HIST_MAX_EXP 36		       /* values >= 2^37 ns share the last bucket */
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB) /* 2048 */

struct hist {
	uint64_t n;	 /* calls counted in the buckets */
	uint64_t sum_ns; /* sum of values, ns (for the mean) */
	uint64_t min_ns; /* exact smallest value, UINT64_MAX when empty */
	uint64_t max_ns; /* exact largest value, 0 when empty */
	uint16_t lo, hi; /* lowest and highest non-empty bucket (valid when n > 0) */
	uint32_t b[HIST_BUCKETS];
};

/* Bucket index of a value in ns. */
static inline unsigned hist_bucket(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= HIST_SUB_BITS */
	if (e > HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return ((e - HIST_SUB_BITS + 1) << HIST_SUB_BITS) |
	       (unsigned)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

void hist_clear(struct hist *h);
/* Adds one value (ns). A bucket about to overflow halves the whole histogram
 * (percentiles keep their meaning; n is then smaller than the true count). */
void hist_add(struct hist *h, uint64_t v_ns);
/* dst += src; dst -= src (src must have been added to dst before). */
void hist_merge(struct hist *dst, const struct hist *src);
void hist_sub(struct hist *dst, const struct hist *src);

/* Nearest-rank percentile: the value (ns) of the ceil(q*n)-th smallest call,
 * q in [0,1], within 0.79 %; clamped to [min, max]; 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double q);
/* Several percentiles in one pass; qs must be ascending. */
void hist_percentiles(const struct hist *h, const double *qs, uint64_t *out, int n);
/* Calls whose bucket lies entirely at or above v_ns (approximate by one
 * bucket at the boundary). */
uint64_t hist_count_above(const struct hist *h, uint64_t v_ns);
/* Mean in ns, 0 when empty. */
uint64_t hist_mean(const struct hist *h);

/* Lowest value, highest value and representative (reported) value of bucket i, ns. */
uint64_t hist_bucket_lo(unsigned i);
uint64_t hist_bucket_hi(unsigned i);
uint64_t hist_bucket_mid(unsigned i);

/* For drawing: splits [lo_ns, hi_ns) into nbars log-spaced bars and adds the
 * counts of the buckets falling into each (values below lo go to bar 0,
 * above hi to the last bar). counts[] is overwritten. Returns the largest bar. */
uint64_t hist_bars(const struct hist *h, uint64_t lo_ns, uint64_t hi_ns, uint64_t *counts,
		   int nbars);

#endif
