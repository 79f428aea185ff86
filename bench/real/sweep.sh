#!/usr/bin/env bash
# The sweep over k against separate default fits on the corpora of
# corpora.sh, in one run: for each corpus
#   sweep      streamfit fit lda --input TRAIN --k 10,20,50,100 --heldout TEST --json
#              (one set of spectral passes for the largest k, EM passes shared)
#   separate   streamfit fit lda --input TRAIN --k K for each K (the default fit),
#              each scored by streamfit eval --heldout TEST (the same
#              document-completion perplexity the sweep computes) and
#              --coherence TRAIN (the sweep's coherence)
# and prints per corpus each k's held-out perplexity from the sweep and from
# its separate fit, the CPU seconds (user + system, GNU time) of the sweep,
# of the single fit at the largest k and of the separate fits together
# (without and with their scoring: the sweep's figure includes its own), and
# the k the sweep recommends against the k the same rule (the smallest k
# within 1% of the lowest held-out perplexity) picks from the separate fits.
# The tables are written to $OUT/sweep.md.
#
# Usage: bench/real/sweep.sh [CACHE]
#   CACHE  corpora cache (as corpora.sh; default $STREAMFIT_REAL_CACHE, else
#          ${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real)
#   env KS="10 20 50 100", CORPORA="spam debian fortunes", OUT=$CACHE/runs-sweep,
#       STREAMFIT=binary (default: built from this checkout)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
py=/usr/bin/python3
KS=${KS:-10 20 50 100}
CORPORA=${CORPORA:-spam debian fortunes}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=${OUT:-$cache/runs-sweep}
mkdir -p "$out"
command -v /usr/bin/time >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q time
sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$out/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi
CORPORA="$CORPORA" STREAMFIT=$sf "$here/corpora.sh" "$cache"

# timed NAME CMD...: runs CMD with its stdout in $out/NAME.out, stderr in
# $out/NAME.log, and its CPU seconds (user + system) in $out/NAME.cpu.
timed() {
	local name=$1
	shift
	echo "$name: $*" >&2
	/usr/bin/time -f '%U %S' -o "$out/$name.time" "$@" >"$out/$name.out" 2>"$out/$name.log"
	awk '{printf "%.2f\n", $1 + $2}' "$out/$name.time" >"$out/$name.cpu"
}

list=$(echo $KS | tr ' ' ',')
for c in $CORPORA; do
	train=$cache/$c/train.docword.gz
	test=$cache/$c/test.docword.gz
	timed "$c-sweep" "$sf" fit lda --input "$train" --k "$list" --heldout "$test" --json --progress off --out "$out/$c-sweep-k{k}.json"
	for k in $KS; do
		timed "$c-k$k" "$sf" fit lda --input "$train" --k "$k" --progress off --out "$out/$c-k$k.json"
		timed "$c-k$k.eval" "$sf" eval --model "$out/$c-k$k.json" --heldout "$test" --json
		timed "$c-k$k.coherence" "$sf" eval --model "$out/$c-k$k.json" --coherence "$train" --json
	done
done

"$py" - "$out" "$KS" $CORPORA <<'EOF' | tee "$out/sweep.md"
import json, sys
out, ks, corpora = sys.argv[1], [int(k) for k in sys.argv[2].split()], sys.argv[3:]
cpu = lambda name: float(open(f"{out}/{name}.cpu").read())
def rule(perp):  # the sweep's rule (lda.recommend): smallest k within 1% of the lowest
    best = min(perp.values())
    return min(k for k, p in perp.items() if p <= best * 1.01)
for c in corpora:
    sw = json.load(open(f"{out}/{c}-sweep.out"))
    by = {s["k"]: s for s in sw["scores"]}
    sep = {k: json.load(open(f"{out}/{c}-k{k}.eval.out"))["perplexity"] for k in ks}
    print(f"\n{c}: the sweep k = {','.join(map(str, ks))} against the separate default fits\n")
    print("| k | held-out perplexity, sweep | separate fit | sweep / separate | EM passes (sweep) | separate fit CPU s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in ks:
        print(f"| {k} | {by[k]['perplexity']:.1f} | {sep[k]:.1f} | {by[k]['perplexity'] / sep[k]:.4f} | {by[k]['em_passes']} | {cpu(f'{c}-k{k}'):.1f} |")
    s, one, four = cpu(f"{c}-sweep"), cpu(f"{c}-k{ks[-1]}"), sum(cpu(f"{c}-k{k}") for k in ks)
    scored = four + sum(cpu(f"{c}-k{k}.eval") + cpu(f"{c}-k{k}.coherence") for k in ks)
    print(f"\nCPU s: sweep {s:.1f} (its {sw['passes']} passes, with its scores), single fit at k = {ks[-1]} {one:.1f}, "
          f"the {len(ks)} separate fits {four:.1f} ({scored:.1f} with eval --heldout and --coherence of each): "
          f"sweep / single = {s / one:.2f}, separate / single = {four / one:.2f} ({scored / one:.2f} scored)")
    print(f"recommended k: sweep {sw['recommended']}, the same rule over the separate fits {rule(sep)}")
EOF
