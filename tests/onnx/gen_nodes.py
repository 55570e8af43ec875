#!/usr/bin/env python3
"""Write the ONNX backend node tests of the installed `onnx` package
(onnx.backend.test.case.node, the package's own generators) into OUT, one
directory per test in the layout of onnx's test data: model.onnx,
test_data_set_0/input_J.pb and output_J.pb (TensorProto), plus tol.txt with
the test's rtol and atol. Tests whose inputs or outputs are not plain tensors
(sequences, maps, optionals) get model.onnx and a `not_tensors` file only.

    gen_nodes.py OUT [--only LIST]   LIST: a file of test names, one a line
"""
import argparse
import os
import shutil
import sys

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def write_case(case, out):
    d = os.path.join(out, case.name)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    with open(os.path.join(d, "tol.txt"), "w") as f:
        f.write(f"{case.rtol!r} {case.atol!r}\n")
    g = case.model.graph
    plain = all(v.type.HasField("tensor_type") for v in list(g.input) + list(g.output))
    if not plain:
        open(os.path.join(d, "not_tensors"), "w").close()
        return
    for k, (inputs, outputs) in enumerate(case.data_sets):
        ds = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(ds)
        for role, vals, infos in (("input", inputs, g.input), ("output", outputs, g.output)):
            for j, v in enumerate(vals):
                t = v if isinstance(v, onnx.TensorProto) else numpy_helper.from_array(v, infos[j].name)
                if not t.name:
                    t.name = infos[j].name
                with open(os.path.join(ds, f"{role}_{j}.pb"), "wb") as f:
                    f.write(t.SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", help="file of test names to write, one a line")
    a = ap.parse_args()
    only = None
    if a.only:
        with open(a.only) as f:
            only = {ln.split()[0] for ln in f if ln.strip() and not ln.startswith("#")}
    os.makedirs(a.out, exist_ok=True)
    n = 0
    seen = set()
    for case in node_cases.collect_testcases():
        if case.name in seen or (only is not None and case.name not in only):
            continue
        seen.add(case.name)
        write_case(case, a.out)
        n += 1
    if only is not None and only - seen:
        sys.exit(f"gen_nodes: not among onnx {onnx.__version__}'s node tests: {' '.join(sorted(only - seen))}")
    print(f"gen_nodes: {n} node tests of onnx {onnx.__version__} written to {a.out}")


if __name__ == "__main__":
    main()
