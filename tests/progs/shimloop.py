"""The shim CUDA runtime through ctypes for the Python test loops
(launchblock.py, pollfeed.py): a stream, a device buffer and one kernel
launch on it, each call one traced call.

    lib, step = shimloop.open_shim(path, kernel_us)
    step(sync=True)   # cudaLaunchKernel, then cudaStreamSynchronize
"""
import ctypes


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
