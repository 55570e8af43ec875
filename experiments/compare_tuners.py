#!/usr/bin/env python3
"""compare_tuners.py: gensor's constructors against Kernel Tuner's search strategies
(`make compare-tuners`), on the same OpenCL device and over the same space.

For each operator:
  * Kernel Tuner (OpenCL backend, pyopencl) tunes one parameter, `gensor_cfg`, an
    index into the configurations listed by `gensor space --format json` (the whole
    space when it fits --limit, else a random sample: `gensor space --sample`). The
    kernel for an index is `gensor construct --config CFG --out DIR` (source, kernel
    name, grid, block and every argument: its launch description). The one argument
    list Kernel Tuner passes to every configuration comes from those descriptions
    (experiments/tuner_args.py): what every configuration takes, then a workspace as
    large as the largest split-K configuration needs, zeroed before each configuration;
    a kernel without a workspace gets an unused trailing parameter. Kernel Tuner runs in
    a temporary directory (its temp_*.c files go there). Every measured kernel is checked
    against a numpy reference through Kernel Tuner's answer/verify; a mismatch
    aborts the run (exit 1). Strategies: random_sample, simulated_annealing,
    genetic_algorithm and bayes_opt (skipped when it fails to start), each with
    each budget of measured configurations.
  * gensor: measurement-free markov (model and paper policies), tree and random
    top-1, markov with --refine 3 and --refine 10, and tree with --refine 10
    (as Roller does) on the OpenCL device.
  * Every picked configuration is then timed again the same way (Kernel Tuner's
    benchmark of that one configuration), so the kernel times compare.

Writes OUT/summary.csv (op,method,budget,tune_s,kernel_ms,device,n_measured,config),
OUT/tuners.png (gnuplot) and prints a table; progress goes to stderr.
Usage: compare_tuners.py GENSOR_BIN OUT_DIR [--quick] [--hw NAME] [--budgets 10,25]
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tuner_args  # noqa: E402  (standard library only; make test checks it)

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))

# --quick is a smoke run of the whole harness (minutes): small operators of each class,
# one budget, --refine 3 only, and PoCL building without optimisation (QUICK_CL_FLAGS:
# a kernel of a large register tile takes ~30 s of CPU to build optimised on PoCL, ~1 s
# without), so its kernel times are of unoptimised builds, not a comparison.
QUICK_OPS = [
    "gemm M=128 N=128 K=128",
    "conv2d N=1 C=16 H=14 W=14 K=16 R=3 S=3 pad=1",
    "gemv M=512 N=512",
]
QUICK_CL_FLAGS = "-cl-opt-disable"
FULL_OPS = [
    "gemm M=256 N=256 K=256",
    "conv2d N=1 C=32 H=28 W=28 K=32 R=3 S=3 pad=1",
    "gemv M=1024 N=1024",
    "gemm M=512 N=512 K=512",
    "conv2d N=1 C=64 H=28 W=28 K=64 R=3 S=3 pad=1",
    "gemv M=4096 N=4096",
]
STRATEGIES = ["random_sample", "simulated_annealing", "genetic_algorithm", "bayes_opt"]


def log(msg):
    print("compare-tuners: " + msg, file=sys.stderr, flush=True)


class Gensor:
    def __init__(self, binary, hw):
        self.bin = os.path.abspath(binary)
        self.hw = hw
        self.tmp = tempfile.mkdtemp(prefix="gensor-tuners-")

    def run(self, args, check=True):
        p = subprocess.run([self.bin] + args, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError("gensor %s failed (exit %d): %s" % (" ".join(args), p.returncode, p.stderr.strip()))
        return p

    def space(self, spec, limit, sample):
        p = self.run(["space", spec, "--hw", self.hw, "--format", "json", "--limit", str(limit)])
        d = json.loads(p.stdout)
        if d["truncated"]:
            p = self.run(["space", spec, "--hw", self.hw, "--format", "json", "--sample", str(sample), "--seed", "1"])
            d = json.loads(p.stdout)
            d["kind"] = "random sample of %d" % d["count"]
        else:
            d["kind"] = "whole space (%d)" % d["count"]
        return d

    def kernel(self, spec, cfg):
        """One configuration through `construct --out`: its OpenCL source and its launch
        description (the JSON's "launch": grid, block, opencl_kernel, args)."""
        out = tempfile.mkdtemp(dir=self.tmp)
        self.run(["construct", spec, "--hw", self.hw, "--config", cfg, "--out", out, "--format", "json"])
        L = None
        for f in os.listdir(out):
            if f.endswith(".json"):
                with open(os.path.join(out, f)) as fh:
                    L = json.load(fh)["launch"]
        if L is None:
            raise RuntimeError("gensor construct --out wrote no JSON for %s" % cfg)
        with open(os.path.join(out, L["opencl_kernel"] + ".cl")) as fh:
            return fh.read(), L

    def construct(self, spec, extra):
        t0 = time.perf_counter()
        p = self.run(["construct", spec, "--hw", self.hw, "--format", "json"] + extra)
        wall = time.perf_counter() - t0
        d = json.loads(p.stdout)
        pick = d.get("emitted", 0)
        return d["candidates"][pick]["config"], wall, d


# ---- data and references ------------------------------------------------------------------
def make_args(common, seed=1):
    """numpy arguments for the common list: random inputs, a zeroed output and workspace."""
    rng = np.random.default_rng(seed)

    def buffer(a):
        if a["role"] == "input":
            return (2 * rng.random(a["elems"]) - 1).astype(np.float32)
        if a["role"] == "bias":
            raise RuntimeError("operators with a bias are not supported by this harness")
        return np.zeros(a["elems"], dtype=np.float32)  # the output, the workspace

    return tuner_args.host_args(common, buffer, np.int32, np.float32)


def spec_keys(spec):
    parts = spec.split()
    return parts[0], {k: v for k, v in (p.split("=", 1) for p in parts[1:])}


def reference(spec, L, args):
    """float64 numpy reference of the output (alpha=1, beta=0, no epilogue)."""
    name, k = spec_keys(spec)
    shapes = L["tensor_shapes"]
    ins = [a.astype(np.float64).reshape(s) for a, s in zip(args, shapes[:-1])]  # the inputs lead
    if name == "gemm" and k.get("transA", "0") == "0" and k.get("transB", "0") == "0":
        out = ins[0] @ ins[1]
    elif name == "gemv" and k.get("transA", "0") == "0":
        out = ins[0] @ ins[1]
    elif name == "conv2d" and k.get("layout", "nchw") == "nchw" and "stride" not in k and "dilation" not in k:
        pad = int(k.get("pad", "0"))
        x = np.pad(ins[0], ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        R, S = ins[1].shape[2], ins[1].shape[3]
        win = np.lib.stride_tricks.sliding_window_view(x, (R, S), axis=(2, 3))  # N C P Q R S
        out = np.einsum("ncpqrs,kcrs->nkpq", win, ins[1])
    else:
        raise RuntimeError("no numpy reference for %s in this harness" % spec)
    if k.get("alpha", "1") != "1" or k.get("beta", "0") != "0" or k.get("bias", "0") != "0" or k.get("relu", "0") != "0":
        raise RuntimeError("no numpy reference for %s (alpha, beta or an epilogue) in this harness" % spec)
    assert list(out.shape) == list(shapes[-1]), (out.shape, shapes[-1])
    return out.reshape(-1).astype(np.float32)


def reduction_terms(spec):
    name, k = spec_keys(spec)
    if name == "gemm":
        return int(k["K"])
    if name == "gemv":
        return int(k["N"])
    if name == "conv2d":
        return int(k["C"]) * int(k["R"]) * int(k["S"])
    return 1


def make_verify(spec, checked):
    # gensor's own pass mark: normwise relative error <= 1e-5, growing like sqrt(terms/4096)
    tol = 1e-5 * max(1.0, math.sqrt(reduction_terms(spec) / 4096.0))

    def verify(answer, result_host, atol=None):
        for i, (a, r) in enumerate(zip(answer, result_host)):
            if a is None or i not in checked:  # the workspace's answer only makes Kernel Tuner zero it
                continue
            r = np.asarray(r, dtype=np.float64).reshape(-1)
            a = np.asarray(a, dtype=np.float64).reshape(-1)
            if not np.all(np.isfinite(r)):
                return False
            scale = max(np.max(np.abs(a)), 1e-30)
            if np.max(np.abs(r - a)) / scale > tol:
                return False
        return True

    return verify


# ---- Kernel Tuner ------------------------------------------------------------------------
class Harness:
    def __init__(self, g, spec, space, device_name, extra_configs=()):
        """Kernel Tuner over the space's configurations (indices 0..n_space-1), and the
        extra ones (gensor's picks outside the space) for re-timing."""
        self.g, self.spec, self.space = g, spec, space
        self.configs = [c["config"] for c in space["configs"]]
        self.blocks = [int(c["block"]) for c in space["configs"]]
        self.n_space = len(self.configs)
        self.kernels = {}  # index -> (adapted source, grid)
        _, first = g.kernel(spec, self.configs[0])
        launches = [first]
        for cfg in extra_configs:
            if cfg not in self.configs:
                _, L = g.kernel(spec, cfg)
                self.configs.append(cfg)
                self.blocks.append(int(L["block"]))
                launches.append(L)
        # the space lists each configuration's workspace: one buffer serves the largest
        ws = max(int(c.get("workspace_bytes", 0)) for c in space["configs"])
        try:
            self.common = tuner_args.common_args(launches, ws)
        except ValueError as e:
            raise RuntimeError("%s: %s" % (spec, e))
        self.args = make_args(self.common)
        roles = [a["role"] for a in self.common]
        out = roles.index("output")
        ref = reference(spec, first, self.args)
        self.answer = [None] * len(self.args)
        self.answer[out] = ref
        if "workspace" in roles:  # an answer makes Kernel Tuner copy the zeroed buffer before each configuration
            w = roles.index("workspace")
            self.answer[w] = np.zeros_like(self.args[w])
        self.verify = make_verify(spec, {out})
        self.device = device_name

    def kernel(self, i):
        if i not in self.kernels:
            src, L = self.g.kernel(self.spec, self.configs[i])
            if int(L["block"]) != self.blocks[i]:
                raise RuntimeError("block of %s: space says %d, kernel %d" % (self.configs[i], self.blocks[i],
                                                                              int(L["block"])))
            try:
                src = tuner_args.adapt_source(src, L["opencl_kernel"], L, self.common)
            except ValueError as e:
                raise RuntimeError("%s, %s: %s" % (self.spec, self.configs[i], e))
            self.kernels[i] = (src, int(L["grid"]))
        return self.kernels[i]

    def source(self, params):
        return self.kernel(params["gensor_cfg"])[0]

    def grid(self, params):
        return (self.kernel(params["gensor_cfg"])[1],)

    def tune(self, indices, strategy, budget):
        import kernel_tuner

        blocks = self.blocks

        def block_matches(gensor_cfg, block_size_x):  # a def, not a lambda: KT would parse a lambda's source
            return blocks[gensor_cfg] == block_size_x

        tune_params = {
            "gensor_cfg": list(indices),
            "block_size_x": sorted({blocks[i] for i in indices}),
        }
        opts = {"max_fevals": budget} if budget else {}
        res, env = kernel_tuner.tune_kernel(
            "gensor_kernel", self.source, self.grid, self.args, tune_params,
            lang="OpenCL", grid_div_x=[], block_size_names=["block_size_x"],
            restrictions=[block_matches],
            answer=self.answer, verify=self.verify, strategy=strategy,
            strategy_options=opts, quiet=True, iterations=7)
        return res, env

    def time_config(self, cfg):
        """Kernel Tuner's benchmark of one configuration (ms), verified."""
        idx = self.index_of(cfg)
        res, _ = self.tune([idx], "brute_force", None)
        ok = [r for r in res if isinstance(r.get("time"), float)]
        if not ok:
            raise RuntimeError("%s: configuration %s did not run: %s" % (self.spec, cfg, res))
        return ok[0]["time"]

    def index_of(self, cfg):
        if cfg not in self.configs:
            raise RuntimeError("%s: configuration %s was not given to the harness" % (self.spec, cfg))
        return self.configs.index(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gensor")
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--hw", default="rtx4090")
    ap.add_argument("--budgets", default=None)
    ap.add_argument("--space-limit", type=int, default=100000)
    ap.add_argument("--sample", type=int, default=None)
    a = ap.parse_args()
    ops = QUICK_OPS if a.quick else FULL_OPS
    budgets = [int(b) for b in (a.budgets or ("5" if a.quick else "25,100")).split(",")]
    sample = a.sample or (4096 if a.quick else 20000)
    os.makedirs(a.out, exist_ok=True)
    a.out = os.path.abspath(a.out)
    g = Gensor(a.gensor, a.hw)
    # Kernel Tuner writes temp_*.c files into the working directory: a temporary one
    os.chdir(g.tmp)

    # no PoCL kernel cache: a kernel built once (by gensor or by a strategy) would build
    # faster for whoever comes next, which would skew the times to solution
    os.environ["POCL_KERNEL_CACHE"] = "0"
    if a.quick:  # set before PoCL loads; gensor --refine's processes inherit it
        os.environ["POCL_EXTRA_BUILD_FLAGS"] = QUICK_CL_FLAGS
    import pyopencl as cl

    dev = cl.get_platforms()[0].get_devices()[0]
    is_cpu = bool(dev.type & cl.device_type.CPU)
    device = "opencl:%s(%s%s)" % (dev.name.strip().replace(" ", "-"), "CPU" if is_cpu else "GPU",
                                  "," + QUICK_CL_FLAGS if a.quick else "")
    log("device %s; gensor profile %s%s" % (device, a.hw,
        " -- a CPU: these timings say nothing about GPU speed" if is_cpu else ""))
    if a.quick:
        log("--quick: a smoke run of the harness; PoCL builds with %s (unoptimised kernels), budget %s, "
            "--refine 3 only" % (QUICK_CL_FLAGS, ",".join(map(str, budgets))))

    rows = []
    t_all = time.perf_counter()
    for spec in ops:
        log("== %s" % spec)
        space = g.space(spec, a.space_limit, sample)
        log("space: %s (Kernel Tuner searches these indices)" % space["kind"])
        picks = []  # (method, budget, tune_s, n_measured, config)
        # gensor's constructors
        gens = [
            ("gensor-markov", 0, []),
            ("gensor-markov-paper", 0, ["--policy", "paper"]),
            ("gensor-tree", 0, ["--strategy", "tree", "--top", "1"]),
            ("gensor-random", 0, ["--strategy", "random", "--top", "1"]),
            ("gensor-refine", 3, ["--backend", "opencl", "--refine", "3"]),
            ("gensor-refine", 10, ["--backend", "opencl", "--refine", "10"]),
            # Roller's way: the tree construction's top 10, measured
            ("gensor-tree-refine", 10, ["--strategy", "tree", "--backend", "opencl", "--refine", "10"]),
        ]
        if a.quick:  # --refine 3 only: each refined candidate is a build
            gens = [(m, k, e) for m, k, e in gens if k <= 3] + [
                ("gensor-tree-refine", 3, ["--strategy", "tree", "--backend", "opencl", "--refine", "3"])]
        for method, k, extra in gens:
            cfg, wall, d = g.construct(spec, (["--top", "1"] if not k and "--top" not in extra else []) + extra)
            picks.append((method, k, wall, k, cfg))
            log("%-22s budget %3d: %.3f s -> %s" % (method, k, wall, cfg))
        h = Harness(g, spec, space, device, [p[4] for p in picks])
        indices = range(h.n_space)
        # Kernel Tuner's strategies
        for strategy in STRATEGIES:
            for b in budgets:
                t0 = time.perf_counter()
                try:
                    res, env = h.tune(indices, strategy, b)
                except RuntimeError as e:
                    if "verification failed" in str(e).lower() or "verif" in str(e).lower():
                        raise
                    log("%s failed (%s): skipped" % (strategy, str(e).splitlines()[0][:200]))
                    break
                except Exception as e:  # a strategy that cannot start (missing dependency)
                    if strategy == "bayes_opt":
                        log("bayes_opt unavailable (%s: %s): skipped" % (type(e).__name__, str(e)[:200]))
                        break
                    raise
                wall = time.perf_counter() - t0
                ok = [r for r in res if isinstance(r.get("time"), float)]
                if not ok:
                    log("kt-%s budget %d: no configuration ran" % (strategy, b))
                    continue
                best = min(ok, key=lambda r: r["time"])
                cfg = h.configs[best["gensor_cfg"]]
                picks.append(("kt-" + strategy, b, wall, len(res), cfg))
                log("%-22s budget %3d: %.1f s, %d measured, best %.4f ms -> %s" %
                    ("kt-" + strategy, b, wall, len(res), best["time"], cfg))
        # time every pick the same way
        times = {}
        for method, b, wall, n, cfg in picks:
            if cfg not in times:
                times[cfg] = h.time_config(cfg)
            rows.append({"op": spec, "method": method, "budget": b, "tune_s": "%.4f" % wall,
                         "kernel_ms": "%.5f" % times[cfg], "device": device, "n_measured": n, "config": cfg})
    path = os.path.join(a.out, "summary.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["op", "method", "budget", "tune_s", "kernel_ms", "device", "n_measured",
                                           "config"])
        w.writeheader()
        w.writerows(rows)
    print_table(rows, device)
    plot(rows, a.out)
    log("wrote %s and %s in %.0f s" % (path, os.path.join(a.out, "tuners.png"), time.perf_counter() - t_all))


def print_table(rows, device):
    print("compare-tuners on %s (kernel ms re-timed with Kernel Tuner's benchmark; rel = kernel / best of the op)" %
          device)
    by_op = {}
    for r in rows:
        by_op.setdefault(r["op"], []).append(r)
    for op, rs in by_op.items():
        best = min(float(r["kernel_ms"]) for r in rs)
        print("\n%s" % op)
        print("  %-24s %6s %10s %10s %6s %10s" % ("method", "budget", "tune_s", "kernel_ms", "rel", "measured"))
        for r in rs:
            print("  %-24s %6s %10s %10s %6.2f %10s" % (r["method"], r["budget"], r["tune_s"], r["kernel_ms"],
                                                        float(r["kernel_ms"]) / best, r["n_measured"]))


def plot(rows, out):
    methods = []
    for r in rows:
        key = r["method"]
        if key not in methods:
            methods.append(key)
    best = {}
    for r in rows:
        best[r["op"]] = min(best.get(r["op"], 1e30), float(r["kernel_ms"]))
    dat = os.path.join(out, "plot_tuners.dat")
    with open(dat, "w") as fh:
        fh.write("# method_index tune_s kernel/best op budget\n")
        for r in rows:
            fh.write("%d %s %.5f \"%s\" %s\n" % (methods.index(r["method"]) + 1, max(float(r["tune_s"]), 1e-3),
                                                 float(r["kernel_ms"]) / best[r["op"]], r["op"].split()[0],
                                                 r["budget"]))
    gp = os.path.join(SCRIPT_DIR, "plot_tuners.gp")
    p = subprocess.run(["gnuplot", "-e", "dir='%s'; methods='%s'; device='%s'" % (out, " ".join(methods),
                                                                                  rows[0]["device"] if rows else ""),
                        gp], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("gnuplot failed: %s" % p.stderr.strip())


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        log("error: %s" % e)
        sys.exit(1)
