/* The workload's CUDA 12/13 calls (--launch-ex, --async-malloc, --memset,
 * --events, --pinned, --driver-ext, --modules): each call counted under the
 * runtime op and the driver op the shim runtime makes for it, when that
 * driver op is traced. docs/shim.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

/* A fake code image: the shim only needs a non-NULL pointer. */
static const unsigned char wl_image[16] = "shim-cubin-0001";

void wl_ext_setup(struct wl_ext *x)
{
	if (wl_opt.events) {
		/* Not traced, not counted. */
		wl_check(cudaStreamCreate(&x->side), "cudaStreamCreate");
		wl_check(cudaEventCreateWithFlags(&x->ev, cudaEventDisableTiming),
			 "cudaEventCreateWithFlags");
	}
	if (wl_opt.modules > 0) {
		x->mods = calloc((size_t)wl_opt.modules, sizeof(*x->mods));
		x->libs = calloc((size_t)wl_opt.modules, sizeof(*x->libs));
		if (!x->mods || !x->libs)
			wl_fail("out of memory", 0);
		/* Cold start: the first load of the process pays the most. */
		for (long i = 0; i < wl_opt.modules; i++) {
			wl_count(WL_cuModuleLoadData);
			wl_check_cu(cuModuleLoadData(&x->mods[i], wl_image), "cuModuleLoadData");
			wl_count(WL_cuLibraryLoadData);
			wl_check_cu(
			    cuLibraryLoadData(&x->libs[i], wl_image, NULL, NULL, 0, NULL, NULL, 0),
			    "cuLibraryLoadData");
		}
	}
}

void *wl_ext_host_buffer(struct wl_ext *x, size_t bytes)
{
	void *p;

	if (!wl_opt.pinned) {
		p = calloc(1, bytes);
		if (!p)
			wl_fail("out of memory", 0);
		return p;
	}
	/* Two page-locked buffers, one from each call; the first is used. */
	wl_count(WL_cudaMallocHost);
	wl_check(cudaMallocHost(&x->pin[0], bytes), "cudaMallocHost");
	wl_count(WL_cudaHostAlloc);
	wl_check(cudaHostAlloc(&x->pin[1], bytes, cudaHostAllocPortable), "cudaHostAlloc");
	return x->pin[0];
}

static void wl_launch_ex(cudaStream_t stream, void **args)
{
	cudaLaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .val = {.priority = 0}};
	cudaLaunchConfig_t cfg = {
	    .gridDim = {64, 1, 1},
	    .blockDim = {256, 1, 1},
	    .dynamicSmemBytes = 0,
	    .stream = stream,
	    .attrs = &attr,
	    .numAttrs = 1,
	};

	wl_count(WL_cudaLaunchKernelExC);
	wl_count(WL_cuLaunchKernelEx);
	wl_check(cudaLaunchKernelExC(&cfg, (const void *)(uintptr_t)wl_kernel, args),
		 "cudaLaunchKernelExC");
}

/* --driver-ext: one of each driver call, on a stream-ordered scratch buffer:
 * launch, H2D, D2D both ways (async and not), D2H, then the free. */
static void wl_driver_ext(cudaStream_t stream, void *dbuf, void *hbuf, size_t bytes, void **args)
{
	CUlaunchConfig cfg = {.gridDimX = 64,
			      .gridDimY = 1,
			      .gridDimZ = 1,
			      .blockDimX = 256,
			      .blockDimY = 1,
			      .blockDimZ = 1,
			      .hStream = stream};
	CUdeviceptr tmp;

	wl_count(WL_cuLaunchKernelEx);
	wl_check_cu(cuLaunchKernelEx(&cfg, (CUfunction)(uintptr_t)wl_kernel, args, NULL),
		    "cuLaunchKernelEx");
	wl_count(WL_cuMemAllocAsync);
	wl_check_cu(cuMemAllocAsync(&tmp, bytes, stream), "cuMemAllocAsync");
	wl_count(WL_cuMemcpyHtoDAsync);
	wl_check_cu(cuMemcpyHtoDAsync_v2((CUdeviceptr)dbuf, hbuf, bytes, stream),
		    "cuMemcpyHtoDAsync_v2");
	wl_count(WL_cuMemcpyDtoDAsync);
	wl_check_cu(cuMemcpyDtoDAsync_v2(tmp, (CUdeviceptr)dbuf, bytes, stream),
		    "cuMemcpyDtoDAsync_v2");
	wl_count(WL_cuMemcpyDtoD);
	wl_check_cu(cuMemcpyDtoD_v2((CUdeviceptr)dbuf, tmp, bytes), "cuMemcpyDtoD_v2");
	wl_count(WL_cuMemcpyDtoHAsync);
	wl_check_cu(cuMemcpyDtoHAsync_v2(hbuf, tmp, bytes, stream), "cuMemcpyDtoHAsync_v2");
	wl_count(WL_cuMemFreeAsync);
	wl_check_cu(cuMemFreeAsync(tmp, stream), "cuMemFreeAsync");
}

/* The step's part after the kernels, in this order: --driver-ext,
 * --launch-ex, --memset, --events, --async-malloc. */
void wl_ext_step(struct wl_ext *x, cudaStream_t stream, void *dbuf, void *hbuf, size_t bytes,
		 void **args)
{
	cudaError_t e;

	if (wl_opt.driver_ext)
		wl_driver_ext(stream, dbuf, hbuf, bytes, args);
	for (long i = 0; i < wl_opt.launch_ex; i++)
		wl_launch_ex(stream, args);
	if (wl_opt.memset) {
		wl_count(WL_cudaMemset); /* cuMemsetD8_v2: not traced */
		wl_check(cudaMemset(dbuf, 0, bytes), "cudaMemset");
		wl_count(WL_cudaMemsetAsync); /* cuMemsetD8Async: not traced */
		wl_check(cudaMemsetAsync(dbuf, 0, bytes, stream), "cudaMemsetAsync");
	}
	if (wl_opt.events) {
		/* The driver calls (cuEventRecord, ...) are not traced. */
		wl_count(WL_cudaEventRecord);
		wl_check(cudaEventRecord(x->ev, stream), "cudaEventRecord");
		wl_count(WL_cudaEventQuery);
		e = cudaEventQuery(x->ev);
		if (e != cudaErrorNotReady)
			wl_check(e, "cudaEventQuery");
		wl_count(WL_cudaStreamWaitEvent);
		wl_check(cudaStreamWaitEvent(x->side, x->ev, 0), "cudaStreamWaitEvent");
		wl_count(WL_cudaEventSynchronize);
		wl_check(cudaEventSynchronize(x->ev), "cudaEventSynchronize");
	}
	if (wl_opt.async_malloc) {
		void *p;

		wl_count(WL_cudaMallocAsync);
		wl_count(WL_cuMemAllocAsync);
		wl_check(cudaMallocAsync(&p, wl_opt.malloc_bytes, stream), "cudaMallocAsync");
		wl_count(WL_cudaFreeAsync);
		wl_count(WL_cuMemFreeAsync);
		wl_check(cudaFreeAsync(p, stream), "cudaFreeAsync");
	}
}

void wl_ext_teardown(struct wl_ext *x)
{
	for (int i = 0; i < 2; i++) {
		if (x->pin[i]) {
			wl_count(WL_cudaFreeHost);
			wl_check(cudaFreeHost(x->pin[i]), "cudaFreeHost");
		}
	}
	if (x->ev) {
		wl_check(cudaEventDestroy(x->ev), "cudaEventDestroy");
		wl_check(cudaStreamDestroy(x->side), "cudaStreamDestroy");
	}
	for (long i = 0; x->mods && i < wl_opt.modules; i++) {
		wl_check_cu(cuModuleUnload(x->mods[i]), "cuModuleUnload");
		wl_check_cu(cuLibraryUnload(x->libs[i]), "cuLibraryUnload");
	}
	free(x->mods);
	free(x->libs);
}
