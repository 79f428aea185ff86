#!/usr/bin/env bash
# Dense models of streamfit on real data, side by side with scikit-learn,
# in one run (see RESULTS.md). Installs what it needs with apt-get
# (python3-sklearn, python3-numpy, GNU time, espeak-ng and sox for the
# speech, python3-pomegranate for the HMM), builds streamfit from this
# checkout (and bench/dense/emfit), writes the data sets (data.py) to the
# cache once, then runs the GMM (gmm.py), ICA (ica.py), multi-view (mv.py)
# and HMM (hmm.py: it fetches Debian's package descriptions with apt-get
# update into the cache) comparisons and prints their tables (table.py);
# BENCHES=hmm-speech adds the Gaussian HMMs on those descriptions spoken by
# espeak-ng beside pomegranate (hmm_speech.py, its own hmm_speech.jsonl).
#
# Usage: bench/dense/run.sh [CACHE]
#   CACHE  data and runs (default $STREAMFIT_DENSE_CACHE, else
#          $HOME/.cache/streamfit/dense); nothing is written in the checkout
#   env BENCHES="gmm ica multiview hmm" (or hmm-speech), SETS="digits digits-pca10 pixels", KS="5 10 20",
#       ICA_CASES="4x4 4x6 6x6" (K sources × D mixtures), MV_KS="10",
#       HMM_KS="2 5 10", HMM_DOCS=1000,
#       METHODS="sf-common sf-differing sf-default sf-default-diag sf-em sf-em-diag sk-spherical sk-diag",
#       OUT=$CACHE/runs/<date> (results.jsonl, the models and logs),
#       STREAMFIT=binary, EMFIT=binary, HMMFIT=binary (default: built from
#       this checkout; emfit and hmmfit are the moment fits followed by EM
#       and Baum–Welch passes, bench/dense/emfit and bench/dense/hmmfit)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_DENSE_CACHE:-$HOME/.cache/streamfit/dense}}
py=/usr/bin/python3
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=${OUT:-$cache/runs/$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$out"

need=()
"$py" -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
"$py" -c 'import sklearn' 2>/dev/null || need+=(python3-sklearn)
[ -x /usr/bin/time ] || need+=(time)
case " ${BENCHES:-gmm ica multiview hmm} " in
*" ica "* | *" hmm-speech "*)
	command -v espeak-ng >/dev/null || need+=(espeak-ng)
	command -v sox >/dev/null || need+=(sox)
	;;
esac
case " ${BENCHES:-gmm ica multiview hmm} " in
*" hmm "* | *" hmm-speech "*) "$py" -c 'import pomegranate' 2>/dev/null || need+=(python3-pomegranate) ;;
esac
if [ ${#need[@]} -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$out/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi
export STREAMFIT=$sf
export EMFIT=${EMFIT:-$out/emfit} HMMFIT=${HMMFIT:-$out/hmmfit}
[ -x "$EMFIT" ] || (cd "$root" && go build -o "$EMFIT" ./bench/dense/emfit)
[ -x "$HMMFIT" ] || (cd "$root" && go build -o "$HMMFIT" ./bench/dense/hmmfit)

[ -f "$cache/digits-pca10/test.npy" ] || "$py" "$here/data.py" "$cache"

{
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# streamfit $(cd "$root" && git rev-parse --short HEAD), scikit-learn $("$py" -c 'import sklearn; print(sklearn.__version__)'), numpy $("$py" -c 'import numpy; print(numpy.__version__)')"
} | tee "$out/conditions.txt"
for b in ${BENCHES:-gmm ica multiview hmm}; do
	case $b in
	gmm) "$py" "$here/gmm.py" "$cache" "$out" ;;
	ica) "$py" "$here/ica.py" "$cache" "$out" ;;
	multiview) "$py" "$here/mv.py" "$cache" "$out" ;;
	hmm) "$py" "$here/hmm.py" "$cache" "$out" ;;
	hmm-speech) "$py" "$here/hmm_speech.py" "$cache" "$out" ;;
	*) echo "run.sh: unknown benchmark $b (gmm, ica, multiview, hmm, hmm-speech)" >&2; exit 2 ;;
	esac
done
"$py" "$here/table.py" "$out/results.jsonl" | tee "$out/table.md"
