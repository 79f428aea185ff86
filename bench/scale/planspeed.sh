#!/usr/bin/env bash
# The plan's prediction against the CPU used, at the machine's speed: the
# fits of bench/scale/RESULTS.md "The plan at the machine's speed", one at a
# time, each line the fit, the probe's factor and fit's closing line (CPU
# used, the plan's forecast, its prediction for the passes taken).
#
# Usage: bench/scale/planspeed.sh SCALE_DIR REAL_DIR
#   SCALE_DIR holds deb28.parquet (+ deb28.vocab.txt) and g250k.parquet as
#   bench/scale/run.sh writes them; REAL_DIR is bench/real's cache (debian/,
#   spam/ as bench/real/corpora.sh writes them).
# $STREAMFIT is the binary (default: built from this checkout).
set -euo pipefail
scale=$1 real=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${STREAMFIT:-}
if [ -z "$bin" ]; then
	bin=$tmp/streamfit
	(cd "$root" && go build -o "$bin" ./cmd/streamfit)
fi
run() {
	local name=$1
	shift
	"$bin" fit lda "$@" --progress off --out "$tmp/model.json" 2>"$tmp/fit.err" || {
		cat "$tmp/fit.err" >&2
		return 1
	}
	local speed
	speed=$(grep -o "speed: [0-9.]*×" "$tmp/fit.err" | grep -o "[0-9.]*" || echo 1)
	printf '%s\t%s\t%s\n' "$name" "$speed" "$(grep 'plan forecast' "$tmp/fit.err")"
}
run "deb28 default, 50" --input "$scale/deb28.parquet" --vocab "$scale/deb28.vocab.txt" --k 50
run "deb28 spectral, 50" --input "$scale/deb28.parquet" --vocab "$scale/deb28.vocab.txt" --k 50 --em-passes 0
run "g250k default, 50" --input "$scale/g250k.parquet" --k 50
run "g250k spectral, 50" --input "$scale/g250k.parquet" --k 50 --em-passes 0
for k in 20 50 100; do
	run "Debian, $k" --input "$real/debian/train.docword.gz" --k "$k"
done
run "spam, 50" --input "$real/spam/train.docword.gz" --k 50
