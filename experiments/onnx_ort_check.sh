#!/bin/sh
# experiments/onnx_ort_check.sh BUILD PYTHON OUT MODEL[:DIM=N,...][@DIM=N,...] ... — each
# model imported with `gensor import --construct` (the rtx3090 profile), ONNX
# Runtime's values of every tensor for seeded random inputs
# (onnx_ort_check.py), then the manifest run on the OpenCL device by
# `onnx_run --manifest`, every kernel output compared with ONNX Runtime's.
# After @, dims rebound for the run: the kernels constructed at the dims after
# the colon are launched at these (onnx_run --dim), against ONNX Runtime at them.
# A model given by name alone is looked up among the light models in the onnx
# wheel. A model ending in %f16 or %bf16 (light_squeezenet%f16) is first converted to that type
# (onnx_ort_check.py --half: FLOAT casts at its edges), imported as such, and checked against ONNX
# Runtime on its FLOAT twin (the same values rounded to the type, the inputs rounded too), each
# kernel output at rtol = atol = 16 u of the type (the chained layers' roundings add up). Exit 1
# when any model fails.
set -u
B=$1 PY=$2 OUT=$3
shift 3
LIGHT=$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light"))')
mkdir -p "$OUT"
rc=0
for arg in "$@"; do
  run=""; case $arg in *@*) for d in $(echo "${arg#*@}" | tr ',' ' '); do run="$run --dim $d"; done; arg=${arg%%@*};; esac
  half=""; case $arg in *%f16*|*%bf16*) half=${arg##*%}; half=${half%%[:@]*}; arg=$(echo "$arg" | sed "s/%$half//");; esac
  m=${arg%%:*}; dims=""
  [ "$m" != "$arg" ] && for d in $(echo "${arg#*:}" | tr ',' ' '); do dims="$dims --dim $d"; done
  [ -f "$m" ] || m="$LIGHT/$m.onnx"
  name=$(basename "$m" .onnx)
  oracle=$m tol=""
  if [ -n "$half" ]; then
    name=${name}_$half
    "$PY" experiments/onnx_ort_check.py "$m" --half "$half" "$OUT/$name.onnx" "$OUT/$name.twin.onnx" > /dev/null || { rc=1; continue; }
    m=$OUT/$name.onnx oracle=$OUT/$name.twin.onnx
    u=$([ "$half" = f16 ] && echo 0.0078125 || echo 0.0625)
    tol="--rtol $u --atol $u"
  fi
  echo "== $name$dims${run:+ run at}$run"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  # gensor imports the model with onnx's inferred shapes (the nodes after an unsupported one keep
  # theirs); ONNX Runtime runs the model as given
  if "$PY" experiments/onnx_ort_check.py "$m" --infer-shapes "$OUT/$name.inferred.onnx" > /dev/null &&
     "$B/gensor" import "$OUT/$name.inferred.onnx" --hw rtx3090 $dims --construct "$OUT/$name" 2> "$OUT/$name.import.log" &&
     "$PY" experiments/onnx_ort_check.py "$oracle" "$OUT/$name.data" $dims $run ${half:+--round $half} 2> "$OUT/$name.ort.log" &&
     "$B/onnx_run" $run $tol --manifest "$OUT/$name" "$OUT/$name.data"; then :; else rc=1; fi
  grep -h "unsupported\|kernels constructed" "$OUT/$name.import.log" | sed 's/^/   /'
  echo "   ($(($(date +%s) - t0)) s)"
done
exit $rc
