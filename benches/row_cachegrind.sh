#!/usr/bin/env bash
# Cachegrind comparison of strata-row and arrow-row 60.1 on one bench case
# (default: the seed case, 50 non-null u64 columns x 8192 rows).
# Prints instructions, data references and D1/LL misses per call, from the
# difference between runs of ITERS calls and of none (which removes the
# set-up). Deterministic; needs valgrind. Binaries stay at x86-64-v3 or
# below (valgrind cannot run AVX-512), which the default target satisfies.
# The simulated caches are fixed (a 32 KiB 8-way D1 and, as the last
# level, a 1 MiB 8-way L2 per core) rather than read from CPUID, which
# some virtual machines report oddly.
#
#   benches/row_cachegrind.sh [encode|decode] [CASE] [ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-encode}"; case="${2:-0}"; iters="${3:-10}"
cargo build --release -q -p strata-row --example seed_case
bin=target/release/examples/seed_case
count() { # impl iters -> "Ir Dr Dw D1mr D1mw DLmr DLmw"
    local out
    out=$(mktemp)
    valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
        --LL=1048576,8,64 --cachegrind-out-file="$out" \
        "$bin" "$1" "$2" "$mode" "$case" >/dev/null 2>&1
    grep '^summary:' "$out" | awk '{print $2, $5, $8, $6, $9, $7, $10}'
    rm -f "$out"
}
echo "| $mode, case $case, per call | instructions | D refs | D1 misses (rd + wr) | L2 (LL) data misses |"
echo "|---|---:|---:|---:|---:|"
for impl in arrow-row strata; do
    read -r i0 r0 w0 m0 n0 l0 k0 <<<"$(count "$impl" 0)"
    read -r i1 r1 w1 m1 n1 l1 k1 <<<"$(count "$impl" "$iters")"
    awk -v n="$iters" -v impl="$impl" \
        -v i="$((i1 - i0))" -v d="$((r1 + w1 - r0 - w0))" \
        -v m="$((m1 - m0))" -v w="$((n1 - n0))" -v l="$((l1 + k1 - l0 - k0))" \
        'BEGIN { printf "| %s | %.2fM | %.2fM | %.0fk (%.0fk + %.0fk) | %.1fk |\n",
                 impl, i/n/1e6, d/n/1e6, (m+w)/n/1e3, m/n/1e3, w/n/1e3, l/n/1e3 }'
done
