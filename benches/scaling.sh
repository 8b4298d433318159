#!/bin/bash
# Multi-core scaling of `strata generate` and of the compaction merge:
# each case on 1, 2, 4, ... cores (`taskset`, and `--threads` for
# generate), ROUNDS rounds, every thread count once per round.
#
#   benches/scaling.sh target/release/strata            # ROUNDS=3 THREADS="1 2 4 8 16"
#
# Raw rows go to $OUT/scaling.tsv (OUT defaults to /tmp), the machine to
# $OUT/scaling.tsv.machine; a table of medians is printed at the end.
# Cases: `contacts` (uncompressed and zstd), `events` (Parquet and IPC)
# and `wide-u64`, 10M rows, 16 writers; then `strata compact run` merging
# 16 overlapping sorted zstd files of 1M rows each (a random int64 key,
# a name, an int: benches/specs/merge_input.toml, sorted by `strata sort`).
set -u
B=$(realpath "${1:?usage: benches/scaling.sh PATH_TO_RELEASE_STRATA}")
SPEC=$(cd "$(dirname "$0")" && pwd)/specs/merge_input.toml
R=${OUT:-/tmp}/scaling.tsv
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2 4 8 16"}
W=$(mktemp -d /tmp/scale.XXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
{
  echo "# $(date -u +%FT%TZ)"
  nproc
  lscpu | grep -E 'Model name|Socket|Thread|Core|NUMA node\(s\)|L3'
  free -g | head -2
  uname -r
} | tee "$R.machine"
"$B" --version || exit 1
echo -e "case\tthreads\tround\twall_s\tuser_s\tsys_s" >"$R"

run() { # NAME THREADS COMMAND...
  local name=$1 t=$2 tm
  shift 2
  local TIMEFORMAT="%R %U %S"
  tm=$({ time taskset -c 0-$((t - 1)) "$@" >/dev/null 2>"$W/err"; } 2>&1) ||
    { echo "FAILED: $name on $t cores"; cat "$W/err"; exit 1; }
  echo -e "$name\t$t\t$r\t$(echo $tm | tr ' ' '\t')" | tee -a "$R"
}

gen() { # PRESET FORMAT CODEC THREADS
  rm -rf "$W/g"
  run "generate $1 $2 $3 10M" "$4" "$B" generate --preset "$1" --format "$2" \
    --compression "$3" --threads "$4" --num-writers 16 --output-dir "$W/g" --overwrite
}

for r in $(seq 1 "$ROUNDS"); do
  for t in $THREADS; do
    gen contacts parquet none "$t"
    gen contacts parquet zstd "$t"
    gen events parquet none "$t"
    gen events ipc none "$t"
    gen wide-u64 parquet none "$t"
  done
done

"$B" generate --spec "$SPEC" --target-records 16000000 --num-writers 16 --output-dir "$W/raw" >/dev/null
mkdir -p "$W/ds"
for f in "$W"/raw/*.parquet; do
  "$B" sort -q --by id -o "$W/ds/$(basename "$f")" "$f" &
done
wait
"$B" compact init --key id "$W/ds"
for r in $(seq 1 "$ROUNDS"); do
  for t in $THREADS; do
    rm -rf "$W/m"
    cp -r "$W/ds" "$W/m"
    sync
    run "merge 16 files x 1M rows zstd" "$t" "$B" compact run --budget-mb 1000000 "$W/m"
  done
done

python3 - "$R" <<'EOF'
import csv, statistics as st, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter="\t"))[1:]
d = {}
for c, t, _, w, u, s in rows:
    d.setdefault(c, {}).setdefault(int(t), []).append((float(w), float(u) + float(s)))
print("| case | cores | wall median (min-max) s | CPU s | M rows/s | speed-up | efficiency |")
print("|---|---|---|---|---|---|---|")
for c, by in d.items():
    n = 16e6 if c.startswith("merge") else 10e6
    one = st.median(w for w, _ in by[min(by)])
    for t, v in sorted(by.items()):
        w = st.median(x for x, _ in v)
        lo, hi = min(x for x, _ in v), max(x for x, _ in v)
        cpu = st.median(y for _, y in v)
        print(f"| {c} | {t} | {w:.3f} ({lo:.3f}-{hi:.3f}) | {cpu:.2f} | {n / w / 1e6:.1f} | {one / w:.2f}x | {one / w / t:.2f} |")
EOF
