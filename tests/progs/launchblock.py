"""A training-like loop over the shim CUDA runtime through ctypes that sets
CUDA_LAUNCH_BLOCKING=1 itself, as a script does with os.environ before it
imports torch: the variable is in its live environment only, not in
/proc/PID/environ. Each step: host work (a Python busy loop), K kernel
launches, one stream synchronisation. It measures its own time in launches
and prints a JSON truth line at the end:

    python3 launchblock.py --lib LIBCUDART [--seconds S] [--host-us U]
        [--kernels K] [--kernel-us U] [--no-env] [--truth FILE]

The shim reads CUDA_LAUNCH_BLOCKING and SHIM_SYNC at its first call, as
the driver does at cuInit: with it, each launch returns once its kernel has
ended (tests/shim/simgpu.c sim_launch).
"""
import argparse
import ctypes
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--host-us", type=float, default=1500)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--kernel-us", type=float, default=500)
    ap.add_argument("--no-env", action="store_true")
    ap.add_argument("--truth")
    a = ap.parse_args()
    if not a.no_env:
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # the line advice tells to remove
    os.environ.setdefault("SHIM_SYNC", "spin")  # the driver's default with a free core
    lib = ctypes.CDLL(a.lib)
    lib.shimSetKernelTime(ctypes.c_ulonglong(int(a.kernel_us * 1000)))
    stream = ctypes.c_void_p()
    buf = ctypes.c_void_p()
    lib.cudaStreamCreate(ctypes.byref(stream))
    lib.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(4096))
    args = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
    # cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream): a
    # dim3 (12 bytes) goes in two registers on x86-64, x | y << 32 and z
    launch = lib.cudaLaunchKernel
    launch.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64,
                       ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    func = ctypes.cast(lib.cudaMalloc, ctypes.c_void_p)
    now = time.perf_counter_ns
    launch_ns = steps = 0
    first = now()
    end = first + int(a.seconds * 1e9)
    t = first
    while t < end:
        spin = t + int(a.host_us * 1000)
        while now() < spin:
            pass
        b = now()
        for _ in range(a.kernels):
            launch(func, 64 | (1 << 32), 1, 256 | (1 << 32), 1, args, 0, stream)
        t = now()
        launch_ns += t - b
        lib.cudaStreamSynchronize(stream)
        t = now()
        steps += 1
    truth = {"generator": "launchblock", "pid": os.getpid(), "steps": steps,
             "wall_ns": t - first, "launch_ns": launch_ns, "env": not a.no_env}
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(truth, f)
    print(json.dumps(truth))
    return 0


sys.exit(main())
