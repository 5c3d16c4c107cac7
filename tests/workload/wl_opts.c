/* The workload's command line: usage, flag parsing and the combinations
 * that cannot work. Flags: docs/shim.md. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static void wl_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: workload [options]   (a training-like loop over the CUDA shim)\n"
	    "  --iters N             steps per thread (100)\n"
	    "  --kernels K           cudaLaunchKernel per step (4)\n"
	    "  --kernel-us U         simulated kernel time (shim default: SHIM_KERNEL_US or 100)\n"
	    "  --h2d BYTES           a cudaMemcpy host-to-device per step\n"
	    "  --d2h BYTES           a cudaMemcpy device-to-host per step\n"
	    "  --async-copy          the h2d copy is a cudaMemcpyAsync on the thread's stream\n"
	    "  --sync-every S        cudaStreamSynchronize every S steps (1; 0 = never)\n"
	    "  --device-sync         cudaDeviceSynchronize instead of cudaStreamSynchronize\n"
	    "  --malloc-every M      cudaMalloc + cudaFree every M steps (0 = never)\n"
	    "  --malloc-bytes B      size of those allocations (1048576)\n"
	    "  --slow-malloc-every P every P-th of those allocations is slow (implies\n"
	    "                        --malloc-every 1 when that is 0)\n"
	    "  --slow-malloc-us U    CPU time of a slow allocation (5000)\n"
	    "  --threads T           T worker threads, each running the loop (1)\n"
	    "  --fork                also fork a child process that runs the same loop\n"
	    "  --driver              each step also calls cuLaunchKernel and cuMemcpyHtoD_v2\n"
	    "  --graph               capture the step's kernels once; one cudaGraphLaunch per "
	    "step\n"
	    "  --host-us U           busy CPU work after each step\n"
	    "  --sleep-us U          sleep after each step\n"
	    "  --warmup-slow N       the first N cudaLaunchKernel of the process are slow\n"
	    "  --warmup-us U         launch CPU time of those slow launches (2000)\n"
	    "  --wait-signal         print \"ready PID\", wait for SIGUSR1, then start\n"
	    "  --start-delay-ms MS   sleep before starting\n"
	    "  --expect FILE         write the op counts a tracer must see\n"
	    "  --progress FILE       after each iteration of thread 0, append \"UNIX_NS\n"
	    "                        CALLS\": the traced calls made so far, all ended\n"
	    "  --cpu N               pin the workload to CPU N\n"
	    "  --check-errors        first check the shim's error codes (counted too)\n"
	    "CUDA 12/13 calls, per step unless said:\n"
	    "  --launch-ex N         N cudaLaunchKernelExC\n"
	    "  --async-malloc        cudaMallocAsync + cudaFreeAsync of --malloc-bytes\n"
	    "  --memset              cudaMemset + cudaMemsetAsync of the device buffer\n"
	    "  --events              cudaEventRecord, cudaEventQuery, cudaStreamWaitEvent,\n"
	    "                        cudaEventSynchronize\n"
	    "  --pinned              per thread: host buffers from cudaMallocHost and\n"
	    "                        cudaHostAlloc, freed with cudaFreeHost\n"
	    "  --driver-ext          cuLaunchKernelEx, cuMemAllocAsync, cuMemcpyHtoDAsync,\n"
	    "                        cuMemcpyDtoDAsync, cuMemcpyDtoD, cuMemcpyDtoHAsync,\n"
	    "                        cuMemFreeAsync\n"
	    "  --modules N           per thread: N cuModuleLoadData + N cuLibraryLoadData\n"
	    "NCCL (any --nccl-* implies --nccl):\n"
	    "  --nccl                per step, each op for each data type, then the sync\n"
	    "  --nccl-types LIST     data types, comma-separated, or all (all)\n"
	    "  --nccl-ops LIST       allreduce,allgather,reducescatter,broadcast,bcast,\n"
	    "                        reduce,sendrecv or all (all)\n"
	    "  --nccl-count C        elements per call; type index t adds t (1024)\n"
	    "  --nccl-ranks N        ranks (1; 2 with --fork: the child is rank 1)\n"
	    "  --nccl-rank R         this process's rank when each rank is started alone\n"
	    "  --nccl-id FILE        rank 0 writes the unique ids there, the others read\n"
	    "  --straggler-rank R    that rank busy-spins --straggler-us before the\n"
	    "  --straggler-us U      collectives of every step (a slow host)\n"
	    "HIP:\n"
	    "  --hip                 the loop over libamdhip64.so.6 instead of CUDA\n"
	    "  -h, --help\n");
}

static int wl_parse_long(const char *s, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

static int wl_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

enum {
	OPT_ITERS = 256,
	OPT_KERNELS,
	OPT_KERNEL_US,
	OPT_H2D,
	OPT_D2H,
	OPT_ASYNC_COPY,
	OPT_SYNC_EVERY,
	OPT_DEVICE_SYNC,
	OPT_MALLOC_EVERY,
	OPT_MALLOC_BYTES,
	OPT_SLOW_MALLOC_EVERY,
	OPT_SLOW_MALLOC_US,
	OPT_THREADS,
	OPT_FORK,
	OPT_DRIVER,
	OPT_GRAPH,
	OPT_HOST_US,
	OPT_SLEEP_US,
	OPT_WARMUP_SLOW,
	OPT_WARMUP_US,
	OPT_WAIT_SIGNAL,
	OPT_START_DELAY_MS,
	OPT_EXPECT,
	OPT_PROGRESS,
	OPT_CPU,
	OPT_CHECK_ERRORS,
	OPT_LAUNCH_EX,
	OPT_ASYNC_MALLOC,
	OPT_MEMSET,
	OPT_EVENTS,
	OPT_PINNED,
	OPT_DRIVER_EXT,
	OPT_MODULES,
	OPT_NCCL,
	OPT_NCCL_TYPES,
	OPT_NCCL_OPS,
	OPT_NCCL_COUNT,
	OPT_NCCL_RANKS,
	OPT_NCCL_RANK,
	OPT_NCCL_ID,
	OPT_STRAGGLER_RANK,
	OPT_STRAGGLER_US,
	OPT_HIP,
};

static const struct option wl_longopts[] = {
    {"iters", required_argument, NULL, OPT_ITERS},
    {"kernels", required_argument, NULL, OPT_KERNELS},
    {"kernel-us", required_argument, NULL, OPT_KERNEL_US},
    {"h2d", required_argument, NULL, OPT_H2D},
    {"d2h", required_argument, NULL, OPT_D2H},
    {"async-copy", no_argument, NULL, OPT_ASYNC_COPY},
    {"sync-every", required_argument, NULL, OPT_SYNC_EVERY},
    {"device-sync", no_argument, NULL, OPT_DEVICE_SYNC},
    {"malloc-every", required_argument, NULL, OPT_MALLOC_EVERY},
    {"malloc-bytes", required_argument, NULL, OPT_MALLOC_BYTES},
    {"slow-malloc-every", required_argument, NULL, OPT_SLOW_MALLOC_EVERY},
    {"slow-malloc-us", required_argument, NULL, OPT_SLOW_MALLOC_US},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"fork", no_argument, NULL, OPT_FORK},
    {"driver", no_argument, NULL, OPT_DRIVER},
    {"graph", no_argument, NULL, OPT_GRAPH},
    {"host-us", required_argument, NULL, OPT_HOST_US},
    {"sleep-us", required_argument, NULL, OPT_SLEEP_US},
    {"warmup-slow", required_argument, NULL, OPT_WARMUP_SLOW},
    {"warmup-us", required_argument, NULL, OPT_WARMUP_US},
    {"wait-signal", no_argument, NULL, OPT_WAIT_SIGNAL},
    {"start-delay-ms", required_argument, NULL, OPT_START_DELAY_MS},
    {"expect", required_argument, NULL, OPT_EXPECT},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"check-errors", no_argument, NULL, OPT_CHECK_ERRORS},
    {"launch-ex", required_argument, NULL, OPT_LAUNCH_EX},
    {"async-malloc", no_argument, NULL, OPT_ASYNC_MALLOC},
    {"memset", no_argument, NULL, OPT_MEMSET},
    {"events", no_argument, NULL, OPT_EVENTS},
    {"pinned", no_argument, NULL, OPT_PINNED},
    {"driver-ext", no_argument, NULL, OPT_DRIVER_EXT},
    {"modules", required_argument, NULL, OPT_MODULES},
    {"nccl", no_argument, NULL, OPT_NCCL},
    {"nccl-types", required_argument, NULL, OPT_NCCL_TYPES},
    {"nccl-ops", required_argument, NULL, OPT_NCCL_OPS},
    {"nccl-count", required_argument, NULL, OPT_NCCL_COUNT},
    {"nccl-ranks", required_argument, NULL, OPT_NCCL_RANKS},
    {"nccl-rank", required_argument, NULL, OPT_NCCL_RANK},
    {"nccl-id", required_argument, NULL, OPT_NCCL_ID},
    {"straggler-rank", required_argument, NULL, OPT_STRAGGLER_RANK},
    {"straggler-us", required_argument, NULL, OPT_STRAGGLER_US},
    {"hip", no_argument, NULL, OPT_HIP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The options of the NCCL, CUDA 12/13 and HIP families; 1 when c is not
 * one of them. */
static int wl_parse_more(int c, int *bad)
{
	long v = 0;

	switch (c) {
	case OPT_LAUNCH_EX:
		*bad = wl_parse_long(optarg, 0, &wl_opt.launch_ex);
		break;
	case OPT_ASYNC_MALLOC:
		wl_opt.async_malloc = 1;
		break;
	case OPT_MEMSET:
		wl_opt.memset = 1;
		break;
	case OPT_EVENTS:
		wl_opt.events = 1;
		break;
	case OPT_PINNED:
		wl_opt.pinned = 1;
		break;
	case OPT_DRIVER_EXT:
		wl_opt.driver_ext = 1;
		break;
	case OPT_MODULES:
		*bad = wl_parse_long(optarg, 0, &wl_opt.modules) || wl_opt.modules > 4096;
		break;
	case OPT_NCCL:
		break;
	case OPT_NCCL_TYPES:
		*bad = wl_nccl_parse_types(optarg, &wl_opt.nccl_types);
		break;
	case OPT_NCCL_OPS:
		*bad = wl_nccl_parse_ops(optarg, &wl_opt.nccl_ops);
		break;
	case OPT_NCCL_COUNT:
		*bad =
		    wl_parse_long(optarg, 0, &wl_opt.nccl_count) || wl_opt.nccl_count > (1L << 40);
		break;
	case OPT_NCCL_RANKS:
		*bad = wl_parse_long(optarg, 1, &v) || v > 8;
		wl_opt.nccl_ranks = (int)v;
		break;
	case OPT_NCCL_RANK:
		*bad = wl_parse_long(optarg, 0, &v) || v > 7;
		wl_opt.nccl_rank = (int)v;
		break;
	case OPT_NCCL_ID:
		wl_opt.nccl_id = optarg;
		break;
	case OPT_STRAGGLER_RANK:
		*bad = wl_parse_long(optarg, 0, &v) || v > 7;
		wl_opt.straggler_rank = (int)v;
		break;
	case OPT_STRAGGLER_US:
		*bad = wl_parse_double(optarg, &wl_opt.straggler_us);
		break;
	case OPT_HIP:
		wl_opt.hip = 1;
		return 0;
	default:
		return 1;
	}
	if (c >= OPT_NCCL && c <= OPT_STRAGGLER_US)
		wl_opt.nccl = 1;
	return 0;
}

/* Flag combinations that cannot work; -1 with a one-line message. */
static int wl_validate(void)
{
	if (wl_opt.nccl) {
		int want = wl_opt.fork ? 2 : 1;

		if (!wl_opt.nccl_ranks)
			wl_opt.nccl_ranks = want;
		if (wl_opt.fork && (wl_opt.nccl_ranks != 2 || wl_opt.nccl_rank)) {
			fprintf(stderr, "workload: --nccl with --fork runs ranks 0 and 1 of 2\n");
			return -1;
		}
		if (wl_opt.nccl_rank >= wl_opt.nccl_ranks) {
			fprintf(stderr, "workload: --nccl-rank %d is not below --nccl-ranks %d\n",
				wl_opt.nccl_rank, wl_opt.nccl_ranks);
			return -1;
		}
		if (!wl_opt.fork && wl_opt.nccl_ranks > 1 && !wl_opt.nccl_id) {
			fprintf(stderr,
				"workload: --nccl-ranks %d needs --nccl-id FILE or --fork\n",
				wl_opt.nccl_ranks);
			return -1;
		}
	}
	if (wl_opt.hip && (wl_opt.nccl || wl_opt.launch_ex || wl_opt.memset || wl_opt.pinned ||
			   wl_opt.driver_ext || wl_opt.modules || wl_opt.check_errors ||
			   wl_opt.slow_malloc_every || wl_opt.warmup_slow)) {
		fprintf(stderr, "workload: --hip takes no CUDA-only flag (--nccl, --launch-ex, "
				"--memset, --pinned, --driver-ext, --modules, --check-errors, "
				"--slow-malloc-every, --warmup-slow)\n");
		return -1;
	}
	return 0;
}

int wl_parse(int argc, char **argv)
{
	long v;
	int c;

	while ((c = getopt_long(argc, argv, "h", wl_longopts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_ITERS:
			bad = wl_parse_long(optarg, 0, &wl_opt.iters);
			break;
		case OPT_KERNELS:
			bad = wl_parse_long(optarg, 0, &wl_opt.kernels);
			break;
		case OPT_KERNEL_US:
			bad = wl_parse_double(optarg, &wl_opt.kernel_us);
			break;
		case OPT_H2D:
			bad = wl_parse_long(optarg, 0, &v);
			wl_opt.h2d = (size_t)v;
			break;
		case OPT_D2H:
			bad = wl_parse_long(optarg, 0, &v);
			wl_opt.d2h = (size_t)v;
			break;
		case OPT_ASYNC_COPY:
			wl_opt.async_copy = 1;
			break;
		case OPT_SYNC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.sync_every);
			break;
		case OPT_DEVICE_SYNC:
			wl_opt.device_sync = 1;
			break;
		case OPT_MALLOC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.malloc_every);
			break;
		case OPT_MALLOC_BYTES:
			bad = wl_parse_long(optarg, 1, &v);
			wl_opt.malloc_bytes = (size_t)v;
			break;
		case OPT_SLOW_MALLOC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.slow_malloc_every);
			break;
		case OPT_SLOW_MALLOC_US:
			bad = wl_parse_double(optarg, &wl_opt.slow_malloc_us);
			break;
		case OPT_THREADS:
			bad = wl_parse_long(optarg, 1, &v) || v > 1024;
			wl_opt.threads = (int)v;
			break;
		case OPT_FORK:
			wl_opt.fork = 1;
			break;
		case OPT_DRIVER:
			wl_opt.driver = 1;
			break;
		case OPT_GRAPH:
			wl_opt.graph = 1;
			break;
		case OPT_HOST_US:
			bad = wl_parse_double(optarg, &wl_opt.host_us);
			break;
		case OPT_SLEEP_US:
			bad = wl_parse_double(optarg, &wl_opt.sleep_us);
			break;
		case OPT_WARMUP_SLOW:
			bad = wl_parse_long(optarg, 0, &wl_opt.warmup_slow);
			break;
		case OPT_WARMUP_US:
			bad = wl_parse_double(optarg, &wl_opt.warmup_us);
			break;
		case OPT_WAIT_SIGNAL:
			wl_opt.wait_signal = 1;
			break;
		case OPT_START_DELAY_MS:
			bad = wl_parse_long(optarg, 0, &wl_opt.start_delay_ms);
			break;
		case OPT_EXPECT:
			wl_opt.expect = optarg;
			break;
		case OPT_PROGRESS:
			wl_opt.progress = optarg;
			break;
		case OPT_CPU:
			bad = wl_parse_long(optarg, 0, &v) || v >= CPU_SETSIZE;
			wl_opt.cpu = (int)v;
			break;
		case OPT_CHECK_ERRORS:
			wl_opt.check_errors = 1;
			break;
		case 'h':
			wl_usage(stdout);
			exit(0);
		default:
			if (wl_parse_more(c, &bad)) {
				wl_usage(stderr);
				return -1;
			}
		}
		if (bad) {
			fprintf(stderr, "workload: bad value for --%s: %s\n",
				wl_longopts[c - OPT_ITERS].name, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "workload: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (wl_opt.slow_malloc_every > 0 && !wl_opt.malloc_every)
		wl_opt.malloc_every = 1;
	return wl_validate();
}
