#!/usr/bin/env bash
# Builds the real NetworkPolicy enforcers the iptables and nftables labs can
# run (lab/policy/), pinned, from the Go module proxy into a cache outside the
# repository keyed by version; a warm re-run builds nothing:
#
#   kube-network-policies  SIG Network's sigs.k8s.io/kube-network-policies: an
#       nftables rule in each node sends the first packet of every new
#       connection to an nfqueue, where it accepts or drops it by the policies
#       it reads from the apiserver. Its rule uses nftables' `queue` statement,
#       which needs the kernel's CONFIG_NFT_QUEUE; the lab detects a kernel
#       without it (lab/policy/enforcer-support.ts) and says so.
#   kube-router            kube-router's network policy controller (run with
#       --run-firewall only): iptables filter chains and ipsets per policy,
#       which needs iptables, ipset and the kernel's xt_set.
#
# Each lands in <tools_dir>/<name>-<version>/ with a marker .complete written
# last (with the build's wall time); <tools_dir>/bin/<name> links to it. Builds
# run under `nice -n 10`.
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
set -euo pipefail

KNP_VERSION=v0.8.0
KUBE_ROUTER_VERSION=v2.1.0

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
export GOMODCACHE="${tools_dir}/go/mod" GOCACHE="${tools_dir}/go/build"
export GOFLAGS="-modcacherw -buildvcs=false -mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off

# build <name> <module> <version> <main package inside the module>
build() {
  local name="$1" module="$2" version="$3" pkg="$4"
  local dest="${tools_dir}/${name}-${version}"
  mkdir -p "${tools_dir}/bin"
  if [ -f "${dest}/.complete" ] && [ -x "${dest}/${name}" ]; then
    echo "build-kube-network-policies: ${name} ${version} already built ($(cat "${dest}/.complete"))" >&2
  else
    command -v go >/dev/null || { echo "build-kube-network-policies: 'go' is not on PATH" >&2; exit 1; }
    local started work src
    started=$(date +%s)
    mkdir -p "$dest"
    rm -f "${dest}/.complete"
    work=$(mktemp -d)
    (cd "$work" && go mod init cni-bench-build >/dev/null 2>&1 && go mod download -json "${module}@${version}" >/dev/null)
    rm -rf "$work"
    src="${GOMODCACHE}/${module}@${version}"
    [ -d "$src" ] || { echo "build-kube-network-policies: module source not at ${src}" >&2; exit 1; }
    (cd "$src" && nice -n 10 go build -trimpath -ldflags '-s -w' -o "${dest}/${name}" "$pkg")
    [ -x "${dest}/${name}" ] || { echo "build-kube-network-policies: no ${name} binary" >&2; exit 1; }
    echo "built in $(($(date +%s) - started)) s on $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"${dest}/.complete"
    echo "build-kube-network-policies: ${name} $(cat "${dest}/.complete")" >&2
  fi
  ln -sfn "${dest}/${name}" "${tools_dir}/bin/${name}"
  echo "${name} ${version}: ${dest}/${name}"
}

# Which to build: the names given (default both). setup.sh --test builds only
# kube-router, the one the lab runs: kube-network-policies needs the kernel's
# CONFIG_NFT_QUEUE, which this project's reference machine lacks (docs/conditions.md).
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(kube-router kube-network-policies)
for name in "${wanted[@]}"; do
  case "$name" in
    # The module's main package is ./cmd (its Dockerfile builds `go build ./cmd`).
    kube-network-policies) build kube-network-policies sigs.k8s.io/kube-network-policies "$KNP_VERSION" ./cmd ;;
    kube-router) build kube-router github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION" ./cmd/kube-router ;;
    *) echo "build-kube-network-policies: unknown enforcer '${name}' (known: kube-router, kube-network-policies)" >&2; exit 2 ;;
  esac
done
