#!/bin/sh
# experiments/device/kit.sh — prepare, on the development machine, what a lent GPU machine
# needs to run gensor's device checks in one call (experiments/device/run.sh).
#
# That machine starts bare: it has the CUDA driver, nvcc, NVRTC and cuBLAS and a python3
# with PyTorch, but none of this project's Debian packages (GSL, jansson, the OpenCL loader)
# and nothing can be fetched there. So the programs are built here and the shared libraries
# they link against are copied beside them:
#
#   sh experiments/device/kit.sh        ->  build/devkit/{bin,lib}/ and build/devkit/MANIFEST
#
# bin/ holds gensor, bench_gpu and cublas_check (make all), and gensor_assist: the CLI with
# experiments/prototypes/polish_assist.patch applied, built in a temporary worktree, for
# the measurement of idle workers helping a polish on that machine's 16 cores
# (GS_KIT_ASSIST=0 leaves it out). lib/ holds every library ldd resolves for them outside
# glibc. Then, with the device tool (see docs/OPERATIONS.md, "A lent GPU machine"):
#
#   run(command="sh experiments/device/run.sh", carry=["build/devkit"], timeout_s=560)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KIT=build/devkit
MAKE=${MAKE:-make}

$MAKE --no-print-directory -s all build/bench_gpu build/cublas_check
rm -rf "$KIT"
mkdir -p "$KIT/bin" "$KIT/lib"
cp build/gensor build/bench_gpu build/cublas_check "$KIT/bin/"

if [ "${GS_KIT_ASSIST:-1}" = 1 ]; then
    wt=$(mktemp -d)
    trap 'git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"' EXIT INT TERM
    git worktree add --detach "$wt" HEAD >/dev/null 2>&1 || { echo "kit: cannot make a worktree for the prototype" >&2; exit 1; }
    if git -C "$wt" apply "$ROOT/experiments/prototypes/polish_assist.patch"; then
        $MAKE --no-print-directory -s -C "$wt" -j2 build/gensor
        cp "$wt/build/gensor" "$KIT/bin/gensor_assist"
    else
        echo "kit: experiments/prototypes/polish_assist.patch no longer applies: gensor_assist left out" >&2
    fi
fi

# the libraries outside glibc (which the device machine has, in a newer version)
for b in "$KIT"/bin/*; do
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
    case $(basename "$lib") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
    *) cp -L "$lib" "$KIT/lib/" ;;
    esac
done

{
    echo "gensor device kit, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built on: $(uname -srm); $(ldd --version | head -1)"
    (cd "$KIT" && find bin lib -type f -exec stat -c '%s %n' {} +)
} >"$KIT/MANIFEST"
cat "$KIT/MANIFEST"
echo "kit: $(du -sh "$KIT" | cut -f1) in $KIT (the device tool carries at most 64 MiB with the tree)"
