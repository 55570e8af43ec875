#!/bin/sh
# The functions include/gensor.h declares, one per line, sorted: what
# libgensor.so exports (the Makefile's version script) and what
# tests/api_check.sh links. Declarations name a function as "gs_x(" after a
# type; the preprocessed header is scanned as one stream.
# Usage: sh tests/api_names.sh [CC]
CC=${1:-${CC:-cc}}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
$CC -std=c11 -E -P "$ROOT/include/gensor.h" | tr '\n' ' ' |
    grep -oE '[A-Za-z0-9_*][ *]+gs_[a-z0-9_]+ *\(' | grep -oE 'gs_[a-z0-9_]+' | sort -u
