#!/bin/sh
# tests/onnx_nodes.sh BUILD [DIR] — the ONNX backend node tests through the
# public API on the OpenCL device (tests/onnx_run.c), checked against the
# expected statuses in tests/onnx/node_status.txt. DIR defaults to the
# committed corpus tests/data/onnx_nodes (the node tests that map to gensor
# kernels, as tests/onnx/gen_nodes.py writes them); make onnx-conformance
# passes the whole generated set. Before the run, two checks that the
# harness can fail: a status file that expects one passing test to fail,
# and a test whose expected output is off by 1e-2 in one element, must each
# make it exit 1. Then the half-precision models of tests/data/onnx_half.
set -eu
B=${1:?usage: onnx_nodes.sh BUILD [DIR]}
DIR=${2:-tests/data/onnx_nodes}
RUN=$B/onnx_run
STATUS=tests/onnx/node_status.txt
T=$(mktemp -d "${TMPDIR:-/tmp}/onnx_nodes.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
fail() { echo "onnx_nodes.sh: FAIL: $*" >&2; exit 1; }

# 0. an OpenCL device (PoCL): skipped without one, unless GS_REQUIRE_OPENCL=1
rc=0; "$RUN" tests/data/onnx_nodes/test_relu > "$T/out0" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
  [ "${GS_REQUIRE_OPENCL:-0}" = 1 ] && { cat "$T/out0"; fail "no OpenCL device (GS_REQUIRE_OPENCL=1)"; }
  echo "onnx_nodes.sh: SKIPPED: no OpenCL device ($(cat "$T/out0"))"; exit 0
fi
[ "$rc" = 0 ] || { cat "$T/out0"; fail "test_relu alone exited $rc"; }

# 1. a passing test listed as a known failure is a mismatch
sed 's/^test_relu pass$/test_relu fail (doctored by onnx_nodes.sh)/' "$STATUS" > "$T/status"
grep -q '^test_relu fail' "$T/status" || fail "test_relu is not listed as a pass in $STATUS"
if "$RUN" --status "$T/status" tests/data/onnx_nodes/test_relu > "$T/out1" 2>&1; then
  cat "$T/out1"; fail "a status file expecting test_relu to fail did not fail the run"
fi
grep -q 'MISMATCH: passes now' "$T/out1" || { cat "$T/out1"; fail "no 'passes now' mismatch line"; }

# 2. an expected output off by 1e-2 in one element fails the test
cp -r tests/data/onnx_nodes/test_relu "$T/test_relu"
python3 - "$T/test_relu/test_data_set_0/output_0.pb" <<'PY'
import struct, sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
# the last 4 bytes are the last float of raw_data (field 9, the message's last)
v = struct.unpack_from("<f", b, len(b) - 4)[0]
struct.pack_into("<f", b, len(b) - 4, v + 1e-2)
open(p, "wb").write(bytes(b))
PY
if "$RUN" --status "$STATUS" "$T/test_relu" > "$T/out2" 2>&1; then
  cat "$T/out2"; fail "a wrong expected output did not fail test_relu"
fi
grep -q "expected to pass" "$T/out2" && grep -q "outside rtol" "$T/out2" || { cat "$T/out2"; fail "no 'outside rtol' line"; }

# 3. the committed corpus is exactly the tests the status file says pass (make onnx-corpus)
if [ "$DIR" = tests/data/onnx_nodes ]; then
  ls "$DIR" | sort > "$T/have"
  awk '$2 == "pass" {print $1}' "$STATUS" | sort > "$T/want"
  cmp -s "$T/have" "$T/want" || { diff "$T/want" "$T/have" | head; fail "$DIR is not the passing tests of $STATUS (run make onnx-corpus)"; }
fi

# 4. the run itself
"$RUN" --status "$STATUS" "$DIR"

# 5. the half-precision models (FLOAT16 and BFLOAT16: Conv+Relu+MaxPool+Gemm, MatMul+Add+Softmax+
# LayerNormalization, casts at the edges) against ONNX Runtime on their FLOAT twins
# (tests/data/onnx/gen_half.py), with the committed corpus only
if [ "$DIR" = tests/data/onnx_nodes ]; then
  "$RUN" --status tests/onnx/half_status.txt tests/data/onnx_half
fi
