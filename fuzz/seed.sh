#!/usr/bin/env bash
# Seeds the fuzz corpora with every MSL fixture of the project.
set -euo pipefail
cd "$(dirname "$0")"
for target in translate preprocess; do
    mkdir -p "corpus/$target"
    find ../fixtures -name '*.metal' -o -name '*.h' | while read -r f; do
        cp "$f" "corpus/$target/$(echo "$f" | tr '/.' '__')"
    done
done
