#!/usr/bin/env bash
# SHA-256 of `strata generate`'s files for every preset x format x codec,
# for checking that a change keeps the output byte-identical: run it with
# the binaries built before and after, and diff the two lists.
#
#   benches/output_checksums.sh BIN OUT      e.g. target/release/strata sums.txt
set -euo pipefail
if [ "$#" -ne 2 ]; then
    echo "usage: $0 STRATA_BINARY OUTPUT_FILE" >&2
    exit 2
fi
bin=$1
out=$2
: >"$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for preset in contacts wide-u64 events; do
    for fmt in parquet ipc; do
        for comp in none zstd; do
            d="$work/$preset-$fmt-$comp"
            "$bin" generate --preset "$preset" --target-records 300000 --num-writers 3 \
                --format "$fmt" --compression "$comp" --output-dir "$d" -q
            (cd "$d" && sha256sum -- * | sed "s|^|$preset $fmt $comp |") >>"$out"
        done
    done
done
# parquet's Arrow writer instead of the direct encoder
"$bin" generate --preset events --encoder arrow --target-records 200000 --output-dir "$work/arrow" -q
(cd "$work/arrow" && sha256sum -- * | sed "s|^|events arrow-encoder |") >>"$out"
echo "$(wc -l <"$out") files, checksums in $out"
