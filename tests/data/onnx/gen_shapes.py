"""Generate the exporter-style ONNX models of tests/test_onnx.c whose Reshape, Expand and
ConstantOfShape targets are computed from the inputs' shapes, as torch.onnx.export with dynamic
axes and HF optimum write them (run once; the outputs are committed). Seeded: reproducible.

    build/venv-onnx/bin/python tests/data/onnx/gen_shapes.py tests/data/onnx

attn_shapes.onnx  opset 17, a torch-style attention block over x [batch,seq,32] with a padding mask
                  [batch,1,1,seq]: Q, K, V MatMul + Add; every Reshape's target made from the input's
                  shape (Shape, Gather of the scalar indices 0 and 1, Unsqueeze with axes as an input,
                  Concat with [4] and [8]); the scores divided by sqrt(head dim) taken from the shape
                  (Slice(Shape(q))[-1:], Cast to FLOAT, Sqrt), mask Add, Softmax, .V, Transpose back and
                  the merge Reshape from a second Shape (Concat of batch, seq, [32]); output projection,
                  residual Add -> y. tests/data/onnx/attn_shapes_ort holds ONNX Runtime's values at
                  batch 2, seq 13 (the manifest test constructs it at seq 8 and runs it at 13).
shapes.onnx       opset 17, x [batch,seq,32]: Slice on a Shape ([:-1]), Gather of index -1, integer
                  Div and Mul, Unsqueeze, Concat, Reshape; Cast to INT32 and back; Squeeze of a Slice
                  (seq as a scalar); ConstantOfShape of [seq,seq] (value 0.5) as a MatMul's A; the
                  torch expand pattern (ConstantOfShape of ones, Mul by -1, Equal, Where) as an Expand
                  of a bias constant to [batch,seq,32] and of a computed tensor to its own shape; an
                  integer Cast to FLOAT as a divisor; Range(0, seq) Cast to FLOAT and Unsqueezed,
                  added per row; the folded [batch,seq,4,8] and Size(x) as INT64 graph outputs.
                  tests/data/onnx/shapes_ort holds ONNX Runtime's values at batch 2, seq 5.
shape_ops.onnx    opset 17, integer operators on Shape(x) of x [batch,seq,6], each result a graph
                  output (Gather of 2-D indices and along axis 1, Slice with negative, clamped and
                  negative-step bounds, Div and Mod of negatives, Neg, Abs, Max, Min, Less, Greater,
                  Where, Range with a negative delta and one over all of INT64, Cast to BOOL, Expand,
                  Squeeze, Reshape, Size, Shape with start/end). shape_ops_ort.txt holds ONNX Runtime's values at batch 2,
                  seq 5: one line per output, "name v0,v1,...".
shape_errs.onnx   opset 17, bad integer subgraphs the import refuses, each naming the node: a Gather
                  index out of range, a Slice step of 0, a division by zero, an INT64 overflow (Mul,
                  INT64_MIN / -1, Abs(INT64_MIN)), Range with delta 0, the Shape of a tensor of unknown shape, a Cast of a computed FLOAT to
                  INT64, an Expand of a computed tensor that broadcasts.
seqmean.onnx      opset 17, y = ReduceSum(x [batch,seq,8], axis 1) / Cast(Shape(x)[1], FLOAT): the
                  divisor a constant the import computes from seq. tests/data/onnx/seqmean_ort holds
                  ONNX Runtime's values at batch 2, seq 7; its kernels built at seq 5 must not run
                  at 7 (the constant has another value there).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

I64_MAX = 9223372036854775807
rng = np.random.default_rng(2214)


class G:
    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def c(self, values, dtype=np.int64, shape=None):
        """A Constant node (as torch writes its index scalars and axes) of values."""
        self.k += 1
        a = np.array(values, dtype=dtype)
        if shape is not None:
            a = a.reshape(shape)
        name = f"/Constant_{self.k}"
        self.nodes.append(helper.make_node("Constant", [], [name + "_output_0"], name=name,
                                           value=numpy_helper.from_array(a, name + "_value")))
        return name + "_output_0"

    def w(self, name, *shape, scale=None):
        s = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        self.inits.append(numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def n(self, op, ins, name, nout=1, **attrs):
        outs = [f"{name}_output_{j}" for j in range(nout)]
        self.nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if nout == 1 else outs

    def model(self, name, inputs, outputs, check=True):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gensor gen_shapes.py")
        m.ir_version = 8
        if check:
            onnx.checker.check_model(m, full_check=True)
        return m


def fvalue(name, shape, doc=None):
    v = helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    if doc:
        v.doc_string = doc
    return v


def ivalue(name, shape=None):
    return helper.make_tensor_value_info(name, TensorProto.INT64, shape)


def attn_shapes():
    g, H, D = G(), 32, 8
    x = "x"

    def linear(inp, pfx, n_in, n_out):
        mm = g.n("MatMul", [inp, g.w(pfx + ".weight", n_in, n_out)], f"/{pfx}/MatMul")
        return g.n("Add", [mm, g.w(pfx + ".bias", n_out, scale=0.1)], f"/{pfx}/Add")

    def batch_seq(t, pfx):
        s = g.n("Shape", [t], f"/{pfx}/Shape")
        b = g.n("Gather", [s, g.c(0)], f"/{pfx}/Gather", axis=0)
        q = g.n("Gather", [s, g.c(1)], f"/{pfx}/Gather_1", axis=0)
        ub = g.n("Unsqueeze", [b, g.c([0])], f"/{pfx}/Unsqueeze")
        uq = g.n("Unsqueeze", [q, g.c([0])], f"/{pfx}/Unsqueeze_1")
        return ub, uq

    q, k, v = (linear(x, "attn/" + p, H, H) for p in ("query", "key", "value"))
    ub, uq = batch_seq(x, "attn")
    heads = g.n("Concat", [ub, uq, g.c([4]), g.c([D])], "/attn/Concat", axis=0)
    qt = g.n("Transpose", [g.n("Reshape", [q, heads], "/attn/Reshape")], "/attn/Transpose", perm=[0, 2, 1, 3])
    kt = g.n("Transpose", [g.n("Reshape", [k, heads], "/attn/Reshape_1")], "/attn/Transpose_1", perm=[0, 2, 3, 1])
    vt = g.n("Transpose", [g.n("Reshape", [v, heads], "/attn/Reshape_2")], "/attn/Transpose_2", perm=[0, 2, 1, 3])
    s = g.n("MatMul", [qt, kt], "/attn/MatMul")
    d = g.n("Slice", [g.n("Shape", [qt], "/attn/Shape_2"), g.c([-1]), g.c([I64_MAX])], "/attn/Slice")
    sd = g.n("Sqrt", [g.n("Cast", [d], "/attn/Cast", to=TensorProto.FLOAT)], "/attn/Sqrt")
    s = g.n("Add", [g.n("Div", [s, sd], "/attn/Div"), "mask"], "/attn/Add_mask")
    p = g.n("Softmax", [s], "/attn/Softmax", axis=-1)
    ctx = g.n("Transpose", [g.n("MatMul", [p, vt], "/attn/MatMul_1")], "/attn/Transpose_3", perm=[0, 2, 1, 3])
    ub2, uq2 = batch_seq(ctx, "attn/merge")
    merge = g.n("Concat", [ub2, uq2, g.c([H])], "/attn/merge/Concat", axis=0)
    c = g.n("Reshape", [ctx, merge], "/attn/merge/Reshape")
    o = linear(c, "attn/output", H, H)
    g.nodes.append(helper.make_node("Add", [o, x], ["y"], name="/attn/residual"))
    return g.model("attn_shapes", [fvalue("x", ["batch", "seq", H]),
                                   fvalue("mask", ["batch", 1, 1, "seq"], "gensor-mask: padding")],
                   [fvalue("y", ["batch", "seq", H])])


def shapes():
    g = G()
    s = g.n("Shape", ["x"], "/Shape")
    lead = g.n("Slice", [s, g.c([0]), g.c([-1])], "/Slice")
    last = g.n("Gather", [s, g.c(-1)], "/Gather", axis=0)
    half = g.n("Div", [last, g.c(4)], "/Div")
    t4 = g.n("Concat", [lead, g.c([4]), g.n("Unsqueeze", [half, g.c([0])], "/Unsqueeze")], "/Concat", axis=0)
    g.n("Transpose", [g.n("Reshape", ["x", t4], "/Reshape")], "/Transpose", perm=[0, 2, 1, 3])
    lead = g.n("Cast", [g.n("Cast", [lead], "/Cast_i32", to=TensorProto.INT32)], "/Cast_i64", to=TensorProto.INT64)
    seq = g.n("Squeeze", [g.n("Slice", [s, g.c([1]), g.c([2])], "/Slice_1"), g.c([0])], "/Squeeze")
    useq = g.n("Unsqueeze", [seq, g.c([0])], "/Unsqueeze_1")
    ss = g.n("Concat", [useq, useq], "/Concat_1", axis=0)
    wss = g.n("ConstantOfShape", [ss], "/ConstantOfShape", value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5]))
    a = g.n("MatMul", [wss, "x"], "/MatMul")
    eshape = g.n("Concat", [lead, g.c([32])], "/Concat_2", axis=0)
    ones = g.n("ConstantOfShape", [g.n("Shape", [eshape], "/Shape_1")], "/ConstantOfShape_1",
               value=helper.make_tensor("v", TensorProto.INT64, [1], [1]))
    neg = g.n("Mul", [ones, g.c(-1)], "/Mul")
    fixed = g.n("Where", [g.n("Equal", [eshape, neg], "/Equal"), ones, eshape], "/Where")
    z = g.n("Add", [a, g.n("Expand", [g.w("bias", 32), fixed], "/Expand")], "/Add")
    e = g.n("Relu", [g.n("Expand", [z, fixed], "/Expand_1")], "/Relu")
    lastf = g.n("Cast", [g.n("Mul", [half, g.c(4)], "/Mul_1")], "/Cast", to=TensorProto.FLOAT)
    y2 = g.n("Div", [e, lastf], "/Div_1")
    pos = g.n("Range", [g.c(0), seq, g.c(1)], "/Range")
    posf = g.n("Unsqueeze", [g.n("Cast", [pos], "/Cast_1", to=TensorProto.FLOAT), g.c([1])], "/Unsqueeze_2")
    g.nodes.append(helper.make_node("Add", [y2, posf], ["y"], name="/Add_1"))
    g.nodes.append(helper.make_node("Identity", [t4], ["heads_shape"], name="/Identity"))
    g.nodes.append(helper.make_node("Size", ["x"], ["numel"], name="/Size"))
    return g.model("shapes", [fvalue("x", ["batch", "seq", 32])],
                   [fvalue("y", ["batch", "seq", 32]), fvalue("/Transpose_output_0", ["batch", 4, "seq", 8]),
                    ivalue("heads_shape", [4]), ivalue("numel", [])])


def shape_ops():
    g = G()
    s = g.n("Shape", ["x"], "/Shape")  # [2, 5, 6]
    outs = {}

    def out(name, t):
        g.nodes.append(helper.make_node("Identity", [t], [name], name="/out/" + name))
        outs[name] = None

    out("gather2d", g.n("Gather", [s, g.c([[0, -1], [2, 1]])], "/Gather2d", axis=0))
    m = g.n("Reshape", [g.n("Concat", [s, s], "/Concat", axis=0), g.c([2, 3])], "/Reshape")  # [[2,5,6],[2,5,6]]
    out("gather_axis1", g.n("Gather", [m, g.c([2, 0])], "/Gather_axis1", axis=1))
    out("slice_neg", g.n("Slice", [s, g.c([-2]), g.c([I64_MAX])], "/Slice_neg"))
    out("slice_clamped", g.n("Slice", [s, g.c([-100]), g.c([100])], "/Slice_clamped"))
    out("slice_back", g.n("Slice", [s, g.c([-1]), g.c([-I64_MAX - 1]), g.c([0]), g.c([-2])], "/Slice_back"))
    out("slice_2d", g.n("Slice", [m, g.c([1, 1]), g.c([2, 3]), g.c([0, 1])], "/Slice_2d"))
    neg = g.n("Neg", [s], "/Neg")  # [-2, -5, -6]
    out("div_neg", g.n("Div", [neg, g.c(4)], "/Div_neg"))
    out("mod_neg", g.n("Mod", [neg, g.c(4)], "/Mod_neg"))
    out("fmod_neg", g.n("Mod", [neg, g.c(4)], "/Fmod_neg", fmod=1))
    out("abs", g.n("Abs", [neg], "/Abs"))
    out("max", g.n("Max", [s, g.c([3, 3, 3]), g.c(4)], "/Max"))
    out("min", g.n("Min", [s, g.c(4)], "/Min"))
    out("sub", g.n("Sub", [g.c([[10], [20]]), s], "/Sub"))
    out("less", g.n("Cast", [g.n("Less", [s, g.c(5)], "/Less")], "/Cast_less", to=TensorProto.INT64))
    out("where", g.n("Where", [g.n("Greater", [s, g.c(4)], "/Greater"), s, g.c(-1)], "/Where"))
    out("range_down", g.n("Range", [g.n("Gather", [s, g.c(1)], "/Gather_seq"), g.c(-3), g.c(-3)], "/Range_down"))
    out("bool", g.n("Cast", [g.n("Cast", [g.n("Sub", [s, g.c(2)], "/Sub_2")], "/Cast_bool", to=TensorProto.BOOL)],
                    "/Cast_bool_i64", to=TensorProto.INT64))
    out("expand", g.n("Expand", [g.c([[1], [2]]), g.n("Slice", [s, g.c([0]), g.c([1])], "/Slice_b")], "/Expand"))
    out("squeeze", g.n("Squeeze", [g.n("Slice", [m, g.c([1]), g.c([2]), g.c([1])], "/Slice_col"), g.c([1])],
                       "/Squeeze"))
    out("size", g.n("Size", ["x"], "/Size"))
    out("shape_end", g.n("Shape", ["x"], "/Shape_end", start=1, end=-1))
    out("mul_i32", g.n("Mul", [g.n("Cast", [s], "/Cast_i32", to=TensorProto.INT32),
                               g.c(3, dtype=np.int32)], "/Mul_i32"))
    out("range_wide", g.n("Range", [g.c(-I64_MAX - 1), g.c(I64_MAX), g.c(2 ** 62)], "/Range_wide"))
    return g.model("shape_ops", [fvalue("x", ["batch", "seq", 6])],
                   [onnx.ValueInfoProto(name=k) for k in outs], check=False)


def shape_errs():
    g = G()
    s = g.n("Shape", ["x"], "/Shape")
    bad_g = g.n("Gather", [s, g.c(3)], "/Gather_out_of_range", axis=0)
    outs = [bad_g]
    outs.append(g.n("Slice", [s, g.c([0]), g.c([2]), g.c([0]), g.c([0])], "/Slice_step_0"))
    outs.append(g.n("Div", [g.n("Gather", [s, g.c(0)], "/Gather"), g.c(0)], "/Div_by_zero"))
    outs.append(g.n("Mul", [g.c(I64_MAX), g.c(2)], "/Mul_overflow"))
    outs.append(g.n("Range", [g.c(0), g.c(10), g.c(0)], "/Range_delta_0"))
    outs.append(g.n("Div", [g.c(-I64_MAX - 1), g.c(-1)], "/Div_min_by_minus_1"))
    outs.append(g.n("Abs", [g.c(-I64_MAX - 1)], "/Abs_min"))
    outs.append(g.n("Shape", [bad_g], "/Shape_of_unknown"))
    outs.append(g.n("Cast", ["x"], "/Cast_computed", to=TensorProto.INT64))
    big = g.n("Concat", [g.c([3]), s], "/Concat", axis=0)
    outs.append(g.n("Expand", ["x", big], "/Expand_computed"))
    return g.model("shape_errs", [fvalue("x", ["batch", "seq", 8])],
                   [onnx.ValueInfoProto(name=o) for o in outs], check=False)


def seqmean():
    g = G()
    r = g.n("ReduceSum", ["x", g.c([1])], "/ReduceSum", keepdims=0)
    n = g.n("Cast", [g.n("Gather", [g.n("Shape", ["x"], "/Shape"), g.c(1)], "/Gather", axis=0)], "/Cast",
            to=TensorProto.FLOAT)
    g.nodes.append(helper.make_node("Div", [r, n], ["y"], name="/Div"))
    return g.model("seqmean", [fvalue("x", ["batch", "seq", 8])], [fvalue("y", ["batch", 8])])


def ort_values(m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    only = sys.argv[2:]
    models = {"attn_shapes": attn_shapes, "shapes": shapes, "shape_ops": shape_ops, "shape_errs": shape_errs,
              "seqmean": seqmean}
    for name, fn in models.items():
        if only and name not in only:
            continue
        m = fn()
        path = os.path.join(out, name + ".onnx")
        onnx.save_model(m, path)
        print(f"gen_shapes: {path}: {len(m.graph.node)} nodes")
        if name == "shape_ops":  # ONNX Runtime's values of every output at batch 2, seq 5
            vals = ort_values(m, {"x": np.zeros((2, 5, 6), np.float32)})
            with open(os.path.join(out, "shape_ops_ort.txt"), "w") as f:
                f.write("# ONNX Runtime's values of shape_ops.onnx's outputs at batch 2, seq 5 (gen_shapes.py)\n")
                for k, v in vals.items():
                    f.write(f"{k} {','.join(str(int(e)) for e in np.asarray(v).reshape(-1))}\n")


if __name__ == "__main__":
    main()
