"""Shape-only conv2d, pad and pooling with PyTorch's argument order and
output-size formula: floor((H + 2p - d(k-1) - 1)/s) + 1."""
from .. import Tensor, _dt


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _out(n, k, s, p, d):
    o = (n + 2 * p - d * (k - 1) - 1) // s + 1
    if o < 1:
        raise RuntimeError("output size < 1")
    return o


def conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if x.dim() != 4 or w.dim() != 4:
        raise RuntimeError("conv2d: 4-D input and weight expected")
    N, C, H, W = x.shape
    K, Cg, R, S = w.shape
    if C != Cg * groups or K % groups:
        raise RuntimeError("conv2d: %d input channels, weight %s, groups %d" % (C, w.shape, groups))
    if bias is not None and bias.shape != (K,):
        raise RuntimeError("conv2d: bias %s for %d output channels" % (bias.shape, K))
    s, p, d = _pair(stride), _pair(padding), _pair(dilation)
    return Tensor([N, K, _out(H, R, s[0], p[0], d[0]), _out(W, S, s[1], p[1], d[1])], _dt(x, w, bias))


def pad(x, pads, value=0.0):
    if len(pads) != 4:
        raise RuntimeError("pad: 4 values expected for the last two dims")
    s = list(x.shape)
    s[-1] += pads[0] + pads[1]
    s[-2] += pads[2] + pads[3]
    return Tensor(s, x.dtype)


def _pool(x, kernel, stride, padding, dilation):
    k, s, p, d = _pair(kernel), _pair(stride), _pair(padding), _pair(dilation)
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise RuntimeError("pad should be at most half of the kernel size")
    N, C, H, W = x.shape
    return Tensor([N, C, _out(H, k[0], s[0], p[0], d[0]), _out(W, k[1], s[1], p[1], d[1])], x.dtype)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pool(x, kernel_size, stride or kernel_size, padding, 1)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    return _pool(x, kernel_size, stride or kernel_size, padding, dilation)
