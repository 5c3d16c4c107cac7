/* Log-linear histogram maths: add, merge, subtract, percentiles, bars. */
#include "core/hist.h"

#include <math.h>
#include <string.h>

void hist_clear(struct hist *h)
{
	h->n = 0;
	h->sum_ns = 0;
	h->min_ns = UINT64_MAX;
	h->max_ns = 0;
	h->lo = HIST_BUCKETS - 1;
	h->hi = 0;
	memset(h->b, 0, sizeof(h->b));
}

static void hist_halve(struct hist *h)
{
	uint64_t n = 0;
	for (unsigned i = h->lo; i <= h->hi; i++) {
		h->b[i] = (uint32_t)(((uint64_t)h->b[i] + 1) / 2); /* non-empty stays non-empty */
		n += h->b[i];
	}
	h->sum_ns = h->n ? (uint64_t)((double)h->sum_ns * ((double)n / (double)h->n)) : 0;
	h->n = n;
}

void hist_add(struct hist *h, uint64_t v)
{
	unsigned i = hist_bucket(v);
	if (h->b[i] == UINT32_MAX)
		hist_halve(h);
	h->b[i]++;
	h->n++;
	h->sum_ns += v;
	if (v < h->min_ns)
		h->min_ns = v;
	if (v > h->max_ns)
		h->max_ns = v;
	if (i < h->lo)
		h->lo = (uint16_t)i;
	if (i > h->hi)
		h->hi = (uint16_t)i;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->n)
		return;
	for (unsigned i = src->lo; i <= src->hi; i++) {
		uint64_t s = (uint64_t)dst->b[i] + src->b[i];
		dst->b[i] = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
	}
	dst->n += src->n;
	dst->sum_ns += src->sum_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	if (src->lo < dst->lo)
		dst->lo = src->lo;
	if (src->hi > dst->hi)
		dst->hi = src->hi;
}

/* Subtracting cannot restore the exact min/max of what is left: they are
 * narrowed to the remaining buckets (so within one bucket of the truth). */
void hist_sub(struct hist *dst, const struct hist *src)
{
	if (!src->n)
		return;
	for (unsigned i = src->lo; i <= src->hi; i++)
		dst->b[i] = dst->b[i] > src->b[i] ? dst->b[i] - src->b[i] : 0;
	dst->n = dst->n > src->n ? dst->n - src->n : 0;
	dst->sum_ns = dst->sum_ns > src->sum_ns ? dst->sum_ns - src->sum_ns : 0;
	if (!dst->n) {
		hist_clear(dst);
		return;
	}
	unsigned lo = dst->lo, hi = dst->hi;
	while (lo < hi && !dst->b[lo])
		lo++;
	while (hi > lo && !dst->b[hi])
		hi--;
	dst->lo = (uint16_t)lo;
	dst->hi = (uint16_t)hi;
	if (dst->min_ns < hist_bucket_lo(lo))
		dst->min_ns = hist_bucket_lo(lo);
	if (dst->max_ns > hist_bucket_hi(hi))
		dst->max_ns = hist_bucket_hi(hi);
}

uint64_t hist_bucket_lo(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned e = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	uint64_t sub = i & (HIST_SUB - 1);
	return (1ull << e) + (sub << (e - HIST_SUB_BITS));
}

uint64_t hist_bucket_hi(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	if (i >= HIST_BUCKETS - 1)
		return UINT64_MAX;
	return hist_bucket_lo(i + 1) - 1;
}

uint64_t hist_bucket_mid(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned e = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	uint64_t w = 1ull << (e - HIST_SUB_BITS);
	return hist_bucket_lo(i) + w / 2;
}

static uint64_t clamp_mid(const struct hist *h, unsigned i)
{
	uint64_t v = hist_bucket_mid(i);
	if (v < h->min_ns)
		v = h->min_ns;
	if (v > h->max_ns)
		v = h->max_ns;
	return v;
}

static uint64_t rank_of(uint64_t n, double q)
{
	if (q <= 0)
		return 1;
	if (q >= 1)
		return n;
	double r = ceil(q * (double)n - 1e-9);
	if (r < 1)
		r = 1;
	if (r > (double)n)
		r = (double)n;
	return (uint64_t)r;
}

void hist_percentiles(const struct hist *h, const double *qs, uint64_t *out, int nq)
{
	if (!h->n) {
		for (int k = 0; k < nq; k++)
			out[k] = 0;
		return;
	}
	uint64_t cum = 0;
	int k = 0;
	for (unsigned i = h->lo; i <= h->hi && k < nq; i++) {
		cum += h->b[i];
		while (k < nq && cum >= rank_of(h->n, qs[k])) {
			out[k] = qs[k] >= 1.0 ? h->max_ns : clamp_mid(h, i);
			k++;
		}
	}
	for (; k < nq; k++)
		out[k] = h->max_ns;
}

uint64_t hist_percentile(const struct hist *h, double q)
{
	uint64_t v;
	hist_percentiles(h, &q, &v, 1);
	return v;
}

uint64_t hist_count_above(const struct hist *h, uint64_t v)
{
	if (!h->n)
		return 0;
	unsigned from = hist_bucket(v);
	if (hist_bucket_lo(from) < v)
		from++;
	if (from < h->lo)
		from = h->lo;
	uint64_t c = 0;
	for (unsigned i = from; i <= h->hi; i++)
		c += h->b[i];
	return c;
}

uint64_t hist_mean(const struct hist *h)
{
	return h->n ? h->sum_ns / h->n : 0;
}

uint64_t hist_bars(const struct hist *h, uint64_t lo_ns, uint64_t hi_ns, uint64_t *counts,
		   int nbars)
{
	if (nbars <= 0)
		return 0;
	memset(counts, 0, sizeof(*counts) * (size_t)nbars);
	if (lo_ns < 1)
		lo_ns = 1;
	if (hi_ns <= lo_ns)
		hi_ns = lo_ns + 1;
	if (!h->n)
		return 0;
	double llo = log((double)lo_ns), span = log((double)hi_ns) - llo;
	uint64_t top = 0;
	for (unsigned i = h->lo; i <= h->hi; i++) {
		if (!h->b[i])
			continue;
		double v = (double)hist_bucket_mid(i);
		int k = v <= (double)lo_ns ? 0 : (int)((log(v) - llo) / span * nbars);
		if (k < 0)
			k = 0;
		if (k >= nbars)
			k = nbars - 1;
		counts[k] += h->b[i];
		if (counts[k] > top)
			top = counts[k];
	}
	return top;
}
