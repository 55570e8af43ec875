#!/usr/bin/env python3
"""torch_bench.py -- PyTorch's side of `make bench-gpu`.

    python3 experiments/torch_bench.py --specs SPECS.tsv --out torch.csv
    python3 experiments/torch_bench.py --specs SPECS.tsv --self-test

SPECS.tsv is `build/bench_gpu --list-specs LIST.json ...`: one operator a
line, "class<TAB>canonical spec<TAB>tensor shapes" (gensor's canonical spec
spells out every key; the shapes are gensor's, e.g. "A=64x32 B=32x16
C=64x16 bias=16"). Each operator is built in PyTorch with gensor's
semantics and storage layouts (transposes are views of the stored
matrices, NHWC tensors are channels_last views) and timed the way
shared/data/h100/README.md says: FP32 with TF32 off for matmul and cuDNN,
cudnn.benchmark on, 3 warm-up calls, then CUDA events around one call,
5..30 calls until 40 ms of wall time, the median. Bias and ReLU are part
of the timed expression where the spec has them (addmm, conv2d(..., bias),
relu_). A typed spec (dtype=f16|bf16, out_dtype=, math=tf32; issue 18)
runs in torch.float16 / torch.bfloat16 tensors (an out_dtype that differs
is a cast of the result, timed with it), and math=tf32 turns
torch.backends.cuda.matmul.allow_tf32 (and cuDNN's) on for that operator
alone; the result's dtype must be the output's. The CSV (spec,torch_ms,runs,status,note) is joined by spec in
bench_gpu; its first line is a comment naming PyTorch, CUDA, cuDNN and the
device.

Without PyTorch, or without a CUDA device for it, it prints why on stdout
and exits 3; it never installs anything. --self-test needs no PyTorch: it
plans every operator of SPECS.tsv and checks the planned tensor shapes
against gensor's, which checks this file's reading of the spec grammar
(output sizes, layouts, transposes) without a GPU.

Note: a PyTorch eager call costs about 10-45 us of Python dispatch that
the CUDA events enclose, so below ~50 us compare gensor with cuBLAS (timed
from C in bench_gpu), not with these numbers.
"""
import argparse
import statistics
import sys
import time

WARMUP = 3


# ---- the spec grammar (canonical form: every key present) ---------------------------
def parse_spec(spec):
    words = spec.split()
    kv = {}
    for w in words[1:]:
        k, _, v = w.partition("=")
        if not _ or k in kv:
            raise ValueError("malformed spec token %r in %r" % (w, spec))
        kv[k] = v
    return words[0], kv


def ints(kv, *keys, default=None):
    out = []
    for k in keys:
        if k in kv:
            out.append(int(kv[k]))
        elif default is not None:
            out.append(default)
        else:
            raise ValueError("missing key %s" % k)
    return out


def flt(kv, key, default):
    return float(kv[key]) if key in kv else default


def window_out(n, k, stride, dil, p0, p1):
    span = dil * (k - 1) + 1
    if span > n + p0 + p1:
        raise ValueError("window larger than the padded input")
    return (n + p0 + p1 - span) // stride + 1


# gensor's type names -> torch's attribute names
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def plan(spec):
    """Everything needed to run spec in PyTorch, as plain data.

    inputs: gensor's stored shapes of the inputs, in order; out: the output's
    stored shape; bias: the bias length or 0; the rest: per-operator
    parameters."""
    op, kv = parse_spec(spec)
    # typed specs (issue 18): dtype= (inputs and bias), out_dtype= (the
    # output; default dtype), math=tf32 (f32 matrix products, TF32 inputs)
    dt = kv.get("dtype", "f32")
    odt = kv.get("out_dtype", dt)
    math = kv.get("math", "f32")
    if dt not in DTYPES or odt not in DTYPES or math not in ("f32", "tf32"):
        raise ValueError("unknown type in %r" % spec)
    p = {"op": op, "spec": spec, "bias": 0, "dtype": dt, "out_dtype": odt, "tf32": math == "tf32"}
    if op == "gemm":
        M, N, K = ints(kv, "M", "N", "K")
        ta, tb, bias, relu = ints(kv, "transA", "transB", "bias", "relu", default=0)
        p.update(M=M, N=N, K=K, ta=ta, tb=tb, relu=relu, alpha=flt(kv, "alpha", 1.0), beta=flt(kv, "beta", 0.0))
        p["inputs"] = [[K, M] if ta else [M, K], [N, K] if tb else [K, N]]
        p["out"] = [M, N]
        p["bias"] = N if bias else 0
    elif op == "bgemm":
        B, M, N, K = ints(kv, "B", "M", "N", "K")
        ta, tb = ints(kv, "transA", "transB", default=0)
        p.update(B=B, M=M, N=N, K=K, ta=ta, tb=tb, alpha=flt(kv, "alpha", 1.0), beta=flt(kv, "beta", 0.0))
        p["inputs"] = [[B, K, M] if ta else [B, M, K], [B, N, K] if tb else [B, K, N]]
        p["out"] = [B, M, N]
    elif op == "gemv":
        M, N = ints(kv, "M", "N")
        (ta,) = ints(kv, "transA", default=0)
        p.update(M=M, N=N, ta=ta, alpha=flt(kv, "alpha", 1.0), beta=flt(kv, "beta", 0.0))
        p["inputs"] = [[N, M] if ta else [M, N], [N]]
        p["out"] = [M]
    elif op in ("conv2d", "dwconv2d", "avgpool2d", "maxpool2d"):
        N, C, H, W, R, S = ints(kv, "N", "C", "H", "W", "R", "S")
        K = int(kv["K"]) if op == "conv2d" else C
        sh, sw, dh, dw = ints(kv, "strideh", "stridew", "dilh", "dilw")
        pt, pb, pl, pr = ints(kv, "pad_top", "pad_bottom", "pad_left", "pad_right")
        nhwc = kv.get("layout", "nchw") == "nhwc"
        bias, relu = ints(kv, "bias", "relu", default=0)
        P = window_out(H, R, sh, dh, pt, pb)
        Q = window_out(W, S, sw, dw, pl, pr)
        p.update(N=N, C=C, H=H, W=W, K=K, R=R, S=S, sh=sh, sw=sw, dh=dh, dw=dw, pt=pt, pb=pb, pl=pl, pr=pr,
                 nhwc=nhwc, relu=relu, P=P, Q=Q)
        inp = [N, H, W, C] if nhwc else [N, C, H, W]
        if op == "conv2d":
            p["inputs"] = [inp, [K, R, S, C] if nhwc else [K, C, R, S]]
        elif op == "dwconv2d":
            p["inputs"] = [inp, [R, S, C] if nhwc else [C, R, S]]
        else:
            p["inputs"] = [inp]
        p["out"] = [N, P, Q, K] if nhwc else [N, K, P, Q]
        p["bias"] = K if bias and op in ("conv2d", "dwconv2d") else 0
    elif op in ("relu", "add", "mul"):
        M, N = ints(kv, "M", "N")
        (bcast,) = ints(kv, "bcast", default=0)
        p.update(M=M, N=N, bcast=bcast)
        p["inputs"] = [[M, N]] if op == "relu" else [[M, N], [N] if bcast else [M, N]]
        p["out"] = [M, N]
    elif op in ("rowsum", "rowmean", "rowmax"):
        M, K = ints(kv, "M", "K")
        p.update(M=M, K=K)
        p["inputs"] = [[M, K]]
        p["out"] = [M]
    else:
        raise ValueError("unknown operator %r" % op)
    return p


def gensor_shapes(text):
    """'A=64x32 B=32x16 C=64x16 bias=16' -> ([[64,32],[32,16]], [64,16], 16)."""
    shapes, bias = [], 0
    for w in text.split():
        name, _, dims = w.partition("=")
        if name == "bias":
            bias = int(dims)
        else:
            shapes.append([int(d) for d in dims.split("x")])
    return shapes[:-1], shapes[-1], bias


def read_specs(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise ValueError("%s: expected 3 tab-separated fields: %r" % (path, line))
            rows.append(parts)
    return rows


def self_test(rows):
    bad = 0
    for cls, spec, shapes in rows:
        try:
            p = plan(spec)
            ins, out, bias = gensor_shapes(shapes)
            if p["inputs"] != ins or p["out"] != out or p["bias"] != bias:
                print("MISMATCH %s: planned %s -> %s bias %d; gensor %s -> %s bias %d"
                      % (spec, p["inputs"], p["out"], p["bias"], ins, out, bias))
                bad += 1
        except (ValueError, KeyError) as e:
            print("ERROR %s: %s" % (spec, e))
            bad += 1
    print("torch_bench self-test: %d operators planned, %d mismatches" % (len(rows), bad))
    return 1 if bad else 0


# ---- PyTorch ----------------------------------------------------------------------------
def build(torch, p, dev):
    """Tensors in gensor's stored layouts, and the timed callable."""
    F = torch.nn.functional
    g = torch.Generator(device=dev)
    g.manual_seed(1)

    # the spec's types: inputs and bias in dtype; the output in out_dtype.
    # PyTorch computes in the inputs' type (f32 accumulation inside its
    # half GEMMs and convolutions); an out_dtype that differs is one extra
    # cast of the result, timed with it.
    dt, odt = getattr(torch, DTYPES[p["dtype"]]), getattr(torch, DTYPES[p["out_dtype"]])

    def rand(shape, t=dt):
        return (torch.rand(shape, generator=g, device=dev, dtype=torch.float32) * 2 - 1).to(t)

    ins = [rand(s) for s in p["inputs"]]
    bias = rand([p["bias"]]) if p["bias"] else None
    out = rand(p["out"]) if p.get("beta", 0.0) != 0.0 else None  # read by beta: in dt, as PyTorch needs
    op = p["op"]
    if op == "gemm":
        a = ins[0].t() if p["ta"] else ins[0]
        b = ins[1].t() if p["tb"] else ins[1]
        alpha, beta, relu = p["alpha"], p["beta"], p["relu"]

        c = out if out is not None else torch.empty(p["out"], device=dev, dtype=dt)  # beta == 0: ignored

        def fn():
            if beta != 0.0:
                y = torch.addmm(c, a, b, beta=beta, alpha=alpha)
                if bias is not None:
                    y.add_(bias)
            elif bias is not None:
                y = torch.addmm(bias, a, b, alpha=alpha)
            elif alpha != 1.0:
                y = torch.addmm(c, a, b, beta=0.0, alpha=alpha)
            else:
                y = torch.mm(a, b)
            return torch.relu_(y) if relu else y
    elif op in ("bgemm", "gemv"):
        if op == "bgemm":
            a = ins[0].transpose(1, 2) if p["ta"] else ins[0]
            b = ins[1].transpose(1, 2) if p["tb"] else ins[1]
            plain, scaled = torch.bmm, torch.baddbmm
        else:
            a = ins[0].t() if p["ta"] else ins[0]
            b = ins[1]
            plain, scaled = torch.mv, torch.addmv
        alpha, beta = p["alpha"], p["beta"]
        c = out if out is not None else torch.empty(p["out"], device=dev, dtype=dt)  # beta == 0: ignored

        def fn():
            if alpha == 1.0 and beta == 0.0:
                return plain(a, b)
            return scaled(c, a, b, beta=beta, alpha=alpha)
    elif op in ("conv2d", "dwconv2d", "avgpool2d", "maxpool2d"):
        x = ins[0].permute(0, 3, 1, 2) if p["nhwc"] else ins[0]  # NHWC storage: a channels_last view
        sym = p["pt"] == p["pb"] and p["pl"] == p["pr"]
        pad = (p["pt"], p["pl"]) if sym else (0, 0)
        prepad = None if sym else (p["pl"], p["pr"], p["pt"], p["pb"])
        stride, dil, win = (p["sh"], p["sw"]), (p["dh"], p["dw"]), (p["R"], p["S"])
        if op == "conv2d":
            w = ins[1].permute(0, 3, 1, 2) if p["nhwc"] else ins[1]
            groups = 1
        elif op == "dwconv2d":
            w = ins[1].permute(2, 0, 1).unsqueeze(1) if p["nhwc"] else ins[1].unsqueeze(1)
            groups = p["C"]
        relu = p["relu"]
        if op in ("conv2d", "dwconv2d"):
            def fn():
                xi = F.pad(x, prepad) if prepad else x
                y = F.conv2d(xi, w, bias, stride, pad, dil, groups)
                return torch.relu_(y) if relu else y
        elif op == "avgpool2d":
            if dil != (1, 1):
                raise NotImplementedError("avg_pool2d has no dilation")
            if not sym or 2 * p["pt"] > p["R"] or 2 * p["pl"] > p["S"]:
                prepad = (p["pl"], p["pr"], p["pt"], p["pb"])  # zeros, counted: count_include_pad
                pad = (0, 0)

            def fn():
                xi = F.pad(x, prepad) if prepad else x
                return F.avg_pool2d(xi, win, stride, pad, count_include_pad=True)
        else:
            def fn():
                xi = F.pad(x, prepad, value=float("-inf")) if prepad else x
                return F.max_pool2d(xi, win, stride, pad, dil)
    elif op == "relu":
        x = ins[0]

        def fn():
            return torch.relu(x)
    elif op in ("add", "mul"):
        x, y = ins
        f = torch.add if op == "add" else torch.mul

        def fn():
            return f(x, y)
    else:  # rowsum, rowmean, rowmax
        x = ins[0]
        f = {"rowsum": torch.sum, "rowmean": torch.mean, "rowmax": torch.amax}[op]

        def fn():
            return f(x, 1)
    if odt != dt:
        inner = fn

        def fn():
            return inner().to(odt)
    return fn


def torch_dtype(torch, p):
    """The dtype gensor's output has: PyTorch's result must match it."""
    return getattr(torch, DTYPES[p["out_dtype"]])


def torch_shape(p):
    """The logical shape PyTorch gives the result (NCHW even for channels_last)."""
    if p["op"] in ("conv2d", "dwconv2d", "avgpool2d", "maxpool2d"):
        return [p["N"], p["K"], p["P"], p["Q"]]
    return p["out"]


def time_call(torch, fn, min_runs, max_runs, target_ms):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    times = []
    start = time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or (time.perf_counter() - start) * 1e3 < target_ms):
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times), len(times)


def run(rows, out_path, min_runs, max_runs, target_ms):
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        print("torch_bench: PyTorch not available (%s: %s)" % (type(e).__name__, e))
        return 3
    if not torch.cuda.is_available():
        print("torch_bench: PyTorch %s sees no CUDA device" % torch.__version__)
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    desc = "torch %s, CUDA %s, cuDNN %s, %s" % (torch.__version__, torch.version.cuda,
                                               torch.backends.cudnn.version(), torch.cuda.get_device_name(dev))
    print("torch_bench: " + desc, file=sys.stderr)
    lines = []
    t_all = time.perf_counter()
    for i, (cls, spec, _shapes) in enumerate(rows):
        status, ms, runs, note = "ok", float("nan"), 0, ""
        try:
            p = plan(spec)
            # math=tf32: TF32 matrix products for this operator only
            torch.backends.cuda.matmul.allow_tf32 = p["tf32"]
            torch.backends.cudnn.allow_tf32 = p["tf32"]
            fn = build(torch, p, dev)
            y = fn()  # one more warm-up, and the same result shape and type as gensor's
            got = list(y.shape)
            if got != torch_shape(p):
                raise ValueError("PyTorch's result is %s, gensor's %s" % (got, torch_shape(p)))
            if y.dtype != torch_dtype(torch, p):
                raise ValueError("PyTorch's result is %s, gensor's %s" % (y.dtype, torch_dtype(torch, p)))
            ms, runs = time_call(torch, fn, min_runs, max_runs, target_ms)
        except NotImplementedError as e:
            status, note = "unsupported", str(e)
        except Exception as e:  # keep going: one row says what failed
            oom = "out of memory" in str(e).lower()
            status, note = ("oom" if oom else "error"), "%s: %s" % (type(e).__name__, str(e).split("\n")[0])
        fn = None
        torch.cuda.empty_cache()
        note = note.replace(",", ";").replace("\n", " ")
        lines.append("%s,%s,%d,%s,%s" % (spec, "" if ms != ms else "%.6f" % ms, runs, status, note))
        print("torch_bench: %3d/%d %-8s %10s ms  %s%s" % (i + 1, len(rows), cls, "-" if ms != ms else "%.4f" % ms,
                                                        spec, "" if status == "ok" else "  [%s]" % status),
              file=sys.stderr)
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# %s\nspec,torch_ms,runs,status,note\n" % desc)
        for line in lines:
            f.write(line + "\n")
    import os
    os.replace(tmp, out_path)
    print("torch_bench: %d operators in %.1f s -> %s" % (len(rows), time.perf_counter() - t_all, out_path),
          file=sys.stderr)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", required=True, help="bench_gpu --list-specs output")
    ap.add_argument("--out", help="CSV to write")
    ap.add_argument("--self-test", action="store_true", help="check the plans against gensor's shapes; no torch")
    ap.add_argument("--runs", nargs=2, type=int, default=[5, 30], metavar=("MIN", "MAX"))
    ap.add_argument("--target-ms", type=float, default=40.0)
    a = ap.parse_args()
    rows = read_specs(a.specs)
    if a.self_test:
        return self_test(rows)
    if not a.out:
        ap.error("--out is required unless --self-test")
    return run(rows, a.out, a.runs[0], a.runs[1], a.target_ms)


if __name__ == "__main__":
    sys.exit(main())
