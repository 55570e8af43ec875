#!/usr/bin/env python3
"""tests/tuner_args_check.py GENSOR: the contract between `gensor construct --out`'s
launch description and the argument building of `make compare-tuners`
(experiments/tuner_args.py), with python3's standard library only (make test).

A configuration without split-K and one with it (the first of each that `space`
lists for the operator) go through the harness's steps: the launch description
must name every parameter of its
kernel in order; the one argument list built from the first configuration and the
space's workspace size must, after adapt_source, match every configuration's
kernel parameter for parameter, the workspace last and zeroed first. The split
configuration is the second, as in the harness crash it guards against (an
argument list built from the first configuration only).
Exit 0 when it holds, 1 with the reason otherwise.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import tuner_args  # noqa: E402

SPEC = "gemm M=8 N=8 K=128"
HW = "t4"


def fail(msg):
    print("tuner-args contract: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def kernel(gensor, cfg, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    p = subprocess.run([gensor, "construct", SPEC, "--hw", HW, "--config", cfg, "--out", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("gensor construct --config %s --out failed: %s" % (cfg, p.stderr.strip()))
    js = [f for f in os.listdir(out) if f.endswith(".json")]
    if len(js) != 1:
        fail("construct --out wrote %d JSON files" % len(js))
    with open(os.path.join(out, js[0])) as fh:
        L = json.load(fh)["launch"]
    with open(os.path.join(out, L["opencl_kernel"] + ".cl")) as fh:
        return fh.read(), L


def space_configs(gensor):
    """The first configuration without a workspace and the first with one that
    `gensor space --format json` lists, with the workspace bytes it reports (the
    harness sizes its one workspace from these)."""
    p = subprocess.run([gensor, "space", SPEC, "--hw", HW, "--format", "json", "--limit", "64"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("gensor space failed: %s" % p.stderr.strip())
    configs = json.loads(p.stdout)["configs"]
    plain = [c for c in configs if c.get("workspace_bytes") == 0]
    split = [c for c in configs if c.get("workspace_bytes", 0) > 0]
    if not plain or not split:
        fail("space's first 64 configurations lack a split or a non-split one (workspace_bytes: %s)" %
             sorted({c.get("workspace_bytes") for c in configs}))
    return [plain[0]["config"], split[0]["config"]], [0, split[0]["workspace_bytes"]]


def main():
    if len(sys.argv) != 2:
        print("usage: tuner_args_check.py GENSOR", file=sys.stderr)
        return 2
    gensor = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="gs-tuner-args-")
    CONFIGS, space_ws = space_configs(gensor)
    kernels = [kernel(gensor, c, tmp) for c in CONFIGS]
    for cfg, (src, L) in zip(CONFIGS, kernels):
        params = tuner_args.signature_names(src, L["opencl_kernel"])
        names = [a["name"] for a in tuner_args.launch_args(L)]
        if names != params:
            fail("%s: the launch names %s, the kernel takes %s" % (cfg, names, params))
        ws = [a for a in L["args"] if a["role"] == "workspace"]
        if ("split=" in cfg) != bool(ws):
            fail("%s: workspace argument %s" % (cfg, ws))
        if ws and (ws[0]["bytes"] != L["workspace_bytes"] or not ws[0].get("zero_before_first_launch")):
            fail("%s: workspace %s, launch.workspace_bytes %s" % (cfg, ws[0], L["workspace_bytes"]))
    if space_ws != [L.get("workspace_bytes") for _, L in kernels]:
        fail("space reports workspaces %s, the launches %s" % (space_ws, [L.get("workspace_bytes") for _, L in kernels]))

    # the harness: one list from the first configuration and the space's largest workspace;
    # configurations outside the space (gensor's picks) join with their own launches
    both = tuner_args.common_args([L for _, L in kernels])
    if both[-1]["role"] != "workspace" or both[-1]["bytes"] != space_ws[1]:
        fail("the list of both launches ends with %s, not a %d-byte workspace" % (both[-1], space_ws[1]))
    common = tuner_args.common_args([kernels[0][1]], max(space_ws))
    host = tuner_args.host_args(common, lambda a: ("buffer", a["elems"]), int, float)
    if common[-1]["role"] != "workspace" or not common[-1]["zero_before_first_launch"]:
        fail("the common list does not end with a zeroed workspace: %s" % common[-1])
    for cfg, (src, L) in zip(CONFIGS, kernels):
        adapted = tuner_args.adapt_source(src, L["opencl_kernel"], L, common)
        params = tuner_args.signature_names(adapted, "gensor_kernel")
        if len(params) != len(host):
            fail("%s: the kernel takes %d arguments, the harness passes %d" % (cfg, len(params), len(host)))
        if params[:-1] != [a["name"] for a in common[:-1]]:
            fail("%s: parameters %s, arguments %s" % (cfg, params, [a["name"] for a in common]))
    # a workspace too small for a configuration is refused, not launched
    small = tuner_args.common_args([kernels[0][1]], 4)
    try:
        tuner_args.adapt_source(kernels[1][0], kernels[1][1]["opencl_kernel"], kernels[1][1], small)
        fail("a 4-byte workspace was accepted for %s" % CONFIGS[1])
    except ValueError:
        pass
    print("tuner-args contract: ok (%s on %s: %d arguments, a %d-byte workspace; split and non-split)" %
          (SPEC, HW, len(common), common[-1]["bytes"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as e:  # the builder refused a launch it should take
        fail(str(e))
