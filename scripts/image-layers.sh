#!/usr/bin/env bash
# Prints an image's size (unpacked, as buildah counts it) and, for each layer,
# its compressed size (what a registry stores and a node pulls) beside the
# Dockerfile instruction that made it. The layers are read from an OCI layout
# that `buildah push` writes (the same bytes a push to a registry sends), kept
# for the last image under /var/cache/cni-bench/image-oci unless OCI_DIR is given.
#
#   scripts/image-layers.sh IMAGE [OCI_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:?usage: scripts/image-layers.sh IMAGE [OCI_DIR]}"
dir="${2:-}"
if [ -z "$dir" ]; then
  # Kept per image ID, so printing an unchanged image again compresses nothing.
  id="$(buildah inspect --type image --format '{{.FromImageID}}' "$image")"
  cache="${CNI_BENCH_CACHE_DIR:-/var/cache/cni-bench}/image-oci"
  dir="${cache}/${id:0:12}"
  if [ ! -f "${dir}/index.json" ]; then
    rm -rf "$cache"
    mkdir -p "$cache"
    buildah push --quiet --format oci "$image" "oci:${dir}:image" >/dev/null
  fi
else
  rm -rf "$dir"
  buildah push --quiet --format oci "$image" "oci:${dir}:image" >/dev/null
fi
buildah images --format 'image {{.Name}}:{{.Tag}}  id {{.ID}}  size {{.Size}} (unpacked)' "$image"
node=node
[ -x node_modules/.bin/node ] && node=node_modules/.bin/node
"$node" - "$dir" <<'EOF'
const { readFileSync } = require('node:fs');
const dir = process.argv[2];
const blob = (d) => JSON.parse(readFileSync(`${dir}/blobs/${d.replace(':', '/')}`, 'utf8'));
const index = JSON.parse(readFileSync(`${dir}/index.json`, 'utf8'));
const manifest = blob(index.manifests[0].digest);
const config = blob(manifest.config.digest);
const made = (config.history ?? []).filter((h) => !h.empty_layer);
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const total = manifest.layers.reduce((s, l) => s + l.size, 0);
console.log(`layers: ${manifest.layers.length}, compressed ${mb(total)} in all (oldest first)`);
manifest.layers.forEach((l, i) => {
  const by = (made[i]?.created_by ?? '?').replace(/^\/bin\/sh -c #\(nop\) /, '').replace(/\s+/g, ' ').slice(0, 110);
  console.log(`  ${String(i + 1).padStart(2)}  ${mb(l.size).padStart(9)}  ${by}`);
});
EOF
