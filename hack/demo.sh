#!/usr/bin/env bash
# The demo: what topolayer does with one operator's outputs, on the shipped example.
# Usage: hack/demo.sh bin/topolayer
set -euo pipefail
bin=${1:-bin/topolayer}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

example=examples/outputs/sample-operator
declared=examples/outputs/sample-operator-output-resources.yaml

echo "== The standalone plan of $example (topolayer plan)"
"$bin" plan --config examples/standalone.yaml --from "$example" --output-resources "$declared" --operator sample-operator
echo
echo "== Translated (topolayer translate --to $work/translated)"
"$bin" translate --config examples/standalone.yaml --from "$example" --output-resources "$declared" --operator sample-operator --to "$work/translated"
(cd "$work/translated" && find . -type f | sort | sed 's/^/  /')
echo
echo "== Identical bodies: every body of $example is at the same path under cluster/"
n=0
while IFS= read -r body; do
  rel=${body#"$example"/}; rel=${rel#*/} # drop the class folder
  cmp -s "$body" "$work/translated/cluster/$rel" || { echo "  differs: $rel"; exit 1; }
  n=$((n + 1))
done < <(find "$example" -name '*-body-*' | sort)
echo "  $n of $n bodies byte-identical"
echo
echo "== The same outputs in the hosted topology (examples/hosted.yaml): where each lands, and why"
"$bin" plan --config examples/hosted.yaml --from "$example" --output-resources "$declared" --operator sample-operator
echo
echo "== The translated Deployment on the management cluster"
"$bin" translate --config examples/hosted.yaml --from "$example" --output-resources "$declared" --operator sample-operator --to "$work/hosted" >/dev/null
sed 's/^/  /' "$(find "$work/hosted/management" -path '*deployments*' -name '*-body-*')"
