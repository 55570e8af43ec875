#!/bin/sh
# Lists the C functions longer than a limit (120 lines by default), longest
# first: "LINES FILE:LINE NAME". A function's length runs from the first line
# of its signature to its closing brace. Comments, strings and character
# literals are blanked before braces are counted, so the kernel text the
# lowering prints does not confuse it.
# Usage: sh tests/func_lengths.sh [LIMIT [FILE|DIR ...]]
#   default: 120 over the library and the CLI (ir hwmodel construct kernels util cli).
# Exit status: 0 when nothing is listed, 1 otherwise. No function is exempt.
LIMIT=${1:-120}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- ir hwmodel construct kernels util cli
find "$@" -name '*.c' | sort | xargs awk -v limit="$LIMIT" '
FNR == 1 { depth = 0; incomment = 0; decl = ""; declline = 0; inpp = 0 }
# preprocessor lines and their backslash continuations are not code here
inpp || (!incomment && /^[ \t]*#/) { inpp = /\\[ \t]*$/; next }
{
    # blank comments, strings and character literals, keeping the braces of code
    s = $0; out = ""; n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (incomment) {
            if (c == "*" && substr(s, i + 1, 1) == "/") { incomment = 0; i++ }
            continue
        }
        if (c == "/" && substr(s, i + 1, 1) == "*") { incomment = 1; i++; continue }
        if (c == "/" && substr(s, i + 1, 1) == "/") break
        if (c == "\"" || c == "\047") {
            q = c
            for (i++; i <= n; i++) {
                d = substr(s, i, 1)
                if (d == "\\") { i++; continue }
                if (d == q) break
            }
            out = out q q
            continue
        }
        out = out c
    }
    if (depth == 0) {
        if (out ~ /^[ \t]*$/) next
        if (decl == "") declline = FNR
        decl = decl " " out
    }
    for (i = 1; i <= length(out); i++) {
        c = substr(out, i, 1)
        if (c == "{") {
            if (depth == 0) {
                head = decl; sub(/\{.*/, "", head)
                # a function: a parenthesised parameter list and no initialiser
                isfn = head ~ /\)[ \t]*$/ && head !~ /=/
                name = head; sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
                start = declline
            }
            depth++
        } else if (c == "}") {
            depth--
            if (depth == 0) {
                if (isfn && FNR - start + 1 > limit) printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
                isfn = 0; decl = ""
            }
        } else if (c == ";" && depth == 0) {
            decl = ""
        }
    }
}' | sort -k1,1nr | awk '{ print } END { exit NR > 0 }'
