#!/bin/bash
# Expression fields against plain draws, side by side in one run:
# `benches/specs/expressions5.toml` (five fields computed by `expr`) and
# `benches/specs/uniform5.toml` (the same five fields drawn as plain
# uniform, weighted and template values), ROWS rows each to uncompressed
# Parquet with the CLI's defaults otherwise, ROUNDS rounds alternating
# the two; then the `sales_star` example at 10M fact rows.
#
#   benches/expressions.sh target/release/strata      # ROWS=2000000 ROUNDS=7
#
# Prints the machine, each run's rows/s, and the medians and ratio.
set -u
B=$(realpath "${1:?usage: benches/expressions.sh PATH_TO_RELEASE_STRATA}")
HERE=$(cd "$(dirname "$0")" && pwd)
ROWS=${ROWS:-2000000}
ROUNDS=${ROUNDS:-7}
W=$(mktemp -d /tmp/exprbench.XXXX)
trap 'rm -rf "$W"' EXIT
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, $(lscpu | grep 'Model name' | sed 's/ \+/ /g')"
"$B" --version || exit 1
rate() {
  "$B" generate -q --spec "$1" --target-records "$ROWS" --output-dir "$W/out" --overwrite \
    --compression none --summary-json "$W/s.json" || exit 1
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records_per_s"])' "$W/s.json"
}
: >"$W/expr"
: >"$W/plain"
for r in $(seq "$ROUNDS"); do
  e=$(rate "$HERE/specs/expressions5.toml")
  p=$(rate "$HERE/specs/uniform5.toml")
  echo "round $r: expressions $e rows/s, plain $p rows/s"
  echo "$e" >>"$W/expr"
  echo "$p" >>"$W/plain"
done
python3 - "$W/expr" "$W/plain" <<'EOF'
import statistics, sys
e = [float(x) for x in open(sys.argv[1])]
p = [float(x) for x in open(sys.argv[2])]
me, mp = statistics.median(e), statistics.median(p)
print(f"expressions: median {me/1e6:.2f} M rows/s (min {min(e)/1e6:.2f}, max {max(e)/1e6:.2f})")
print(f"plain:       median {mp/1e6:.2f} M rows/s (min {min(p)/1e6:.2f}, max {max(p)/1e6:.2f})")
print(f"ratio expressions/plain: {me/mp:.2f}")
EOF
if [ -f "$HERE/../examples/specs/sales_star.toml" ]; then
  start=$(date +%s.%N)
  "$B" generate -q --spec "$HERE/../examples/specs/sales_star.toml" --scale "${STAR_SCALE:-10}" \
    --output-dir "$W/star" --summary-json "$W/star.json" || exit 1
  end=$(date +%s.%N)
  python3 - "$W/star.json" "$start" "$end" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
secs = float(sys.argv[3]) - float(sys.argv[2])
rows = sum(t["records"] for t in s["tables"])
size = sum(t["bytes"] for t in s["tables"])
for t in s["tables"]:
    print(f"  {t['spec']}: {t['records']} rows, {t['elapsed_s']:.2f} s")
print(f"sales_star: {rows} rows in {secs:.2f} s ({rows/secs/1e6:.2f} M rows/s), {size/1e6:.0f} MB")
EOF
fi
