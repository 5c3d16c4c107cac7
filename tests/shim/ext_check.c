/* ext-check: the shim's stream items completed later (what the NCCL shim
 * builds on), through the CUDA runtime: an item on stream A whose end a
 * second thread posts 40 ms later; an event recorded behind it; stream B
 * waiting for that event, then a 5 ms kernel on B. Checks that the event is
 * not ready before the post, that B's sync ends after item + kernel, that a
 * kernel queued on A behind the item follows it, and that a device sync
 * waits too. Prints one line per check; exit 0 when all hold. docs/shim.md. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "shim.h"

#define MS 1000000ULL

static shimExt item;
static int bad;

static void check(int ok, const char *what, double ms)
{
	printf("%s %s (%.2f ms)\n", ok ? "ok  " : "FAIL", what, ms);
	bad += !ok;
}

static void kernel(void)
{
}

/* The other party: posts the item's end 40 ms after the stream reached it. */
static void *poster(void *arg)
{
	unsigned long long start = shimExtStart(item);
	struct timespec ts = { 0, 20 * (long)MS };

	nanosleep(&ts, NULL); /* the end is posted before it comes */
	shimExtComplete(item, start + 40 * MS);
	return NULL;
}

int main(void)
{
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	cudaStream_t a, b;
	cudaEvent_t ev;
	pthread_t t;
	unsigned long long t0, t1;

	shimSetKernelTime(5 * MS);
	if (cudaStreamCreate(&a) || cudaStreamCreate(&b) || cudaEventCreate(&ev)) {
		fprintf(stderr, "ext-check: setup failed\n");
		return 1;
	}
	t0 = shimNow();
	if (shimExtEnqueue(a, &item) != CUDA_SUCCESS) {
		fprintf(stderr, "ext-check: shimExtEnqueue failed\n");
		return 1;
	}
	/* Behind the item on A: a kernel; an event; B waits for the event. */
	cudaLaunchKernel((const void *)(uintptr_t)kernel, grid, block, NULL, 0, a);
	cudaEventRecord(ev, a);
	cudaStreamWaitEvent(b, ev, 0);
	cudaLaunchKernel((const void *)(uintptr_t)kernel, grid, block, NULL, 0, b);
	check(cudaEventQuery(ev) == cudaErrorNotReady, "event behind an unposted item: not ready",
	      (double)(shimNow() - t0) / MS);
	pthread_create(&t, NULL, poster, NULL);
	/* B: item (40) + A's kernel (5), then its own kernel (5). */
	cudaStreamSynchronize(b);
	t1 = shimNow();
	check(t1 - t0 >= 50 * MS && t1 - t0 < 200 * MS, "stream B waited for item, kernel on A, its kernel",
	      (double)(t1 - t0) / MS);
	check(cudaEventQuery(ev) == cudaSuccess, "the event is complete afterwards",
	      (double)(shimNow() - t0) / MS);
	cudaEventSynchronize(ev);
	t1 = shimNow();
	check(t1 - t0 >= 45 * MS, "event sync: item + kernel", (double)(t1 - t0) / MS);
	/* A second item, posted at once: a device sync waits for it. */
	shimExtEnqueue(a, &item);
	shimExtComplete(item, shimExtStart(item) + 10 * MS);
	t0 = shimNow();
	cudaDeviceSynchronize();
	t1 = shimNow();
	check(t1 - t0 >= 9 * MS, "device sync waits for a posted item", (double)(t1 - t0) / MS);
	pthread_join(t, NULL);
	cudaEventDestroy(ev);
	cudaStreamDestroy(a);
	cudaStreamDestroy(b);
	return bad ? 1 : 0;
}
