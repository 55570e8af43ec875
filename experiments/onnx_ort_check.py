#!/usr/bin/env python3
"""ONNX Runtime (CPU) as the oracle for an imported model: random inputs
(seeded, normal) for MODEL with its symbolic dims bound, and the value of
every float tensor of the graph as ONNX Runtime computes it (an input
whose doc_string is "gensor-mask: causal|padding" gets that attention mask) (each node output
is made a graph output), written as TensorProto files:

    OUT/inputs/NAME.pb     the graph inputs (no initializer behind them)
    OUT/expected/NAME.pb   every float32 node output

`onnx_run --manifest DIR OUT` (tests/onnx_run.c) then runs the manifest that
`gensor import MODEL --construct DIR` wrote and compares each kernel output.

    onnx_ort_check.py MODEL OUT [--dim NAME=N ...] [--seed S]
    onnx_ort_check.py MODEL --infer-shapes OUT.onnx   MODEL with onnx's shape inference
        (value_info for every tensor it can type), so that the nodes after one gensor does not
        map still get shapes when imported
    onnx_ort_check.py MODEL --half f16|bf16 HALF.onnx TWIN.onnx   MODEL converted to the half
        type as onnxconverter_common.float16 does with keep_io_types (every FLOAT initializer,
        Constant and ConstantOfShape value and Cast target of the type; FLOAT graph inputs cast
        to it after entry and outputs cast back to FLOAT before exit), and its FLOAT twin: MODEL
        with the same values (each float rounded to the half type), the oracle for it
    --round f16|bf16 (with OUT): the random inputs rounded to that type, so that the half
        model's entry casts are exact and it sees the twin's inputs
"""
import argparse
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

DTYPES = {onnx.TensorProto.FLOAT: np.float32}


def half_types():
    import ml_dtypes  # installed with onnx
    return {"f16": (onnx.TensorProto.FLOAT16, np.float16), "bf16": (onnx.TensorProto.BFLOAT16, ml_dtypes.bfloat16)}


def to_half(m, kind, twin):
    """m converted in place to the half type kind (twin: kept FLOAT, its values rounded to kind)."""
    et, npt = half_types()[kind]
    F = onnx.TensorProto.FLOAT

    def conv(t):
        if t.data_type != F:
            return t
        a = numpy_helper.to_array(t).astype(npt)
        n = numpy_helper.from_array(a.astype(np.float32) if twin else a, t.name)
        t.CopyFrom(n)
        return t

    g = m.graph
    for t in g.initializer:
        conv(t)
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and n.op_type in ("Constant", "ConstantOfShape"):
                conv(a.t)
            if n.op_type == "Cast" and a.name == "to" and a.i == F and not twin:
                a.i = et
    if twin:
        return m
    del g.value_info[:]
    inits = {t.name for t in g.initializer}
    entry, exits = [], []
    for v in g.input:
        if v.type.tensor_type.elem_type != F:
            continue
        if v.name in inits:  # an input with an initializer behind it: of the initializer's type
            v.type.tensor_type.elem_type = et
            continue
        h = v.name + "/" + kind
        for n in g.node:
            for k, x in enumerate(n.input):
                if x == v.name:
                    n.input[k] = h
        entry.append(onnx.helper.make_node("Cast", [v.name], [h], name=h, to=et))
    for v in g.output:
        if v.type.tensor_type.elem_type != F:
            continue
        h = v.name + "/" + kind
        for n in g.node:
            for k, x in enumerate(n.output):
                if x == v.name:
                    n.output[k] = h
            for k, x in enumerate(n.input):
                if x == v.name:
                    n.input[k] = h
        exits.append(onnx.helper.make_node("Cast", [h], [v.name], name=v.name + "/f32", to=F))
    nodes = entry + list(g.node) + exits
    del g.node[:]
    g.node.extend(nodes)
    return m


def mask(doc, shape):
    """An additive attention mask for an input whose doc_string is "gensor-mask: KIND"
    (experiments/onnx_blocks.py): causal, [..., seq, seq], -10000 above the diagonal; padding,
    [batch, 1, 1, seq], row b's last b positions -10000 (row 0 keeps all)."""
    kind = doc.split(":", 1)[1].strip()
    m = np.zeros(shape, np.float32)
    if kind == "causal" and len(shape) >= 2 and shape[-1] == shape[-2]:
        m[...] = np.triu(np.full(shape[-2:], -10000.0, np.float32), 1)
    elif kind == "padding" and len(shape) >= 2:
        for b in range(shape[0]):
            if b:
                m[b, ..., max(shape[-1] - b, 1):] = -10000.0
    else:
        raise SystemExit(f"onnx_ort_check: mask '{kind}' of shape {shape}: want causal [..,S,S] or padding [B,..,S]")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--infer-shapes", metavar="OUT_ONNX")
    ap.add_argument("--dim", action="append", default=[], help="NAME=N for a symbolic input dim")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--half", nargs=3, metavar=("TYPE", "HALF_ONNX", "TWIN_ONNX"))
    ap.add_argument("--round", choices=["f16", "bf16"])
    a = ap.parse_args()
    dims = dict(d.split("=", 1) for d in a.dim)
    m = onnx.load(a.model)
    if a.half:
        kind, hp, tp = a.half
        if kind not in ("f16", "bf16"):
            ap.error("--half f16|bf16 HALF.onnx TWIN.onnx")
        tw = onnx.ModelProto()
        tw.CopyFrom(m)
        onnx.save_model(to_half(m, kind, False), hp)
        onnx.save_model(to_half(tw, kind, True), tp)
        print(f"onnx_ort_check: {os.path.basename(a.model)} as {kind} into {hp}, its FLOAT twin into {tp}")
        return
    if a.infer_shapes:
        onnx.save_model(onnx.shape_inference.infer_shapes(m), a.infer_shapes)
        print(f"onnx_ort_check: {os.path.basename(a.model)} with inferred shapes into {a.infer_shapes}")
        return
    if not a.out:
        ap.error("OUT is required")
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(a.seed)
    feeds = {}
    for v in m.graph.input:
        if v.name in inits:
            continue
        tt = v.type.tensor_type
        if tt.elem_type not in DTYPES:
            raise SystemExit(f"onnx_ort_check: input {v.name} is not float32")
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                shape.append(d.dim_value)
            elif d.dim_param in dims:
                shape.append(int(dims[d.dim_param]))
            else:
                raise SystemExit(f"onnx_ort_check: bind dim '{d.dim_param}' of input {v.name} with --dim")
        feeds[v.name] = mask(v.doc_string, shape) if v.doc_string.startswith("gensor-mask:") else \
            rng.standard_normal(shape).astype(np.float32)
        if a.round:
            feeds[v.name] = feeds[v.name].astype(half_types()[a.round][1]).astype(np.float32)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(onnx.ValueInfoProto(name=o))
                have.add(o)
    # onnxruntime 1.31 reads IR versions up to 13; the fields gensor's own test
    # models use are all in IR 10
    m.ir_version = min(m.ir_version, 10)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    vals = sess.run(names, feeds)
    shutil.rmtree(a.out, ignore_errors=True)
    for sub in ("inputs", "expected"):
        os.makedirs(os.path.join(a.out, sub))
    for i, (k, v) in enumerate(feeds.items()):
        with open(os.path.join(a.out, "inputs", f"{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, k).SerializeToString())
    kept = 0
    for i, (k, v) in enumerate(zip(names, vals)):
        if isinstance(v, np.ndarray) and v.dtype == np.float32:
            with open(os.path.join(a.out, "expected", f"{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v, k).SerializeToString())
            kept += 1
    print(f"onnx_ort_check: {os.path.basename(a.model)}: {len(feeds)} inputs, {kept} float tensors from "
          f"onnxruntime {ort.__version__} into {a.out}")


if __name__ == "__main__":
    main()
