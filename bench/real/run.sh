#!/usr/bin/env bash
# Side-by-side benchmark of streamfit, gensim and scikit-learn on the real
# corpora of corpora.sh: for each corpus and k, fits
#   gensim-1, gensim-5   gensim LdaModel, 1 and 5 passes (gensim_lda.py)
#   sklearn-batch, sklearn-online
#                        scikit-learn LatentDirichletAllocation, batch (its
#                        default, 10 iterations) and online (5 passes)
#                        (sklearn_lda.py; not in the default METHODS)
#   sf-spectral          streamfit fit lda --em-passes 0 (the spectral fit alone)
#   sf-default           streamfit fit lda (spectral start + likelihood refinement)
# and scores every model with the same streamfit code: held-out perplexity
# (eval --heldout TEST, document completion), UMass and NPMI coherence and
# topic diversity of the top-10 words over the training documents (eval
# --coherence TRAIN), wall and CPU seconds and peak RSS of the fit (GNU
# time; CPU seconds are the steadier figure on a loaded machine). One
# table is printed at the end and written to $OUT/table.md.
#
# Usage: bench/real/run.sh [CACHE]
#   CACHE     corpora cache (as corpora.sh; default $STREAMFIT_REAL_CACHE, else
#             ${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real)
#   env KS="10 20 50 100", CORPORA="spam debian" (also "fortunes" and "gosrc", see corpora.sh),
#       METHODS="gensim-1 gensim-5 sf-spectral sf-default" (add sklearn-batch,
#       sklearn-online),
#       OUT=$CACHE/runs, KEEP=1 keeps results already in $OUT (default: refit;
#       with RESCORE=1 their models are scored again, fit times kept),
#       STREAMFIT=binary (default: built from this checkout)
# Installs python3-gensim (and python3-sklearn when asked for) with apt-get
# when /usr/bin/python3 cannot import it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
py=/usr/bin/python3
KS=${KS:-10 20 50 100}
CORPORA=${CORPORA:-spam debian}
METHODS=${METHODS:-gensim-1 gensim-5 sf-spectral sf-default}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=${OUT:-$cache/runs}
mkdir -p "$out"

if ! "$py" -c 'import gensim' 2>/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-gensim
fi
case " $METHODS " in
*" sklearn-"*)
	if ! "$py" -c 'import sklearn' 2>/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-sklearn
	fi
	;;
esac
command -v /usr/bin/time >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q time

sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$out/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi
export STREAMFIT=$sf
CORPORA="$CORPORA" "$here/corpora.sh" "$cache"

# The help texts are read whole first: grep -q stops reading at the first
# match, and under pipefail the writer's SIGPIPE would fail the test.
has_em=0
help_fit=$("$sf" fit lda -h 2>&1 || true)
case $help_fit in *-em-passes*) has_em=1 ;; esac
has_heldout=0
help_eval=$("$sf" eval -h 2>&1 || true)
case $help_eval in *-heldout*) has_heldout=1 ;; esac

# record FILE KEY=VALUE...: one JSON object per run.
record() {
	local f=$1
	shift
	"$py" -c '
import json, sys
r = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    try:
        v = float(v)
    except ValueError:
        pass
    r[k] = v
json.dump(r, open(sys.argv[1], "w"))
' "$f" "$@"
}

# update FILE KEY=VALUE...: sets keys of a record.
update() {
	local f=$1
	shift
	"$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    r[k] = float(v)
json.dump(r, open(sys.argv[1], "w"))
' "$f" "$@"
}

# score MODEL TRAIN TEST: prints "perplexity=… umass=… npmi=… diversity=…".
score() {
	local model=$1 train=$2 test=$3
	"$sf" eval --model "$model" --coherence "$train" --json | "$py" -c '
import json, sys
r = json.load(sys.stdin)
print("umass=%r npmi=%r diversity=%r" % (r["umass"], r["npmi"], r["diversity"]))'
	if [ $has_heldout = 1 ]; then
		"$sf" eval --model "$model" --heldout "$test" --json | "$py" -c '
import json, sys
r = json.load(sys.stdin)
key = "perplexity" if "perplexity" in r else next(k for k in r if "perplexity" in k)
print("perplexity=%r" % r[key])'
	fi
}

for c in $CORPORA; do
	train=$cache/$c/train.docword.gz
	test=$cache/$c/test.docword.gz
	for k in $KS; do
		for m in $METHODS; do
			rec=$out/$c-k$k-$m.json
			base=$out/$c-k$k-$m
			if [ "${KEEP:-0}" = 1 ] && [ -f "$rec" ]; then
				model=$base.model.json
				case $m in gensim-* | sklearn-*) model=$base.npy ;; esac
				if [ "${RESCORE:-0}" = 1 ] && grep -q '"status": "ok"' "$rec"; then
					echo "$c k=$k $m: scoring $model again" >&2
					# shellcheck disable=SC2046
					update "$rec" $(score "$model" "$train" "$test")
				fi
				continue
			fi
			case $m in
			gensim-*)
				model=$base.npy
				cmd=("$py" "$here/gensim_lda.py" "$train" "$k" "${m#gensim-}" "$model")
				;;
			sklearn-batch | sklearn-online)
				model=$base.npy
				cmd=("$py" "$here/sklearn_lda.py" "$train" "$k" "${m#sklearn-}" "$model")
				;;
			sf-spectral)
				model=$base.model.json
				cmd=("$sf" fit lda --input "$train" --k "$k" --out "$model" --progress off)
				[ $has_em = 1 ] && cmd+=(--em-passes 0)
				;;
			sf-default)
				if [ $has_em = 0 ]; then
					echo "$c k=$k $m: this streamfit has no likelihood refinement (--em-passes); skipped" >&2
					continue
				fi
				model=$base.model.json
				cmd=("$sf" fit lda --input "$train" --k "$k" --out "$model" --progress off)
				;;
			*)
				echo "unknown method $m" >&2
				exit 2
				;;
			esac
			echo "$c k=$k $m: ${cmd[*]}" >&2
			if /usr/bin/time -f '%e %M %U %S' -o "$base.time" "${cmd[@]}" >"$base.log" 2>&1; then
				read -r wall rss user sys < <(grep -v '^Command' "$base.time")
				# shellcheck disable=SC2046
				record "$rec" corpus="$c" k="$k" method="$m" status=ok wall="$wall" rss_mb=$((rss / 1024)) \
					cpu="$(awk -v a="$user" -v b="$sys" 'BEGIN { print a + b }')" \
					$(score "$model" "$train" "$test")
			else
				# the error: streamfit's last non-warning message, else the last line
				msg=$(grep '^streamfit ' "$base.log" | grep -v 'warning:' | tail -1)
				[ -n "$msg" ] || msg=$(grep -v '^Command exited' "$base.log" | tail -1)
				record "$rec" corpus="$c" k="$k" method="$m" status=failed error="$msg"
			fi
		done
	done
done

"$py" "$here/table.py" "$out" | tee "$out/table.md"
