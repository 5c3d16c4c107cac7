/* A tiny unit-test harness: CHECK() records a failure with its location and
 * keeps going; check_done() prints "N passed, N failed" and returns the exit
 * status. Each tests/unit/test_*.c is its own program. */
#ifndef IG_CHECK_H
#define IG_CHECK_H

#include <stdio.h>

static int check_pass_, check_fail_;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (cond) {                                                            \
			check_pass_++;                                                 \
		} else {                                                               \
			check_fail_++;                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

#define CHECKF(cond, ...)                                                              \
	do {                                                                           \
		if (cond) {                                                            \
			check_pass_++;                                                 \
		} else {                                                               \
			check_fail_++;                                                 \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_pass_, check_fail_);
	return check_fail_ ? 1 : 0;
}

#endif
