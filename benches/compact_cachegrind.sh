#!/usr/bin/env bash
# Cachegrind comparison of the compaction planner's two hot-data layouts:
# struct-of-arrays (strata_compact::planner::plan) against the 112-byte
# array-of-structs (strata_compact::planner::fat::plan), on the Kudu YCSB
# rowsets at budgets 128 and 1024 MB and on TinyOverlap 10,000 at 128 MB.
# Prints instructions, D1 misses and LL data misses per plan call, from the
# difference between runs of ITERS calls and of none (which removes the
# set-up: reading and parsing the TSV, building the synthetic input), and
# the fat -> SoA change. Deterministic; needs valgrind. The default target
# stays below AVX-512, which valgrind cannot run. Cache geometry is fixed
# (32 KiB 8-way I1 and D1, and as the last level a 256 KiB 4-way L2, as in
# the compaction notes) rather than read from the host.
#
# The YCSB cases need /work/shared/data/kudu-ycsb-rowsets.tsv (from the
# repository root: ../shared/data/) and are skipped when it is absent.
#
#   benches/compact_cachegrind.sh [ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
iters="${1:-3}"
cargo build --release -q -p strata-compact --example plan_case
bin="${CARGO_TARGET_DIR:-target}/release/examples/plan_case"
count() { # layout case budget iters -> "Ir D1mr D1mw DLmr DLmw"
    local out
    out=$(mktemp)
    valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
        --LL=262144,4,64 --cachegrind-out-file="$out" \
        "$bin" "$1" "$2" "$3" "$4" >/dev/null 2>&1
    grep '^summary:' "$out" | awk '{print $2, $6, $9, $7, $10}'
    rm -f "$out"
}
have_ycsb=1
[ -r ../shared/data/kudu-ycsb-rowsets.tsv ] || {
    have_ycsb=0
    echo "note: ../shared/data/kudu-ycsb-rowsets.tsv absent, YCSB cases skipped" >&2
}
echo "| case, per plan call ($iters calls - 0) | layout | instructions | D1 misses | LL data misses (256 KiB LL) |"
echo "|---|---|---:|---:|---:|"
for spec in "ycsb 128" "ycsb 1024" "tiny 128"; do
    read -r case budget <<<"$spec"
    if [ "$case" = ycsb ] && [ "$have_ycsb" = 0 ]; then continue; fi
    label=$([ "$case" = ycsb ] && echo "YCSB, $budget MB" || echo "TinyOverlap 10k, $budget MB")
    read -r fi0 fm0 fw0 fl0 fk0 <<<"$(count fat "$case" "$budget" 0)"
    read -r fi1 fm1 fw1 fl1 fk1 <<<"$(count fat "$case" "$budget" "$iters")"
    read -r si0 sm0 sw0 sl0 sk0 <<<"$(count soa "$case" "$budget" 0)"
    read -r si1 sm1 sw1 sl1 sk1 <<<"$(count soa "$case" "$budget" "$iters")"
    awk -v n="$iters" -v label="$label" \
        -v fi="$((fi1 - fi0))" -v fd="$((fm1 + fw1 - fm0 - fw0))" -v fl="$((fl1 + fk1 - fl0 - fk0))" \
        -v si="$((si1 - si0))" -v sd="$((sm1 + sw1 - sm0 - sw0))" -v sl="$((sl1 + sk1 - sl0 - sk0))" \
        'function pct(a, b) { return b == 0 ? "n/a" : sprintf("%+.1f%%", (a - b) / b * 100) }
         BEGIN {
             printf "| %s | fat | %.1fM | %.2fM | %.2fM |\n", label, fi/n/1e6, fd/n/1e6, fl/n/1e6
             printf "| | soa | %.1fM (%s) | %.2fM (%s) | %.2fM (%s) |\n", si/n/1e6, pct(si, fi),
                 sd/n/1e6, pct(sd, fd), sl/n/1e6, pct(sl, fl)
         }'
done
