/* The demo module without starting anything: the scenario names (default
 * first), the errors of demo_start (unknown scenario, programs not built),
 * and the NULL cases. Starting, releasing and stopping the processes is
 * tested as root by tests/integration/test_scenario_*.sh. */
#include "check.h"
#include "session/demo.h"

#include <string.h>

int main(void)
{
	const char *const *names = demo_names();
	int n = 0;
	while (names[n])
		n++;
	CHECKF(n >= 8, "%d scenarios", n);
	CHECK(!strcmp(names[0], "cpu-contention")); /* the default of --demo */
	const char *want[] = {"cpu-contention", "gpu-bound",   "dataloader", "hidden-sync",
			      "memcpy",		"alloc-spike", "io-stall",   "cold-start"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int found = 0;
		for (int k = 0; k < n; k++)
			found |= !strcmp(names[k], want[i]);
		CHECKF(found, "%s", want[i]);
	}

	char err[512] = "";
	CHECK(demo_start("nosuch", err, sizeof(err)) == NULL);
	CHECKF(strstr(err, "unknown demo scenario \"nosuch\"") && strstr(err, "cpu-contention") &&
		   strstr(err, "cold-start"),
	       "%s", err);
	/* this binary is in build/tests/unit/: the programs are not next to it */
	err[0] = 0;
	CHECK(demo_start("gpu-bound", err, sizeof(err)) == NULL);
	CHECKF(strstr(err, "tests/progs/trainer") && strstr(err, "make test-build"), "%s", err);
	err[0] = 0;
	CHECK(demo_start("cpu-contention", err, sizeof(err)) == NULL);
	CHECKF(strstr(err, "/workload"), "%s", err);

	CHECK(demo_recording("nosuch") == NULL);
	CHECK(demo_pids(NULL, NULL, 0) == 0);
	CHECK(demo_done(NULL) == 1);
	demo_release(NULL);
	demo_stop(NULL);
	return check_done("test_demo");
}
