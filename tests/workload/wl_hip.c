/* The workload's HIP mode (--hip): the same training-like loop over the HIP
 * shim, which is loaded with dlopen (libamdhip64.so.6 from build/shim, found
 * through the workload's run path) so that CUDA-only runs never map it.
 * docs/shim.md. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hip.h"
#include "workload.h"

#define HIP_FNS(X)                                                                                 \
	X(hipGetErrorString)                                                                       \
	X(hipMalloc)                                                                               \
	X(hipFree)                                                                                 \
	X(hipMallocAsync)                                                                          \
	X(hipFreeAsync)                                                                            \
	X(hipMemcpy)                                                                               \
	X(hipMemcpyAsync)                                                                          \
	X(hipMemcpyHtoD)                                                                           \
	X(hipMemcpyDtoH)                                                                           \
	X(hipLaunchKernel)                                                                         \
	X(hipModuleLoadData)                                                                       \
	X(hipModuleGetFunction)                                                                    \
	X(hipModuleUnload)                                                                         \
	X(hipModuleLaunchKernel)                                                                   \
	X(hipStreamCreate)                                                                         \
	X(hipStreamDestroy)                                                                        \
	X(hipStreamSynchronize)                                                                    \
	X(hipDeviceSynchronize)                                                                    \
	X(hipEventCreate)                                                                          \
	X(hipEventRecord)                                                                          \
	X(hipEventSynchronize)                                                                     \
	X(hipEventDestroy)                                                                         \
	X(hipStreamBeginCapture)                                                                   \
	X(hipStreamEndCapture)                                                                     \
	X(hipGraphInstantiate)                                                                     \
	X(hipGraphLaunch)                                                                          \
	X(hipGraphDestroy)                                                                         \
	X(hipGraphExecDestroy)

#define HIP_PTR(f) static __typeof__(f) *p_##f;
HIP_FNS(HIP_PTR)
#undef HIP_PTR
static shimHipExtModuleLaunchKernel_t p_hipExtModuleLaunchKernel;

static const unsigned char wl_code_object[16] = "shim-hsaco-0001";

/* Loads the library and every entry point; -1 with a message if one lacks. */
int wl_hip_load(void)
{
	void *lib = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "workload: cannot load libamdhip64.so.6: %s\n", dlerror());
		return -1;
	}
#define HIP_SYM(f)                                                                                 \
	p_##f = (__typeof__(p_##f))dlsym(lib, #f);                                                 \
	if (!p_##f) {                                                                              \
		fprintf(stderr, "workload: libamdhip64.so.6 lacks %s\n", #f);                      \
		return -1;                                                                         \
	}
	HIP_FNS(HIP_SYM)
#undef HIP_SYM
	p_hipExtModuleLaunchKernel =
	    (shimHipExtModuleLaunchKernel_t)dlsym(lib, SHIM_HIP_EXT_MODULE_LAUNCH_KERNEL);
	if (!p_hipExtModuleLaunchKernel) {
		fprintf(stderr, "workload: libamdhip64.so.6 lacks hipExtModuleLaunchKernel\n");
		return -1;
	}
	return 0;
}

static void wl_hip_check(hipError_t e, const char *what)
{
	if (e != hipSuccess) {
		fprintf(stderr, "workload: %s failed: %s (%d)\n", what, p_hipGetErrorString(e), e);
		exit(1);
	}
}

/* A counted call: the op, then the call, checked. */
#define WL_HIP(op, call)                                                                           \
	do {                                                                                       \
		wl_count(WL_##op);                                                                 \
		wl_hip_check(call, #op);                                                           \
	} while (0)

struct wl_hip_thread {
	hipStream_t stream;
	hipModule_t mod;
	hipFunction_t fn;
	hipEvent_t ev;
	hipGraphExec_t exec;
	void *dbuf, *hbuf, *args[1];
	size_t bytes;
};

static void wl_hip_setup(struct wl_hip_thread *t)
{
	size_t drv_copy = wl_opt.h2d ? wl_opt.h2d : 4096;

	t->bytes = wl_opt.h2d > wl_opt.d2h ? wl_opt.h2d : wl_opt.d2h;
	if (t->bytes < drv_copy)
		t->bytes = drv_copy;
	t->hbuf = calloc(1, t->bytes);
	if (!t->hbuf)
		wl_fail("out of memory", 0);
	/* Not traced, not counted: stream, module, event, graph capture. */
	wl_hip_check(p_hipStreamCreate(&t->stream), "hipStreamCreate");
	WL_HIP(hipMalloc, p_hipMalloc(&t->dbuf, t->bytes));
	t->args[0] = &t->dbuf;
	if (wl_opt.driver) {
		wl_hip_check(p_hipModuleLoadData(&t->mod, wl_code_object), "hipModuleLoadData");
		wl_hip_check(p_hipModuleGetFunction(&t->fn, t->mod, "step"),
			     "hipModuleGetFunction");
	}
	if (wl_opt.events)
		wl_hip_check(p_hipEventCreate(&t->ev), "hipEventCreate");
	if (wl_opt.graph) {
		dim3 grid = {64, 1, 1}, block = {256, 1, 1};
		hipGraph_t graph;

		wl_hip_check(p_hipStreamBeginCapture(t->stream, hipStreamCaptureModeThreadLocal),
			     "hipStreamBeginCapture");
		for (long k = 0; k < wl_opt.kernels; k++)
			WL_HIP(hipLaunchKernel,
			       p_hipLaunchKernel((const void *)(uintptr_t)wl_kernel, grid, block,
						 t->args, 0, t->stream));
		wl_hip_check(p_hipStreamEndCapture(t->stream, &graph), "hipStreamEndCapture");
		wl_hip_check(p_hipGraphInstantiate(&t->exec, graph, NULL, NULL, 0),
			     "hipGraphInstantiate");
		wl_hip_check(p_hipGraphDestroy(graph), "hipGraphDestroy");
	}
}

static void wl_hip_step(struct wl_hip_thread *t, long i)
{
	dim3 grid = {64, 1, 1}, block = {256, 1, 1};
	size_t drv_copy = wl_opt.h2d ? wl_opt.h2d : 4096;

	if (wl_opt.h2d && wl_opt.async_copy)
		WL_HIP(hipMemcpyAsync, p_hipMemcpyAsync(t->dbuf, t->hbuf, wl_opt.h2d,
							hipMemcpyHostToDevice, t->stream));
	else if (wl_opt.h2d)
		WL_HIP(hipMemcpy, p_hipMemcpy(t->dbuf, t->hbuf, wl_opt.h2d, hipMemcpyHostToDevice));
	if (wl_opt.driver) {
		WL_HIP(hipModuleLaunchKernel, p_hipModuleLaunchKernel(t->fn, 64, 1, 1, 256, 1, 1, 0,
								      t->stream, t->args, NULL));
		WL_HIP(hipExtModuleLaunchKernel,
		       p_hipExtModuleLaunchKernel(t->fn, 64 * 256, 1, 1, 256, 1, 1, 0, t->stream,
						  t->args, NULL, NULL, NULL, 0));
		WL_HIP(hipMemcpyHtoD, p_hipMemcpyHtoD(t->dbuf, t->hbuf, drv_copy));
		WL_HIP(hipMemcpyDtoH, p_hipMemcpyDtoH(t->hbuf, t->dbuf, drv_copy));
	}
	if (t->exec)
		WL_HIP(hipGraphLaunch, p_hipGraphLaunch(t->exec, t->stream));
	else
		for (long k = 0; k < wl_opt.kernels; k++)
			WL_HIP(hipLaunchKernel,
			       p_hipLaunchKernel((const void *)(uintptr_t)wl_kernel, grid, block,
						 t->args, 0, t->stream));
	if (wl_opt.events) {
		wl_hip_check(p_hipEventRecord(t->ev, t->stream), "hipEventRecord"); /* not traced */
		WL_HIP(hipEventSynchronize, p_hipEventSynchronize(t->ev));
	}
	if (wl_opt.d2h)
		WL_HIP(hipMemcpy, p_hipMemcpy(t->hbuf, t->dbuf, wl_opt.d2h, hipMemcpyDeviceToHost));
	if (wl_opt.sync_every > 0 && (i + 1) % wl_opt.sync_every == 0) {
		if (wl_opt.device_sync)
			WL_HIP(hipDeviceSynchronize, p_hipDeviceSynchronize());
		else
			WL_HIP(hipStreamSynchronize, p_hipStreamSynchronize(t->stream));
	}
	if (wl_opt.malloc_every > 0 && (i + 1) % wl_opt.malloc_every == 0) {
		void *p;

		WL_HIP(hipMalloc, p_hipMalloc(&p, wl_opt.malloc_bytes));
		WL_HIP(hipFree, p_hipFree(p));
	}
	if (wl_opt.async_malloc) {
		void *p;

		WL_HIP(hipMallocAsync, p_hipMallocAsync(&p, wl_opt.malloc_bytes, t->stream));
		wl_hip_check(p_hipFreeAsync(p, t->stream), "hipFreeAsync"); /* not traced */
	}
}

/* One thread's loop, the HIP counterpart of the CUDA one (docs/shim.md). */
void wl_hip_loop(void)
{
	struct wl_hip_thread t = {0};

	wl_hip_setup(&t);
	for (long i = 0; i < wl_opt.iters; i++) {
		wl_hip_step(&t, i);
		if (wl_opt.host_us > 0)
			wl_spin_us(wl_opt.host_us);
		if (wl_opt.sleep_us > 0)
			wl_sleep_us(wl_opt.sleep_us);
	}
	if (t.exec)
		wl_hip_check(p_hipGraphExecDestroy(t.exec), "hipGraphExecDestroy");
	if (t.ev)
		wl_hip_check(p_hipEventDestroy(t.ev), "hipEventDestroy");
	if (t.mod)
		wl_hip_check(p_hipModuleUnload(t.mod), "hipModuleUnload");
	WL_HIP(hipFree, p_hipFree(t.dbuf));
	wl_hip_check(p_hipStreamDestroy(t.stream), "hipStreamDestroy");
	free(t.hbuf);
}
