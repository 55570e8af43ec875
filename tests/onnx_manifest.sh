#!/bin/sh
# tests/onnx_manifest.sh BUILD — `gensor import --construct` and the manifest
# runner (build/onnx_run --manifest) on tests/data/onnx/chain.onnx, act.onnx, chan.onnx and group.onnx at batch 2,
# bcast.onnx,
# bert.onnx, gpt2.onnx and attn_shapes.onnx constructed at seq 8 and run at seq 13, shapes.onnx:
# every kernel output against ONNX Runtime's values for the same input
# (tests/data/onnx/chain_ort, written by experiments/onnx_ort_check.py with
# onnxruntime 1.31.1). Then a reference off by 5 % in one element and a
# manifest whose config or kernel name was edited must each fail the run.
set -eu
B=${1:?usage: onnx_manifest.sh BUILD}
T=$(mktemp -d "${TMPDIR:-/tmp}/onnx_manifest.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
fail() { echo "onnx_manifest.sh: FAIL: $*" >&2; exit 1; }

"$B/gensor" import tests/data/onnx/chain.onnx --dim batch=2 --hw rtx3090 --construct "$T/m" 2> "$T/import.log" ||
  { cat "$T/import.log"; fail "import --construct"; }
for f in manifest.json model.json weights.bin; do [ -s "$T/m/$f" ] || fail "no $f"; done
[ "$(ls "$T/m/kernels" | grep -c '\.cl$')" = 3 ] || fail "want 3 OpenCL kernels, got: $(ls "$T/m/kernels")"
rc=0; "$B/onnx_run" --manifest "$T/m" tests/data/onnx/chain_ort > "$T/run.log" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
  [ "${GS_REQUIRE_OPENCL:-0}" = 1 ] && { cat "$T/run.log"; fail "no OpenCL device (GS_REQUIRE_OPENCL=1)"; }
  echo "onnx_manifest.sh: SKIPPED: no OpenCL device"; exit 0
fi
cat "$T/run.log"
[ "$rc" = 0 ] || fail "the manifest run exited $rc"
grep -q "3 kernels run (0 failed), 3 outputs compared" "$T/run.log" || fail "want 3 kernels run and compared"

# act.onnx: Clip alone and fused into a 1x1 conv (kept as its matmul form), a 3x3 conv after Relu
# and a Gemm, against ONNX Runtime at batch 2 (tests/data/onnx/act_ort)
"$B/gensor" import tests/data/onnx/act.onnx --dim batch=2 --hw rtx3090 --construct "$T/act" 2> "$T/act.log" ||
  { cat "$T/act.log"; fail "import --construct act.onnx"; }
"$B/onnx_run" --manifest "$T/act" tests/data/onnx/act_ort > "$T/act.run" 2>&1 || { cat "$T/act.run"; fail "act.onnx's run"; }
cat "$T/act.run"
grep -q "4 kernels run (0 failed), 4 outputs compared" "$T/act.run" || fail "act.onnx: want 4 kernels run and compared"

# chan.onnx: per-channel Add/Mul over NCHW, a batch norm alone (mulc with a bias), a scalar Add
"$B/gensor" import tests/data/onnx/chan.onnx --dim batch=2 --hw rtx3090 --construct "$T/chan" 2> "$T/chan.log" ||
  { cat "$T/chan.log"; fail "import --construct chan.onnx"; }
"$B/onnx_run" --manifest "$T/chan" tests/data/onnx/chan_ort > "$T/chan.run" 2>&1 || { cat "$T/chan.run"; fail "chan.onnx's run"; }
cat "$T/chan.run"
grep -q "4 kernels run (0 failed), 4 outputs compared" "$T/chan.run" || fail "chan.onnx: want 4 kernels run and compared"

# group.onnx: grouped convs (conv2d groups=3 with a folded batch norm and Relu, groups=9 with two
# outputs per channel and ReLU6, groups=2 1x1), one kernel each
"$B/gensor" import tests/data/onnx/group.onnx --dim batch=2 --hw rtx3090 --construct "$T/group" 2> "$T/group.log" ||
  { cat "$T/group.log"; fail "import --construct group.onnx"; }
grep -q "unsupported: node" "$T/group.log" && { cat "$T/group.log"; fail "group.onnx: a node is unsupported"; }
"$B/onnx_run" --manifest "$T/group" tests/data/onnx/group_ort > "$T/group.run" 2>&1 || { cat "$T/group.run"; fail "group.onnx's run"; }
cat "$T/group.run"
grep -q "3 kernels run (0 failed), 3 outputs compared" "$T/group.run" || fail "group.onnx: want 3 kernels run and compared"

# bcast.onnx: Sub/Div/Pow whose first operand is a broadcasting constant (expanded; 1 / s is the
# reciprocal unary), MatMul with 1-D operands and broadcast batches, Gemm with a scalar and an [M,1] C:
# one kernel per node against ONNX Runtime (tests/data/onnx/bcast_ort)
"$B/gensor" import tests/data/onnx/bcast.onnx --hw rtx3090 --construct "$T/bcast" 2> "$T/bcast.log" ||
  { cat "$T/bcast.log"; fail "import --construct bcast.onnx"; }
grep -q "0 unsupported" "$T/bcast.log" || { cat "$T/bcast.log"; fail "bcast.onnx: a node is unsupported"; }
"$B/onnx_run" --manifest "$T/bcast" tests/data/onnx/bcast_ort > "$T/bcast.run" 2>&1 || { cat "$T/bcast.run"; fail "bcast.onnx's run"; }
cat "$T/bcast.run"
grep -q "11 kernels run (0 failed), 11 outputs compared" "$T/bcast.run" || fail "bcast.onnx: want 11 kernels run and compared"

# bert.onnx and gpt2.onnx (experiments/onnx_blocks.py: a BERT-style encoder layer and a GPT-2-style
# block, symbolic batch and seq): every kernel constructed at batch 2, seq 8, then launched at seq 13
# (onnx_run --dim seq=13: the model imported again, each seq=8 kernel run on its node's seq=13
# operator) against ONNX Runtime's values at batch 2, seq 13 (tests/data/onnx/{bert,gpt2}_ort).
# The same data without --dim must fail: the kernels' own shapes are not seq 13's.
for blk in bert:48:30 gpt2:51:33; do
  m=${blk%%:*}; nk=$(echo "$blk" | cut -d: -f2); nc=${blk##*:}
  "$B/gensor" import "tests/data/onnx/$m.onnx" --dim batch=2 --dim seq=8 --hw rtx3090 --construct "$T/$m" 2> "$T/$m.log" ||
    { cat "$T/$m.log"; fail "import --construct $m.onnx"; }
  grep -q "0 unsupported" "$T/$m.log" || { cat "$T/$m.log"; fail "$m.onnx: a node is unsupported"; }
  grep -q '"seq": 8' "$T/$m/manifest.json" || fail "$m.onnx: the manifest is not for seq 8"
  "$B/onnx_run" --dim seq=13 --manifest "$T/$m" "tests/data/onnx/${m}_ort" > "$T/$m.run" 2>&1 ||
    { cat "$T/$m.run"; fail "$m.onnx's run at seq 13"; }
  cat "$T/$m.run"
  grep -q "at seq=13: $nk kernels run (0 failed), $nc outputs compared" "$T/$m.run" ||
    fail "$m.onnx: want $nk kernels run and $nc outputs compared at seq 13"
  if "$B/onnx_run" --manifest "$T/$m" "tests/data/onnx/${m}_ort" > "$T/$m.same" 2>&1; then
    cat "$T/$m.same"; fail "$m.onnx: the seq 8 kernels passed on seq 13 data at their own shapes"
  fi
done

# attn_shapes.onnx (tests/data/onnx/gen_shapes.py: a torch-style attention block whose Reshape targets
# are computed from Shape(x) by Gather, Unsqueeze and Concat, folded at import): constructed at batch 2,
# seq 8 and launched at seq 13 against ONNX Runtime there (attn_shapes_ort); shapes.onnx (Slice on a
# Shape, Cast, integer Div and Mul, Squeeze, ConstantOfShape, Expand of a computed shape, Range) at
# batch 2, seq 5 (shapes_ort); an integer constant (a folded shape) writes no data to weights.bin
"$B/gensor" import tests/data/onnx/attn_shapes.onnx --dim batch=2 --dim seq=8 --hw rtx3090 --construct "$T/attn" \
  2> "$T/attn.log" || { cat "$T/attn.log"; fail "import --construct attn_shapes.onnx"; }
grep -q "0 unsupported" "$T/attn.log" || { cat "$T/attn.log"; fail "attn_shapes.onnx: a node is unsupported"; }
grep -q '"out": "/attn/Shape_output_0"' "$T/attn/manifest.json" || fail "attn_shapes.onnx: no node for the folded shape"
grep -q '"/attn/Shape_output_0": {' "$T/attn/manifest.json" && fail "attn_shapes.onnx: the folded shape has data in weights.bin"
"$B/onnx_run" --dim seq=13 --manifest "$T/attn" tests/data/onnx/attn_shapes_ort > "$T/attn.run" 2>&1 ||
  { cat "$T/attn.run"; fail "attn_shapes.onnx's run at seq 13"; }
cat "$T/attn.run"
grep -q "at seq=13: 23 kernels run (0 failed), 19 outputs compared" "$T/attn.run" ||
  fail "attn_shapes.onnx: want 23 kernels run and 19 outputs compared at seq 13"
"$B/gensor" import tests/data/onnx/shapes.onnx --dim batch=2 --dim seq=5 --hw rtx3090 --construct "$T/shapes" \
  2> "$T/shapes.log" || { cat "$T/shapes.log"; fail "import --construct shapes.onnx"; }
grep -q "0 unsupported" "$T/shapes.log" || { cat "$T/shapes.log"; fail "shapes.onnx: a node is unsupported"; }
"$B/onnx_run" --manifest "$T/shapes" tests/data/onnx/shapes_ort > "$T/shapes.run" 2>&1 ||
  { cat "$T/shapes.run"; fail "shapes.onnx's run"; }
cat "$T/shapes.run"
grep -q "6 kernels run (0 failed), 6 outputs compared" "$T/shapes.run" || fail "shapes.onnx: want 6 kernels run and compared"
# seqmean.onnx divides by Cast(Shape(x)[1]): a constant computed from seq, built at seq 5, whose value
# at seq 7 differs; the run at seq 7 must refuse the kernel that reads it (it ran with 5 before)
"$B/gensor" import tests/data/onnx/seqmean.onnx --dim batch=2 --dim seq=5 --hw rtx3090 --construct "$T/seqmean" \
  2> "$T/seqmean.log" || { cat "$T/seqmean.log"; fail "import --construct seqmean.onnx"; }
if "$B/onnx_run" --dim seq=7 --manifest "$T/seqmean" tests/data/onnx/seqmean_ort > "$T/seqmean.run" 2>&1; then
  cat "$T/seqmean.run"; fail "seqmean.onnx: a kernel reading a constant of seq 5 ran at seq 7"
fi
grep -q "/Div: the constant '/Cast_output_0' has other values at the new dims" "$T/seqmean.run" ||
  { cat "$T/seqmean.run"; fail "seqmean.onnx: the stale constant is not named"; }

# half models (tests/data/onnx_half, written by tests/data/onnx/gen_half.py): the manifest gives each
# binding and constant its type (weights.bin holds floats, exact for half values) and the runner
# makes each buffer in its kernel's type; the graph output against ONNX Runtime on the FLOAT twin
# at the model's tolerance (4 u of the half type, tol.txt)
for hm in net_f16 block_bf16; do
  "$B/gensor" import "tests/data/onnx_half/$hm/model.onnx" --hw rtx3090 --construct "$T/$hm" 2> "$T/$hm.log" ||
    { cat "$T/$hm.log"; fail "import --construct $hm"; }
  t=${hm##*_}
  grep -q "\"dtype\": \"$t\"" "$T/$hm/manifest.json" || fail "$hm: no binding of type $t in the manifest"
  mkdir -p "$T/$hm.data/inputs" "$T/$hm.data/expected"
  cp "tests/data/onnx_half/$hm/test_data_set_0/input_0.pb" "$T/$hm.data/inputs/x.pb"
  cp "tests/data/onnx_half/$hm/test_data_set_0/output_0.pb" "$T/$hm.data/expected/y.pb"
  rtol=$(cut -d' ' -f1 "tests/data/onnx_half/$hm/tol.txt")
  "$B/onnx_run" --rtol "$rtol" --atol "$rtol" --manifest "$T/$hm" "$T/$hm.data" > "$T/$hm.run" 2>&1 ||
    { cat "$T/$hm.run"; fail "$hm's run"; }
  cat "$T/$hm.run"
  grep -q "1 outputs compared with 1 references: 0 outside" "$T/$hm.run" || fail "$hm: want its output compared"
done

# a reference off by 5 % + 0.1 in its last element (the graph output y)
cp -r tests/data/onnx/chain_ort "$T/bad"
python3 - "$T/bad/expected" <<'PY'
import os, struct, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    b = bytearray(open(os.path.join(d, f), "rb").read())
    if b"\x42\x01y" in b:  # the TensorProto named "y" (field 8, length 1); raw_data is last
        v = struct.unpack_from("<f", b, len(b) - 4)[0]
        struct.pack_into("<f", b, len(b) - 4, v * 1.05 + 0.1)
        open(os.path.join(d, f), "wb").write(bytes(b))
        sys.exit(0)
sys.exit("no tensor named y")
PY
if "$B/onnx_run" --manifest "$T/m" "$T/bad" > "$T/bad.log" 2>&1; then cat "$T/bad.log"; fail "a wrong reference passed"; fi
grep -q "FAIL" "$T/bad.log" || { cat "$T/bad.log"; fail "no FAIL line for the wrong reference"; }

# a manifest whose first kernel's config, or kernel name, was edited
cp "$T/m/manifest.json" "$T/orig.json"
sed '0,/"config": "[^"]*"/s//"config": "bm=1,bn=1"/' "$T/orig.json" > "$T/m/manifest.json"
if "$B/onnx_run" --manifest "$T/m" tests/data/onnx/chain_ort > "$T/edit.log" 2>&1; then
  cat "$T/edit.log"; fail "an edited config passed"
fi
grep -q "config: unknown key 'bm'" "$T/edit.log" || { cat "$T/edit.log"; fail "the edited config is not named"; }
sed '0,/"kernel_cl": "[^"]*"/s//"kernel_cl": "gs_0000000000000000"/' "$T/orig.json" > "$T/m/manifest.json"
if "$B/onnx_run" --manifest "$T/m" tests/data/onnx/chain_ort > "$T/edit.log" 2>&1; then
  cat "$T/edit.log"; fail "an edited kernel name passed"
fi
grep -q "the manifest says gs_0000000000000000" "$T/edit.log" || { cat "$T/edit.log"; fail "the edited kernel is not named"; }
echo "onnx_manifest.sh: import --construct and the manifest run pass; a wrong reference, an edited config and kernel name fail"
