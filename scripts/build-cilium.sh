#!/usr/bin/env bash
# Builds real Cilium, pinned, from the Go module proxy into a cache outside the
# repository keyed by version (a warm re-run builds nothing and takes seconds):
#
#   cilium-agent   ./daemon
#   cilium-cni     ./plugins/cilium-cni (the CNI plugin the lab calls for ADD/DEL)
#   cilium-dbg     ./cilium-dbg (status, service and endpoint lists, bpf dumps)
#   bpf/           the datapath's C sources the agent compiles at run time with
#                  clang from PATH (its --lib-dir; what `make install-bpf` copies)
#   crds/          the CustomResourceDefinitions (v2, v2alpha1)
#
# The operator is not built: its pinned sigs.k8s.io/mcs-api/controllers
# pseudo-version is refused by the module proxy. The operator registers the CRDs
# in a real install; the lab applies crds/ itself instead, and runs without the
# operator (it then lacks only garbage collection and cluster-pool IPAM, neither
# of which the lab uses: IPAM is --ipam=kubernetes).
#
# The proxy also refuses the pinned github.com/osrg/gobgp/v4 pseudo-version; the
# build replaces it with the release v4.7.0 (BGP is off in the lab).
#
# The agent needs clang and LLVM >= 18.1 at run time (Cilium 1.20's system
# requirements; scripts/setup.sh installs Debian's clang-19 and llvm-19, and the
# lab puts /usr/lib/llvm-19/bin first on the agent's PATH) and ipset.
#
# Everything lands in <tools_dir>/cilium-<version>/; <tools_dir>/bin/cilium-*
# link to the binaries. The marker <tools_dir>/cilium-<version>/.complete is
# written last, only when every part is in place. Builds run under `nice`.
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
set -euo pipefail

CILIUM_VERSION=v1.20.2
GOBGP_REPLACEMENT=v4.7.0

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
dest="${tools_dir}/cilium-${CILIUM_VERSION}"
binaries=(cilium-agent cilium-cni cilium-dbg)

link_all() {
  mkdir -p "${tools_dir}/bin"
  for b in "${binaries[@]}"; do
    ln -sfn "${dest}/${b}" "${tools_dir}/bin/${b}"
    echo "${b}: ${dest}/${b}"
  done
}

if [ -f "${dest}/.complete" ]; then
  echo "build-cilium: cilium ${CILIUM_VERSION} already built ($(cat "${dest}/.complete"))" >&2
  link_all
  exit 0
fi

command -v go >/dev/null || { echo "build-cilium: 'go' is not on PATH" >&2; exit 1; }

export GOMODCACHE="${tools_dir}/go/mod" GOCACHE="${tools_dir}/go/build"
export GOFLAGS="-modcacherw -buildvcs=false -mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off

started=$(date +%s)
mkdir -p "$dest"

# The module's own tree is the build root: its go.mod carries replace directives
# (forks Cilium depends on) that a wrapper module would lose. It is copied out of
# the read-only module cache so go.mod and go.sum can take the one replacement.
download="$(go mod download -json "github.com/cilium/cilium@${CILIUM_VERSION}")"
module_dir="$(sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p' <<<"$download")"
info="$(sed -nE 's/^\s*"Info": "(.*)",?$/\1/p' <<<"$download")"
# The release's commit time as the proxy's .info file records it.
module_time="$(sed -nE 's/.*"Time":"([^"]*)".*/\1/p' "$info" 2>/dev/null || true)"
[ -d "$module_dir" ] || { echo "build-cilium: no module directory for github.com/cilium/cilium@${CILIUM_VERSION}" >&2; exit 1; }
src="${tools_dir}/src/cilium-${CILIUM_VERSION}"
if [ ! -f "${src}/.copied" ]; then
  rm -rf "$src" && mkdir -p "$src"
  cp -a "${module_dir}/." "$src/"
  chmod -R u+w "$src"
  (cd "$src" && go mod edit -replace "github.com/osrg/gobgp/v4=github.com/osrg/gobgp/v4@${GOBGP_REPLACEMENT}")
  touch "${src}/.copied"
fi

# pkg/version parses "<version> <revision> <date>" plus the Go runtime it appends;
# the module proxy carries no git revision, so the revision field says so.
ldflags="-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION#v} go-module-proxy ${module_time:-unknown}'"
build() {
  local name="$1" pkg="$2"
  if [ -x "${dest}/${name}" ]; then
    echo "build-cilium: ${name} already built" >&2
    return
  fi
  echo "build-cilium: building ${name} (${pkg}) ${CILIUM_VERSION}" >&2
  (cd "$src" && nice -n 19 go build -trimpath -tags osusergo -ldflags "$ldflags" -o "${dest}/${name}.tmp" "$pkg")
  mv "${dest}/${name}.tmp" "${dest}/${name}"
}
build cilium-cni ./plugins/cilium-cni
build cilium-dbg ./cilium-dbg
build cilium-agent ./daemon

# bpf/ as `make install-bpf` installs it (Makefile.defs BPF_SRCFILES_IGNORE).
rm -rf "${dest}/bpf.tmp"
cp -a "${src}/bpf" "${dest}/bpf.tmp"
rm -rf "${dest}/bpf.tmp/tests" "${dest}/bpf.tmp/complexity-tests" "${dest}/bpf.tmp/custom" \
  "${dest}/bpf.tmp/Makefile" "${dest}/bpf.tmp/Makefile.bpf" "${dest}/bpf.tmp/.gitignore"
chmod -R u+w,go+rX "${dest}/bpf.tmp"
rm -rf "${dest}/bpf" && mv "${dest}/bpf.tmp" "${dest}/bpf"
[ -f "${dest}/bpf/bpf_lxc.c" ] || { echo "build-cilium: bpf/bpf_lxc.c missing after copy" >&2; exit 1; }

# CRDs the operator would register.
rm -rf "${dest}/crds" && mkdir -p "${dest}/crds"
cp "${src}"/pkg/k8s/apis/cilium.io/client/crds/v2/*.yaml "${src}"/pkg/k8s/apis/cilium.io/client/crds/v2alpha1/*.yaml "${dest}/crds/"
ls "${dest}/crds/ciliumnodes.yaml" "${dest}/crds/ciliumendpoints.yaml" >/dev/null

"${dest}/cilium-agent" --version >/dev/null 2>&1 || "${dest}/cilium-dbg" version --client >/dev/null 2>&1 || true
echo "cilium ${CILIUM_VERSION} built $(date -u +%FT%TZ) in $(( $(date +%s) - started ))s" >"${dest}/.complete"
link_all
echo "build-cilium: $(cat "${dest}/.complete")" >&2
