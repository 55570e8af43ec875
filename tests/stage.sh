#!/bin/sh
# One stage of make test: its banner, the command, then its wall time and the
# CPU time (user + sys) of everything it ran, so a run on a busy machine still
# says what each stage costs. Exits with the command's status.
#   sh tests/stage.sh 'N/M: what it checks (about T)' command args...
label=$1
shift
echo
echo "== make test $label"
start=$(date +%s)
"$@"
rc=$?
end=$(date +%s)
# times: the shell's own user/sys, then its children's (the stage); into a
# file, as in a pipe or $(...) it would run in a subshell without children
tf=$(mktemp)
times >"$tf"
cpu=$(awk 'NR == 2 {
    n = split($0, f, " ")
    t = 0
    for (i = 1; i <= n; i++) { split(f[i], ms, "m"); sub("s", "", ms[2]); t += ms[1] * 60 + ms[2] }
    printf "%.0f", t }' "$tf")
rm -f "$tf"
word=passed
[ "$rc" -eq 0 ] || word="FAILED (exit $rc)"
echo "== make test ${label%%:*}: $word in $((end - start)) s wall, ${cpu} s CPU (user+sys)"
exit "$rc"
