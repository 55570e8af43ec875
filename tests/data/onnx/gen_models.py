"""Generate the small ONNX models of tests/test_onnx.c (run once; the outputs are committed).

    python3 -m venv build/onnx-venv && build/onnx-venv/bin/pip install onnx numpy
    build/onnx-venv/bin/python tests/data/onnx/gen_models.py tests/data/onnx

chain.onnx      conv(bias) + BatchNormalization + Relu + MaxPool + Flatten + Gemm(transB, bias) + Relu,
                input [batch,3,8,8] with the symbolic dim "batch". The conv weight is raw_data,
                the batch-norm parameters typed float_data (helper.make_tensor), the Gemm bias raw.
chain_ext.onnx  the same graph with every initializer in chain_ext.bin (external data).
misc.onnx       opset 13: AveragePool (pads, count_include_pad default 0), MatMul [2,seq,16]x[16,8],
                Add of equal shapes, Mul by a [8] vector, ReduceSum over the last axis (axes input),
                ReduceMean (axes attribute), Softmax (expanded at load into 5 nodes), Reshape (a view), Gemm
                with a [M,N] C (so seq must be bound to 3: Reshape gives [2*seq, 8] and C is [6, 4]), and a
                Selu of the softmax (not mapped: two parameters).
act.onnx        opset 13, activations fused into the kernel before them: Clip(x, -0.5, 0.5) alone, a 1x1
                Conv(bias) + Clip(0, 6) (ReLU6), a 3x3 Conv + Relu + Clip(max 0.5 only), Flatten, Gemm(transB,
                bias) + Clip(min -1 only); input [batch,4,6,6]. tests/data/onnx/act_ort holds ONNX Runtime's
                values for it at batch 2 (experiments/onnx_ort_check.py).
chan.onnx       opset 13, per-channel broadcasts over NCHW [batch,3,4,5]: Add of a [3,1,1] vector, Mul by a
                [1,3,1,1] one, a BatchNormalization not after a conv (the per-channel affine), Add of a
                scalar; tests/data/onnx/chan_ort holds ONNX Runtime's values at batch 2.
group.onnx      opset 13, grouped convs over [batch,6,9,8] (each one conv2d groups=G kernel): group 3 (2 input
                and 3 output channels per group) 3x3 stride 2 with bias, a BatchNormalization folded into it
                and Relu; group 9 on 9 channels with 2 outputs each (the depth multiplier: 1 input channel
                per group) 3x3 dilation 2 with bias and Clip(0, 6); group 2 1x1 (9 and 4 per group, odd) no
                bias. tests/data/onnx/group_ort holds ONNX Runtime's values at batch 2.
bcast.onnx      opset 13, the broadcasts numpy allows and the element-wise kernels do not take directly, over
                x [2,3,4] and z [2,3,1]: Sub, Div and Pow whose first operand is a constant that broadcasts
                (1 - x, 1 / s, v / s, 2 ^ x, cb[3,1] - x), MatMul with a 1-D B, a 1-D A, a constant A of batch 1
                over a batched B, a shared A times a batched one-column B; Gemm with a scalar C (beta 2) and an
                [M,1] C (beta 0.5). tests/data/onnx/bcast_ort holds ONNX Runtime's values.
The values are a fixed seed's, so the files are reproducible.
    gen_models.py OUT [NAME ...]   only the named models (chain, misc, act, chan, group, bcast)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(21)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def chain():
    w = numpy_helper.from_array(f32(8, 3, 3, 3), "conv.w")
    b = numpy_helper.from_array(f32(8), "conv.b")
    scale = helper.make_tensor("bn.scale", TensorProto.FLOAT, [8], (rng.random(8) + 0.5).tolist())
    beta = helper.make_tensor("bn.beta", TensorProto.FLOAT, [8], f32(8).tolist())
    mean = helper.make_tensor("bn.mean", TensorProto.FLOAT, [8], f32(8).tolist())
    var = helper.make_tensor("bn.var", TensorProto.FLOAT, [8], (rng.random(8) + 0.5).tolist())
    fw = numpy_helper.from_array(f32(10, 128), "fc.w")
    fb = numpy_helper.from_array(f32(10), "fc.b")
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.beta", "bn.mean", "bn.var"], ["n"], name="bn",
                         epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["g"], name="fc", transB=1),
        helper.make_node("Relu", ["g"], ["y"], name="fc_relu"),
    ]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
                          [w, b, scale, beta, mean, var, fw, fb])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


def misc():
    mw = numpy_helper.from_array(f32(16, 8), "mm.w")
    vec = numpy_helper.from_array(f32(8), "vec")
    axes = numpy_helper.from_array(np.array([-1], dtype=np.int64), "axes")
    shape = numpy_helper.from_array(np.array([-1, 8], dtype=np.int64), "shape")
    gw = numpy_helper.from_array(f32(8, 4), "g.w")
    gc = numpy_helper.from_array(f32(6, 4), "g.c")
    nodes = [
        helper.make_node("AveragePool", ["img"], ["ap"], name="avgpool", kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MatMul", ["t", "mm.w"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "u"], ["add"], name="add"),
        helper.make_node("Mul", ["add", "vec"], ["mul"], name="mul"),
        helper.make_node("ReduceSum", ["mul", "axes"], ["rs"], name="rsum", keepdims=0),
        helper.make_node("ReduceMean", ["mul"], ["rm"], name="rmean", axes=[-1]),
        helper.make_node("Softmax", ["mul"], ["sm"], name="softmax", axis=-1),
        helper.make_node("Reshape", ["mul", "shape"], ["flat"], name="reshape"),
        helper.make_node("Gemm", ["flat", "g.w", "g.c"], ["gy"], name="gemm", alpha=0.5, beta=2.0),
        helper.make_node("Selu", ["sm"], ["se"], name="selu"),
    ]
    inputs = [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 2, 5, 5]),
              helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, "seq", 16]),
              helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, "seq", 8])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
               [("ap", [1, 2, 3, 3]), ("rs", [2, "seq"]), ("rm", [2, "seq", 1]), ("sm", [2, "seq", 8]), ("gy", [6, 4]),
                ("se", [2, "seq", 8])]]
    g = helper.make_graph(nodes, "misc", inputs, outputs, [mw, vec, axes, shape, gw, gc])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


def act():
    r = np.random.default_rng(6)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)
    inits = [c("w1", r.standard_normal((8, 4, 1, 1))), c("b1", r.standard_normal(8)),
             c("w2", r.standard_normal((8, 8, 3, 3)) * 0.3), c("fw", r.standard_normal((10, 288)) * 0.2),
             c("fb", r.standard_normal(10)), c("lo", -0.5), c("hi", 0.5), c("zero", 0.0), c("six", 6.0),
             c("half", 0.5), c("m1", -1.0)]
    nodes = [
        helper.make_node("Clip", ["x", "lo", "hi"], ["xc"], name="clip_in"),
        helper.make_node("Conv", ["xc", "w1", "b1"], ["c1"], name="conv1x1"),
        helper.make_node("Clip", ["c1", "zero", "six"], ["r6"], name="relu6"),
        helper.make_node("Conv", ["r6", "w2"], ["c2"], name="conv3x3", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu"),
        helper.make_node("Clip", ["r2", "", "half"], ["h2"], name="clip_max"),
        helper.make_node("Flatten", ["h2"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], name="fc", transB=1),
        helper.make_node("Clip", ["g", "m1"], ["y"], name="clip_min"),
    ]
    g = helper.make_graph(nodes, "act", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


def chan():
    r = np.random.default_rng(7)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)
    inits = [c("cb", r.standard_normal((3, 1, 1))), c("cs", r.standard_normal((1, 3, 1, 1))),
             c("bn.s", r.random(3) + 0.5), c("bn.b", r.standard_normal(3)), c("bn.m", r.standard_normal(3)),
             c("bn.v", r.random(3) + 0.5), c("k", 0.25)]
    nodes = [
        helper.make_node("Add", ["x", "cb"], ["a"], name="add_c"),
        helper.make_node("Mul", ["cs", "a"], ["m"], name="mul_c"),
        helper.make_node("BatchNormalization", ["m", "bn.s", "bn.b", "bn.m", "bn.v"], ["n"], name="bn", epsilon=1e-3),
        helper.make_node("Add", ["n", "k"], ["y"], name="add_k"),
    ]
    g = helper.make_graph(nodes, "chan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, 4, 5])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


def group():
    r = np.random.default_rng(8)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)
    inits = [c("w1", r.standard_normal((9, 2, 3, 3)) * 0.4), c("b1", r.standard_normal(9)),
             c("bn.s", r.random(9) + 0.5), c("bn.b", r.standard_normal(9)), c("bn.m", r.standard_normal(9)),
             c("bn.v", r.random(9) + 0.5), c("w2", r.standard_normal((18, 1, 3, 3)) * 0.5),
             c("b2", r.standard_normal(18)), c("zero", 0.0), c("six", 6.0), c("w3", r.standard_normal((8, 9, 1, 1)) * 0.3)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="gconv3", group=3, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["n1"], name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="gconv9", group=9, dilations=[2, 2], pads=[2, 2, 2, 2]),
        helper.make_node("Clip", ["c2", "zero", "six"], ["r2"], name="relu6"),
        helper.make_node("Conv", ["r2", "w3"], ["y"], name="gconv2", group=2),
    ]
    g = helper.make_graph(nodes, "group", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6, 9, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 5, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


def bcast():
    r = np.random.default_rng(9)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)
    inits = [c("one", 1.0), c("two", 2.0), c("cv", r.random(4) + 0.5), c("cb", r.standard_normal((3, 1))),
             c("w1", r.standard_normal(4)), c("wa", r.standard_normal((1, 5, 3))), c("wu", r.standard_normal((5, 3))),
             c("v3", r.standard_normal(3)), c("gb", r.standard_normal((3, 2))), c("half", 0.5),
             c("gc", r.standard_normal((2, 1)))]
    nodes = [
        helper.make_node("Sub", ["one", "x"], ["s1"], name="one_minus_x"),
        helper.make_node("Div", ["one", "s1"], ["d1"], name="one_over"),
        helper.make_node("Div", ["cv", "s1"], ["d2"], name="vec_over"),
        helper.make_node("Pow", ["two", "x"], ["p1"], name="two_pow"),
        helper.make_node("Sub", ["cb", "x"], ["s2"], name="col_minus_x"),
        helper.make_node("MatMul", ["x", "w1"], ["mm1"], name="mm_1d_b"),
        helper.make_node("MatMul", ["wa", "s2"], ["mm2"], name="mm_bcast_a"),
        helper.make_node("MatMul", ["wu", "z"], ["mm3"], name="mm_shared_a_n1"),
        helper.make_node("MatMul", ["v3", "z"], ["mm4"], name="mm_1d_a"),
        helper.make_node("Gemm", ["mm1", "gb", "half"], ["g1"], name="gemm_scalar_c", beta=2.0),
        helper.make_node("Gemm", ["mm1", "gb", "gc"], ["g2"], name="gemm_column_c", beta=0.5),
    ]
    shapes = {"s1": [2, 3, 4], "d1": [2, 3, 4], "d2": [2, 3, 4], "p1": [2, 3, 4], "s2": [2, 3, 4], "mm1": [2, 3],
              "mm2": [2, 5, 4], "mm3": [2, 5, 1], "mm4": [2, 1], "g1": [2, 2], "g2": [2, 2]}
    g = helper.make_graph(nodes, "bcast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3, 1])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gensor-tests")


only = set(sys.argv[2:])
if only:
    for name in only:
        mo = {"chain": chain, "misc": misc, "act": act, "chan": chan, "group": group, "bcast": bcast}[name]()
        onnx.checker.check_model(mo)
        onnx.save_model(mo, os.path.join(out, name + ".onnx"))
    sys.exit(0)
m = chain()
onnx.checker.check_model(m)
onnx.save_model(m, os.path.join(out, "chain.onnx"))
ext = onnx.ModelProto()
ext.CopyFrom(m)  # the same values, stored apart
onnx.save_model(ext, os.path.join(out, "chain_ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                location="chain_ext.bin", size_threshold=0)
mm = misc()
onnx.checker.check_model(mm)
onnx.save_model(mm, os.path.join(out, "misc.onnx"))
onnx.save_model(act(), os.path.join(out, "act.onnx"))
onnx.save_model(chan(), os.path.join(out, "chan.onnx"))
onnx.save_model(group(), os.path.join(out, "group.onnx"))
onnx.save_model(bcast(), os.path.join(out, "bcast.onnx"))
