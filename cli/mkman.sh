#!/bin/sh
# mkman.sh — write gensor.1 from the CLI's own --help texts, so the man page
# says what the installed binary does.   sh cli/mkman.sh path/to/gensor >gensor.1
set -eu
BIN=$1
ver=$("$BIN" --version | awk '{ print $2 }')
# roff: backslashes as \e, a leading . or ' guarded, - as \- (so options copy as ASCII)
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'; }
block() { echo '.nf'; "$BIN" "$@" --help | esc; echo '.fi'; }
cat <<HEAD
.TH GENSOR 1 "" "gensor $ver" "User Commands"
.SH NAME
gensor \\- construct GPU tensor kernels for deep-learning operators without searching
.SH SYNOPSIS
.B gensor
.I command
.RI [ options ]
.SH DESCRIPTION
gensor walks a graph of tiled programs (ETIR states) with the Markov / annealing policy of the
Gensor paper, ranks the candidates with an analytic latency model of a hardware profile, and
emits CUDA C (for NVRTC) and OpenCL C. The texts below are the commands' own \\fB\\-\\-help\\fR.
HEAD
echo .PP
block
echo '.SH COMMANDS'
echo '.SS construct'
block construct
for c in verify estimate space suite analyze hw; do
    # a command whose --help is construct's (estimate, at the time of writing) adds nothing
    [ "$c" = estimate ] && [ "$("$BIN" estimate --help)" = "$("$BIN" construct --help)" ] && continue
    echo ".SS $c"
    block $c
done
# the grammar and the configuration form, from the binary too (gensor help spec|config)
echo '.SH SPEC GRAMMAR'
echo '.nf'; "$BIN" help spec | esc; echo '.fi'
echo '.SH CONFIGURATIONS'
echo '.nf'; "$BIN" help config | esc; echo '.fi'
cat <<'TAIL'
.SH EXIT STATUS
0 on success; 1 when a run fails (a verification mismatch, an OpenCL or NVRTC error, an I/O
error); 2 on bad input (a malformed spec or configuration, an unknown operator or profile, a bad
JSON file, bad options). Each error is one line on standard error.
.SH ENVIRONMENT
.TP
.B GS_CACHE_DIR
directory of the disk kernel cache.
.TP
.B GS_CL_DEVICE
the OpenCL device: cpu, gpu or part of its name.
.TP
.BR GS_NVRTC_LIB ", " GS_CUDA_LIB
paths of libnvrtc and libcuda (both are loaded at run time).
.TP
.B CUDA_HOME
where the CUDA toolkit is (libnvrtc, cuobjdump).
.TP
.B GS_CUOBJDUMP
path of cuobjdump, for \fB\-\-sass\fR.
.SH LIBRARY
The library's one header is gensor.h; build against it with pkg-config:
.PP
.nf
cc -o prog prog.c $(pkg-config \-\-cflags \-\-libs gensor)
.fi
.PP
With a prefix outside the loader's search path (make install PREFIX=DIR), set
PKG_CONFIG_PATH=DIR/lib/pkgconfig and either link with
\-Wl,\-rpath,$(pkg-config \-\-variable=libdir gensor) or run with LD_LIBRARY_PATH=DIR/lib; else
the program stops with "libgensor.so.0: cannot open shared object file". Under /usr/local, run
ldconfig once after installing.
.SH SEE ALSO
The README and docs/ of the gensor sources: the model, the library (gensor.h, pkg-config gensor),
the experiments.
TAIL
