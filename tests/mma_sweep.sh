#!/bin/sh
# The wider PoCL sweep of the tensor-core printers (not in make test; the
# mma/* Criterion suite holds the fast subset): every instruction row x the
# four gemm transposes x awkward shapes x tile shapes, stages 1..4 and
# split-K, bias/relu and output types, each verified against the reference
# on the OpenCL device through `gensor verify --config`. A case whose state
# fails the profile's check is counted as skipped, not run. Rows 4 and 5
# (m16n8k8 in f16 and in bf16: one layout, one emulation but for the type's
# conversion) share the gemm shapes between them, so the fifth row costs the
# sweep its bgemm and convs only.
# Usage: sh tests/mma_sweep.sh [path/to/gensor] [hw]   (make mma-sweep)
BIN=${1:-build/gensor}
HW=${2:-a100}
pass=0 fail=0 skip=0
run() { # spec config
    out=$("$BIN" verify "$1" --hw "$HW" --config "$2" 2>&1)
    case "$out" in
    *"is rejected on"*) skip=$((skip + 1)) ;;
    *" PASS "*) pass=$((pass + 1)) ;;
    *) fail=$((fail + 1)); echo "FAIL: $1 | $2"; echo "$out" | grep -E "FAIL|error" | head -2 | sed 's/^/    /' ;;
    esac
}
for row in 1 2 3 4 5; do
    case $row in
    1) ty="dtype=f16" k=16 ;;
    2) ty="dtype=bf16 bias=1 relu=1" k=16 ;;
    3) ty="math=tf32" k=8 ;;
    4) ty="dtype=f16 out_dtype=f32" k=8 ;;
    5) ty="dtype=bf16 out_dtype=f32 bias=1 relu=1" k=8 ;;
    esac
    for tr in "0 0" "1 0" "0 1" "1 1"; do
        set -- $tr
        i=0
        for shape in "M=1 N=1 K=1" "M=37 N=23 K=29" "M=131 N=67 K=1" "M=53 N=41 K=131" "M=96 N=64 K=88"; do
            i=$((i + 1))
            case $row$((i % 2)) in 40|51) continue ;; esac # row 4 the odd shapes, row 5 the even
            spec="gemm $shape transA=$1 transB=$2 $ty"
            run "$spec" "bm=16,bn=8,bk=$k,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=$row"
            run "$spec" "bm=64,bn=32,bk=$((2 * k)),tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=$row,stages=2"
            run "$spec" "bm=32,bn=64,bk=$k,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,mma=$row,stages=3"
            run "$spec" "bm=32,bn=32,bk=$k,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=$row,stages=4"
            case $shape in *"K=1"|*"K=29") ;; # split-K needs as many k tiles as splits
            *) run "$spec" "bm=32,bn=32,bk=$k,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=$row,stages=2,split=3" ;;
            esac
        done
    done
    # bgemm takes no epilogue keys (bias, relu: the last in ty)
    run "bgemm B=3 M=37 N=29 K=45 ${ty%% bias=*}" "bb=1,bm=32,bn=32,bk=$k,tb=1,tm=2,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,mma=$row,stages=2"
    for lay in nchw nhwc; do # conv2d as implicit GEMM: m = (n, p, q), k = (c, r, s)
        run "conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 pad=1 layout=$lay $ty" \
            "bn=1,bk=16,bp=8,bq=8,bc=4,br=4,bs=4,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=$row,stages=2"
        run "conv2d N=1 C=7 H=11 W=10 K=9 R=3 S=3 stride=2 pad=1 layout=$lay $ty" \
            "bn=1,bk=16,bp=8,bq=8,bc=8,br=2,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=$row"
        if [ $k = 8 ]; then # a k8 row's own reduce tile: 8 channels of one tap
            run "conv2d N=3 C=13 H=9 W=11 K=20 R=3 S=3 pad=1 layout=$lay $ty" \
                "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=$row,stages=2"
        fi
    done
done
echo "mma_sweep on $HW: $pass passed, $fail failed, $skip skipped (over the profile's limits)"
[ "$fail" -eq 0 ]
