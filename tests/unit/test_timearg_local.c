/* timearg_parse_local: what the viewer's jump prompt (j in a replay) reads.
 * A time of day is on the local clock the header shows (here TZ two hours
 * east of UTC, and UTC), on the day the data starts there, the next day
 * when it falls before the start; offsets, ISO 8601 and Unix ns are those
 * of timearg_parse whatever the zone; a bad entry says why. */
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timearg.h"

#define S 1000000000ull

/* 2026-03-20T21:30:10.250Z */
static const uint64_t start = 1774042210ull * S + 250000000ull;
static const uint64_t end = 1774042210ull * S + 250000000ull + 3600 * S;

static uint64_t parse(const char *s)
{
	uint64_t out = 0;
	char err[160];
	int r = timearg_parse_local(s, start, end, &out, err, sizeof(err));
	CHECKF(r == 0, "'%s': %d (%s)", s, r, err);
	return out;
}

int main(void)
{
	char err[160] = "";
	uint64_t out;

	setenv("TZ", "UTC", 1);
	tzset();
	CHECK(parse("21:30:20") == 1774042220ull * S);
	CHECK(parse("22:00") == 1774044000ull * S);
	CHECK(parse("  22:00") == 1774044000ull * S); /* a leading space */

	/* UTC+2: the header says 23:30:10 at the start */
	setenv("TZ", "Etc/GMT-2", 1);
	tzset();
	CHECK(parse("23:30:20") == 1774042220ull * S);
	CHECK(parse("23:45:00.5") == 1774043100ull * S + S / 2);
	/* past local midnight: the next local day (00:10 local = 22:10 UTC) */
	CHECK(parse("00:10") == 1774044600ull * S);
	/* offsets, ISO and Unix ns do not move with the zone */
	CHECK(parse("+30s") == start + 30 * S);
	CHECK(parse("-5m") == end - 300 * S);
	CHECK(parse("2026-03-20T21:40:00Z") == 1774042800ull * S);
	CHECK(parse("1774042800000000000") == 1774042800ull * S);

	/* bad entries: -EINVAL and a reason that names the entry */
	CHECK(timearg_parse_local("soon", start, end, &out, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "'soon' is not a time") != NULL);
	CHECK(strstr(err, "local time") != NULL);
	CHECK(timearg_parse_local("25:99", start, end, &out, err, sizeof(err)) == -EINVAL);
	CHECK(timearg_parse_local("", start, end, &out, err, sizeof(err)) == -EINVAL);
	CHECK(timearg_parse_local(NULL, start, end, &out, NULL, 0) == -EINVAL);
	return check_done("test_timearg_local");
}
