#include "core/argcheck.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/escape.h"

void arg_bad(const char *prefix, const char *help, const char *what, const char *arg,
	     const char *why)
{
	char a[256];
	fprintf(stderr, "%s: invalid %s '%s': %s (see %s --help)\n", prefix, what,
		esc_str(a, sizeof(a), arg, 0), why, help);
}

int arg_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
