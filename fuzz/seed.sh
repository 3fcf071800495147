#!/usr/bin/env bash
# Copies every .csp of tests/, examples/ and std/ into fuzz/corpus/<target>/
# (the un-minimised working corpus libFuzzer grows; git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
for t in parse compile run; do
    mkdir -p "corpus/$t"
    find ../tests ../examples ../std -name '*.csp' -print0 |
        while IFS= read -r -d '' f; do
            cp "$f" "corpus/$t/$(echo "$f" | sed 's|^\.\./||; s|/|_|g')"
        done
done
echo "seeded: $(ls corpus/parse | wc -l) files per target"
