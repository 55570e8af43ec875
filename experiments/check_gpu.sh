#!/bin/sh
# make check-gpu: the CUDA path end to end on a real device.
# This build has no CUDA driver runtime yet (launch, events, cuBLAS comparison):
# it checks for a device and says plainly what it could not run.
BIN=${1:-build/gensor}
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
    echo "check-gpu: SKIPPED: no CUDA driver (libcuda.so.1 not found): measurement-free mode only"
    exit 0
fi
echo "check-gpu: SKIPPED: a CUDA driver is present, but this build has no CUDA launch runtime yet;"
echo "           only NVRTC compilation is exercised (see 'make test')."
"$BIN" construct --hw rtx4090 --nvrtc --top 3 'gemm M=4096 N=4096 K=4096' | head -8
exit 0
