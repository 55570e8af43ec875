"""Finding libgensor.so and declaring the C functions the package calls.

The search order: $GENSOR_LIB (a path to the library), a libgensor.so
bundled next to this file, then the system loader (ctypes.util.find_library
and the soname libgensor.so.0, so that `make install`'s copy and
LD_LIBRARY_PATH work).  Every function used is declared here with its
argtypes and restype: ctypes would otherwise pass Python ints as C int and
truncate pointers and int64_t values.
"""
import ctypes
import ctypes.util
import os
import threading

SONAME = "libgensor.so.0"

c_int, c_int64, c_uint64, c_double, c_float = ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_double, ctypes.c_float
c_char_p, c_void_p, c_size_t = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
POINTER, byref = ctypes.POINTER, ctypes.byref


class LibraryNotFound(OSError):
    """libgensor.so could not be found or loaded (the message lists where it looked)."""


def _candidates():
    env = os.environ.get("GENSOR_LIB")
    if env:
        # an explicit choice is the only one tried: a wrong path must not fall back silently
        return [("$GENSOR_LIB", env)], True
    here = os.path.dirname(os.path.abspath(__file__))
    out = [("bundled", os.path.join(here, name)) for name in ("libgensor.so", SONAME)]
    found = ctypes.util.find_library("gensor")
    if found:
        out.append(("find_library", found))
    out.append(("soname", SONAME))
    return out, False


def _load():
    tried = []
    cands, explicit = _candidates()
    for how, path in cands:
        if how == "bundled" and not os.path.exists(path):
            tried.append("%s %s (absent)" % (how, path))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s %s (%s)" % (how, path, e))
    hint = "" if explicit else "; set GENSOR_LIB to the path of libgensor.so (make builds build/libgensor.so)"
    raise LibraryNotFound("gensor: cannot load libgensor.so: tried " + "; ".join(tried) + hint)


# ---- structures of include/gensor.h (python/tests checks their layout against the C compiler's) ----
class ConstructOpts(ctypes.Structure):
    _fields_ = [("seed", c_uint64), ("top_k", c_int), ("chains", c_int), ("t_start", c_double),
                ("t_threshold", c_double), ("policy", c_int), ("strategy", c_int), ("max_ms", c_double),
                ("conv_form", c_int), ("split_atomic", c_int), ("threads", c_int), ("reserved", c_int)]


class LaunchArg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("role", c_int), ("type", c_char_p), ("index", c_int),
                ("dim", c_int), ("bytes", c_int64), ("elems", c_int64), ("ivalue", c_int64), ("fvalue", c_double),
                ("zero_first", c_int)]


class KernelStats(ctypes.Structure):
    _fields_ = [("arch", c_int), ("registers", c_int), ("spill_store_bytes", c_int64),
                ("spill_load_bytes", c_int64), ("smem_bytes", c_int64), ("stack_bytes", c_int64),
                ("compile_s", c_double)]


class ModelBinding(ctypes.Structure):
    _fields_ = [("buffer", c_char_p), ("tensor", c_char_p), ("constant", c_int), ("output", c_int)]


class ModelNode(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("op_type", c_char_p), ("kind", c_int), ("op", c_void_p),
                ("fused_into", c_int), ("reason", c_char_p), ("out_init", c_char_p), ("nbindings", c_int),
                ("bindings", POINTER(ModelBinding))]


class DispatchOpts(ctypes.Structure):
    _fields_ = [("dialect", c_int), ("arch", c_int), ("cache_dir", c_char_p), ("construct", ConstructOpts),
                ("warm_start", c_int), ("warm_chains", c_int), ("reuse_tol", c_double), ("compile", c_int)]


class KernelHandle(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 48), ("key", c_uint64), ("grid", c_int64), ("block", c_int64),
                ("smem_bytes", c_int64), ("nint", c_int), ("int_args", ctypes.c_int32 * 48), ("alpha", c_float),
                ("beta", c_float), ("has_bias", c_int), ("hit", c_int), ("disk_hit", c_int), ("new_shape", c_int),
                ("constructed", c_int), ("warm", c_int), ("memo", c_int), ("predicted_s", c_double),
                ("construct_s", c_double), ("compile_s", c_double), ("dispatch_s", c_double),
                ("binary_kind", c_char_p), ("binary", c_void_p), ("binary_len", c_size_t), ("program", c_void_p),
                ("config", ctypes.c_char * 200), ("workspace_bytes", c_int64)]


class DispatchStats(ctypes.Structure):
    _fields_ = [(f, c_int64) for f in ("dispatches", "shapes", "constructions", "compiles", "hits", "disk_hits",
                                       "kernels", "warm_kept", "memo_hits", "tie_reused", "cache_corrupt",
                                       "cache_write_errors")] + \
               [(f, c_double) for f in ("construct_ms", "construct_cpu_ms", "compile_ms", "dispatch_ms")]


STRUCTS = {"gs_construct_opts": ConstructOpts, "gs_launch_arg": LaunchArg, "gs_kernel_stats": KernelStats,
           "gs_model_binding": ModelBinding, "gs_model_node": ModelNode, "gs_dispatch_opts": DispatchOpts,
           "gs_kernel_handle": KernelHandle, "gs_dispatch_stats": DispatchStats}

LAUNCH_MAX_ARGS = 48  # GS_LAUNCH_MAX_ARGS

P = c_void_p  # every opaque handle
PP = POINTER(c_void_p)
_SIGS = {
    "gs_status_str": (c_char_p, [c_int]),
    "gs_ctx_create": (P, []),
    "gs_ctx_destroy": (None, [P]),
    "gs_ctx_errmsg": (c_char_p, [P]),
    # operators
    "gs_op_parse": (c_int, [P, c_char_p, PP]),
    "gs_op_create_gemm": (c_int, [P, c_int64, c_int64, c_int64, c_int, c_int, c_float, c_float, PP]),
    "gs_op_set_dtype": (c_int, [P, P, c_int, c_int]),
    "gs_op_set_math": (c_int, [P, P, c_int]),
    "gs_op_destroy": (None, [P]),
    "gs_op_spec": (c_char_p, [P]),
    "gs_op_flops": (c_double, [P]),
    "gs_op_num_buffers": (c_int, [P]),
    "gs_op_buffer_elems": (c_int64, [P, c_int]),
    "gs_op_buffer_dtype": (c_int, [P, c_int]),
    "gs_op_buffer_bytes": (c_int64, [P, c_int]),
    "gs_op_buffer_name": (c_char_p, [P, c_int]),
    "gs_dtype_name": (c_char_p, [c_int]),
    "gs_dtype_convert": (c_int, [P, c_int, P, c_int, P, c_int64]),
    # profiles
    "gs_hw_load": (c_int, [P, c_char_p, PP]),
    "gs_hw_parse": (c_int, [P, c_char_p, PP]),
    "gs_hw_save": (c_int, [P, P, c_char_p]),
    "gs_hw_query": (c_int, [P, P, c_char_p, PP]),
    "gs_hw_destroy": (None, [P]),
    "gs_hw_builtin_count": (c_int, []),
    "gs_hw_builtin_name": (c_char_p, [c_int]),
    "gs_hw_name": (c_char_p, [P]),
    "gs_hw_sm": (c_int, [P]),
    # construction
    "gs_policy_parse": (c_int, [P, c_char_p, POINTER(c_int)]),
    "gs_strategy_parse": (c_int, [P, c_char_p, POINTER(c_int)]),
    "gs_construct_opts_default": (None, [POINTER(ConstructOpts)]),
    "gs_construct": (c_int, [P, P, P, POINTER(ConstructOpts), PP]),
    "gs_construct_config": (c_int, [P, P, P, c_char_p, PP]),
    "gs_result_form": (c_char_p, [P]),
    "gs_result_destroy": (None, [P]),
    "gs_result_count": (c_int, [P]),
    "gs_result_predicted_s": (c_double, [P, c_int]),
    "gs_result_construct_s": (c_double, [P]),
    "gs_result_describe": (c_char_p, [P, c_int]),
    "gs_result_config": (c_int, [P, c_int, c_char_p, c_size_t]),
    "gs_result_plan": (c_int, [P, c_int, c_char_p, c_size_t]),
    "gs_result_launch": (c_int, [P, c_int, POINTER(c_int64), POINTER(c_int64), POINTER(c_int64)]),
    "gs_result_launch_args": (c_int, [P, c_int, POINTER(LaunchArg), c_int, POINTER(c_int)]),
    # kernels
    "gs_kernel_create": (c_int, [P, P, c_int, c_int, c_int, PP]),
    "gs_kernel_destroy": (None, [P]),
    "gs_kernel_source": (c_char_p, [P]),
    "gs_kernel_name": (c_char_p, [P]),
    "gs_kernel_key": (c_uint64, [P]),
    "gs_kernel_arch": (c_int, [P]),
    "gs_kernel_compile": (c_int, [P, P, POINTER(KernelStats)]),
    "gs_kernel_binary": (c_void_p, [P, POINTER(c_size_t)]),
    "gs_kernel_log": (c_char_p, [P]),
    "gs_nvrtc_nearest_arch": (c_int, [P, c_int]),
    # devices and buffers
    "gs_device_open": (c_int, [P, c_int, c_int, PP]),
    "gs_device_close": (None, [P]),
    "gs_device_name": (c_char_p, [P]),
    "gs_device_backend": (c_int, [P]),
    "gs_buffer_create": (c_int, [P, P, c_size_t, c_void_p, PP]),
    "gs_buffer_read": (c_int, [P, P, c_void_p, c_size_t]),
    "gs_buffer_write": (c_int, [P, P, c_void_p, c_size_t]),
    "gs_buffer_destroy": (None, [P]),
    "gs_kernel_run": (c_int, [P, P, P, P, PP, c_int, POINTER(c_double)]),
    "gs_refine": (c_int, [P, P, P, c_int, c_double, POINTER(c_int), POINTER(c_double)]),
    # models
    "gs_model_load": (c_int, [P, c_char_p, PP]),
    "gs_model_destroy": (None, [P]),
    "gs_model_opset": (c_int64, [P]),
    "gs_model_num_dims": (c_int, [P]),
    "gs_model_dim_name": (c_char_p, [P, c_int]),
    "gs_model_bind_dim": (c_int, [P, P, c_char_p, c_int64]),
    "gs_model_import": (c_int, [P, P]),
    "gs_model_num_nodes": (c_int, [P]),
    "gs_model_node_get": (c_int, [P, P, c_int, POINTER(ModelNode)]),
    "gs_model_constant": (c_int, [P, P, c_char_p, POINTER(POINTER(c_float)), POINTER(c_int64)]),
    "gs_model_tensor_dtype": (c_int, [P, P, c_char_p, POINTER(c_int)]),
    # the dispatcher
    "gs_dispatch_opts_default": (None, [POINTER(DispatchOpts)]),
    "gs_dispatcher_create": (c_int, [P, P, POINTER(DispatchOpts), PP]),
    "gs_dispatcher_destroy": (None, [P]),
    "gs_dispatcher_attach": (c_int, [P, P, P]),
    "gs_dispatch": (c_int, [P, P, P, POINTER(KernelHandle)]),
    "gs_dispatch_run": (c_int, [P, P, P, POINTER(KernelHandle), PP, c_int, POINTER(c_double)]),
    "gs_dispatch_stats_get": (None, [P, POINTER(DispatchStats)]),
}


class _Lib:
    """The loaded library, its path, and each declared function as an attribute."""

    def __init__(self):
        self.cdll, self.path = _load()
        for name, (res, args) in _SIGS.items():
            try:
                f = getattr(self.cdll, name)
            except AttributeError:
                raise LibraryNotFound("gensor: %s lacks %s (an older libgensor?)" % (self.path, name)) from None
            f.restype, f.argtypes = res, args
            setattr(self, name, f)


_lib = None
_lib_lock = threading.Lock()


def lib():
    """The library, loaded on first use."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = _Lib()
    return _lib


class _Ctx:
    """One gs_ctx, freed with this object (one per thread: a gs_ctx is never shared)."""

    def __init__(self, L):
        self._L = L
        self.h = L.gs_ctx_create()
        if not self.h:
            raise MemoryError("gensor: gs_ctx_create failed")

    def __del__(self):
        h, self.h = getattr(self, "h", None), None
        if h:
            try:
                self._L.gs_ctx_destroy(h)
            except Exception:  # interpreter shutdown
                pass


_tls = threading.local()


def ctx():
    """This thread's gs_ctx handle."""
    c = getattr(_tls, "ctx", None)
    if c is None:
        c = _tls.ctx = _Ctx(lib())
    return c.h


def s(b):
    """A C string (bytes or None) as str."""
    return None if b is None else b.decode("utf-8", "replace")


def b(text):
    """A str as the bytes of a C string; a NUL inside is refused (C would cut the string there)."""
    if not isinstance(text, (str, os.PathLike)):
        raise TypeError("gensor: expected a string, got %s" % type(text).__name__)
    data = os.fsencode(text) if isinstance(text, os.PathLike) else text.encode("utf-8")
    if b"\0" in data:
        raise ValueError("gensor: string contains a NUL byte: %r" % (text,))
    return data
