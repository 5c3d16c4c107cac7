/* Shim libnvidia-ml.so.1: the NVML calls a GPU monitor makes (device count,
 * names, utilisation, memory, power, temperature, clocks, per-process GPU
 * memory), answering scripted values. The script comes from SHIM_NVML (";"
 * between settings) and the file SHIM_NVML_FILE, re-read at every call, so a
 * test changes the values while a sampler runs. Any call can be scripted to
 * fail with a chosen code, to be slow, or to hang (until the file changes, or
 * forever). Keys and semantics: docs/shim.md. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvml.h"
#include "stats.h"

#define NV_SYMS(X)                                                                                 \
	X(nvmlInit)                                                                                \
	X(nvmlInit_v2)                                                                             \
	X(nvmlInitWithFlags)                                                                       \
	X(nvmlShutdown)                                                                            \
	X(nvmlErrorString)                                                                         \
	X(nvmlSystemGetDriverVersion)                                                              \
	X(nvmlDeviceGetCount)                                                                      \
	X(nvmlDeviceGetCount_v2)                                                                   \
	X(nvmlDeviceGetHandleByIndex)                                                              \
	X(nvmlDeviceGetHandleByIndex_v2)                                                           \
	X(nvmlDeviceGetIndex)                                                                      \
	X(nvmlDeviceGetName)                                                                       \
	X(nvmlDeviceGetUUID)                                                                       \
	X(nvmlDeviceGetPciInfo_v3)                                                                 \
	X(nvmlDeviceGetUtilizationRates)                                                           \
	X(nvmlDeviceGetMemoryInfo)                                                                 \
	X(nvmlDeviceGetMemoryInfo_v2)                                                              \
	X(nvmlDeviceGetPowerUsage)                                                                 \
	X(nvmlDeviceGetEnforcedPowerLimit)                                                         \
	X(nvmlDeviceGetPowerManagementLimit)                                                       \
	X(nvmlDeviceGetTemperature)                                                                \
	X(nvmlDeviceGetClockInfo)                                                                  \
	X(nvmlDeviceGetMaxClockInfo)                                                               \
	X(nvmlDeviceGetFanSpeed)                                                                   \
	X(nvmlDeviceGetComputeRunningProcesses)                                                    \
	X(nvmlDeviceGetComputeRunningProcesses_v2)                                                 \
	X(nvmlDeviceGetComputeRunningProcesses_v3)                                                 \
	X(nvmlDeviceGetGraphicsRunningProcesses)                                                   \
	X(nvmlDeviceGetGraphicsRunningProcesses_v2)                                                \
	X(nvmlDeviceGetGraphicsRunningProcesses_v3)

enum nv_sym { NV_SYMS(SHIM_SYM_ENUM) NV_NSYMS };
static const char *const nv_sym_names[NV_NSYMS] = {NV_SYMS(SHIM_SYM_NAME)};
static _Atomic unsigned long long nv_calls[NV_NSYMS];

#define NV_MAX_DEV 16
#define NV_MAX_PROCS 64
#define NV_MAX_TEXT 65536
#define MIB (1ULL << 20)

enum { HANG_NONE, HANG_CHANGE, HANG_FOREVER };

struct nv_proc {
	unsigned int pid;
	unsigned long long bytes;
};

struct nv_dev {
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned int util_gpu, util_mem;
	unsigned long long mem_total, mem_used, mem_reserved; /* bytes */
	unsigned int power_mw, power_limit_mw, temp_c, fan_pct;
	unsigned int sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz;
	int nprocs;
	struct nv_proc procs[NV_MAX_PROCS];
};

/* What a call does besides answering; -1: not set at this level. */
struct nv_rule {
	int error;
	int hang;
	long long delay_us;
};

struct nv_cfg {
	unsigned int ndev;
	char driver_version[32];
	struct nv_dev dev[NV_MAX_DEV];
	struct nv_rule rules[NV_NSYMS][NV_MAX_DEV + 1]; /* [NV_MAX_DEV]: every device */
};

struct nvmlDevice_st {
	unsigned int index;
};

static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nv_cfg nv_cfg;
static char *nv_text; /* the file's content at the last parse; NULL: never read */
static int nv_init_count;
static struct nvmlDevice_st nv_handles[NV_MAX_DEV];

static void nv_defaults(struct nv_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->ndev = 1;
	snprintf(c->driver_version, sizeof(c->driver_version), "580.95.05");
	for (unsigned int i = 0; i < NV_MAX_DEV; i++) {
		struct nv_dev *d = &c->dev[i];

		snprintf(d->name, sizeof(d->name), "Shim GPU %u", i);
		snprintf(d->uuid, sizeof(d->uuid), "GPU-5e1a0000-0000-4000-8000-0000000000%02u", i);
		d->mem_total = 81920 * MIB;
		d->power_mw = 60000;
		d->power_limit_mw = 700000;
		d->temp_c = 35;
		d->fan_pct = 30;
		d->sm_mhz = d->sm_max_mhz = 1980;
		d->mem_mhz = d->mem_max_mhz = 2619;
	}
	for (int s = 0; s < NV_NSYMS; s++)
		for (int i = 0; i <= NV_MAX_DEV; i++)
			c->rules[s][i] = (struct nv_rule){-1, -1, -1};
}

static int nv_uint(const char *v, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || x > max || *v == '-')
		return -1;
	*out = x;
	return 0;
}

/* "PID:MIB,PID:MIB" ("na" for a process whose memory NVML cannot tell). */
static int nv_procs(struct nv_dev *d, char *v)
{
	char *save = NULL;

	d->nprocs = 0;
	for (char *tok = strtok_r(v, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		unsigned long long pid, mib = 0;

		if (!colon || d->nprocs == NV_MAX_PROCS)
			return -1;
		*colon = 0;
		if (nv_uint(tok, 0x7fffffff, &pid) ||
		    (strcmp(colon + 1, "na") && nv_uint(colon + 1, 1ULL << 40, &mib)))
			return -1;
		d->procs[d->nprocs].pid = (unsigned int)pid;
		d->procs[d->nprocs].bytes =
		    strcmp(colon + 1, "na") ? mib * MIB : NVML_VALUE_NOT_AVAILABLE;
		d->nprocs++;
	}
	return 0;
}

/* error.SYM, hang.SYM, delay_us.SYM for one device or all (idx NV_MAX_DEV). */
static int nv_rule_key(struct nv_cfg *c, int idx, const char *key, const char *v)
{
	const char *dot = strchr(key, '.');
	unsigned long long x;
	int sym = -1;

	if (!dot)
		return -1;
	for (int s = 0; s < NV_NSYMS; s++)
		if (!strcmp(dot + 1, nv_sym_names[s]))
			sym = s;
	if (sym < 0)
		return -1;
	if (!strncmp(key, "error.", 6) && !nv_uint(v, 1000000, &x))
		c->rules[sym][idx].error = (int)x;
	else if (!strncmp(key, "hang.", 5) &&
		 (!strcmp(v, "change") || !strcmp(v, "forever") || !strcmp(v, "no")))
		c->rules[sym][idx].hang = !strcmp(v, "change")	  ? HANG_CHANGE
					  : !strcmp(v, "forever") ? HANG_FOREVER
								  : HANG_NONE;
	else if (!strncmp(key, "delay_us.", 9) && !nv_uint(v, 3600000000ULL, &x))
		c->rules[sym][idx].delay_us = (long long)x;
	else
		return -1;
	return 0;
}

static int nv_dev_key(struct nv_dev *d, const char *key, char *v)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned long long max;
	} uints[] = {
#define F(k, f, m) {k, offsetof(struct nv_dev, f), m}
	    F("util.gpu", util_gpu, 100),
	    F("util.mem", util_mem, 100),
	    F("power_mw", power_mw, 10000000),
	    F("power_limit_mw", power_limit_mw, 10000000),
	    F("temp_c", temp_c, 200),
	    F("fan_pct", fan_pct, 100),
	    F("clock.sm_mhz", sm_mhz, 100000),
	    F("clock.sm_max_mhz", sm_max_mhz, 100000),
	    F("clock.mem_mhz", mem_mhz, 100000),
	    F("clock.mem_max_mhz", mem_max_mhz, 100000),
#undef F
	};
	unsigned long long x;

	for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
		if (strcmp(key, uints[i].key))
			continue;
		if (nv_uint(v, uints[i].max, &x))
			return -1;
		*(unsigned int *)((char *)d + uints[i].off) = (unsigned int)x;
		return 0;
	}
	if (!strcmp(key, "name"))
		snprintf(d->name, sizeof(d->name), "%s", v);
	else if (!strcmp(key, "uuid"))
		snprintf(d->uuid, sizeof(d->uuid), "%s", v);
	else if (!strcmp(key, "mem.total_mib") && !nv_uint(v, 1ULL << 30, &x))
		d->mem_total = x * MIB;
	else if (!strcmp(key, "mem.used_mib") && !nv_uint(v, 1ULL << 30, &x))
		d->mem_used = x * MIB;
	else if (!strcmp(key, "mem.reserved_mib") && !nv_uint(v, 1ULL << 30, &x))
		d->mem_reserved = x * MIB;
	else if (!strcmp(key, "procs"))
		return nv_procs(d, v);
	else
		return -1;
	return 0;
}

static char *nv_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* One "key=value" setting; a bad one is reported on stderr and ignored. */
static void nv_setting(struct nv_cfg *c, char *line, const char *from)
{
	char *eq, *key, *v;
	unsigned long long x;
	int bad;

	line = nv_trim(line);
	if (!*line || *line == '#')
		return;
	eq = strchr(line, '=');
	if (!eq) {
		fprintf(stderr, "shim nvml: ignoring '%s' in %s: want key=value\n", line, from);
		return;
	}
	*eq = 0;
	key = nv_trim(line);
	v = nv_trim(eq + 1);
	if (!strcmp(key, "devices")) {
		bad = nv_uint(v, NV_MAX_DEV, &x);
		if (!bad)
			c->ndev = (unsigned int)x;
	} else if (!strcmp(key, "driver_version")) {
		snprintf(c->driver_version, sizeof(c->driver_version), "%s", v);
		bad = 0;
	} else if (*key >= '0' && *key <= '9') {
		char *end;
		unsigned long idx = strtoul(key, &end, 10);

		bad = *end != '.' || idx >= NV_MAX_DEV;
		if (!bad && (!strncmp(end + 1, "error.", 6) || !strncmp(end + 1, "hang.", 5) ||
			     !strncmp(end + 1, "delay_us.", 9)))
			bad = nv_rule_key(c, (int)idx, end + 1, v);
		else if (!bad)
			bad = nv_dev_key(&c->dev[idx], end + 1, v);
	} else {
		bad = nv_rule_key(c, NV_MAX_DEV, key, v);
	}
	if (bad)
		fprintf(stderr, "shim nvml: ignoring %s=%s in %s\n", key, v, from);
}

static void nv_parse(struct nv_cfg *c, const char *text, const char *seps, const char *from)
{
	char *copy = strdup(text), *save = NULL;

	if (!copy)
		return;
	for (char *l = strtok_r(copy, seps, &save); l; l = strtok_r(NULL, seps, &save))
		nv_setting(c, l, from);
	free(copy);
}

/* The file's content ("" when it cannot be read), malloc'ed. */
static char *nv_read_file(void)
{
	const char *path = getenv("SHIM_NVML_FILE");
	char *buf = calloc(1, NV_MAX_TEXT + 1);
	ssize_t n;
	size_t len = 0;
	int fd;

	if (!buf || !path || !*path)
		return buf;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	while (len < NV_MAX_TEXT && (n = read(fd, buf + len, NV_MAX_TEXT - len)) > 0)
		len += (size_t)n;
	close(fd);
	return buf;
}

/* Re-parses the environment and the file when the file changed. Lock held. */
static void nv_refresh(void)
{
	char *text = nv_read_file();
	const char *env = getenv("SHIM_NVML");

	if (!text || (nv_text && !strcmp(text, nv_text))) {
		free(text);
		return;
	}
	free(nv_text);
	nv_text = text;
	nv_defaults(&nv_cfg);
	if (env)
		nv_parse(&nv_cfg, env, ";\n", "SHIM_NVML");
	nv_parse(&nv_cfg, text, "\n", "SHIM_NVML_FILE");
}

static void nv_sleep_us(unsigned long long us)
{
	struct timespec ts = {.tv_sec = (time_t)(us / 1000000),
			      .tv_nsec = (long)(us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int nv_pick(int dev_level, int all_level, int def)
{
	return dev_level >= 0 ? dev_level : all_level >= 0 ? all_level : def;
}

/*
 * The prologue of every call: counts it, checks initialisation and the
 * device handle, then plays what the script says for this call and device:
 * a hang (until the file changes, then the script is read again; or
 * forever), a delay, an error. On success *d is a copy of the device.
 */
static nvmlReturn_t nv_enter(enum nv_sym sym, nvmlDevice_t h, int need_init, struct nv_dev *d)
{
	int idx = -1, hang, err;
	long long delay;

	atomic_fetch_add_explicit(&nv_calls[sym], 1, memory_order_relaxed);
	for (;;) {
		char *snap;

		pthread_mutex_lock(&nv_lock);
		nv_refresh();
		if (need_init && !nv_init_count) {
			pthread_mutex_unlock(&nv_lock);
			return NVML_ERROR_UNINITIALIZED;
		}
		if (h) {
			idx = (int)(h - nv_handles);
			if (idx < 0 || idx >= NV_MAX_DEV || (unsigned int)idx >= nv_cfg.ndev) {
				pthread_mutex_unlock(&nv_lock);
				return NVML_ERROR_INVALID_ARGUMENT;
			}
			if (d)
				*d = nv_cfg.dev[idx];
		}
		{
			struct nv_rule *all = &nv_cfg.rules[sym][NV_MAX_DEV];
			struct nv_rule *one = idx >= 0 ? &nv_cfg.rules[sym][idx] : all;

			hang = nv_pick(one->hang, all->hang, HANG_NONE);
			err = nv_pick(one->error, all->error, NVML_SUCCESS);
			delay = one->delay_us >= 0 ? one->delay_us : all->delay_us;
		}
		snap = hang == HANG_CHANGE && nv_text ? strdup(nv_text) : NULL;
		pthread_mutex_unlock(&nv_lock);
		if (hang == HANG_NONE)
			break;
		while (hang == HANG_FOREVER)
			nv_sleep_us(3600ULL * 1000000);
		/* Until the file's content differs from what scripted the hang. */
		for (;;) {
			char *now = nv_read_file();
			int same = now && snap && !strcmp(now, snap);

			free(now);
			if (!same)
				break;
			nv_sleep_us(2000);
		}
		free(snap);
	}
	if (delay > 0)
		nv_sleep_us((unsigned long long)delay);
	return (nvmlReturn_t)err;
}

/* ---- init and errors ------------------------------------------------------ */

static nvmlReturn_t nv_init(enum nv_sym sym)
{
	nvmlReturn_t r = nv_enter(sym, NULL, 0, NULL);

	if (r == NVML_SUCCESS) {
		pthread_mutex_lock(&nv_lock);
		for (unsigned int i = 0; i < NV_MAX_DEV; i++)
			nv_handles[i].index = i;
		nv_init_count++;
		pthread_mutex_unlock(&nv_lock);
	}
	return r;
}

nvmlReturn_t nvmlInit(void)
{
	return nv_init(SYM_nvmlInit);
}

nvmlReturn_t nvmlInit_v2(void)
{
	return nv_init(SYM_nvmlInit_v2);
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	return nv_init(SYM_nvmlInitWithFlags);
}

nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = nv_enter(SYM_nvmlShutdown, NULL, 1, NULL);

	if (r == NVML_SUCCESS) {
		pthread_mutex_lock(&nv_lock);
		if (nv_init_count > 0)
			nv_init_count--;
		pthread_mutex_unlock(&nv_lock);
	}
	return r;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	atomic_fetch_add_explicit(&nv_calls[SYM_nvmlErrorString], 1, memory_order_relaxed);
	switch (result) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED:
		return "Already Initialized";
	case NVML_ERROR_NOT_FOUND:
		return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER:
		return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT:
		return "Timeout";
	case NVML_ERROR_IRQ_ISSUE:
		return "Interrupt Request Issue";
	case NVML_ERROR_LIBRARY_NOT_FOUND:
		return "NVML Shared Library Not Found";
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return "Function Not Found";
	case NVML_ERROR_CORRUPTED_INFOROM:
		return "Corrupted infoROM";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_RESET_REQUIRED:
		return "GPU requires restart";
	case NVML_ERROR_OPERATING_SYSTEM:
		return "The operating system has blocked the request";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return "RM has detected an NVML/RM version mismatch";
	case NVML_ERROR_IN_USE:
		return "In use by another client";
	case NVML_ERROR_MEMORY:
		return "Insufficient Memory";
	case NVML_ERROR_NO_DATA:
		return "No data";
	case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
		return "ECC is not supported on vGPU";
	case NVML_ERROR_INSUFFICIENT_RESOURCES:
		return "Insufficient resources";
	case NVML_ERROR_FREQ_NOT_SUPPORTED:
		return "Frequency not supported";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
		return "Argument version mismatch";
	case NVML_ERROR_DEPRECATED:
		return "Deprecated";
	case NVML_ERROR_NOT_READY:
		return "Not ready";
	case NVML_ERROR_GPU_NOT_FOUND:
		return "GPU not found";
	case NVML_ERROR_INVALID_STATE:
		return "Invalid state";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	nvmlReturn_t r = nv_enter(SYM_nvmlSystemGetDriverVersion, NULL, 1, NULL);

	if (r != NVML_SUCCESS)
		return r;
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&nv_lock);
	if (strlen(nv_cfg.driver_version) >= length)
		r = NVML_ERROR_INSUFFICIENT_SIZE;
	else
		memcpy(version, nv_cfg.driver_version, strlen(nv_cfg.driver_version) + 1);
	pthread_mutex_unlock(&nv_lock);
	return r;
}

/* ---- devices ---------------------------------------------------------------- */

static nvmlReturn_t nv_count(enum nv_sym sym, unsigned int *count)
{
	nvmlReturn_t r = nv_enter(sym, NULL, 1, NULL);

	if (r != NVML_SUCCESS)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&nv_lock);
	*count = nv_cfg.ndev;
	pthread_mutex_unlock(&nv_lock);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nv_count(SYM_nvmlDeviceGetCount, deviceCount);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	return nv_count(SYM_nvmlDeviceGetCount_v2, deviceCount);
}

static nvmlReturn_t nv_handle(enum nv_sym sym, unsigned int index, nvmlDevice_t *device)
{
	nvmlReturn_t r = nv_enter(sym, NULL, 1, NULL);

	if (r != NVML_SUCCESS)
		return r;
	if (!device)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&nv_lock);
	if (index >= nv_cfg.ndev)
		r = NVML_ERROR_INVALID_ARGUMENT;
	else
		*device = &nv_handles[index];
	pthread_mutex_unlock(&nv_lock);
	return r;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nv_handle(SYM_nvmlDeviceGetHandleByIndex, index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	return nv_handle(SYM_nvmlDeviceGetHandleByIndex_v2, index, device);
}

/* Device calls: the prologue, then the out-pointer must be there. */
#define NV_DEVICE_CALL(sym, device, out)                                                           \
	struct nv_dev d;                                                                           \
	nvmlReturn_t r =                                                                           \
	    nv_enter(SYM_##sym, (device) ? (device) : nv_handles + NV_MAX_DEV, 1, &d);             \
	if (r != NVML_SUCCESS)                                                                     \
		return r;                                                                          \
	if (!(out))                                                                                \
	return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	NV_DEVICE_CALL(nvmlDeviceGetIndex, device, index);
	*index = device->index;
	return NVML_SUCCESS;
}

static nvmlReturn_t nv_string(const char *s, char *out, unsigned int length)
{
	if (strlen(s) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(out, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	NV_DEVICE_CALL(nvmlDeviceGetName, device, name);
	return nv_string(d.name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	NV_DEVICE_CALL(nvmlDeviceGetUUID, device, uuid);
	return nv_string(d.uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	NV_DEVICE_CALL(nvmlDeviceGetPciInfo_v3, device, pci);
	memset(pci, 0, sizeof(*pci));
	pci->bus = 0x10 + device->index;
	pci->pciDeviceId = 0x233010de;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	NV_DEVICE_CALL(nvmlDeviceGetUtilizationRates, device, utilization);
	utilization->gpu = d.util_gpu;
	utilization->memory = d.util_mem;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	NV_DEVICE_CALL(nvmlDeviceGetMemoryInfo, device, memory);
	memory->total = d.mem_total;
	memory->used = d.mem_used + d.mem_reserved; /* v1 counts reserved as used */
	memory->free = d.mem_total > memory->used ? d.mem_total - memory->used : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	NV_DEVICE_CALL(nvmlDeviceGetMemoryInfo_v2, device, memory);
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memory->total = d.mem_total;
	memory->reserved = d.mem_reserved;
	memory->used = d.mem_used;
	memory->free = d.mem_total > d.mem_used + d.mem_reserved
			   ? d.mem_total - d.mem_used - d.mem_reserved
			   : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	NV_DEVICE_CALL(nvmlDeviceGetPowerUsage, device, power);
	*power = d.power_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
	NV_DEVICE_CALL(nvmlDeviceGetEnforcedPowerLimit, device, limit);
	*limit = d.power_limit_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
	NV_DEVICE_CALL(nvmlDeviceGetPowerManagementLimit, device, limit);
	*limit = d.power_limit_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
				      unsigned int *temp)
{
	NV_DEVICE_CALL(nvmlDeviceGetTemperature, device, temp);
	if (sensorType != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*temp = d.temp_c;
	return NVML_SUCCESS;
}

static nvmlReturn_t nv_clock(const struct nv_dev *d, nvmlClockType_t type, int max,
			     unsigned int *clock)
{
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
	case NVML_CLOCK_VIDEO:
		*clock = max ? d->sm_max_mhz : d->sm_mhz;
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*clock = max ? d->mem_max_mhz : d->mem_mhz;
		return NVML_SUCCESS;
	default:
		return NVML_ERROR_INVALID_ARGUMENT;
	}
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	NV_DEVICE_CALL(nvmlDeviceGetClockInfo, device, clock);
	return nv_clock(&d, type, 0, clock);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
				       unsigned int *clock)
{
	NV_DEVICE_CALL(nvmlDeviceGetMaxClockInfo, device, clock);
	return nv_clock(&d, type, 1, clock);
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
	NV_DEVICE_CALL(nvmlDeviceGetFanSpeed, device, speed);
	*speed = d.fan_pct;
	return NVML_SUCCESS;
}

/* ---- processes ---------------------------------------------------------------- */

/* NVML's protocol: *infoCount in is the room in infos; out, the number of
 * processes. Too little room: NVML_ERROR_INSUFFICIENT_SIZE with the number
 * needed (a NULL infos with count 0 asks for it). v1 entries are 16 bytes,
 * v2/v3 24. Graphics processes: none. */
static nvmlReturn_t nv_processes(const struct nv_dev *d, int graphics, int v1,
				 unsigned int *infoCount, void *infos)
{
	unsigned int n = graphics ? 0 : (unsigned int)d->nprocs;

	if (*infoCount < n) {
		*infoCount = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n && !infos)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < n; i++) {
		if (v1) {
			nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + i;

			p->pid = d->procs[i].pid;
			p->usedGpuMemory = d->procs[i].bytes;
		} else {
			nvmlProcessInfo_t *p = (nvmlProcessInfo_t *)infos + i;

			p->pid = d->procs[i].pid;
			p->usedGpuMemory = d->procs[i].bytes;
			p->gpuInstanceId = 0xffffffffu;
			p->computeInstanceId = 0xffffffffu;
		}
	}
	*infoCount = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses, device, infoCount);
	return nv_processes(&d, 0, 1, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses_v2, device, infoCount);
	return nv_processes(&d, 0, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses_v3, device, infoCount);
	return nv_processes(&d, 0, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						   nvmlProcessInfo_v1_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetGraphicsRunningProcesses, device, infoCount);
	return nv_processes(&d, 1, 1, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
						      nvmlProcessInfo_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetGraphicsRunningProcesses_v2, device, infoCount);
	return nv_processes(&d, 1, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						      nvmlProcessInfo_t *infos)
{
	NV_DEVICE_CALL(nvmlDeviceGetGraphicsRunningProcesses_v3, device, infoCount);
	return nv_processes(&d, 1, 0, infoCount, infos);
}

/* SHIM_STATS=FILE: "PID SYMBOL COUNT" lines at exit, as the other shims. */
__attribute__((destructor)) static void nv_write_stats(void)
{
	shim_write_stats(nv_sym_names, nv_calls, NV_NSYMS);
}
