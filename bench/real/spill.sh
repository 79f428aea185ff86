#!/usr/bin/env bash
# CPU seconds of `fit lda` with --spill off and --spill auto, interleaved in
# the same run (the machine's load moves both alike): the pure spectral fit
# (--em-passes 0) and the default fit, on the SpamAssassin and Debian
# training corpora at k=10 and 50; then the spill file's size against the
# gzipped input's (bench/spill).
#
# Usage: bench/real/spill.sh [CACHE]   (env REPS=3, KS="10 50", STREAMFIT=binary;
# corpora as corpora.sh). Prints one line per run, then the mean CPU seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
reps=${REPS:-3}
ks=${KS:-10 50}
sf=${STREAMFIT:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$sf" ]; then
	sf=$tmp/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi
runs=$tmp/runs.txt
for rep in $(seq "$reps"); do
	for corpus in spam debian; do
		d=$cache/$corpus
		for k in $ks; do
			for fit in spectral default; do
				em=()
				[ "$fit" = spectral ] && em=(--em-passes 0)
				for spill in off auto; do
					/usr/bin/time -o "$tmp/time" -f '%U %S' "$sf" fit lda --input "$d/train.docword.gz" \
						--vocab "$d/train.docword.vocab" --k "$k" "${em[@]}" --spill "$spill" \
						--no-timing --out "$tmp/$corpus-$k-$fit-$spill.json" 2>/dev/null
					read -r user sys <"$tmp/time"
					echo "$rep $corpus $k $fit $spill $user $sys" | tee -a "$runs"
				done
				cmp -s "$tmp/$corpus-$k-$fit-off.json" "$tmp/$corpus-$k-$fit-auto.json" ||
					echo "$corpus k=$k $fit: the models with and without the spill differ" >&2
			done
		done
	done
done
echo
echo "| corpus | k | fit | CPU s, --spill off | CPU s, --spill auto | auto/off |"
echo "|---|---:|---|---:|---:|---:|"
awk '{ key = $2 " " $3 " " $4; cpu[key, $5] += $6 + $7; n[key, $5]++; if (!(key in seen)) { seen[key] = 1; order[++m] = key } }
	END { for (i = 1; i <= m; i++) { split(order[i], f, " "); off = cpu[order[i], "off"] / n[order[i], "off"]; on = cpu[order[i], "auto"] / n[order[i], "auto"];
		printf "| %s | %s | %s | %.2f | %.2f | %.2f |\n", f[1], f[2], f[3], off, on, on / off } }' "$runs"
echo
(cd "$root" && go run ./bench/spill "$cache/spam/train.docword.gz" "$cache/debian/train.docword.gz")
