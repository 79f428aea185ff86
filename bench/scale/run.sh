#!/usr/bin/env bash
# LDA on large corpora (bench/scale/RESULTS.md): CPU per read of the data,
# the plan's forecast against the CPU used, quality, and gensim's single pass.
#
#   bench/scale/run.sh [DIR]     (default $STREAMFIT_SCALE_DIR, else /tmp/streamfit-scale)
#
# Corpora, built once in DIR:
#   g250k, g1m   `streamfit gen lda --vocab 10000 --k 50 --seed 3` with 250,000
#                and 1,000,000 documents (Parquet; the truth beside them)
#   deb28        the Debian descriptions of bench/real (its training part,
#                55,317 documents) repeated 28 times with fresh document ids:
#                1,548,876 documents, as Parquet, and as gzipped docword for
#                gensim; held-out documents: bench/real's test part
# Each method runs in a fresh process under GNU time: one TSV line per run on
# stdout and in DIR/results.tsv:
#   corpus  method  k  cpu_s  wall_s  peak_rss_mb  forecast_s  taken_s  quality
# quality is the mean ℓ1 to the true topics (generated corpora) or the
# held-out perplexity (deb28). Methods (env METHODS, default all but gensim):
#   read      streamfit inspect (decodes every document once)
#   spectral  fit lda --em-passes 0
#   default   fit lda
#   gensim    gensim's LdaModel, one pass, chunksize 2000 (bench/real/gensim_lda.py)
# env CORPORA (default "g250k g1m deb28"), K (default 50), STREAMFIT (binary;
# default: built from this checkout), BASE (a second binary: its spectral and
# default fits run too, as base-spectral and base-default, for ratios).
# Needs bench/real's corpora for deb28 (bench/real/corpora.sh) and, for
# gensim, Debian's python3-gensim.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-${STREAMFIT_SCALE_DIR:-/tmp/streamfit-scale}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
real=${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}
bin=${STREAMFIT:-}
if [ -z "$bin" ]; then
	bin=$dir/streamfit
	(cd "$root" && go build -o "$bin" ./cmd/streamfit)
fi
K=${K:-50}
CORPORA=${CORPORA:-g250k g1m deb28}
METHODS=${METHODS:-read spectral default}

gen() {
	local name=$1 docs=$2
	[ -f "$dir/$name.parquet" ] || nice "$bin" gen lda --docs "$docs" --vocab 10000 --k 50 --seed 3 \
		--out "$dir/$name.parquet" --truth "$dir/$name.truth.json" --progress off >&2
}

deb28() {
	[ -f "$dir/deb28.parquet" ] && return
	local src=$real/debian
	[ -f "$src/READY" ] || { echo "run bench/real/corpora.sh first (CORPORA=debian)" >&2; exit 1; }
	cp "$src/vocab.txt" "$dir/deb28.vocab.txt"
	zcat "$src/train.docword.gz" | awk -v R=28 '
		NR == 1 { D = $1; print D * R; next }
		NR == 2 { print; next }
		NR == 3 { print $1 * R; next }
		{ a[n++] = $0 }
		END { for (r = 0; r < R; r++) for (i = 0; i < n; i++) { split(a[i], f, " "); print f[1] + r * D, f[2], f[3] } }' |
		gzip -1 >"$dir/deb28.docword.gz.tmp"
	mv "$dir/deb28.docword.gz.tmp" "$dir/deb28.docword.gz"
	"$bin" convert --vocab "$dir/deb28.vocab.txt" --progress off "$dir/deb28.docword.gz" "$dir/deb28.parquet" >&2
}

# quality CORPUS MODEL: ℓ1 to the truth, or held-out perplexity.
quality() {
	case $1 in
	deb28) "$bin" eval --model "$2" --heldout "$real/debian/test.docword.gz" --json |
		python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["perplexity"])' ;;
	*) "$bin" eval --model "$2" --truth "$dir/$1.truth.json" | awk '/mean ℓ1/ { print $3 }' ;;
	esac
}

# run CORPUS METHOD CMD...: times CMD, prints the line.
run() {
	local c=$1 m=$2
	shift 2
	local err=$dir/$c.$m.err
	/usr/bin/time -f 'TIME %e %U %S %M' "$@" >"$dir/$c.$m.out" 2>"$err"
	local t forecast taken q=-
	t=$(awk '/^TIME/ { printf "%.1f\t%.1f\t%.0f", $3 + $4, $2, $5 / 1024 }' "$err")
	forecast=$(sed -n 's/.*the plan forecast \([0-9.]*\)s, and \([0-9.]*\)s.*/\1\t\2/p' "$err")
	[ -n "$forecast" ] || forecast=$(printf -- '-\t-')
	case $m in
	*spectral | *default) q=$(quality "$c" "$dir/$c.$m.json") ;;
	gensim) q=$("$bin" eval --model "$dir/$c.gensim.npy" --heldout "$real/debian/test.docword.gz" --json |
		python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["perplexity"])') ;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$m" "$K" "$t" "$forecast" "$q" | tee -a "$dir/results.tsv"
}

for c in $CORPORA; do
	case $c in
	g250k) gen g250k 250000 ;;
	g1m) gen g1m 1000000 ;;
	deb28) deb28 ;;
	*) echo "unknown corpus $c" >&2; exit 2 ;;
	esac
	in=$dir/$c.parquet
	vocab=()
	[ "$c" = deb28 ] && vocab=(--vocab "$dir/deb28.vocab.txt")
	for m in $METHODS; do
		case $m in
		read) run "$c" read "$bin" inspect "$in" ;;
		spectral | default)
			flags=()
			[ "$m" = spectral ] && flags=(--em-passes 0)
			run "$c" "$m" "$bin" fit lda --input "$in" --k "$K" "${vocab[@]}" "${flags[@]}" --progress off --out "$dir/$c.$m.json"
			if [ -n "${BASE:-}" ]; then
				run "$c" "base-$m" "$BASE" fit lda --input "$in" --k "$K" "${vocab[@]}" "${flags[@]}" --progress off --out "$dir/$c.base-$m.json"
			fi
			;;
		gensim)
			[ "$c" = deb28 ] || continue
			run "$c" gensim /usr/bin/python3 "$root/bench/real/gensim_lda.py" "$dir/deb28.docword.gz" "$K" 1 "$dir/$c.gensim.npy"
			;;
		*) echo "unknown method $m" >&2; exit 2 ;;
		esac
	done
done
