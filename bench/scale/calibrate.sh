#!/usr/bin/env bash
# The costs the plan's CPU model is fitted to (models/lda/plan.go) and
# checked against (models/lda/testdata/plan_costs.tsv, TestPlanCalibration):
# default fits of LDA with a CPU profile each, whose samples are split by the
# fit's stage labels (go tool pprof -tags), one TSV line per stage:
#
#   corpus  k  d  docs  nnz  tokens  workers  stage  cpu_seconds
#
# The stages are pass<N>-second-moment (the first is the sketch, a later one
# the power pass), pass<N>-third-moment, pass<N>-em, pass<N>-em-sample,
# pass<N>-em-sample-half (a pass on the sample's first half), em-held-out, and the solve's (moments, whitening, decompose, solve); the
# stage "total" is the whole process's user + system seconds (GNU time).
#
# Usage: bench/scale/calibrate.sh OUT.tsv CORPUS:K[,K...]...
#   each CORPUS a file streamfit reads (with its vocabulary beside it, or
#   VOCAB_<name>=path in the environment); e.g.
#   bench/scale/calibrate.sh costs.tsv ~/.cache/streamfit/real/debian/train.docword.gz:10,20,50,100
# $STREAMFIT is the binary (default: built from this checkout). Fits run one
# at a time with two workers; CPU seconds are the profile's samples, which
# on a shared machine include the slowdown from its other load.
set -euo pipefail
out=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${STREAMFIT:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
	bin=$tmp/streamfit
	(cd "$root" && go build -o "$bin" ./cmd/streamfit)
fi
[ -f "$out" ] || printf 'corpus\tk\td\tdocs\tnnz\ttokens\tworkers\tstage\tcpu_seconds\n' >"$out"
for spec in "$@"; do
	in=${spec%:*}
	ks=${spec##*:}
	name=$(basename "$(dirname "$in")")/$(basename "$in")
	"$bin" inspect --json "$in" >"$tmp/inspect.json"
	read -r d docs nnz tokens < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["terms"], r["rows"], r["nnz"], r["tokens"])' "$tmp/inspect.json")
	for k in ${ks//,/ }; do
		/usr/bin/time -f '%U %S' -o "$tmp/time" "$bin" fit lda --input "$in" --k "$k" --workers 2 --progress off --no-timing \
			--cpuprofile "$tmp/cpu.prof" --out "$tmp/model.json" ${FIT_FLAGS:-} 2>"$tmp/fit.err" || {
			cat "$tmp/fit.err" >&2
			continue
		}
		go tool pprof -tags "$tmp/cpu.prof" 2>/dev/null | awk -v c="$name" -v k="$k" -v d="$d" -v n="$docs" -v z="$nnz" -v t="$tokens" '
			/^ *stage:/ { on = 1; next }
			on && NF == 0 { on = 0 }
			on && /: / {
				v = $1; s = $NF
				if (v ~ /ms$/) { sub(/ms$/, "", v); v /= 1000 } else { sub(/s$/, "", v) }
				printf "%s\t%s\t%s\t%s\t%s\t%s\t2\t%s\t%.3f\n", c, k, d, n, z, t, s, v
			}' >>"$out"
		awk -v c="$name" -v k="$k" -v d="$d" -v n="$docs" -v z="$nnz" -v t="$tokens" \
			'!/^Command/ { printf "%s\t%s\t%s\t%s\t%s\t%s\t2\ttotal\t%.3f\n", c, k, d, n, z, t, $1 + $2 }' "$tmp/time" >>"$out"
		echo "$name k=$k done" >&2
	done
done
