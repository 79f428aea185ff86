#!/usr/bin/env bash
# Scale benchmarks of `streamfit fit lda` (bench/lda/SCALE.md): every fit runs
# in a fresh process under /usr/bin/time, which gives wall and CPU seconds and
# the peak RSS (VmHWM); the plan's prediction is read from the fit's stderr
# and the recovery error from `streamfit eval` against the generator's truth.
#
#   bench/lda/scale.sh ksweep|k1000|scaling|workers|wiki|calibrate|check
#
# Corpora are generated once and cached under $STREAMFIT_SCALE_DIR (default
# /tmp/streamfit-scale; the Wikipedia-shaped one takes ≈1 GB of Parquet);
# delete it when done. $STREAMFIT is the binary (default: built from the
# working tree into the cache directory). One TSV line per fit on stdout:
# name, plan, k, docs, wall s, CPU s, peak RSS MB, predicted CPU, predicted
# peak (the revised prediction when the fit took the automatic power pass),
# mean ℓ1, max ℓ1, found, solver contractions (fit.solver.iters), passes.
# calibrate and check also write a CPU profile per fit (fit --cpuprofile):
# `go tool pprof -tags $dir/cpu.NAME.K.PLAN.prof` gives the CPU per stage.
set -euo pipefail
dir=${STREAMFIT_SCALE_DIR:-/tmp/streamfit-scale}
mkdir -p "$dir"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${STREAMFIT:-$dir/streamfit}
[ -n "${STREAMFIT:-}" ] || (cd "$root" && go build -o "$bin" ./cmd/streamfit)

# corpus NAME DOCS VOCAB K DOCLEN [SEED [BETA]]: generate $dir/NAME.parquet
# once (α₀ = 1, topics Dirichlet(BETA), default 0.1; seed 3 by default).
corpus() {
	local f=$dir/$1.parquet
	[ -f "$f" ] || nice "$bin" gen lda --docs "$2" --vocab "$3" --k "$4" --alpha0 1 --doc-len "$5" --seed "${6:-3}" \
		--beta "${7:-0.1}" --out "$f" --truth "$dir/$1.truth.json" >&2
}

# fit NAME K PLAN [flags...]: one fit of $dir/NAME.parquet, one TSV line.
fit() {
	local name=$1 k=$2 plan=$3
	shift 3
	local out=$dir/model.$name.$k.$plan.json err=$dir/fit.$name.$k.$plan.err
	if nice /usr/bin/time -f 'TIME %e %U %S %M' "$bin" fit lda --input "$dir/$name.parquet" --k "$k" --plan "$plan" \
		--row-dir "$dir" --out "$out" "$@" 2>"$err"; then
		ev=$("$bin" eval --model "$out" --truth "$dir/$name.truth.json" | awk '/mean ℓ1/{m=$3} /max ℓ1/{x=$3} /found/{f=$2} END{print m"\t"x"\t"f}')
		ev="$ev	$(grep -o '"solver":{[^}]*' "$out" | grep -o '"iters":[0-9]*' | cut -d: -f2)"
		ev="$ev	$(grep -o '"passes":[0-9]*' "$out" | head -1 | cut -d: -f2)"
	else
		ev=$(printf 'FAILED\t-\t-\t-\t-')
	fi
	local docs t pred
	docs=$(grep -o '[0-9]* documents' "$err" | head -1 | cut -d' ' -f1)
	t=$(awk '/^TIME/{printf "%.1f\t%.1f\t%.0f", $2, $3+$4, $5/1024}' "$err")
	# The chosen representation's line, or the revision printed after the
	# whitening when the fit took the power pass (the last one wins).
	pred=$(awk '/^  \* |^plan revised/{for(i=1;i<=NF;i++){if($i=="CPU")tt=$(i+1); if($i=="peak")pk=$(i+1)}} END{sub(/,$/,"",tt); sub(/,$/,"",pk); print tt"\t"pk}' "$err")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$plan" "$k" "$docs" "$t" "$pred" "$ev"
	rm -f "$out"
}

case ${1:-} in
ksweep)
	# k=10: a 20,000-document corpus; larger k, larger corpora.
	corpus k10 20000 2000 10 200
	corpus k50 100000 3000 50 200
	corpus k100 200000 5000 100 200
	# k=300 needs long documents for the data to support 300 topics (50,000
	# documents of 200 tokens over 3,000 words did not): 500 tokens.
	corpus k300 100000 5000 300 500
	for p in explicit implicit sketch; do fit k10 10 $p; done
	for p in explicit implicit; do fit k50 50 $p; done
	for p in explicit implicit; do fit k100 100 $p; done
	for p in explicit implicit; do fit k300 300 $p; done
	;;
k1000)
	# k=1000: the data must hold 1000 topics. 50,000 documents of 2,000
	# tokens over 5,000 words do with Dirichlet(0.02) topics (Dirichlet(0.1)
	# ones are refused: a whitened M2 eigenvalue is negative). ≈35 CPU-min.
	corpus k1000 50000 5000 1000 2000 7 0.02
	fit k1000 1000 "${STREAMFIT_K1000_PLAN:-auto}"
	;;
scaling)
	# n, 2n, 4n, 8n documents of one model (k=10), default plan and the rows.
	for n in 100000 200000 400000 800000; do corpus n$n $n 2000 10 200; done
	for p in explicit implicit; do
		for n in 100000 200000 400000 800000; do fit n$n 10 $p; done
	done
	;;
workers)
	# one and two cores on a whole fit (GOMAXPROCS, which also bounds
	# gonum's parallel GEMM, and --workers): 400,000 documents at k=10, and
	# the k=50 corpus.
	corpus n400000 400000 2000 10 200
	corpus k50 100000 3000 50 200
	for w in 1 2; do
		GOMAXPROCS=$w fit n400000 10 explicit --workers $w
		GOMAXPROCS=$w fit n400000 10 implicit --workers $w
		GOMAXPROCS=$w fit k50 50 explicit --workers $w
		GOMAXPROCS=$w fit k50 50 implicit --workers $w
	done
	;;
calibrate)
	# The fits the plan's constants (models/lda/plan.go) were fitted to.
	corpus c10 20000 2000 10 200
	corpus c50 100000 3000 50 200
	corpus c100 100000 5000 100 200
	corpus c100w 100000 100000 100 160 7
	for p in explicit implicit sketch; do fit c10 10 $p --cpuprofile "$dir/cpu.c10.10.$p.prof"; done
	for c in c50:50 c100:100 c100w:100; do
		for p in explicit implicit; do fit "${c%:*}" "${c#*:}" $p --cpuprofile "$dir/cpu.${c%:*}.${c#*:}.$p.prof"; done
	done
	;;
check)
	# Corpora of other shapes, not used for the constants: the prediction
	# checked against measurement (bench/lda/SCALE.md, "Prediction
	# checked").
	corpus v10 50000 1000 10 100 14
	corpus v30 150000 20000 30 120 11
	corpus v70 120000 8000 70 300 12
	corpus v100w 200000 100000 100 160 13
	corpus v50w 150000 100000 50 160 15
	corpus v50m 150000 50000 50 160 16
	corpus v100m 150000 20000 100 200 17
	for p in explicit sketch; do fit v10 10 $p; done
	for c in v30:30 v70:70 v100w:100 v50w:50 v50m:50; do
		for p in explicit implicit; do fit "${c%:*}" "${c#*:}" $p; done
	done
	fit v100m 100 explicit
	;;
wiki)
	# Wikipedia-shaped: 3.5M documents, 100,000 words, ≈0.5G entries, k=100.
	corpus wiki 3500000 100000 100 160 7
	fit wiki 100 "${STREAMFIT_WIKI_PLAN:-auto}" ${STREAMFIT_WIKI_FLAGS:-}
	;;
*)
	echo "usage: $0 ksweep|k1000|scaling|workers|wiki|calibrate|check" >&2
	exit 2
	;;
esac
