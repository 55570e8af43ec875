"""gensor: a ctypes layer over libgensor.so, the tensor-kernel constructor.

    import gensor, numpy as np
    r = gensor.construct("gemm M=100 N=60 K=37", hw="h100")
    print(r.best.config, r.best.predicted_s)
    cuda_src = r.emit("cuda")
    with gensor.Device.open("opencl") as dev, r.kernel("opencl") as k:
        A, B = np.random.rand(100, 37).astype(np.float32), np.random.rand(37, 60).astype(np.float32)
        C = np.zeros((100, 60), np.float32)
        k.run(dev, A, B, C)

Errors of the C library are raised as gensor.GensorError subclasses (one per gs_status) whose
message is gs_ctx_errmsg's.  docs/PYTHON.md has the rest.
"""
from ._lib import LibraryNotFound
from .core import (Binding, BufferInfo, Candidate, Device, Dispatch, Dispatcher, Hw, Kernel, KernelStats, Model,
                   Node, Op, Result, construct, convert, from_bf16, hw_list, import_onnx, to_bf16)
from .errors import *  # noqa: F401,F403 (the exception classes)
from .errors import GensorError, BY_STATUS

__version__ = "0.1.0"


def library_path():
    """The path of the libgensor.so this package loaded."""
    from ._lib import lib
    return lib().path
