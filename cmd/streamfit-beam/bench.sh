#!/usr/bin/env bash
# Benchmark: the streamfit-beam pipeline on prism (in one process) against
# the one-process `streamfit fit` on the same corpus: wall time, CPU time
# (user+sys) and peak RSS from GNU time, for the default LDA fit (EM passes
# included). Results go in RESULTS.md by hand.
#
#   bash cmd/streamfit-beam/bench.sh [DOCS] [VOCAB] [K] [ROW_GROUP]
set -euo pipefail
docs=${1:-100000} vocab=${2:-5000} k=${3:-20} rowgroup=${4:-10000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/../.." && go build -o "$work/streamfit" ./cmd/streamfit)
(cd "$here" && go build -o "$work/streamfit-beam" .)
"$work/streamfit" gen lda --docs "$docs" --vocab "$vocab" --k "$k" --doc-len 100 --row-group "$rowgroup" \
	--out "$work/c.parquet" --truth "$work/truth.json" --progress off
echo "corpus: $docs documents, vocabulary $vocab, k=$k, row groups of $rowgroup documents; $(nproc) CPUs"
measure() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
	read -r wall user sys rss <"$work/time"
	printf '%-34s wall %6.1f s  CPU %6.1f s  peak RSS %5d MB\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024))
}
common=(--k "$k" --alpha0 1 --seed 1 --no-timing)
# The default fits: the spectral passes, then the EM passes (up to 10, until
# the bound improves by less than 0.005 relatively).
measure "streamfit fit (one process)" "$work/streamfit" fit lda --input "$work/c.parquet" --progress off --out "$work/fit.json" "${common[@]}"
measure "streamfit-beam on prism" "$work/streamfit-beam" --out "$work/beam.json" "${common[@]}" "$work/c.parquet"
echo "EM passes: $(grep -o '"em":{"passes":[0-9]*' "$work/fit.json" | grep -o '[0-9]*$')"
if cmp -s "$work/beam.json" "$work/fit.json"; then
	echo "model.json: byte-identical to streamfit fit"
else
	echo "model.json: DIFFERS from streamfit fit"
fi
