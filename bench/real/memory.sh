#!/usr/bin/env bash
# Peak RSS of the default fit (spectral start + likelihood refinement) at n
# and 4n documents: the Debian training corpus, and the same documents four
# times over (train4.docword.gz, built once beside it). Memory is meant to
# depend on d·k, not on the number of documents, so the two peaks should be
# within 10% of each other.
#
# Usage: bench/real/memory.sh [CACHE]   (env K=50, STREAMFIT=binary; corpora as corpora.sh)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
k=${K:-50}
py=/usr/bin/python3
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=${OUT:-$cache/runs}
mkdir -p "$out"
sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$out/streamfit
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi
export STREAMFIT=$sf
CORPORA=debian "$here/corpora.sh" "$cache"
d=$cache/debian
if [ ! -f "$d/train4.docword.gz" ]; then
	"$py" - "$d/train.docword.gz" "$d/train4.docword.gz" <<'PY'
import gzip, os, sys
src, dst = sys.argv[1], sys.argv[2]
with gzip.open(src, "rt") as f:
    n, w, nnz = int(f.readline()), int(f.readline()), int(f.readline())
    body = f.read().splitlines()
with gzip.open(dst + ".tmp", "wt", compresslevel=1) as g:
    g.write("%d\n%d\n%d\n" % (4 * n, w, 4 * nnz))
    for copy in range(4):
        for line in body:
            doc, rest = line.split(" ", 1)
            g.write("%d %s\n" % (int(doc) + copy * n, rest))
os.replace(dst + ".tmp", dst)
PY
	cp "$d/vocab.txt" "$d/train4.docword.vocab"
fi
for part in train train4; do
	/usr/bin/time -f '%e %M %U %S' -o "$out/memory-$part.time" \
		"$sf" fit lda --input "$d/$part.docword.gz" --k "$k" --out "$out/memory-$part.json" --progress off \
		>"$out/memory-$part.log" 2>&1
done
"$py" - "$out" "$k" <<'PY'
import json, sys
out, k = sys.argv[1], sys.argv[2]
rows = []
for part, label in (("train", "n"), ("train4", "4n")):
    wall, rss, user, sys_ = open("%s/memory-%s.time" % (out, part)).read().split()[:4]
    m = json.load(open("%s/memory-%s.json" % (out, part)))
    rows.append((label, m["fit"]["docs"], float(wall), float(user) + float(sys_), int(rss) / 1024, m["fit"]["passes"]))
print("| documents | n | passes | wall s | CPU s | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|")
for label, n, wall, cpu, rss, passes in rows:
    print("| %s | %d | %d | %.1f | %.1f | %.0f |" % (label, n, passes, wall, cpu, rss))
print("\nk=%s; peak RSS at 4n is %.2f× that at n" % (k, rows[1][4] / rows[0][4]))
PY
