#!/usr/bin/env bash
# Online against batch EM passes from the spectral start, on the real
# corpora of corpora.sh (already built): for each corpus and k, fits
#   batch       streamfit fit lda (the default: batch EM, stopping rule)
#   batch-1     streamfit fit lda --em-passes 1
#   online-N    streamfit fit lda --em online --em-passes N --em-tol 1e-9
#               (N = 1, 2, 3: exactly N online passes)
# interleaved, and prints CPU seconds of the whole fit (GNU time, user +
# sys), the EM passes, held-out perplexity (eval --heldout) and topic
# diversity (eval --coherence) of each, as one Markdown table.
#
# Usage: bench/real/online.sh [CACHE]
#   env KS="20 50 100", CORPORA="spam debian", OUT=$CACHE/runs-online,
#       STREAMFIT=binary (default: built from this checkout)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
KS=${KS:-20 50 100}
CORPORA=${CORPORA:-spam debian}
out=${OUT:-$cache/runs-online}
mkdir -p "$out"
sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$out/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi

declare -A args=(
	[batch]=""
	[batch-1]="--em-passes 1"
	[online-1]="--em online --em-passes 1 --em-tol 1e-9"
	[online-2]="--em online --em-passes 2 --em-tol 1e-9"
	[online-3]="--em online --em-passes 3 --em-tol 1e-9"
)
methods="batch batch-1 online-1 online-2 online-3"

json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

table=$out/table.md
{
	echo "| corpus | k | EM | EM passes | CPU s | held-out perplexity | diversity |"
	echo "|---|---:|---|---:|---:|---:|---:|"
} >"$table"
for c in $CORPORA; do
	for k in $KS; do
		for m in $methods; do
			base=$out/$c-k$k-$m
			# shellcheck disable=SC2086
			/usr/bin/time -f '%U %S' -o "$base.time" "$sf" fit lda --input "$cache/$c/train.docword.gz" \
				--k "$k" --no-timing ${args[$m]} --out "$base.json" 2>"$base.log"
			"$sf" eval --model "$base.json" --heldout "$cache/$c/test.docword.gz" --json >"$base.heldout.json"
			"$sf" eval --model "$base.json" --coherence "$cache/$c/train.docword.gz" --json >"$base.coherence.json"
			cpu=$(awk '{printf "%.2f", $1+$2}' "$base.time")
			passes=$(json "$base.json" 'd["fit"]["em"]["passes"]')
			perp=$(json "$base.heldout.json" 'round(d["perplexity"], 1)')
			div=$(json "$base.coherence.json" 'round(d["diversity"], 3)')
			echo "| $c | $k | $m | $passes | $cpu | $perp | $div |" | tee -a "$table"
			rm -f "$base.json"
		done
	done
done
echo "table: $table"
