"""Calls the shim CUDA runtime through ctypes from known functions at known
lines, for the stack tests (tests/integration/test_stacks.sh finds the lines
by their markers). One warm-up call, a pause so the tracer can find the
interpreter, then the measured calls.

    python3 ctypes_calls.py LIBCUDART [CALLS] [PAUSE_S]
"""
import ctypes
import sys
import time


def warm_up(lib):
    p = ctypes.c_void_p()
    lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(64))  # MARK_WARM
    lib.cudaFree(p)


def alloc_step(lib, n):
    p = ctypes.c_void_p()
    rc = lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))  # MARK_MALLOC
    lib.cudaFree(p)  # MARK_FREE
    return rc


class Trainer:
    def __init__(self, lib):
        self.lib = lib

    def train(self, calls):
        rc = 0
        for i in range(calls):
            rc |= alloc_step(self.lib, 1024 * (i % 4 + 1))  # MARK_TRAIN
        return rc


def main():
    lib = ctypes.CDLL(sys.argv[1])
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    warm_up(lib)
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    t0 = time.perf_counter()
    rc = Trainer(lib).train(calls)  # MARK_MAIN
    loop_s = time.perf_counter() - t0
    time.sleep(0.3)
    print("ctypes_calls: %d calls, status %d, loop_s=%.6f" % (calls, rc, loop_s))
    return rc


sys.exit(main())  # MARK_MODULE
