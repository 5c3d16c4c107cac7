/* Histogram accuracy against exact nearest-rank percentiles on random and
 * adversarial distributions (within 1 %), bucket geometry, merge/subtract,
 * counting above a threshold, bars and overflow halving. */
#include "check.h"
#include "core/hist.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static double urand(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const double qs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};
#define NQ (int)(sizeof(qs) / sizeof(qs[0]))

static struct hist h, h2, h3;
static uint64_t vals[200000];

/* Compares every percentile with the exact nearest-rank one; returns the
 * worst relative error. */
static double check_dist(const char *name, int n)
{
	hist_clear(&h);
	for (int i = 0; i < n; i++)
		hist_add(&h, vals[i]);
	qsort(vals, (size_t)n, sizeof(vals[0]), cmp_u64);
	uint64_t got[NQ];
	hist_percentiles(&h, qs, got, NQ);
	double worst = 0;
	for (int k = 0; k < NQ; k++) {
		double r = ceil(qs[k] * n - 1e-9);
		if (r < 1)
			r = 1;
		uint64_t exact = vals[(int)r - 1];
		double err =
		    exact ? fabs((double)got[k] - (double)exact) / (double)exact : (double)got[k];
		if (err > worst)
			worst = err;
		CHECKF(err <= 0.01, "%s q=%.3f exact %lu got %lu err %.4f", name, qs[k],
		       (unsigned long)exact, (unsigned long)got[k], err);
		/* the single-percentile call agrees with the batch one */
		CHECK(hist_percentile(&h, qs[k]) == got[k]);
	}
	CHECK(h.n == (uint64_t)n);
	CHECK(h.min_ns == vals[0] && h.max_ns == vals[n - 1]);
	return worst;
}

static void test_distributions(void)
{
	int n = 100000;
	/* uniform over 100 ns .. 100 s on a log scale */
	for (int i = 0; i < n; i++)
		vals[i] = (uint64_t)exp(log(100.0) + urand() * (log(1e11) - log(100.0)));
	double w = check_dist("loguniform", n);
	printf("loguniform worst error %.4f%%\n", w * 100);

	/* lognormal around 50 us */
	for (int i = 0; i < n; i++) {
		double u1 = urand() + 1e-12, u2 = urand();
		double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		vals[i] = (uint64_t)(50000.0 * exp(0.8 * z));
	}
	check_dist("lognormal", n);

	/* heavy tail: pareto alpha 1.1 from 10 us */
	for (int i = 0; i < n; i++) {
		double v = 10000.0 / pow(urand() + 1e-12, 1.0 / 1.1);
		vals[i] = v > 1e11 ? (uint64_t)1e11 : (uint64_t)v;
	}
	check_dist("pareto", n);

	/* adversarial: every value just below a bucket boundary (worst rounding) */
	for (int i = 0; i < n; i++) {
		unsigned b = 200 + (unsigned)(rnd() % (HIST_BUCKETS - 260));
		vals[i] = hist_bucket_hi(b);
	}
	check_dist("bucket-top", n);
	/* ... and exactly on bucket starts */
	for (int i = 0; i < n; i++) {
		unsigned b = 200 + (unsigned)(rnd() % (HIST_BUCKETS - 260));
		vals[i] = hist_bucket_lo(b);
	}
	check_dist("bucket-low", n);

	/* bimodal with a 1 % tail 1000x slower: p99 sits right on the edge */
	for (int i = 0; i < n; i++)
		vals[i] = (i % 100 == 0) ? 40000000 + rnd() % 1000000 : 20000 + rnd() % 2000;
	check_dist("bimodal", n);

	/* all equal, and tiny values (exact region) */
	for (int i = 0; i < n; i++)
		vals[i] = 142000000;
	check_dist("constant", n);
	for (int i = 0; i < n; i++)
		vals[i] = 1 + rnd() % 120;
	check_dist("tiny", n);

	/* a few calls only (ranks on small n) */
	for (int i = 0; i < 7; i++)
		vals[i] = (uint64_t)(i + 1) * 1000003;
	check_dist("seven", 7);
	vals[0] = 123456789;
	check_dist("one", 1);

	/* two values alternating around a huge gap */
	for (int i = 0; i < n; i++)
		vals[i] = (rnd() & 1) ? 100 : 100000000000ull;
	check_dist("two-extremes", n);
}

static void test_geometry(void)
{
	/* buckets are contiguous, increasing, and every value maps into its own */
	for (unsigned i = 0; i + 1 < HIST_BUCKETS; i++) {
		CHECKF(hist_bucket_hi(i) + 1 == hist_bucket_lo(i + 1), "bucket %u", i);
		CHECKF(hist_bucket(hist_bucket_lo(i)) == i, "lo of %u", i);
		CHECKF(hist_bucket(hist_bucket_hi(i)) == i, "hi of %u", i);
		uint64_t lo = hist_bucket_lo(i), mid = hist_bucket_mid(i), hi = hist_bucket_hi(i);
		CHECK(lo <= mid && mid <= hi);
		if (lo >= 100)
			CHECKF((double)(hi - lo) / 2.0 / (double)lo <= 0.0079, "width %u", i);
	}
	CHECK(hist_bucket(0) == 0);
	CHECK(hist_bucket(UINT64_MAX) == HIST_BUCKETS - 1);
	CHECK(hist_bucket(100000000000ull) < HIST_BUCKETS - 1); /* 100 s fits */
	CHECK(HIST_BUCKETS == 2048);
}

static void test_merge_sub(void)
{
	hist_clear(&h);
	hist_clear(&h2);
	hist_clear(&h3);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = 1000 + rnd() % 10000000;
		hist_add(&h3, v);
		hist_add((i & 1) ? &h : &h2, v);
	}
	struct hist *sum = malloc(sizeof(*sum));
	hist_clear(sum);
	hist_merge(sum, &h);
	hist_merge(sum, &h2);
	CHECK(sum->n == h3.n && sum->sum_ns == h3.sum_ns);
	CHECK(sum->min_ns == h3.min_ns && sum->max_ns == h3.max_ns);
	CHECK(!memcmp(sum->b, h3.b, sizeof(sum->b)));
	for (int k = 0; k < NQ; k++)
		CHECK(hist_percentile(sum, qs[k]) == hist_percentile(&h3, qs[k]));
	/* subtracting one half leaves exactly the other half's buckets */
	hist_sub(sum, &h);
	CHECK(sum->n == h2.n && sum->sum_ns == h2.sum_ns);
	CHECK(!memcmp(sum->b, h2.b, sizeof(sum->b)));
	CHECK(sum->lo >= h2.lo && sum->hi <= h2.hi);
	uint64_t p = hist_percentile(sum, 0.99), e = hist_percentile(&h2, 0.99);
	CHECKF(fabs((double)p - (double)e) <= 0.01 * (double)e, "%lu vs %lu", (unsigned long)p,
	       (unsigned long)e);
	hist_sub(sum, &h2);
	CHECK(sum->n == 0 && hist_percentile(sum, 0.5) == 0 && hist_mean(sum) == 0);
	/* merging an empty histogram changes nothing */
	hist_clear(&h);
	hist_merge(&h2, &h);
	CHECK(h2.n == 25000);
	free(sum);
}

static void test_count_bars(void)
{
	hist_clear(&h);
	for (int i = 0; i < 900; i++)
		hist_add(&h, 10000);
	for (int i = 0; i < 100; i++)
		hist_add(&h, 50000000);
	CHECK(hist_count_above(&h, 30000) == 100);
	CHECK(hist_count_above(&h, 1) == 1000);
	CHECK(hist_count_above(&h, 60000000) == 0);
	CHECK(hist_mean(&h) == (900ull * 10000 + 100ull * 50000000) / 1000);
	uint64_t bars[10];
	uint64_t top = hist_bars(&h, 1000, 1000000000, bars, 10);
	uint64_t tot = 0;
	for (int i = 0; i < 10; i++)
		tot += bars[i];
	CHECK(tot == 1000 && top == 900);
	CHECK(bars[1] == 900); /* 10 us is in the 2nd of ten decades-ish bars from 1 us */
	CHECK(bars[7] == 100);
}

static void test_halving(void)
{
	hist_clear(&h);
	hist_add(&h, 500);
	hist_add(&h, 5000);
	h.b[hist_bucket(500)] = UINT32_MAX; /* force the overflow path */
	h.n = (uint64_t)UINT32_MAX + 1;
	hist_add(&h, 500);
	CHECK(h.b[hist_bucket(500)] == (UINT32_MAX + 1ull) / 2 + 1);
	CHECK(h.b[hist_bucket(5000)] == 1);
	CHECK(hist_percentile(&h, 0.5) >= 500 && hist_percentile(&h, 0.5) <= 505);
}

int main(void)
{
	test_geometry();
	test_distributions();
	test_merge_sub();
	test_count_bars();
	test_halving();
	return check_done("test_hist");
}
