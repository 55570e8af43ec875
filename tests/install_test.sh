#!/bin/sh
# The install test (in make test): make install into a temporary prefix
# (through DESTDIR as a packager would, and with PREFIX), then build
# tests/install_demo.c with only `pkg-config --cflags --libs gensor` and
# run it against the shared library (found through LD_LIBRARY_PATH, and
# through an rpath) and against the static library (--static, which takes
# Libs.private), check the installed files, the soname links, the man page,
# and that make uninstall removes everything.
#   sh tests/install_test.sh [BUILD]
set -u
BUILD=${1:-build}
MAKE=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

P=/opt/gensor-test   # the prefix the files are built for
D=$tmp/stage         # DESTDIR
if ! $MAKE --no-print-directory -s install BUILD="$BUILD" PREFIX=$P DESTDIR="$D" >"$tmp/log" 2>&1; then
    bad "make install PREFIX=$P DESTDIR=$D"; sed 's/^/    /' "$tmp/log" | tail -n 10
    echo "install_test: $pass passed, $fail failed"; exit 1
fi
R=$D$P
ver=$(sed -n 's/^#define GS_VERSION_STRING "\(.*\)"/\1/p' include/gensor.h)
major=${ver%%.*}
for f in include/gensor.h lib/libgensor.a "lib/libgensor.so.$ver" bin/gensor share/man/man1/gensor.1 \
         lib/pkgconfig/gensor.pc; do
    [ -f "$R/$f" ] && ok || bad "$f not installed"
done
[ "$(readlink "$R/lib/libgensor.so.$major")" = "libgensor.so.$ver" ] && ok || bad "libgensor.so.$major -> libgensor.so.$ver"
[ "$(readlink "$R/lib/libgensor.so")" = "libgensor.so.$major" ] && ok || bad "libgensor.so -> libgensor.so.$major"
objdump -p "$R/lib/libgensor.so.$ver" | grep -q "SONAME *libgensor.so.$major\$" && ok || bad "soname is not libgensor.so.$major"
grep -q "^prefix=$P\$" "$R/lib/pkgconfig/gensor.pc" && ok || bad "gensor.pc: prefix is not $P"
man -l "$R/share/man/man1/gensor.1" 2>/dev/null | grep -q -- '--chains N' && ok || bad "man page lacks the construct options"
# the grammar and the configuration form are in the man page, not only in the sources' docs
man -l "$R/share/man/man1/gensor.1" 2>/dev/null >"$tmp/man.txt"
grep -q '^SPEC GRAMMAR' "$tmp/man.txt" && grep -q 'rowsum, rowmean, rowmax' "$tmp/man.txt" && ok || bad "man page lacks the spec grammar"
grep -q '^CONFIGURATIONS' "$tmp/man.txt" && grep -q 'split=1..16' "$tmp/man.txt" && ok || bad "man page lacks the configuration form"
if grep -q 'grammar: README' "$tmp/man.txt"; then bad "man page sends to the README for the grammar"; else ok; fi
"$R/bin/gensor" --version | grep -qx "gensor $ver" && ok || bad "installed gensor --version"

# pkg-config reads the staged .pc with its prefix moved to the staging tree
sed "s|^prefix=.*|prefix=$R|" "$R/lib/pkgconfig/gensor.pc" >"$tmp/gensor.pc"
export PKG_CONFIG_PATH=$tmp
cc=${CC:-cc}
spec='gemm M=257 N=127 K=31 transA=1'
# shellcheck disable=SC2046
if $cc -std=c11 -Wall -Wextra -Werror -o "$tmp/demo_shared" tests/install_demo.c $(pkg-config --cflags --libs gensor) \
    2>"$tmp/err"; then
    LD_LIBRARY_PATH=$R/lib "$tmp/demo_shared" "$spec" orin-nano >"$tmp/out_shared" 2>&1 && ok ||
        { bad "shared build does not run"; sed 's/^/    /' "$tmp/out_shared" | head -n 5; }
    LD_LIBRARY_PATH=$R/lib ldd "$tmp/demo_shared" 2>/dev/null | grep -q "libgensor.so.$major => $R/lib/" && ok ||
        bad "the shared demo does not load $R/lib/libgensor.so.$major"
else
    bad "build against the shared library"; sed 's/^/    /' "$tmp/err" | head -n 5
fi
# shellcheck disable=SC2046
if $cc -std=c11 -o "$tmp/demo_rpath" tests/install_demo.c $(pkg-config --cflags --libs gensor) \
    -Wl,-rpath,"$(pkg-config --variable=libdir gensor)" 2>"$tmp/err"; then
    "$tmp/demo_rpath" "$spec" orin-nano >"$tmp/out_rpath" 2>&1 && ok || bad "rpath build does not run"
else
    bad "build with an rpath"; sed 's/^/    /' "$tmp/err" | head -n 5
fi
# shellcheck disable=SC2046
if $cc -std=c11 -Wall -Wextra -Werror -o "$tmp/demo_static" tests/install_demo.c \
    $(pkg-config --cflags gensor) $(pkg-config --static --libs-only-L gensor) -Wl,-Bstatic -lgensor -Wl,-Bdynamic \
    $(pkg-config --static --libs-only-l gensor | sed 's/-lgensor//') 2>"$tmp/err"; then
    ! ldd "$tmp/demo_static" | grep -q libgensor && ok || bad "the static demo loads libgensor.so"
    "$tmp/demo_static" "$spec" orin-nano >"$tmp/out_static" 2>&1 && ok ||
        { bad "static build does not run"; sed 's/^/    /' "$tmp/out_static" | head -n 5; }
else
    bad "build against the static library"; sed 's/^/    /' "$tmp/err" | head -n 5
fi
# both print the same construction, and it is the CLI's
if [ -s "$tmp/out_shared" ] && cmp -s "$tmp/out_shared" "$tmp/out_static" && cmp -s "$tmp/out_shared" "$tmp/out_rpath"; then
    ok
else
    bad "shared, rpath and static builds print different constructions"
fi
top=$(sed -n '2{s/^[0-9]*  //; s/  [0-9.]* ms$//; p}' "$tmp/out_shared")
"$R/bin/gensor" construct --hw orin-nano --top 3 --emit json "$spec" 2>/dev/null | grep -qF -- "$top" && [ -n "$top" ] && ok ||
    bad "the demo's top candidate '$top' is not the CLI's"
# the source of the top candidate, as the CLI emits it
grep -q '__global__ void' "$tmp/out_shared" && ok || bad "the demo printed no kernel source"
"$R/bin/gensor" construct --hw orin-nano --top 3 "$spec" 2>/dev/null | sed -n '/^\/\* gensor codegen/,$p' >"$tmp/cli_src"
sed -n '/^\/\* gensor codegen/,$p' "$tmp/out_shared" >"$tmp/demo_src"
[ -s "$tmp/cli_src" ] && cmp -s "$tmp/cli_src" "$tmp/demo_src" && ok || bad "the demo's kernel source is not the CLI's"
sed 's/^/    /' "$tmp/out_shared" | head -n 6

$MAKE --no-print-directory -s uninstall PREFIX=$P DESTDIR="$D" >"$tmp/log" 2>&1 || bad "make uninstall"
left=$(find "$D" -type f -o -type l | head -n 5)
[ -z "$left" ] && ok || bad "make uninstall left: $left"
# PREFIX alone (no DESTDIR): installs where pkg-config then finds it as is
P2=$tmp/prefix
$MAKE --no-print-directory -s install BUILD="$BUILD" PREFIX="$P2" >"$tmp/log" 2>&1 && ok || bad "make install PREFIX=$P2"
# shellcheck disable=SC2046
PKG_CONFIG_PATH=$P2/lib/pkgconfig $cc -std=c11 -o "$tmp/demo2" tests/install_demo.c \
    $(PKG_CONFIG_PATH=$P2/lib/pkgconfig pkg-config --cflags --libs gensor) 2>"$tmp/err" &&
    LD_LIBRARY_PATH=$P2/lib "$tmp/demo2" 'conv2d N=1 C=8 H=9 W=9 K=4 R=3 S=3' t4 >/dev/null && ok ||
    bad "build and run against PREFIX=$P2"
echo "install_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
