"""A shape-only stand-in for the slice of PyTorch that experiments/torch_bench.py
uses, so tests/bench_gpu_dry.sh can run its PyTorch path on a machine without
PyTorch or a GPU. Tensors carry shapes, never data; every operator checks its
arguments and computes its result's shape as PyTorch documents it
(torch.mm/addmm/bmm/baddbmm/mv/addmv, broadcasting, reductions). They also
carry a dtype: the matrix products and binary operators refuse mixed dtypes
as PyTorch does, and results keep their operands' dtype. Events
report 1 ms, so the CSV's times are synthetic: this exercises the code, it
measures nothing."""
__version__ = "0.0-fake"
float32 = "float32"
float16 = "float16"
bfloat16 = "bfloat16"
_DTYPES = (float32, float16, bfloat16)


class version:  # noqa: N801 (mirrors torch.version)
    cuda = "fake"


def _broadcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError("shapes %s and %s do not broadcast" % (a, b))
        out.append(max(x, y))
    return out


def _dt(*ts):
    """The common dtype of tensor operands (PyTorch: no implicit mixing in these ops)."""
    d = {t.dtype for t in ts if isinstance(t, Tensor)}
    if len(d) > 1:
        raise RuntimeError("expected all tensors to have the same dtype, got %s" % sorted(d))
    return d.pop() if d else float32


class Tensor:
    def __init__(self, shape, dtype=float32):
        if dtype not in _DTYPES:
            raise TypeError("unknown dtype %r" % (dtype,))
        self.dtype = dtype
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise RuntimeError("negative dimension in %s" % (self.shape,))

    def dim(self):
        return len(self.shape)

    def t(self):
        if self.dim() != 2:
            raise RuntimeError("t() expects a 2-D tensor")
        return Tensor(self.shape[::-1], self.dtype)

    def transpose(self, a, b):
        s = list(self.shape)
        s[a], s[b] = s[b], s[a]
        return Tensor(s, self.dtype)

    def permute(self, *dims):
        if sorted(dims) != list(range(self.dim())):
            raise RuntimeError("permute: bad dims %s" % (dims,))
        return Tensor([self.shape[d] for d in dims], self.dtype)

    def unsqueeze(self, d):
        s = list(self.shape)
        s.insert(d, 1)
        return Tensor(s, self.dtype)

    def to(self, dtype):
        return Tensor(self.shape, dtype)

    def _same(self, other):
        if isinstance(other, Tensor):
            _broadcast(self.shape, other.shape)
            _dt(self, other)
        return self

    add_ = mul_ = _same

    def __mul__(self, k):
        return Tensor(self.shape, self.dtype)

    __sub__ = __add__ = __rmul__ = __mul__


class Generator:
    def __init__(self, device=None):
        self.device = device

    def manual_seed(self, s):
        return self


class device:  # noqa: N801
    def __init__(self, kind):
        self.kind = kind


def rand(shape, generator=None, device=None, dtype=None):
    return Tensor(shape, dtype or float32)


def empty(shape, device=None, dtype=None):
    return Tensor(shape, dtype or float32)


def _mm_shape(a, b):
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError("mm: %s x %s" % (a.shape, b.shape))
    return [a.shape[0], b.shape[1]]


def mm(a, b):
    return Tensor(_mm_shape(a, b), _dt(a, b))


def addmm(c, a, b, beta=1.0, alpha=1.0):
    s = _mm_shape(a, b)
    if _broadcast(c.shape, s) != s:
        raise RuntimeError("addmm: input %s does not broadcast to %s" % (c.shape, s))
    return Tensor(s, _dt(c, a, b))


def bmm(a, b):
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError("bmm: %s x %s" % (a.shape, b.shape))
    return Tensor([a.shape[0], a.shape[1], b.shape[2]], _dt(a, b))


def baddbmm(c, a, b, beta=1.0, alpha=1.0):
    s = list(bmm(a, b).shape)
    if _broadcast(c.shape, s) != s:
        raise RuntimeError("baddbmm: input %s vs %s" % (c.shape, s))
    return Tensor(s, _dt(c, a, b))


def mv(A, x):
    if A.dim() != 2 or x.dim() != 1 or A.shape[1] != x.shape[0]:
        raise RuntimeError("mv: %s x %s" % (A.shape, x.shape))
    return Tensor([A.shape[0]], _dt(A, x))


def addmv(c, A, x, beta=1.0, alpha=1.0):
    s = list(mv(A, x).shape)
    if _broadcast(c.shape, s) != s:
        raise RuntimeError("addmv: input %s vs %s" % (c.shape, s))
    return Tensor(s, _dt(c, A, x))


def relu(x):
    return Tensor(x.shape, x.dtype)


def relu_(x):
    return x


def add(x, y):
    return Tensor(_broadcast(x.shape, y.shape), _dt(x, y))


mul = add


def _reduce(x, dim):
    s = list(x.shape)
    del s[dim]
    return Tensor(s, x.dtype)


sum = mean = amax = _reduce  # noqa: A001 (mirrors torch.sum)


class _Event:
    def __init__(self, enable_timing=False):
        self.recorded = False

    def record(self):
        self.recorded = True

    def synchronize(self):
        if not self.recorded:
            raise RuntimeError("event not recorded")

    def elapsed_time(self, other):
        if not (self.recorded and other.recorded):
            raise RuntimeError("elapsed_time on an unrecorded event")
        return 1.0


class cuda:  # noqa: N801
    Event = _Event

    class OutOfMemoryError(RuntimeError):
        pass

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_name(dev=None):
        return "fake device (tests/fake_torch)"

    @staticmethod
    def empty_cache():
        pass


class backends:  # noqa: N801
    class cuda:  # noqa: N801
        class matmul:  # noqa: N801
            allow_tf32 = True

    class cudnn:  # noqa: N801
        allow_tf32 = True
        benchmark = False

        @staticmethod
        def version():
            return 0


from . import nn  # noqa: E402,F401
