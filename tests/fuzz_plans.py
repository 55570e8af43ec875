#!/usr/bin/env python3
"""fuzz_plans.py -- adversarial correctness fuzzing of gensor's kernel emitter on
the OpenCL device (PoCL). A test tool, not part of `make test`; stdlib only.

Every case draws a random operator of some class with awkward small extents
(1, primes, non-multiples of every tile), a random profile and one of:

  cfg    `gensor verify --hw HW --config CFG SPEC` with a random, mostly valid
         configuration (tiles, vthreads, staging, stages, raster, group);
  top    `gensor verify --hw HW --top K --seed S SPEC` (the constructed top-K);
  opts   `build/fuzz_opts HW SPEC CFG OPTS SEED` (tests/fuzz_opts.c): the same
         configuration under a fallback plan (scalar / predicated / no cp.async /
         launch bounds (threads,1)), which the CLI cannot select.
  xshape `build/fuzz_opts HW SPEC CFG OPTS SEED RUNSPEC`: the plan made for a
         vector-friendly shape SPEC (extents multiples of 4, 8 or 16) is
         emitted for and run on RUNSPEC, the same operator with grown, awkward
         extents: the run-time guards must keep the kernel correct.

Element types and tensor cores: a share of the cases (--types-frac, 0.4) adds
element types to the operator: dtype=f16|bf16 (every class takes them), an
out_dtype that sometimes differs (the other half type, or f32), f32 inputs
under a half output, or math=tf32 (gemm, bgemm, conv2d). A share of the typed
gemm, bgemm and conv2d cases (--mma-frac, 0.5) run a tensor-core config
`mma=N` (a row of ir/mma.c that takes the inputs' type) on a profile whose
arch has the row, with tiles drawn to satisfy gs_mma_state_ok (warp tiles of
whole 16x8 instruction tiles, lanes 8 x 4, no vthreads, batch thread tiles 1,
the k block tile a multiple of the row's k, both inputs staged, no group);
--adv-frac of them break one rule or take another profile (the check must
reject it, exit 2). They run in cfg, opts (the fallback plans, also without
fragment double buffering) and xshape mode. Typed cases verify the constructed
top-K twice as often as f32 ones (the construction may choose mma itself).
conv2d draws groups=G > 1 in a share (--groups-frac, 0.2): a group axis g,
a batch under mma. mma cases get twice the timeout: PoCL compiles the exact
per-lane emulation of the instructions slowly (10-50 s). The summary counts
the cases per kind (f32, typed: FFMA, mma) and mode, and the candidates that
passed on the tensor cores (configured, or chosen by a top-K).

Non-finite inputs: a share of the cases (--nonfinite-frac, 0.3; drawn from a
stream of its own, so a seed's operators, configs and modes are those it drew
before) verify with N = 1, 2, 3 or 8 NaN / +inf / -inf inputs: `gensor verify
--nonfinite N` (cfg, top) or `fuzz_opts --nonfinite N` (opts, xshape). Every
output's class (NaN, +inf, -inf, finite) must then match the reference's;
the summary counts them as kind/mode+nf.

Outcome of a case:
  pass      exit 0 and PASS
  rejected  exit 2 with a one-line error (spec or config refused by the check)
  fail      exit 1 with FAIL (a mismatch against the reference)
  error     exit 1 without FAIL (a build / launch error of an emitted kernel)
  crash     killed by a signal, or an exit code other than 0, 1, 2
  hang      over the timeout (60 s; 120 s for an mma case)

Run `make` first; build/fuzz_opts is built from tests/fuzz_opts.c when missing
or stale. PoCL caches compiled kernels (~/.cache/pocl), so a repeated kernel is
fast the second time.

Usage:
  python3 tests/fuzz_plans.py [--minutes 35] [--seed N] [--out build/fuzz]
                              [--timeout 60] [--cases N]
  python3 tests/fuzz_plans.py --xshape-frac 0.7 ...   (mostly plan-on-other-shape cases)
  python3 tests/fuzz_plans.py --top-frac 1.0 ...      (constructed top-K, all strategies)
  python3 tests/fuzz_plans.py --only gemm,bgemm,conv2d --types-frac 1 --mma-frac 0.8 ...
                                                      (mostly tensor-core configurations)
  python3 tests/fuzz_plans.py --types-frac 1 --mma-frac 1 --groups-frac 1 --only conv2d ...
  python3 tests/fuzz_plans.py --types-frac 0 --groups-frac 0 ...   (f32 only, as before)
  python3 tests/fuzz_plans.py --pairs 6000            (kernel identity, no OpenCL)
  python3 tests/fuzz_plans.py --replay build/fuzz/results.jsonl   (re-run failures)

Results: OUT/results.jsonl (one JSON line per case), OUT/failures.txt (the
reproducer command lines of every fail/error/crash/hang), a summary on stdout.
"""
import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENSOR = os.path.join(ROOT, "build", "gensor")
FUZZ_OPTS = os.path.join(ROOT, "build", "fuzz_opts")
PROFILES = ["h100", "a100", "rtx4090", "rtx3090", "orin-nano", "v100", "t4"]
MAX_MACS = 2_000_000

AWKWARD = [1, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 29, 31, 32, 33, 37, 61, 63, 64, 65, 97, 127, 128,
           129, 131, 257, 263, 511, 1000, 1031]


ALIGN = [1]  # xshape mode: extents drawn as multiples of ALIGN[0] (vector-friendly plans)


def ext(r, lo=1, hi=1031):
    """An awkward extent in [lo, hi] (a multiple of ALIGN[0] in xshape mode)."""
    c = [v for v in AWKWARD if lo <= v <= hi]
    v = r.randint(lo, hi) if r.random() < 0.15 else (r.choice(c) if c else lo)
    al = ALIGN[0]
    if al > 1:
        v = max(al, -(-v // al) * al)
        if v > hi:
            v = max(lo, (hi // al) * al)
    return v


def macs(axes):
    n = 1
    for _, e, _ in axes:
        n *= e
    return n


# ---- operators -------------------------------------------------------------------
# Each generator returns (spec, axes, inputs): axes is [(name, extent, kind)] in
# the ETIR's order (kind 's' spatial, 'r' reduce) and inputs the input tensors'
# names, lower case, as the config keys spell them.

def op_gemm(r):
    while True:
        M, N, K = ext(r, 1, 600), ext(r, 1, 600), ext(r, 1, 1100)
        if M * N * K <= MAX_MACS:
            break
    kv = [f"M={M}", f"N={N}", f"K={K}"]
    if r.random() < 0.5: kv.append(f"transA={r.randint(0, 1)}")
    if r.random() < 0.5: kv.append(f"transB={r.randint(0, 1)}")
    if r.random() < 0.4: kv.append("alpha=" + r.choice(["1", "1.5", "-2", "0.25", "0"]))
    if r.random() < 0.4: kv.append("beta=" + r.choice(["0", "1", "0.5", "-0.75"]))
    if r.random() < 0.4: kv.append(f"bias={r.randint(0, 1)}")
    if r.random() < 0.4: kv.append(f"relu={r.randint(0, 1)}")
    r.shuffle(kv)
    return "gemm " + " ".join(kv), [("m", M, "s"), ("n", N, "s"), ("k", K, "r")], ["a", "b"]


def op_bgemm(r):
    while True:
        B, M, N, K = ext(r, 1, 9), ext(r, 1, 300), ext(r, 1, 300), ext(r, 1, 600)
        if B * M * N * K <= MAX_MACS:
            break
    kv = [f"B={B}", f"M={M}", f"N={N}", f"K={K}"]
    if r.random() < 0.5: kv.append(f"transA={r.randint(0, 1)}")
    if r.random() < 0.5: kv.append(f"transB={r.randint(0, 1)}")
    if r.random() < 0.4: kv.append("alpha=" + r.choice(["1", "1.5", "-2"]))
    if r.random() < 0.4: kv.append("beta=" + r.choice(["0", "1", "0.5"]))
    return "bgemm " + " ".join(kv), [("b", B, "s"), ("m", M, "s"), ("n", N, "s"), ("k", K, "r")], ["a", "b"]


def op_gemv(r):
    M, N = ext(r, 1, 1500), ext(r, 1, 1500)
    kv = [f"M={M}", f"N={N}"]
    if r.random() < 0.6: kv.append(f"transA={r.randint(0, 1)}")
    if r.random() < 0.4: kv.append("alpha=" + r.choice(["1", "1.5", "-2", "0.25"]))
    if r.random() < 0.4: kv.append("beta=" + r.choice(["0", "1", "0.5", "-0.75"]))
    return "gemv " + " ".join(kv), [("m", M, "s"), ("k", N, "r")], ["a", "x"]


def window(r, pool, maxwin=7):
    """Random window keys; returns (keys, R, S, sh, sw, dh, dw, pt, pb, pl, pr)."""
    R, S = r.randint(1, maxwin), r.randint(1, maxwin)
    if r.random() < 0.3: S = R
    sh, sw = r.choice([1, 1, 2, 3]), r.choice([1, 1, 2, 3])
    dh, dw = r.choice([1, 1, 1, 2, 3]), r.choice([1, 1, 1, 2])
    def padv(win):
        hi = win // 2 if pool else 3
        return r.randint(0, hi)
    pt, pb, pl, pr = padv(R), padv(R), padv(S), padv(S)
    keys = []
    if pool and r.random() < 0.5 and R == S:
        keys.append(f"F={R}")
    else:
        keys += [f"R={R}", f"S={S}"]
    # spell the window keys in various ways
    if sh == sw and r.random() < 0.5: keys.append(f"stride={sh}")
    else: keys += [f"strideh={sh}", f"stridew={sw}"]
    if dh == dw and r.random() < 0.5: keys.append(f"dilation={dh}")
    else: keys += [f"dilh={dh}", f"dilw={dw}"]
    if pt == pb == pl == pr and r.random() < 0.5: keys.append(f"pad={pt}")
    elif pt == pb and pl == pr and r.random() < 0.5: keys += [f"padh={pt}", f"padw={pl}"]
    else: keys += [f"pad_top={pt}", f"pad_bottom={pb}", f"pad_left={pl}", f"pad_right={pr}"]
    return keys, R, S, sh, sw, dh, dw, pt, pb, pl, pr


GROUPS_FRAC = [0.0]  # conv2d: the share drawn with groups=G > 1 (a group axis g, a batch under mma)


def op_window(r, name):
    pool = name in ("avgpool2d", "maxpool2d")
    for _ in range(1000):
        N = r.choice([1, 1, 2, 3])
        C = ext(r, 1, 70)
        H, W = ext(r, 1, 40), ext(r, 1, 40)
        K = ext(r, 1, 40)
        G = 1
        if name == "conv2d" and r.random() < GROUPS_FRAC[0]:
            G = r.choice([2, 2, 3, 4, 8])
            C, K = G * ext(r, 1, max(1, 70 // G)), G * ext(r, 1, max(1, 40 // G))
        keys, R, S, sh, sw, dh, dw, pt, pb, pl, pr = window(r, pool, 7 if not pool else 5)
        hp, wp = H + pt + pb - dh * (R - 1) - 1, W + pl + pr - dw * (S - 1) - 1
        if hp < 0 or wp < 0:
            continue
        P, Q = hp // sh + 1, wp // sw + 1
        nhwc = r.random() < 0.5
        if name == "conv2d":
            m = N * K * P * Q * (C // G) * R * S
            gk = ([("g", G, "s")] if G > 1 else []) + [("k", K // G, "s")]
            sp = [("n", N, "s")] + ([("p", P, "s"), ("q", Q, "s")] + gk if nhwc else gk + [("p", P, "s"), ("q", Q, "s")])
            axes = sp + [("c", C // G, "r"), ("r", R, "r"), ("s", S, "r")]
            ins = ["i", "f"]
        else:
            m = N * C * P * Q * R * S
            sp = [("n", N, "s")] + ([("p", P, "s"), ("q", Q, "s"), ("c", C, "s")] if nhwc
                                    else [("c", C, "s"), ("p", P, "s"), ("q", Q, "s")])
            axes = sp + [("r", R, "r"), ("s", S, "r")]
            ins = ["i"] if pool else ["i", "f"]
        if m > MAX_MACS:
            continue
        kv = [f"N={N}", f"C={C}", f"H={H}", f"W={W}"] + ([f"K={K}"] if name == "conv2d" else []) + keys
        if G > 1: kv.append(f"groups={G}")
        kv.append("layout=" + ("nhwc" if nhwc else "nchw"))
        if not pool:
            if r.random() < 0.4: kv.append(f"bias={r.randint(0, 1)}")
            if r.random() < 0.4: kv.append(f"relu={r.randint(0, 1)}")
        return name + " " + " ".join(kv), axes, ins
    raise RuntimeError("no window op found")


def op_reduce(r, name):
    M, K = ext(r, 1, 600), ext(r, 1, 5000)
    return f"{name} M={M} K={K}", [("m", M, "s"), ("k", K, "r")], ["x"]


def op_eltwise(r, name):
    M, N = ext(r, 1, 1100), ext(r, 1, 1100)
    if name == "relu":
        return f"relu M={M} N={N}", [("m", M, "s"), ("n", N, "s")], ["x"]
    b = r.randint(0, 1)
    spec = f"{name} M={M} N={N}" + (f" bcast={b}" if r.random() < 0.8 else "")
    return spec, [("m", M, "s"), ("n", N, "s")], ["x", "y"]


CLASSES = {
    "gemm": (op_gemm, 5), "bgemm": (op_bgemm, 2), "gemv": (op_gemv, 2),
    "conv2d": (lambda r: op_window(r, "conv2d"), 4), "dwconv2d": (lambda r: op_window(r, "dwconv2d"), 2),
    "avgpool2d": (lambda r: op_window(r, "avgpool2d"), 1.5), "maxpool2d": (lambda r: op_window(r, "maxpool2d"), 1.5),
    "rowsum": (lambda r: op_reduce(r, "rowsum"), 1), "rowmax": (lambda r: op_reduce(r, "rowmax"), 1),
    "rowmean": (lambda r: op_reduce(r, "rowmean"), 1),
    "add": (lambda r: op_eltwise(r, "add"), 0.7), "mul": (lambda r: op_eltwise(r, "mul"), 0.7),
    "relu": (lambda r: op_eltwise(r, "relu"), 0.6),
}


# ---- configurations --------------------------------------------------------------

def npow2(x):
    p = 1
    while p < x:
        p *= 2
    return p


def rpow2(r, hi, skew=0.0):
    """A power of two in [1, hi] (hi a power of two); skew > 0 prefers small ones."""
    lg = hi.bit_length() - 1
    if skew and r.random() < skew:
        return 1 << r.randint(0, min(lg, 3))
    return 1 << r.randint(0, lg)


NO_ASYNC = {"v100", "t4"}  # sm_70, sm_75: no cp.async, so stages <= 2


def gen_config(r, axes, inputs, adversarial, hw=""):
    """A random configuration. Mostly valid under the README's rules (tiles,
    threads <= 1024, <= 128 accumulators, stages/raster/group rules); with
    adversarial set, some rule may be broken on purpose (the check must reject
    it with exit 2, never run a wrong kernel)."""
    for _ in range(200):
        kv = {}
        b, t, v = {}, {}, {}
        for name, e, kind in axes:
            b[name] = rpow2(r, npow2(e), skew=0.3)
            if kind == "s":
                t[name] = rpow2(r, b[name], skew=0.5)
                v[name] = rpow2(r, t[name], skew=0.6)
        spatial = [a for a in axes if a[2] == "s"]
        reduce_ = [a for a in axes if a[2] == "r"]
        threads = 1
        acc = 1
        for name, e, _ in spatial:
            threads *= b[name] // t[name]
            acc *= t[name]
        if not adversarial and (threads > 1024 or acc > 128):
            continue
        stage = {x: (1 if r.random() < 0.7 else 0) for x in inputs}
        # group: the last reduce axis' block tile bounds it
        group = 1
        if reduce_ and r.random() < 0.55:
            gl = reduce_[-1][0]
            cap = min(32, b[gl]) if not adversarial else 64
            group = rpow2(r, npow2(cap))
            if group > 32:
                group = 32
        if not adversarial and threads * group > 1024:
            continue
        # stages: needs a staged input and a reduce loop of >= stages tiles
        stages = 1
        if r.random() < 0.55:
            stages = r.randint(2, 4)
            if not adversarial:
                tiles = 1
                for name, e, _ in reduce_:
                    tiles *= -(-e // b[name])
                if not reduce_ or not any(stage.values()):
                    stages = 1
                else:
                    stages = min(stages, tiles) if tiles >= 2 else 1
                if hw in NO_ASYNC:
                    stages = min(stages, 2)
        # raster: two spatial axes; G/2 below the blocks along the second-last one
        raster = 1
        if len(spatial) >= 2 and r.random() < 0.45:
            xname, xe, _ = spatial[-2]
            nbx = -(-xe // b[xname])
            if adversarial:
                raster = 1 << r.randint(1, 4)
            else:
                choices = [g for g in (2, 4, 8, 16) if g // 2 < nbx]
                if choices:
                    raster = r.choice(choices)
        for name, e, kind in axes:
            kv["b" + name] = b[name]
            if kind == "s":
                if r.random() < 0.85 or t[name] != 1: kv["t" + name] = t[name]
                if r.random() < 0.85 or v[name] != 1: kv["v" + name] = v[name]
        for x in inputs:
            if r.random() < 0.9 or stage[x] != 0:
                kv["s" + x] = stage[x]
        if stages != 1 or r.random() < 0.1: kv["stages"] = stages
        if raster != 1 or r.random() < 0.1: kv["raster"] = raster
        if group != 1 or (reduce_ and r.random() < 0.1): kv["group"] = group
        items = list(kv.items())
        r.shuffle(items)
        return ",".join(f"{k}={val}" for k, val in items)
    return None


# ---- element types and tensor cores ------------------------------------------------
# Every operator takes dtype= and out_dtype= (docs/CLI.md, "Spec grammar");
# math=tf32 only gemm, bgemm and conv2d with f32 tensors. The tensor-core rows
# (ir/mma.c): 1 m16n8k16.f16 and 2 .bf16 (sm_80 on), 3 m16n8k8.tf32 (sm_80 on),
# 4 m16n8k8.f16 (sm_75 on), 5 m16n8k8.bf16 (sm_80 on); row: (input kind, k, min arch).

ARCH = {"h100": 90, "a100": 80, "rtx4090": 89, "rtx3090": 86, "orin-nano": 87, "v100": 70, "t4": 75}
MMA_ROWS = {1: ("f16", 16, 80), 2: ("bf16", 16, 80), 3: ("tf32", 8, 80), 4: ("f16", 8, 75), 5: ("bf16", 8, 80)}
TF32_CLASSES = {"gemm", "bgemm", "conv2d"}
# The roles of the axes under mma (gs_mma_roles): M the axes of input 0 and the
# output, N those of input 1 and the output, K the reduce axes, B batches.
MMA_ROLES = {
    "gemm": {"m": "M", "n": "N", "k": "K"},
    "bgemm": {"b": "B", "m": "M", "n": "N", "k": "K"},
    "conv2d": {"n": "M", "p": "M", "q": "M", "k": "N", "g": "B", "c": "K", "r": "K", "s": "K"},
}


def draw_types(r, cls):
    """Element-type keys for a spec, and the kind of its product inputs
    ('f16', 'bf16', 'tf32' or 'f32': f32 inputs under a typed output)."""
    u = r.random()
    if cls in TF32_CLASSES and u < 0.15:
        return [r.choice(["math=tf32", "math=tf32", "math=tf32 dtype=f32"])], "tf32"
    if u < 0.22:  # f32 inputs, a half output
        return [f"out_dtype={r.choice(['f16', 'bf16'])}"], "f32"
    dt = r.choice(["f16", "bf16"])
    keys = [f"dtype={dt}"]
    v = r.random()
    if v < 0.25:
        keys.append("out_dtype=f32")
    elif v < 0.4:
        keys.append("out_dtype=" + ("bf16" if dt == "f16" else "f16"))
    elif v < 0.47:
        keys.append(f"out_dtype={dt}")
    return keys, dt


def split_pow2(r, total, axes, caps=None):
    """Split the power of two total over the named axes (a dict of powers of
    two whose product is total), each at most caps[name] when given, where
    it can; extents > 1 are preferred."""
    out = {a: 1 for a, _ in axes}
    lg = total.bit_length() - 1
    for _ in range(lg):
        cand = [(a, e) for a, e in axes if not caps or out[a] * 2 <= caps.get(a, 1 << 30)] or axes
        w = [max(1.0, float(min(e, 64))) ** 0.7 for _, e in cand]
        a = r.choices([c[0] for c in cand], w)[0]
        out[a] *= 2
    return out


def gen_mma_config(r, cls, axes, row, hw, adversarial):
    """A configuration with mma=row, drawn to satisfy gs_mma_state_ok: the
    product of the m thread tiles (tm) and of the n ones (tn) even, the
    threads along m (bm/tm) a multiple of 8 and along n (bn/tn) of 4, no
    vthreads, batch thread tiles 1, the product of the k block tiles a
    multiple of the row's k, both inputs staged, no group; threads <= 1024,
    tm*tn <= 128. With adversarial set one rule is broken on purpose."""
    roles = MMA_ROLES[cls]
    by = {x: [(a, e) for a, e, _ in axes if roles[a] == x] for x in "MNKB"}
    rk = MMA_ROWS[row][1]
    for _ in range(200):
        TM, TN = r.choice([2, 2, 4, 4, 8, 16]), r.choice([2, 2, 4, 4, 8, 16])
        if TM * TN > 128:
            continue
        WM, WN = r.choice([8, 8, 16, 32]), r.choice([4, 4, 8, 16])
        bb = {a: rpow2(r, npow2(e), skew=0.7) for a, e in by["B"]}
        nb = 1
        for v in bb.values():
            nb *= v
        if WM * WN * nb > 1024:
            continue
        tt = {**split_pow2(r, TM, by["M"]), **split_pow2(r, TN, by["N"])}
        th = {**split_pow2(r, WM, by["M"]), **split_pow2(r, WN, by["N"])}
        blk = {a: tt[a] * th[a] for a in tt}
        blk.update(bb)
        BK = rk << r.choice([0, 0, 0, 1, 1, 2])
        # the unrolled instruction tiles per warp and block tile: PoCL's compile time grows with them
        # (32 tiles: 50-140 s; tf32 gemm 128x32x16 with 16x4 thread tiles took 136 s)
        if (TM // 2) * (TN // 2) * (BK // rk) > 16:
            continue
        # window axes: mostly within their extent's next power of two, sometimes past it
        caps = {a: npow2(e) * (2 if r.random() < 0.15 else 1) for a, e in by["K"] if a in ("r", "s")}
        blk.update(split_pow2(r, BK, by["K"], caps))
        # the padded work of the launched tiles bounds PoCL's time
        work = 1
        for a, e, _ in axes:
            work *= -(-e // blk[a]) * blk[a]
        if work > 6 * MAX_MACS:
            continue
        kv = {}
        for a, e, kind in axes:
            kv["b" + a] = blk[a]
            if kind == "s":
                kv["t" + a] = tt.get(a, 1)
                if r.random() < 0.3: kv["v" + a] = 1
        names = ["a", "b"] if cls in ("gemm", "bgemm") else ["i", "f"]
        for x in names:
            kv["s" + x] = 1
        reduce_ = [(a, e) for a, e, k in axes if k == "r"]
        if r.random() < 0.5:
            tiles = 1
            for a, e in reduce_:
                tiles *= -(-e // blk[a])
            st = min(2 if r.random() < 0.75 else r.randint(3, 4), tiles, 2 if hw in NO_ASYNC else 4)
            if st > 1: kv["stages"] = st
        sp = [(a, e) for a, e, k in axes if k == "s"]
        if len(sp) >= 2 and r.random() < 0.3:
            xa, xe = sp[-2]
            nbx = -(-xe // blk[xa])
            ch = [g for g in (2, 4, 8, 16) if g // 2 < nbx]
            if ch: kv["raster"] = r.choice(ch)
        if r.random() < 0.12:  # split-K along the first reduce axis
            a, e = reduce_[0]
            tl = -(-e // blk[a])
            if tl >= 2: kv["split"] = r.randint(2, min(tl, 8))
        kv["mma"] = row
        if adversarial:
            w = r.choice(["todd", "vth", "unstaged", "group", "bk", "row", "bthread", "wm"])
            m0 = by["M"][0][0]
            if w == "todd": kv["t" + m0] = 1; kv["b" + m0] = max(1, blk[m0] // max(1, tt[m0]))
            elif w == "vth": kv["v" + m0] = 2 if tt[m0] >= 2 else 1
            elif w == "unstaged": kv["s" + r.choice(names)] = 0
            elif w == "group": kv["group"] = 2
            elif w == "bk": kv["b" + reduce_[-1][0]] = max(1, blk[reduce_[-1][0]] // (2 * (BK // rk)))
            elif w == "row": kv["mma"] = r.choice([x for x in MMA_ROWS if x != row])
            elif w == "bthread" and by["B"]: kv["t" + by["B"][0][0]] = 2; kv["b" + by["B"][0][0]] = max(2, blk[by["B"][0][0]])
            elif w == "wm": kv["b" + m0] = max(1, blk[m0] // 2)
        items = list(kv.items())
        r.shuffle(items)
        return ",".join(f"{k}={val}" for k, val in items)
    return None


def mma_row_for(r, kind, hw_ok=True):
    """A row for inputs of kind and a profile whose arch has it (hw_ok), or
    any profile; (None, None) when no row takes the kind."""
    rows = [i for i, (k, _, _) in MMA_ROWS.items() if k == kind]
    if not rows:
        return None, None
    row = r.choice(rows)
    hws = [h for h in PROFILES if ARCH[h] >= MMA_ROWS[row][2]] if hw_ok else PROFILES
    return row, r.choice(hws)


# ---- running ---------------------------------------------------------------------

def run_case(argv, timeout):
    t0 = time.time()
    try:
        for attempt in range(3):  # a binary being relinked by a make run beside us cannot be executed
            try:
                p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                                   start_new_session=True, cwd=ROOT)
                break
            except (PermissionError, FileNotFoundError):
                if attempt == 2:
                    raise
                time.sleep(5)
        out, err, rc = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as ex:
        return "hang", None, (ex.stdout or b"").decode(errors="replace"), "", time.time() - t0
    dt = time.time() - t0
    has_fail = " FAIL " in out or "FAIL\n" in out or " FAIL" in out
    if rc < 0 or rc not in (0, 1, 2):
        st = "crash"
    elif rc == 0:
        st = "pass" if "PASS" in out and not has_fail else "crash"  # exit 0 without a PASS is odd
    elif rc == 2:
        lines = [l for l in err.splitlines() if "error" in l]
        st = "rejected" if lines else "crash"
    else:
        st = "fail" if has_fail else "error"
    return st, rc, out, err, dt


def reject_kind(err):
    for key, label in (("malformed specification", "spec"), ("exceeds", "limits"), ("config:", "config-parse")):
        if key in err:
            return label
    return "other"


# ---- kernel identity: equal descriptors must mean equal kernels ---------------------
# The dispatcher and the kernel cache reuse one compiled kernel for every shape
# whose descriptor hash is equal. Emit the OpenCL kernel of one configuration
# for two shapes of the same operator (extents grown, flags kept): when the
# descriptor hashes agree, the kernel bodies (after the header comment, which
# names the shape) must be identical, or a cached kernel would run the wrong
# code on the second shape. No OpenCL device needed.

EXTENT_KEYS = {"M", "N", "K", "B", "C", "H", "W"}


def grow_spec(r, spec):
    name, *kv = spec.split()
    groups = [int(x.split("=", 1)[1]) for x in kv if x.startswith("groups=")]
    out = []
    for x in kv:
        k, v = x.split("=", 1)
        # a grouped conv keeps C and K: C/G and K/G are the g axis' index coefficients, compiled
        # into the kernel and part of its descriptor (a kernel never runs on another C/G or K/G),
        # and the plan's box spans the group stride (a plan of C/G = 32 on C/G = 33 reads the
        # wrong channels: not a case the cache or the dispatcher can produce)
        if k in EXTENT_KEYS and not (groups and k in ("C", "K")) and r.random() < 0.7:
            d = r.choice([0, 1, 2, 3, 4, 5, 8, 16, 17, 31, 64, 100])
            v = str(int(v) + d)
        out.append(f"{k}={v}")
    return " ".join([name] + out)


def emit(hw, cfg, spec, timeout):
    p = subprocess.run([GENSOR, "construct", "--hw", hw, "--emit", "opencl", "--config", cfg, spec],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=ROOT)
    if p.returncode != 0:
        return None, None, p.returncode, p.stderr.decode(errors="replace")
    out = p.stdout.decode(errors="replace")
    i = out.find("/* gensor codegen")
    if i < 0:
        return None, None, 99, "no kernel in the output"
    head = out[i:]
    h = head.split("descriptor ", 1)[1].split()[0]
    body = head.split("*/", 1)[1]
    return h, body, 0, ""


def run_pairs(a, r):
    n = same = diff_hash = bad = skipped = 0
    fails = open(os.path.join(a.out, "failures.txt"), "a")
    t_end = time.time() + a.minutes * 60
    classes = list(CLASSES)
    while n < a.pairs and time.time() < t_end:
        cls = r.choice(classes)
        spec, axes, inputs = CLASSES[cls][0](r)
        hw = r.choice(PROFILES)
        row = None
        if r.random() < a.types_frac:
            tkeys, tkind = draw_types(r, cls)
            spec = spec + " " + " ".join(tkeys)
            if cls in MMA_ROLES and r.random() < a.mma_frac:
                row, hw2 = mma_row_for(r, tkind)
                hw = hw2 or hw
        cfg = gen_mma_config(r, cls, axes, row, hw, False) if row else gen_config(r, axes, inputs, False, hw)
        if cfg is None:
            continue
        spec2 = grow_spec(r, spec)
        h1, b1, rc1, e1 = emit(hw, cfg, spec, a.timeout)
        if rc1 != 0:
            skipped += 1
            continue
        h2, b2, rc2, e2 = emit(hw, cfg, spec2, a.timeout)
        n += 1
        if rc2 != 0:
            if rc2 not in (2,):
                bad += 1
                print(f"[pair {n}] emit of the grown shape exits {rc2}: {e2.strip()[:200]}")
            skipped += 1
            continue
        if h1 != h2:
            diff_hash += 1
            continue
        same += 1
        if b1 != b2:
            bad += 1
            cmd = f"{shlex.join([GENSOR, 'construct', '--hw', hw, '--emit', 'opencl', '--config', cfg])} {shlex.quote(spec)} vs {shlex.quote(spec2)}"
            fails.write(f"# pair: equal descriptor {h1}, different kernels\n{cmd}\n")
            print(f"[pair {n}] EQUAL DESCRIPTOR {h1}, DIFFERENT KERNELS: {cmd}", flush=True)
    print(f"pairs: {n} emitted, {same} with equal descriptors (kernels compared), {diff_hash} with different "
          f"descriptors, {skipped} skipped, {bad} bad")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=35.0)
    ap.add_argument("--cases", type=int, default=0, help="stop after N cases (0: time only)")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fuzz"))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--opts-frac", type=float, default=0.2, help="fraction of cases run under a fallback plan")
    ap.add_argument("--top-frac", type=float, default=0.1, help="fraction of cases that verify the constructed top-K")
    ap.add_argument("--xshape-frac", type=float, default=0.0, help="fraction of cases in xshape mode")
    ap.add_argument("--adv-frac", type=float, default=0.08, help="fraction of configs allowed to break a rule")
    ap.add_argument("--types-frac", type=float, default=0.4,
                    help="fraction of cases whose operator draws element types (dtype, out_dtype, math=tf32)")
    ap.add_argument("--mma-frac", type=float, default=0.5,
                    help="fraction of the typed gemm, bgemm and conv2d cases run with a tensor-core config (mma=N)")
    ap.add_argument("--groups-frac", type=float, default=0.2, help="fraction of conv2d drawn with groups > 1")
    ap.add_argument("--nonfinite-frac", type=float, default=0.3,
                    help="fraction of cases verified with NaN/inf inputs (--nonfinite N)")
    ap.add_argument("--only", default="", help="comma-separated operator classes to draw from")
    ap.add_argument("--pairs", type=int, default=0, help="kernel-identity mode: N shape pairs, no OpenCL runs")
    ap.add_argument("--replay", default="", help="re-run the non-passing cases of a results.jsonl")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    GROUPS_FRAC[0] = a.groups_frac

    if a.replay:
        for line in open(a.replay):
            c = json.loads(line)
            if c["status"] in ("pass", "rejected"):
                continue
            st, rc, out, err, dt = run_case(c["argv"], a.timeout)
            print(f"{c['status']:>8} -> {st:>8}  {shlex.join(c['argv'])}")
        return 0

    if a.pairs:
        return run_pairs(a, random.Random(a.seed))

    src = os.path.join(ROOT, "tests", "fuzz_opts.c")
    lib = os.path.join(ROOT, "build", "libgensor.a")
    if os.path.exists(lib) and (not os.path.exists(FUZZ_OPTS) or
                                os.path.getmtime(FUZZ_OPTS) < max(os.path.getmtime(src), os.path.getmtime(lib))):
        subprocess.run(["cc", "-std=c11", "-O1", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-I.", "-Iinclude",
                        "-o", FUZZ_OPTS, src, lib, "-lgsl", "-lgslcblas", "-ljansson", "-lOpenCL", "-ldl", "-lm"],
                       cwd=ROOT)
    have_opts = os.access(FUZZ_OPTS, os.X_OK)
    if not have_opts:
        print(f"note: {FUZZ_OPTS} missing (build it, see tests/fuzz_opts.c): no fallback-plan cases", file=sys.stderr)
    r = random.Random(a.seed)
    rnf = random.Random(a.seed * 7919 + 17)  # the non-finite draws: r's sequence stays that of the seed
    classes = list(CLASSES)
    if a.only:
        classes = [c for c in a.only.split(",") if c in CLASSES]
    weights = [CLASSES[c][1] for c in classes]
    res = open(os.path.join(a.out, "results.jsonl"), "a")
    fails = open(os.path.join(a.out, "failures.txt"), "a")
    counts = {}
    rejects = {}
    per_class = {}
    per_kind = {}
    mma_pass = {}
    t_end = time.time() + a.minutes * 60
    n = 0
    print(f"fuzz_plans: seed {a.seed}, {a.minutes} min, out {a.out}", flush=True)
    while time.time() < t_end and (not a.cases or n < a.cases):
        cls = r.choices(classes, weights)[0]
        xshape = have_opts and r.random() < a.xshape_frac
        ALIGN[0] = r.choice([4, 8, 16]) if xshape else 1
        spec, axes, inputs = CLASSES[cls][0](r)
        ALIGN[0] = 1
        hw = r.choice(PROFILES)
        seed = r.randint(1, 1000)
        u = r.random()
        cfg = None
        kind = "f32"
        tkind = None
        if r.random() < a.types_frac:
            tkeys, tkind = draw_types(r, cls)
            spec = spec + " " + " ".join(tkeys)
            kind = "typed"
            if tkind == "f32":
                tkind = None
        if kind == "typed" and r.random() < a.top_frac:
            u = 0.0  # typed operators see the constructed top-K twice as often (it may choose mma itself)
        row = None
        if tkind and cls in MMA_ROLES and r.random() < a.mma_frac:
            row, hw2 = mma_row_for(r, tkind, r.random() >= a.adv_frac)
            if row:
                hw = hw2
                kind = "mma"
                u = a.top_frac + r.random() * (1 - a.top_frac)  # a configured case
        if row and not xshape:
            cfg = gen_mma_config(r, cls, axes, row, hw, r.random() < a.adv_frac)
            if cfg is None:
                continue
            if have_opts and r.random() < a.opts_frac:
                mode = "opts"
                o = r.choice(["0000", "0000", "1000", "0100", "0010", "0001", "1111"])
                o += "0" + r.choice("0012") + r.choice("0001")  # the seventh: no fragment double buffering
                argv = [FUZZ_OPTS, hw, spec, cfg, o, str(seed)]
            else:
                mode = "cfg"
                argv = [GENSOR, "verify", "--hw", hw, "--seed", str(seed), "--config", cfg, spec]
        elif xshape:
            mode = "xshape"
            cfg = gen_mma_config(r, cls, axes, row, hw, False) if row else gen_config(r, axes, inputs, False, hw)
            if cfg is None:
                continue
            o = r.choice(["0000", "0000", "0000", "0100", "0010", "1000"]) + "0" + r.choice("0012")
            argv = [FUZZ_OPTS, hw, spec, cfg, o, str(seed), grow_spec(r, spec)]
        elif u < a.top_frac:
            mode = "top"
            argv = [GENSOR, "verify", "--hw", hw, "--top", str(r.randint(1, 3)), "--seed", str(seed)]
            if r.random() < 0.5:  # the other strategies and policies reach other states
                argv += ["--strategy", r.choice(["markov", "tree", "random", "exhaustive"]),
                         "--policy", r.choice(["model", "paper", "balanced"])]
            argv.append(spec)
        else:
            cfg = gen_config(r, axes, inputs, r.random() < a.adv_frac, hw)
            if cfg is None:
                continue
            if have_opts and u < a.top_frac + a.opts_frac:
                mode = "opts"
                o = r.choice(["1000", "0100", "0010", "0001", "1100", "1010", "0110", "1110", "1111"])
                o += "0" + r.choice("0012")  # the im2col digit: auto, forced, the tensor box
                argv = [FUZZ_OPTS, hw, spec, cfg, o, str(seed)]
            else:
                mode = "cfg"
                argv = [GENSOR, "verify", "--hw", hw, "--seed", str(seed), "--config", cfg, spec]
        nf = rnf.choice([1, 1, 2, 3, 8]) if rnf.random() < a.nonfinite_frac else 0
        if nf:
            argv = argv[:1] + (["verify"] if argv[0] == GENSOR else []) + ["--nonfinite", str(nf)] + \
                argv[2 if argv[0] == GENSOR else 1:]
            mode += "+nf"
        # PoCL compiles the exact per-lane mma emulation slowly (10-50 s)
        st, rc, out, err, dt = run_case(argv, a.timeout * (2 if kind == "mma" else 1))
        n += 1
        counts[st] = counts.get(st, 0) + 1
        pc = per_class.setdefault(cls, {})
        pc[st] = pc.get(st, 0) + 1
        pk = per_kind.setdefault(f"{kind}/{mode}", {})
        pk[st] = pk.get(st, 0) + 1
        # candidates that ran on the tensor cores and passed (a top-K may choose mma itself)
        mma_ok = sum(1 for l in out.splitlines() if " PASS" in l and " mma" in l)
        if mma_ok:
            mma_pass[f"{kind}/{mode}"] = mma_pass.get(f"{kind}/{mode}", 0) + mma_ok
        rec = {"n": n, "class": cls, "mode": mode, "kind": kind, "hw": hw, "spec": spec, "cfg": cfg, "seed": seed,
               "nonfinite": nf, "argv": argv, "status": st, "rc": rc, "secs": round(dt, 2), "mma_pass": mma_ok}
        if st == "rejected":
            k = reject_kind(err)
            rejects[k] = rejects.get(k, 0) + 1
            rec["reject"] = k
            rec["err"] = err.strip().splitlines()[-1][:300]
        if st not in ("pass", "rejected"):
            rec["out"] = out[-2000:]
            rec["err"] = err[-2000:]
            fails.write(f"# {n} {st} rc={rc} {cls} {mode}\n{shlex.join(argv)}\n")
            fails.flush()
            print(f"[{n}] {st.upper()} rc={rc} {shlex.join(argv)}", flush=True)
            tail = (err.strip().splitlines() or [""])[-1]
            print(f"      {tail[:300]}", flush=True)
        res.write(json.dumps(rec) + "\n")
        res.flush()
        if n % 50 == 0:
            print(f"[{n}] {time.strftime('%H:%M:%S')} " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())),
                  flush=True)
    print(f"\nfuzz_plans: {n} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("rejections: " + ", ".join(f"{k} {v}" for k, v in sorted(rejects.items())))
    for c in sorted(per_class):
        print(f"  {c:10s} " + " ".join(f"{k}={v}" for k, v in sorted(per_class[c].items())))
    print("per kind/mode (f32: no types; typed: dtype/out_dtype/math keys, FFMA; mma: a tensor-core config):")
    for c in sorted(per_kind):
        print(f"  {c:14s} " + " ".join(f"{k}={v}" for k, v in sorted(per_kind[c].items())))
    print("candidates that passed on the tensor cores: " +
          (", ".join(f"{k} {v}" for k, v in sorted(mma_pass.items())) or "none"))
    bad = sum(counts.get(k, 0) for k in ("fail", "error", "crash", "hang"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
