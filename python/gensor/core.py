"""The classes over the C handles: Op, Hw, Result, Candidate, Kernel, Device, Dispatcher, Model.

Each object owns its handle and frees it in close() (also called by `with`
and by the garbage collector).  Objects that the C library hands out as
owned by another (a model's operators) keep that owner alive and refuse use
once it has re-imported.  A kernel that ran on a device (or a dispatcher
attached to one) keeps the device alive: gs_device_close needs the kernels
loaded on it freed first, so Device.close() only marks the device closed
while such a kernel lives, and the C device is closed when the last one goes.
"""
import collections
import ctypes
import threading

import numpy as np

from . import _lib
from ._lib import byref, c_double, c_int, c_int64, c_void_p, lib, ctx, s, b
from .errors import GensorError, UnsupportedError, check

DTYPES = {0: "f32", 1: "f16", 2: "bf16"}
DTYPE_CODES = {v: k for k, v in DTYPES.items()}
# what a numpy array of each element type must be: bf16 travels as its 16-bit words (uint16)
NUMPY_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16)}
DIALECTS = {"cuda": 0, "opencl": 1}
BACKENDS = {"opencl": 0, "cuda": 1}
CONV_FORMS = {"direct": 0, "auto": 1}
NODE_KINDS = {0: "kernel", 1: "fused", 2: "view", 3: "unsupported"}
ARG_ROLES = {0: "input", 1: "output", 2: "bias", 3: "extent", 4: "shape", 5: "alpha", 6: "beta", 7: "workspace"}


def _name(table, value, what):
    if not isinstance(value, str) or value not in table:
        raise ValueError("gensor: unknown %s %r (%s)" % (what, value, ", ".join(table)))
    return table[value]


class _Owner:
    """A C handle freed by close(), `with` and the garbage collector."""

    _h = None
    _free = None  # the gs_*_destroy function's name

    def _handle(self):
        if not self._h:
            raise ValueError("gensor: %s is closed" % type(self).__name__)
        return self._h

    def close(self):
        h, self._h = self._h, None
        if h and self._free:
            getattr(lib(), self._free)(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass


BufferInfo = collections.namedtuple("BufferInfo", "index name role dtype elems nbytes numpy_dtype")
BufferInfo.__doc__ = """One buffer of an operator's kernels, in argument order: role is "input",
"output" or "bias"; dtype "f32", "f16" or "bf16"; numpy_dtype what an array for it must be."""


class Op(_Owner):
    """An operator: Op("gemm M=64 N=64 K=64") parses the spec grammar of docs/CLI.md."""

    _free = "gs_op_destroy"

    def __init__(self, spec):
        L, h = lib(), c_void_p()
        self._model = self._gen = None
        check(L.gs_op_parse(ctx(), b(spec), byref(h)))
        self._h = h.value

    @classmethod
    def _borrow(cls, handle, model):
        op = cls.__new__(cls)
        op._h, op._model, op._gen = handle, model, model._gen
        return op

    def _handle(self):
        if self._model is not None:
            if self._model._gen != self._gen or not self._model._h:
                raise ValueError("gensor: this operator belonged to a model that was re-imported or closed; "
                                 "take it from the model's nodes again")
            return self._h
        return super()._handle()

    def close(self):
        if self._model is not None:  # owned by the model
            self._h = None
            return
        super().close()

    @property
    def spec(self):
        return s(lib().gs_op_spec(self._handle()))

    @property
    def flops(self):
        return lib().gs_op_flops(self._handle())

    @property
    def num_buffers(self):
        return lib().gs_op_num_buffers(self._handle())

    @property
    def buffers(self):
        """The kernel's buffers in argument order: the inputs, the output, then the bias when there is one."""
        L, h = lib(), self._handle()
        n = L.gs_op_num_buffers(h)
        names = [s(L.gs_op_buffer_name(h, i)) for i in range(n)]
        out = n - 2 if n >= 2 and names[-1] == "bias" else n - 1
        res = []
        for i in range(n):
            dt = DTYPES.get(L.gs_op_buffer_dtype(h, i), "?")
            role = "input" if i < out else "output" if i == out else "bias"
            res.append(BufferInfo(i, names[i], role, dt, L.gs_op_buffer_elems(h, i), L.gs_op_buffer_bytes(h, i),
                                  NUMPY_DTYPES.get(dt)))
        return res

    def set_dtype(self, dtype, out_dtype=None):
        """Give the inputs (and bias) the type dtype and the output out_dtype (default: dtype)."""
        if self._model is not None:
            raise ValueError("gensor: a model's operator is read-only; parse its spec into a new Op to change it")
        i = _name(DTYPE_CODES, dtype, "dtype")
        o = _name(DTYPE_CODES, dtype if out_dtype is None else out_dtype, "dtype")
        check(lib().gs_op_set_dtype(ctx(), self._handle(), i, o))
        return self

    def set_math(self, math_mode):
        """"tf32": a product's f32 inputs rounded to TF32; "f32": as they are."""
        if self._model is not None:
            raise ValueError("gensor: a model's operator is read-only; parse its spec into a new Op to change it")
        check(lib().gs_op_set_math(ctx(), self._handle(), _name({"f32": 0, "tf32": 1}, math_mode, "math")))
        return self

    def __repr__(self):
        return "gensor.Op(%r)" % (self.spec if self._h else "<closed>",)


def _as_op(op):
    return op if isinstance(op, Op) else Op(op)


class Hw(_Owner):
    """A hardware profile: Hw("h100") (a built-in, see hw_list()) or Hw("path/to/profile.json")."""

    _free = "gs_hw_destroy"

    def __init__(self, name_or_path):
        h = c_void_p()
        check(lib().gs_hw_load(ctx(), b(name_or_path), byref(h)))
        self._h = h.value

    @classmethod
    def _wrap(cls, handle):
        hw = cls.__new__(cls)
        hw._h = handle
        return hw

    @classmethod
    def parse(cls, json_text):
        """A profile from JSON text: every field, or "base": "NAME" and the fields that differ."""
        h = c_void_p()
        check(lib().gs_hw_parse(ctx(), b(json_text), byref(h)))
        return cls._wrap(h.value)

    @classmethod
    def query(cls, device, fallback=None):
        """The profile of an open device (the CLI's --hw auto)."""
        h = c_void_p()
        check(lib().gs_hw_query(ctx(), device._handle(), None if fallback is None else b(fallback), byref(h)))
        return cls._wrap(h.value)

    @property
    def name(self):
        return s(lib().gs_hw_name(self._handle()))

    @property
    def sm(self):
        """CUDA compute capability as major*10+minor."""
        return lib().gs_hw_sm(self._handle())

    def save(self, path):
        check(lib().gs_hw_save(ctx(), self._handle(), b(path)))

    def __repr__(self):
        return "gensor.Hw(%r)" % (self.name if self._h else "<closed>",)


def hw_list():
    """The names of the built-in hardware profiles."""
    L = lib()
    return [s(L.gs_hw_builtin_name(i)) for i in range(L.gs_hw_builtin_count())]


_OPTS = ("seed", "top_k", "chains", "t_start", "t_threshold", "policy", "strategy", "max_ms", "conv_form",
         "split_atomic", "threads")


def _construct_opts(opts):
    L = lib()
    o = _lib.ConstructOpts()
    L.gs_construct_opts_default(byref(o))
    for k, v in opts.items():
        if k not in _OPTS:
            raise TypeError("gensor.construct: unknown option %r (%s, config)" % (k, ", ".join(_OPTS)))
        if k in ("policy", "strategy"):
            val = c_int()
            check(getattr(L, "gs_%s_parse" % k)(ctx(), b(v), byref(val)))
            v = val.value
        elif k == "conv_form":
            v = _name(CONV_FORMS, v, "conv_form")
        elif k == "split_atomic":
            v = 1 if v else 0
        elif k in ("t_start", "t_threshold", "max_ms"):
            v = float(v)
        else:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError("gensor.construct: %s must be an int, got %r" % (k, v))
            v = int(v)
            if k == "seed" and not 0 <= v < 2 ** 64:
                raise ValueError("gensor.construct: seed must be in 0..2^64-1, got %d" % v)
            if k != "seed" and not -2 ** 31 <= v < 2 ** 31:
                raise ValueError("gensor.construct: %s out of range: %d" % (k, v))
        setattr(o, k, v)
    return o


def construct(op, hw="h100", config=None, **opts):
    """Construct kernels for op (an Op or a spec string) on hw (a Hw or a profile's name or path).

    config="bm=64,bn=64,..." takes that one configuration instead of walking; otherwise the
    keyword options are gs_construct_opts' fields: seed, top_k, chains, t_start, t_threshold,
    policy ("paper", "balanced", "model"), strategy ("markov", "tree", "exhaustive", "random"),
    max_ms, conv_form ("direct", "auto"), split_atomic, threads.
    """
    op = _as_op(op)
    hw = hw if isinstance(hw, Hw) else Hw(hw)
    h = c_void_p()
    if config is not None:
        if opts:
            raise TypeError("gensor.construct: config= takes no walk options (%s)" % ", ".join(opts))
        check(lib().gs_construct_config(ctx(), op._handle(), hw._handle(), b(config), byref(h)))
    else:
        o = _construct_opts(opts)
        check(lib().gs_construct(ctx(), op._handle(), hw._handle(), byref(o), byref(h)))
    return Result(h.value, op, hw)


class Result(_Owner):
    """A construction's ranked candidates (candidate 0 the best under the model)."""

    _free = "gs_result_destroy"

    def __init__(self, handle, op, hw):
        self._h, self.op, self.hw = handle, op, hw

    @property
    def form(self):
        """The spec of the form the kernels compute (the operator's own, or a 1x1 conv's matmul form)."""
        return s(lib().gs_result_form(self._handle()))

    @property
    def construct_s(self):
        return lib().gs_result_construct_s(self._handle())

    def __len__(self):
        return lib().gs_result_count(self._handle())

    def __getitem__(self, i):
        n = len(self)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError("gensor: candidate index must be an int")
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("gensor: candidate %d out of range (the result has %d)" % (i, n))
        return Candidate(self, int(i))

    @property
    def candidates(self):
        return [Candidate(self, i) for i in range(len(self))]

    @property
    def best(self):
        return self[0]

    @property
    def buffer_shapes(self):
        """The shape of each buffer of op (in op.buffers order; the bias a vector), from candidate 0's
        arguments; None when the kernels compute another form (a 1x1 conv's matmul)."""
        if self.form != self.op.spec:
            return None
        n = self.op.num_buffers
        shapes = [[] for _ in range(n)]
        for a in self[0].launch_args:
            if a["role"] == "shape" and 0 <= a["index"] < n:
                shapes[a["index"]].append((a["dim"], a["value"]))
            elif a["role"] == "bias":
                shapes[n - 1] = [(0, a["elems"])]
        return [tuple(v for _, v in sorted(sh)) if sh else None for sh in shapes]

    def emit(self, dialect="cuda", i=0):
        """Candidate i's source in dialect "cuda" (for the profile's sm) or "opencl"."""
        return self[i].emit(dialect)

    def kernel(self, dialect="opencl", i=0, arch=0):
        """Candidate i as a Kernel object (compile with NVRTC, or run on a device)."""
        return self[i].kernel(dialect, arch)

    def refine(self, device, k=4, budget_ms=200.0):
        """Time the top k candidates on device: (index of the fastest median, the medians in seconds)."""
        k = min(int(k), len(self))
        pick, med = c_int(), (c_double * max(k, 1))()
        check(lib().gs_refine(ctx(), device._handle(), self._handle(), k, float(budget_ms), byref(pick), med))
        return pick.value, list(med[:k])

    def __repr__(self):
        return "<gensor.Result %s on %s: %d candidates>" % (self.form, self.hw.name, len(self))


class Candidate:
    """Candidate index of a Result."""

    def __init__(self, result, index):
        self.result, self.index = result, index

    def _str(self, fn):
        buf = ctypes.create_string_buffer(4096)
        check(getattr(lib(), fn)(self.result._handle(), self.index, buf, len(buf)))
        return s(buf.value)

    @property
    def config(self):
        """In config form (gensor.construct(op, hw, config=...) reads it back)."""
        return self._str("gs_result_config")

    @property
    def plan(self):
        return self._str("gs_result_plan")

    @property
    def predicted_s(self):
        return lib().gs_result_predicted_s(self.result._handle(), self.index)

    @property
    def describe(self):
        return s(lib().gs_result_describe(self.result._handle(), self.index))

    @property
    def launch(self):
        """(grid, block, shared memory bytes) of its 1-D launch on the result's operator."""
        g, bl, sm = c_int64(), c_int64(), c_int64()
        check(lib().gs_result_launch(self.result._handle(), self.index, byref(g), byref(bl), byref(sm)))
        return g.value, bl.value, sm.value

    @property
    def launch_args(self):
        """Every kernel argument in order, as dicts (name, role, type, index, dim, bytes, elems, value)."""
        arr, n = (_lib.LaunchArg * _lib.LAUNCH_MAX_ARGS)(), c_int()
        check(lib().gs_result_launch_args(self.result._handle(), self.index, arr, len(arr), byref(n)))
        out = []
        for a in arr[:n.value]:
            role = ARG_ROLES.get(a.role, str(a.role))
            val = a.fvalue if role in ("alpha", "beta") else a.ivalue if role in ("extent", "shape") else None
            out.append(dict(name=s(a.name), role=role, type=s(a.type), index=a.index, dim=a.dim, bytes=a.bytes,
                            elems=a.elems, value=val, zero_first=bool(a.zero_first)))
        return out

    def emit(self, dialect="cuda"):
        with self.kernel(dialect) as k:
            return k.source

    def kernel(self, dialect="opencl", arch=0):
        h = c_void_p()
        check(lib().gs_kernel_create(ctx(), self.result._handle(), self.index, _name(DIALECTS, dialect, "dialect"),
                                     int(arch), byref(h)))
        return Kernel(h.value, self.result, dialect)

    def __repr__(self):
        return "<gensor.Candidate %d: %.3g s, %s>" % (self.index, self.predicted_s, self.config)


KernelStats = collections.namedtuple("KernelStats", "arch registers spill_store_bytes spill_load_bytes smem_bytes "
                                                    "stack_bytes compile_s")


class Kernel(_Owner):
    """One candidate emitted in one dialect: its source, NVRTC compilation, and runs on a device."""

    _free = "gs_kernel_destroy"

    def __init__(self, handle, result, dialect):
        self._h, self.result, self.dialect, self._device = handle, result, dialect, None
        # what run() needs of the result, read now: the C kernel holds its own copy of the operator,
        # so the kernel runs after the result is closed
        self.op, self._shapes = result.op, result.buffer_shapes

    def close(self):
        h, self._h = self._h, None
        if h:
            lib().gs_kernel_destroy(h)
        dev, self._device = self._device, None
        if dev is not None:
            dev._release(self)

    @property
    def source(self):
        return s(lib().gs_kernel_source(self._handle()))

    @property
    def name(self):
        return s(lib().gs_kernel_name(self._handle()))

    @property
    def key(self):
        return lib().gs_kernel_key(self._handle())

    @property
    def arch(self):
        return lib().gs_kernel_arch(self._handle())

    def compile(self):
        """Compile a CUDA kernel with NVRTC (no GPU needed): ptxas' figures as a KernelStats."""
        st = _lib.KernelStats()
        check(lib().gs_kernel_compile(ctx(), self._handle(), byref(st)))
        return KernelStats(*(getattr(st, f) for f in KernelStats._fields))

    @property
    def binary(self):
        """The cubin after compile() (None before)."""
        n = _lib.c_size_t()
        p = lib().gs_kernel_binary(self._handle(), byref(n))
        return None if not p else ctypes.string_at(p, n.value)

    @property
    def log(self):
        return s(lib().gs_kernel_log(self._handle()))

    def run(self, device, *arrays, op=None):
        """Run on device with one numpy array per buffer of op (default: the constructed operator),
        in op.buffers order; the output array is written in place. Returns the kernel time in seconds.

        Each array must have its buffer's numpy dtype (float32, float16, or uint16 holding bf16
        words) and element count. For the constructed operator a multi-dimensional array must have
        its buffer's shape (Result.buffer_shapes; a flat 1-D array is taken too); for another shape
        of the operator only the count is checked. A non-contiguous array is copied."""
        op = self.op if op is None else _as_op(op)
        if not isinstance(device, Device):
            raise TypeError("gensor: Kernel.run's first argument is a gensor.Device, got %s" % type(device).__name__)
        shapes = self._shapes if op is self.op or op.spec == self.op.spec else None
        infos, hosts = _check_arrays(op, arrays, shapes)
        dev = device._handle()
        if self._device is not None and self._device is not device:
            raise ValueError("gensor: kernel %s is loaded on another device (%r); create a kernel per device" % (
                self.name, self._device))

        def launch(c, bufs, el):
            if self._device is None:
                self._device = device
                device._use(self)
            return lib().gs_kernel_run(c, dev, self._handle(), op._handle(), bufs, len(hosts), el)

        return _launch(dev, infos, hosts, arrays, launch)

    def __repr__(self):
        return "<gensor.Kernel %s (%s)>" % (self.name if self._h else "<closed>", self.dialect)


def _check_arrays(op, arrays, shapes):
    """op's buffers and a C-contiguous host array per buffer, after checking each array against its buffer."""
    infos = op.buffers
    if len(arrays) != len(infos):
        raise ValueError("gensor: %s takes %d arrays (%s), got %d" % (
            op.spec, len(infos), ", ".join(i.name for i in infos), len(arrays)))
    hosts = []
    for info, a in zip(infos, arrays):
        what = "argument %d (%s, the %s)" % (info.index + 1, info.name, info.role)
        if not isinstance(a, np.ndarray):
            raise TypeError("gensor: %s must be a numpy array, got %s" % (what, type(a).__name__))
        if info.numpy_dtype is None:
            raise ValueError("gensor: %s has element type %s, which this package cannot map" % (what, info.dtype))
        if a.dtype != info.numpy_dtype:
            raise ValueError("gensor: %s has dtype %s; %s's buffer %s is %s (numpy %s)" % (
                what, a.dtype, op.spec, info.name, info.dtype, info.numpy_dtype))
        if a.size != info.elems:
            raise ValueError("gensor: %s has %d elements (shape %s); %s's buffer %s has %d" % (
                what, a.size, a.shape, op.spec, info.name, info.elems))
        shape = shapes[info.index] if shapes else None
        if shape and a.ndim > 1 and a.shape != shape:
            raise ValueError("gensor: %s has shape %s; %s's buffer %s has shape %s (or pass it flat)" % (
                what, a.shape, op.spec, info.name, shape))
        if info.role == "output" and not a.flags.writeable:
            raise ValueError("gensor: %s is read-only; the kernel writes it" % what)
        hosts.append(np.ascontiguousarray(a))
    return infos, hosts


def _launch(dev, infos, hosts, arrays, launch):
    """Device buffers from hosts, launch(ctx, buffers, &elapsed), the output read back into its array;
    the kernel time in seconds."""
    L, c = lib(), ctx()
    bufs = (c_void_p * len(hosts))()
    try:
        for i, hst in enumerate(hosts):
            h = c_void_p()
            check(L.gs_buffer_create(c, dev, hst.nbytes, hst.ctypes.data, byref(h)))
            bufs[i] = h.value
        el = c_double()
        check(launch(c, bufs, byref(el)))
        out = [i.index for i in infos if i.role == "output"][0]
        hst = hosts[out]
        check(L.gs_buffer_read(c, bufs[out], hst.ctypes.data, hst.nbytes))
        if hst is not arrays[out]:
            arrays[out][...] = hst.reshape(arrays[out].shape)
        return el.value
    finally:
        for h in bufs:
            if h:
                L.gs_buffer_destroy(h)


class Device(_Owner):
    """An open OpenCL or CUDA device: Device.open("opencl") (PoCL on a CPU counts)."""

    def __init__(self, backend="opencl", index=0):
        h = c_void_p()
        check(lib().gs_device_open(ctx(), _name(BACKENDS, backend, "backend"), int(index), byref(h)))
        self._h, self.backend, self._closing, self._users, self._lock = h.value, backend, False, set(), threading.Lock()

    @classmethod
    def open(cls, backend="opencl", index=0):
        return cls(backend, index)

    @property
    def name(self):
        return s(lib().gs_device_name(self._handle()))

    def _handle(self):
        if self._closing:
            raise ValueError("gensor: Device is closed")
        return super()._handle()

    def _use(self, kernel):
        with self._lock:
            self._users.add(id(kernel))

    def _release(self, kernel):
        with self._lock:
            self._users.discard(id(kernel))
            last = self._closing and not self._users
        if last:
            self._close_now()

    def _close_now(self):
        h, self._h = self._h, None
        if h:
            lib().gs_device_close(h)

    def close(self):
        """Close the device; while kernels that ran on it live, the C device waits for them."""
        if not getattr(self, "_h", None):
            return
        with self._lock:
            self._closing = True
            now = not self._users
        if now:
            self._close_now()

    def __repr__(self):
        return "<gensor.Device %s %s>" % (self.backend, "<closed>" if self._closing else self.name)


WARM_STARTS = {"off": 0, "construct": 1, "reuse": 2, "memo": 3}
_HANDLE_FIELDS = ("name", "key", "grid", "block", "smem_bytes", "alpha", "beta", "has_bias", "hit", "disk_hit",
                  "new_shape", "constructed", "warm", "memo", "predicted_s", "construct_s", "compile_s",
                  "dispatch_s", "binary_kind", "config", "workspace_bytes")


class Dispatch:
    """What Dispatcher.dispatch gives for one operator: the kernel's name, key, launch, config, the
    integer arguments, whether it was compiled already (hit), constructed, served by the memo, and
    the times; binary is the artifact (cubin, or source) as bytes. Valid while its dispatcher lives."""

    def __init__(self, raw, op, dispatcher):
        self._raw, self.op, self._dispatcher = raw, op, dispatcher
        for f in _HANDLE_FIELDS:
            v = getattr(raw, f)
            setattr(self, f, s(v) if isinstance(v, bytes) else bool(v) if f in (
                "has_bias", "hit", "disk_hit", "new_shape", "constructed", "warm", "memo") else v)
        self.int_args = list(raw.int_args[:raw.nint])
        self.binary = ctypes.string_at(raw.binary, raw.binary_len) if raw.binary else None

    def __repr__(self):
        return "<gensor.Dispatch %s %s: %s%s>" % (self.name, self.op.spec, self.config, " (hit)" if self.hit else "")


class Dispatcher(_Owner):
    """Kernels for shapes seen at run time (gs_dispatcher): one construction per new shape, one compile
    per new kernel descriptor, a kernel cache in memory and optionally on disk.

    Dispatcher(hw="h100", device=None, dialect=None, arch=0, cache_dir=None, warm_start="memo",
    warm_chains=None, reuse_tol=None, compile=True, **construct_opts). With a device, kernels are
    built on it and run() launches them; dialect defaults to the device's ("cuda" without one).
    cache_dir None: $GS_CACHE_DIR if set; "": memory only."""

    _free = "gs_dispatcher_destroy"

    def __init__(self, hw="h100", device=None, dialect=None, arch=0, cache_dir=None, warm_start="memo",
                 warm_chains=None, reuse_tol=None, compile=True, **construct_opts):
        L = lib()
        self.device = None
        self.hw = hw if isinstance(hw, Hw) else Hw(hw)
        if device is not None and not isinstance(device, Device):
            raise TypeError("gensor: device must be a gensor.Device, got %s" % type(device).__name__)
        if dialect is None:
            dialect = device.backend if device is not None else "cuda"
        o = _lib.DispatchOpts()
        L.gs_dispatch_opts_default(byref(o))
        o.dialect = _name(DIALECTS, dialect, "dialect")
        o.arch = int(arch)
        self._cache_dir = None if cache_dir is None else b(cache_dir)
        o.cache_dir = self._cache_dir
        o.construct = _construct_opts(construct_opts)
        o.warm_start = _name(WARM_STARTS, warm_start, "warm_start")
        if warm_chains is not None:
            o.warm_chains = int(warm_chains)
        if reuse_tol is not None:
            o.reuse_tol = float(reuse_tol)
        o.compile = 1 if compile else 0
        self.dialect = dialect
        h = c_void_p()
        check(L.gs_dispatcher_create(ctx(), self.hw._handle(), byref(o), byref(h)))
        self._h = h.value
        if device is not None:
            check(L.gs_dispatcher_attach(ctx(), self._h, device._handle()))
            self.device = device
            device._use(self)

    def close(self):
        super().close()
        dev, self.device = self.device, None
        if dev is not None:
            dev._release(self)

    def dispatch(self, op):
        """The kernel for op's shape (constructed and compiled only when new)."""
        op = _as_op(op)
        raw = _lib.KernelHandle()
        check(lib().gs_dispatch(ctx(), self._handle(), op._handle(), byref(raw)))
        return Dispatch(raw, op, self)

    def run(self, op, *arrays, dispatch=None):
        """Dispatch op (or take dispatch, a Dispatch of this dispatcher for op) and launch it on the
        attached device with the arrays, as Kernel.run takes them (element counts checked). Returns
        (kernel seconds, the Dispatch)."""
        op = _as_op(op) if dispatch is None else dispatch.op
        if self.device is None:
            raise ValueError("gensor: the dispatcher has no device: Dispatcher(hw, device=gensor.Device.open(...))")
        if dispatch is not None and dispatch._dispatcher is not self:
            raise ValueError("gensor: that Dispatch belongs to another dispatcher")
        infos, hosts = _check_arrays(op, arrays, None)
        dev = self.device._handle()
        d = dispatch or self.dispatch(op)
        t = _launch(dev, infos, hosts, arrays, lambda c, bufs, el: lib().gs_dispatch_run(
            c, self._handle(), op._handle(), byref(d._raw), bufs, len(hosts), el))
        return t, d

    @property
    def stats(self):
        """The counters so far (dispatches, shapes, constructions, compiles, hits, memo_hits, ... and
        the times in ms) as a dict."""
        st = _lib.DispatchStats()
        lib().gs_dispatch_stats_get(self._handle(), byref(st))
        return {f: getattr(st, f) for f, _ in st._fields_}

    def __repr__(self):
        return "<gensor.Dispatcher %s %s>" % (self.hw.name, self.dialect)


Binding = collections.namedtuple("Binding", "buffer tensor constant output")


class Node:
    """A node of an imported model: kind "kernel" (op, bindings), "fused" (fused_into), "view" or
    "unsupported" (reason)."""

    __slots__ = ("index", "name", "op_type", "kind", "op", "fused_into", "reason", "out_init", "bindings")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        extra = self.op.spec if self.op is not None else self.reason or ("into %d" % self.fused_into)
        return "<gensor.Node %d %s %s %s: %s>" % (self.index, self.name, self.op_type, self.kind, extra)


class Model(_Owner):
    """An ONNX model: Model(path), bind(**dims), import_() (or gensor.import_onnx in one call)."""

    _free = "gs_model_destroy"

    def __init__(self, path):
        h = c_void_p()
        self._gen, self._nodes = 0, None
        check(lib().gs_model_load(ctx(), b(path), byref(h)))
        self._h, self.path = h.value, path

    def close(self):
        self._gen += 1
        super().close()

    @property
    def opset(self):
        return lib().gs_model_opset(self._handle())

    @property
    def dims(self):
        """The symbolic dims of the graph's inputs."""
        L, h = lib(), self._handle()
        return [s(L.gs_model_dim_name(h, i)) for i in range(L.gs_model_num_dims(h))]

    def bind(self, **dims):
        """Give symbolic dims their sizes (batch=8); undoes the last import."""
        for k, v in dims.items():
            self.bind_dim(k, v)
        return self

    def bind_dim(self, name, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError("gensor: dim %s must be an int, got %r" % (name, value))
        if not 1 <= value < 2 ** 31:
            raise ValueError("gensor: dim %s = %d is out of range (1..2^31-1)" % (name, value))
        self._gen += 1
        self._nodes = None
        check(lib().gs_model_bind_dim(ctx(), self._handle(), b(name), int(value)))

    def import_(self):
        """Propagate shapes and map the nodes to operators."""
        self._gen += 1
        self._nodes = None
        check(lib().gs_model_import(ctx(), self._handle()))
        self._nodes = self._read_nodes()
        return self

    def _read_nodes(self):
        L, h, c = lib(), self._handle(), ctx()
        out = []
        for i in range(L.gs_model_num_nodes(h)):
            n = _lib.ModelNode()
            check(L.gs_model_node_get(c, h, i, byref(n)))
            bind = [Binding(s(x.buffer), s(x.tensor), bool(x.constant), bool(x.output))
                    for x in (n.bindings[j] for j in range(n.nbindings))]
            out.append(Node(index=i, name=s(n.name), op_type=s(n.op_type), kind=NODE_KINDS.get(n.kind, str(n.kind)),
                            op=Op._borrow(n.op, self) if n.op else None, fused_into=n.fused_into,
                            reason=s(n.reason), out_init=s(n.out_init), bindings=bind))
        return out

    @property
    def nodes(self):
        """Every node, in file order (after import_())."""
        self._handle()
        if self._nodes is None:
            raise ValueError("gensor: the model is not imported; call import_() (after binding its dims %s)"
                             % self.dims)
        return list(self._nodes)

    @property
    def ops(self):
        """The operators of the kernel nodes, in node order."""
        return [n.op for n in self.nodes if n.kind == "kernel"]

    @property
    def unsupported(self):
        """(name, op_type, reason) of each node gensor does not map."""
        return [(n.name, n.op_type, n.reason) for n in self.nodes if n.kind == "unsupported"]

    def constant(self, name):
        """A constant's data as float32 (an initializer, or a weight the import derived), as a new numpy
        array; a FLOAT16 or BFLOAT16 constant's values exactly (dtype(name) gives its type)."""
        self.nodes  # imported
        p, n = ctypes.POINTER(ctypes.c_float)(), c_int64()
        check(lib().gs_model_constant(ctx(), self._handle(), b(name), byref(p), byref(n)))
        return np.ctypeslib.as_array(p, shape=(n.value,)).copy() if n.value else np.zeros(0, np.float32)

    def dtype(self, name):
        """The element type of a floating tensor of the model ("f32", "f16" or "bf16"): a graph input or
        output, a constant, a node's output."""
        self.nodes  # imported
        t = c_int()
        check(lib().gs_model_tensor_dtype(ctx(), self._handle(), b(name), byref(t)))
        return DTYPES[t.value]

    def run(self, device, inputs, hw="h100", dialect="opencl", unsupported="raise", **opts):
        """Run every kernel node on device, in file order, fed by the bindings: inputs (a dict of the
        graph inputs' arrays), the model's constants, and the tensors earlier nodes wrote; views pass
        their buffer on. Each kernel is constructed for hw (keyword options as gensor.construct) and
        its top candidate run. Each kernel's buffers are made in its type (op.buffers' dtype: a half
        model's inputs and weights converted with round to nearest even, exact for half values; an
        input may be given as float32, float16 or bf16 words as uint16 when the model's input is
        bf16; a float64 one rounds once, to the type of each kernel that reads it). Returns a dict of every tensor computed, as float32 arrays holding the kernels'
        values exactly (shaped when the kernel's operator knows its output's shape, else flat). An unsupported node raises
        UnsupportedError naming it and the reason, or with unsupported="skip" is passed over (its
        outputs stay missing: a node that reads one raises ValueError)."""
        if unsupported not in ("raise", "skip"):
            raise ValueError("gensor: unsupported must be 'raise' or 'skip', got %r" % (unsupported,))
        hw = hw if isinstance(hw, Hw) else Hw(hw)
        vals, given = {}, {}
        for k, v in inputs.items():
            v = np.asarray(v)
            if v.dtype == np.uint16:  # bf16 words
                v = from_bf16(v)
            elif v.dtype not in (np.float32, np.float16):
                given[k] = v  # float64 and the like: a half kernel's buffer rounds from these, once
            vals[k] = np.ascontiguousarray(v, dtype=np.float32)

        def get(tensor, constant, who):
            if constant:
                return self.constant(tensor)
            if tensor not in vals and nd.out_init == tensor:  # the initial output may be a constant (a Gemm's C)
                try:
                    return self.constant(tensor)
                except GensorError:
                    pass
            if tensor not in vals:
                raise ValueError("gensor: %s reads tensor %r, which is neither an input given nor written "
                                 "before (inputs: %s)" % (who, tensor, ", ".join(inputs) or "none"))
            return vals[tensor]

        for nd in self.nodes:
            who = "node %d (%s, %s)" % (nd.index, nd.name, nd.op_type)
            if nd.kind == "unsupported":
                if unsupported == "skip":
                    continue
                raise UnsupportedError(-19, "%s: %s" % (who, nd.reason), "unsupported")
            if nd.kind == "view":
                if len(nd.bindings) == 2:
                    vals[nd.bindings[1].tensor] = get(nd.bindings[0].tensor, nd.bindings[0].constant, who)
                elif nd.bindings:
                    vals[nd.bindings[0].tensor] = self.constant(nd.bindings[0].tensor)
                continue
            if nd.kind != "kernel":
                continue
            with construct(nd.op, hw, **opts) as r, r.kernel(dialect) as k:
                shapes = r.buffer_shapes
                arrays = []
                for info, bd in zip(nd.op.buffers, nd.bindings):
                    if bd.output:
                        a = (get(nd.out_init, False, who).copy() if nd.out_init
                             else np.zeros(info.elems, np.float32))
                        if shapes and shapes[info.index]:
                            a = a.reshape(shapes[info.index])
                        a = convert(a, info.dtype)
                        out = (bd.tensor, a)
                    else:
                        src = given.get(bd.tensor) if not bd.constant else None
                        a = convert(get(bd.tensor, bd.constant, who) if src is None else src, info.dtype)
                    arrays.append(a.reshape(-1) if a.ndim > 1 and not (shapes and a.shape == shapes[info.index])
                                  else a)
                k.run(device, *arrays)
                vals[out[0]] = convert(out[1], "f32")
        return vals

    def __repr__(self):
        return "<gensor.Model %s>" % (self.path,)


def import_onnx(path, dims=None, **more_dims):
    """Load an ONNX model, bind its symbolic dims (dims={"batch": 8} or batch=8) and import it."""
    m = Model(path)
    try:
        m.bind(**dict(dims or {}, **more_dims))
        return m.import_()
    except BaseException:
        m.close()
        raise


def _f32_round_odd(a):
    """Real values (float64, ints) as float32 rounded to odd: the float32 toward zero, its last bit
    set when it is inexact. Rounded once more to a type of at most 22 bits (f16, bf16), that is the
    value rounded from a directly: a float32 rounded to nearest first would round twice (1 + 2^-11 +
    2^-30 to 1 + 2^-11, a tie, then to 1 in f16; 65519.99 to 65520, then to inf)."""
    x = np.asarray(a, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.ascontiguousarray(x, dtype=np.float32)
        inexact = (y != x) & ~np.isnan(x)
        y = np.where(inexact & (np.abs(y) > np.abs(x)), np.nextafter(y, np.float32(0)), y).astype(np.float32)
    bits = np.ascontiguousarray(y).view(np.uint32)
    return np.where(inexact, bits | np.uint32(1), bits).astype(np.uint32).view(np.float32)


def convert(a, dtype):
    """Array a (float32, float16, or uint16 taken as bf16 words) as a new array of element type dtype
    ("f32", "f16", "bf16": float32, float16, uint16 bf16 words) of the same shape, through the
    library's type table (gs_dtype_convert): to a 16-bit type rounded to nearest even, as the
    kernels round; to f32 exact. Other real arrays (float64, a list) round once too: to f32 to
    nearest even, to a 16-bit type from their own values (not through a rounded float32)."""
    src = np.ascontiguousarray(a)
    frm = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.uint16): "bf16"}.get(src.dtype)
    if frm is None:
        to16 = isinstance(dtype, str) and dtype in ("f16", "bf16")
        src = _f32_round_odd(src) if to16 else np.ascontiguousarray(a, dtype=np.float32)
        frm = "f32"
    to = _name(DTYPE_CODES, dtype, "dtype")
    dst = np.empty(src.shape, NUMPY_DTYPES[dtype])
    check(lib().gs_dtype_convert(ctx(), DTYPE_CODES[frm], src.ctypes.data, to, dst.ctypes.data, src.size))
    return dst


def to_bf16(x):
    """float32 values as bf16 words (uint16), rounded to nearest even as the kernels round."""
    return convert(np.asarray(x, dtype=np.float32), "bf16")


def from_bf16(w):
    """bf16 words (uint16) as float32."""
    return convert(np.asarray(w, dtype=np.uint16), "f32")


__all__ = ["Op", "Hw", "Result", "Candidate", "Kernel", "Device", "Dispatcher", "Dispatch", "Model", "Node", "Binding", "BufferInfo",
           "KernelStats", "construct", "hw_list", "import_onnx", "convert", "to_bf16", "from_bf16"]
