"""The shim CUDA runtime through ctypes for the Python test loops
(launchblock.py, pollfeed.py): a stream, a device buffer and one kernel
launch on it, each call one traced call; and the options and the JSON
truth both loops have.

    ap = shimloop.parser(kernel_us)    # --lib, --seconds, --kernel-us, --truth
    launch, sync = shimloop.open_shim(a.lib, a.kernel_us)
    shimloop.write_truth(a, {...})    # to --truth and stdout
"""
import argparse
import ctypes
import json
import os


def parser(kernel_us):
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--kernel-us", type=float, default=kernel_us)
    ap.add_argument("--truth")
    return ap


def write_truth(a, truth):
    truth = dict(truth, pid=os.getpid())
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(truth, f)
    print(json.dumps(truth))


def open_shim(path, kernel_us):
    lib = ctypes.CDLL(path)
    lib.shimSetKernelTime(ctypes.c_ulonglong(int(kernel_us * 1000)))
    stream, buf = ctypes.c_void_p(), ctypes.c_void_p()
    lib.cudaStreamCreate(ctypes.byref(stream))
    lib.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(4096))
    args = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
    # cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream): a
    # dim3 (12 bytes) goes in two registers on x86-64, x | y << 32 and z
    launch = lib.cudaLaunchKernel
    launch.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64,
                       ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    func = ctypes.cast(lib.cudaMalloc, ctypes.c_void_p)

    def launch_one():
        launch(func, 64 | (1 << 32), 1, 256 | (1 << 32), 1, args, 0, stream)

    def sync():
        lib.cudaStreamSynchronize(stream)

    return launch_one, sync
