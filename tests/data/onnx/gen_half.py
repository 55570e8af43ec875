"""Write the half-precision model tests of tests/onnx_nodes.sh (run once; the outputs are committed).

    build/venv-onnx/bin/python tests/data/onnx/gen_half.py tests/data/onnx_half   (make onnx-ort-venv)

Three small models, each in FLOAT16 and in BFLOAT16 (directories NAME_f16 and NAME_bf16, in the
layout of ONNX's node tests: model.onnx, test_data_set_0/input_0.pb and output_0.pb, tol.txt):

net     x [2,3,10,10] -> Conv 3x3 pad 1 (8 channels, bias) -> Relu -> MaxPool 2x2 stride 2 -> Flatten
        -> Gemm (transB, bias) -> y [2,10]: all tensors of the half type.
block   x [2,6,16] -> MatMul [16,16] -> Add [16] -> Softmax (last axis) -> LayerNormalization (scale,
        bias) -> y: all of the half type (opset 17).
edges   x FLOAT [4,12] -> Cast to the half type -> MatMul [12,8] -> Add [8] -> Relu -> Cast to FLOAT -> y
        FLOAT: the casts at a model's edges that converted models carry.

The oracle is ONNX Runtime (CPU) on each model's FLOAT twin (the same graph with every half type
FLOAT, the casts FLOAT to FLOAT) fed the same values: the weights and inputs are drawn as floats and
rounded to the half type first, so both models see exactly the same numbers and the difference is
only the rounding of the half model's intermediate tensors. ONNX Runtime's CPU provider has no
float16 or bfloat16 kernels for several of these operators (it is tried on each half model and
the result printed), so it cannot be the oracle on the half models themselves. The expected output
is the twin's float32 values; tol.txt is the output type's tolerance: rtol = 4 u and atol = 4 u
max|y|, u the unit roundoff of the half type (2^-11 for f16, 2^-8 for bf16), as onnx_run compares
|got - want| <= atol + rtol |want|. The values are a fixed seed's, so the files are reproducible.
"""
import os
import shutil
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {"f16": (TensorProto.FLOAT16, np.float16, 2.0 ** -11), "bf16": (TensorProto.BFLOAT16, ml_dtypes.bfloat16, 2.0 ** -8)}


def rounded(rng, shape, npt, scale=1.0):
    """Random floats rounded to the half type (float32 values exactly representable in it)."""
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(npt).astype(np.float32)


def init(name, a, npt):
    return numpy_helper.from_array(a.astype(npt), name)


def net(rng, et, npt):
    w, b = rounded(rng, (8, 3, 3, 3), npt, 0.3), rounded(rng, (8,), npt, 0.1)
    fw, fb = rounded(rng, (10, 200), npt, 0.1), rounded(rng, (10,), npt, 0.1)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    inits = {"w": w, "b": b, "fw": fw, "fb": fb}
    return nodes, inits, ("x", et, [2, 3, 10, 10]), ("y", et, [2, 10]), 13


def block(rng, et, npt):
    mw, mb = rounded(rng, (16, 16), npt, 0.25), rounded(rng, (16,), npt, 0.1)
    sc, bi = rounded(rng, (16,), npt, 0.5), rounded(rng, (16,), npt, 0.1)
    nodes = [helper.make_node("MatMul", ["x", "mw"], ["h"]),
             helper.make_node("Add", ["h", "mb"], ["a"]),
             helper.make_node("Softmax", ["a"], ["s"], axis=-1),
             helper.make_node("LayerNormalization", ["s", "sc", "bi"], ["y"], axis=-1, epsilon=1e-5)]
    inits = {"mw": mw, "mb": mb, "sc": sc, "bi": bi}
    return nodes, inits, ("x", et, [2, 6, 16]), ("y", et, [2, 6, 16]), 17


def edges(rng, et, npt):
    w, b = rounded(rng, (12, 8), npt, 0.3), rounded(rng, (8,), npt, 0.1)
    nodes = [helper.make_node("Cast", ["x"], ["xh"], to=et),
             helper.make_node("MatMul", ["xh", "w"], ["h"]),
             helper.make_node("Add", ["h", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)]
    inits = {"w": w, "b": b}
    return nodes, inits, ("x", TensorProto.FLOAT, [4, 12]), ("y", TensorProto.FLOAT, [4, 8]), 13


def model(name, nodes, inits, xin, yout, opset, et, npt):
    """The model of nodes with its half type et (FLOAT for the twin)."""
    twin = et == TensorProto.FLOAT
    ns = []
    for n in nodes:
        n = onnx.NodeProto.FromString(n.SerializeToString())
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i != TensorProto.FLOAT:
                a.i = et
        ns.append(n)
    io = lambda v: helper.make_tensor_value_info(v[0], TensorProto.FLOAT if twin or v[1] == TensorProto.FLOAT else et, v[2])
    g = helper.make_graph(ns, name, [io(xin)], [io(yout)],
                          [init(k, v, np.float32 if twin else npt) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="gensor gen_half.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def ort_run(m, feeds):
    import onnxruntime as ort
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)[0]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx_half"
    os.makedirs(out, exist_ok=True)
    for tname, (et, npt, u) in TYPES.items():
        rng = np.random.default_rng(18)
        for build in (net, block, edges):
            nodes, inits, xin, yout, opset = build(rng, et, npt)
            half = model(build.__name__, nodes, inits, xin, yout, opset, et, npt)
            twin = model(build.__name__, nodes, inits, xin, yout, opset, TensorProto.FLOAT, np.float32)
            x = rounded(rng, xin[2], npt)
            want = ort_run(twin, {"x": x}).astype(np.float32)
            d = os.path.join(out, "%s_%s" % (build.__name__, tname))
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            with open(os.path.join(d, "model.onnx"), "wb") as f:
                f.write(half.SerializeToString())
            xt = numpy_helper.from_array(x if xin[1] == TensorProto.FLOAT else x.astype(npt), "x")
            with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
                f.write(xt.SerializeToString())
            with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(want, "y").SerializeToString())
            big = float(np.abs(want).max())
            with open(os.path.join(d, "tol.txt"), "w") as f:
                f.write("%r %r\n" % (4 * u, 4 * u * big))
            try:  # ONNX Runtime on the half model itself, for the record
                got = ort_run(half, {"x": xt and numpy_helper.to_array(xt)}).astype(np.float32)
                note = "ORT CPU runs the %s model: max |half - twin| / max|twin| = %.3g" % (
                    tname, np.abs(got - want).max() / big)
            except Exception as e:  # noqa: BLE001 (ORT's own exception types)
                note = "ORT CPU cannot run the %s model (%s)" % (tname, str(e).splitlines()[0][:100])
            print("%s: max|y| %.3g, tol rtol %.3g atol %.3g; %s" % (os.path.basename(d), big, 4 * u, 4 * u * big, note))


if __name__ == "__main__":
    main()
