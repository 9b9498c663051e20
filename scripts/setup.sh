#!/usr/bin/env bash
# Installs everything cni-bench needs on a fresh Debian machine (run as root):
# the measurement and dataplane tools from Debian, Node 24 and the project's
# packages from npm, then builds. Safe to run again.
#
#   --test   also what the test suite needs beyond the lab: the real Kubernetes
#            control plane, kube-proxy, kwok, helm and promtool built with Go
#            (scripts/build-control-plane.sh; cold about 25 min on 2 cores, warm
#            seconds), hadolint for the Dockerfile, real Cilium v1.20.2
#            (scripts/build-cilium.sh; the lab's `--dataplane cilium|cilium-vxlan`
#            and the Cilium suites use it), the lab's NetworkPolicy enforcer
#            (scripts/build-kube-network-policies.sh kube-router: kube-router
#            v2.1.0's policy controller), and for the image suite
#            (test/integration/image.test.ts) buildah and debootstrap (to build the
#            Dockerfile without a daemon or registry) and cdxgen (its SBOM), and
#            Debian's chromium (the HTML reports are loaded in it headless:
#            test/integration/html-reports-chromium.test.ts), and ping (the
#            path-MTU probes: test/integration/lab-pmtu.test.ts).
#   --cilium also real Cilium (scripts/build-cilium.sh) without the other test
#            tools; the Cilium lab also needs the control plane, so this builds
#            etcd, kube-apiserver and kube-controller-manager too.
set -euo pipefail
cd "$(dirname "$0")/.."
with_test_tools=false
with_cilium=false
for arg in "$@"; do
  case "$arg" in
    --test) with_test_tools=true; with_cilium=true ;;
    --cilium) with_cilium=true ;;
    *) echo "setup: unknown option '${arg}' (known: --test, --cilium)" >&2; exit 2 ;;
  esac
done

# The tool catalogue's Debian packages (core/tool-catalogue/; test/unit/core/tool-catalogue.test.ts fails
# when they part), plus git and openssl for the builds and the tests' certificates.
packages=(iperf3 wrk sockperf iptables nftables conntrack iproute2 bpftool iputils-ping procps util-linux git openssl)
# Cilium 1.20 compiles its datapath at run time with clang and LLVM >= 18.1
# (Debian's 19 here) and needs ipset for native routing with masquerading.
if "$with_cilium"; then packages+=(clang-19 llvm-19 ipset); fi
# Installs those of the given Debian packages that are not installed yet (nothing, not even an update, when none).
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
install_missing "${packages[@]}"

# netperf (TCP_RR and TCP_CRR, also through a Service) is in Debian's non-free component only: this
# fetches that one package with the machine's own apt sources plus non-free in a private copy (the
# machine's sources stay as they are), as the Dockerfile's netperf stage does, and links it into PATH.
bash scripts/install-netperf.sh \
  || echo "setup: netperf was not installed: TCP_RR falls back to sockperf, TCP_CRR to the built-in tcp-rr (labelled in reports)" >&2

# fortio (not packaged by Debian) is built with Go from the module proxy into a cache outside the repo.
# Without Go the lab still runs: default measurements that need fortio are skipped and listed in the report.
if command -v go >/dev/null; then
  go_tools_args=()
  if "$with_test_tools"; then go_tools_args=(--test); fi
  bash scripts/build-go-tools.sh "${go_tools_args[@]}"
else
  echo "setup: 'go' is not on PATH: fortio is not built; fortio measurements will be skipped" >&2
fi

if "$with_test_tools"; then
  command -v go >/dev/null || { echo "setup: --test needs 'go' on PATH to build the Kubernetes control plane" >&2; exit 1; }
  bash scripts/build-control-plane.sh
  bash scripts/install-hadolint.sh
  install_missing buildah debootstrap chromium
  bash scripts/image-sbom.sh --install
fi
if "$with_cilium"; then
  command -v go >/dev/null || { echo "setup: --cilium needs 'go' on PATH to build Cilium" >&2; exit 1; }
  "$with_test_tools" || CNI_BENCH_CP_TOOLS="etcd kubernetes" bash scripts/build-control-plane.sh
  bash scripts/build-cilium.sh
fi
# The iptables/nftables labs' NetworkPolicy enforcers (`cni-bench lab --policy-enforcer`, the policy suites):
# kube-router's policy controller, the lab's NetworkPolicy enforcer (needs ipset, installed above with --cilium/--test).
if "$with_test_tools"; then bash scripts/build-kube-network-policies.sh kube-router; fi

# npm 11 blocks dependency install scripts unless allowed; the project runs none it needs.
npm ci --no-audit --no-fund --loglevel=error
# Node 24 comes from the `node` package (node_modules/.bin/node), which npm scripts put first on PATH.
node_modules/.bin/node --version | grep -q '^v24\.' || { echo "setup: node_modules/.bin/node is not Node 24" >&2; exit 1; }
npm run --silent build
