/* nvml-read: loads an NVML library with dlopen, as a GPU monitor does, and
 * prints what it answers, one "KEY VALUE" line per value (flushed), so tests
 * can check the shim libnvidia-ml.so.1 without ingero-top. A failed call
 * prints "KEY error CODE MESSAGE". docs/shim.md. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml.h"

#define FN(name) static __typeof__(name) *p_##name
FN(nvmlInit_v2);
FN(nvmlShutdown);
FN(nvmlErrorString);
FN(nvmlSystemGetDriverVersion);
FN(nvmlDeviceGetCount_v2);
FN(nvmlDeviceGetHandleByIndex_v2);
FN(nvmlDeviceGetName);
FN(nvmlDeviceGetUtilizationRates);
FN(nvmlDeviceGetMemoryInfo);
FN(nvmlDeviceGetMemoryInfo_v2);
FN(nvmlDeviceGetPowerUsage);
FN(nvmlDeviceGetEnforcedPowerLimit);
FN(nvmlDeviceGetTemperature);
FN(nvmlDeviceGetClockInfo);
FN(nvmlDeviceGetComputeRunningProcesses);
FN(nvmlDeviceGetComputeRunningProcesses_v2);
FN(nvmlDeviceGetComputeRunningProcesses_v3);
#undef FN

static int rd_fail(const char *key, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		return 0;
	printf("%s error %d %s\n", key, (int)r, p_nvmlErrorString(r));
	fflush(stdout);
	return 1;
}

static void rd_uint(const char *key, nvmlReturn_t r, unsigned long long v)
{
	if (!rd_fail(key, r))
		printf("%s %llu\n", key, v);
	fflush(stdout);
}

/* The compute processes through one entry point version (16 or 24 bytes). */
static void rd_procs(unsigned int i, nvmlDevice_t dev, int ver)
{
	nvmlProcessInfo_t p3[64];
	nvmlProcessInfo_v1_t p1[64];
	unsigned int n = 0;
	char key[64];
	nvmlReturn_t r;

	snprintf(key, sizeof(key), "dev%u.procs.v%d", i, ver);
	/* First ask how many, as monitors do. */
	r = ver == 1   ? p_nvmlDeviceGetComputeRunningProcesses(dev, &n, NULL)
	    : ver == 2 ? p_nvmlDeviceGetComputeRunningProcesses_v2(dev, &n, NULL)
		       : p_nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, NULL);
	if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) {
		rd_fail(key, r);
		return;
	}
	n = 64;
	r = ver == 1   ? p_nvmlDeviceGetComputeRunningProcesses(dev, &n, p1)
	    : ver == 2 ? p_nvmlDeviceGetComputeRunningProcesses_v2(dev, &n, p3)
		       : p_nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, p3);
	if (rd_fail(key, r))
		return;
	printf("%s %u\n", key, n);
	for (unsigned int k = 0; k < n; k++) {
		if (ver == 1)
			printf("%s.proc %u %llu\n", key, p1[k].pid, p1[k].usedGpuMemory);
		else
			printf("%s.proc %u %llu %x %x\n", key, p3[k].pid, p3[k].usedGpuMemory,
			       p3[k].gpuInstanceId, p3[k].computeInstanceId);
	}
	fflush(stdout);
}

static void rd_device(unsigned int i)
{
	nvmlDevice_t dev;
	nvmlUtilization_t u;
	nvmlMemory_t m1;
	nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
	unsigned int v = 0;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], key[64];
	nvmlReturn_t r;

#define KEY(k) (snprintf(key, sizeof(key), "dev%u.%s", i, k), key)
	if (rd_fail(KEY("handle"), p_nvmlDeviceGetHandleByIndex_v2(i, &dev)))
		return;
	if (!rd_fail(KEY("name"), p_nvmlDeviceGetName(dev, name, sizeof(name))))
		printf("%s %s\n", key, name);
	r = p_nvmlDeviceGetUtilizationRates(dev, &u);
	rd_uint(KEY("util.gpu"), r, u.gpu);
	rd_uint(KEY("util.mem"), r, u.memory);
	r = p_nvmlDeviceGetMemoryInfo(dev, &m1);
	rd_uint(KEY("mem.total"), r, m1.total);
	rd_uint(KEY("mem.used"), r, m1.used);
	rd_uint(KEY("mem.free"), r, m1.free);
	r = p_nvmlDeviceGetMemoryInfo_v2(dev, &m2);
	rd_uint(KEY("mem2.used"), r, m2.used);
	rd_uint(KEY("mem2.reserved"), r, m2.reserved);
	/* The call first: argument evaluation order is unspecified. */
	r = p_nvmlDeviceGetPowerUsage(dev, &v);
	rd_uint(KEY("power_mw"), r, v);
	r = p_nvmlDeviceGetEnforcedPowerLimit(dev, &v);
	rd_uint(KEY("power_limit_mw"), r, v);
	r = p_nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &v);
	rd_uint(KEY("temp_c"), r, v);
	r = p_nvmlDeviceGetClockInfo(dev, NVML_CLOCK_SM, &v);
	rd_uint(KEY("sm_mhz"), r, v);
#undef KEY
	for (int ver = 1; ver <= 3; ver++)
		rd_procs(i, dev, ver);
}

static void *rd_sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "nvml-read: %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *path = "libnvidia-ml.so.1";
	long repeat = 1, interval_ms = 0;
	int skip_init = 0;
	unsigned int count = 0;
	char ver[64];
	void *lib;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lib") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc)
			interval_ms = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--skip-init"))
			skip_init = 1; /* every call then fails: NVML_ERROR_UNINITIALIZED */
		else {
			fprintf(stderr,
				"usage: nvml-read [--lib PATH] [--repeat N] [--interval-ms MS] "
				"[--skip-init]\n");
			return 2;
		}
	}
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nvml-read: %s\n", dlerror());
		return 1;
	}
#define LOAD(name) p_##name = (__typeof__(p_##name))rd_sym(lib, #name)
	LOAD(nvmlInit_v2);
	LOAD(nvmlShutdown);
	LOAD(nvmlErrorString);
	LOAD(nvmlSystemGetDriverVersion);
	LOAD(nvmlDeviceGetCount_v2);
	LOAD(nvmlDeviceGetHandleByIndex_v2);
	LOAD(nvmlDeviceGetName);
	LOAD(nvmlDeviceGetUtilizationRates);
	LOAD(nvmlDeviceGetMemoryInfo);
	LOAD(nvmlDeviceGetMemoryInfo_v2);
	LOAD(nvmlDeviceGetPowerUsage);
	LOAD(nvmlDeviceGetEnforcedPowerLimit);
	LOAD(nvmlDeviceGetTemperature);
	LOAD(nvmlDeviceGetClockInfo);
	LOAD(nvmlDeviceGetComputeRunningProcesses);
	LOAD(nvmlDeviceGetComputeRunningProcesses_v2);
	LOAD(nvmlDeviceGetComputeRunningProcesses_v3);
#undef LOAD
	if (!skip_init && rd_fail("init", p_nvmlInit_v2()))
		return 1;
	if (!rd_fail("driver", p_nvmlSystemGetDriverVersion(ver, sizeof(ver))))
		printf("driver %s\n", ver);
	for (long s = 1; s <= repeat; s++) {
		struct timespec ts = {.tv_sec = interval_ms / 1000,
				      .tv_nsec = (interval_ms % 1000) * 1000000L};
		nvmlReturn_t r;

		printf("sample %ld\n", s);
		r = p_nvmlDeviceGetCount_v2(&count);
		rd_uint("count", r, count);
		for (unsigned int i = 0; i < count; i++)
			rd_device(i);
		printf("end %ld\n", s);
		fflush(stdout);
		if (s < repeat)
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
	}
	if (!skip_init)
		rd_fail("shutdown", p_nvmlShutdown());
	return 0;
}
