#!/usr/bin/env bash
# Builds the real Kubernetes parts the Kubernetes-facing tests run against, with
# Go from the module proxy, at pinned versions, into a cache outside the
# repository keyed by version (a warm re-run builds nothing):
#
#   etcd                  go.etcd.io/etcd/server/v3
#   kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy
#                         k8s.io/kubernetes (its staging modules taken from the proxy)
#   kwok                  sigs.k8s.io/kwok (fake nodes; runs pods in name)
#   helm                  helm.sh/helm/v4
#   promtool              github.com/prometheus/prometheus
#
# Binaries land in <tools_dir>/<name>-<version>/ and are linked from
# <tools_dir>/bin/<name>; nothing goes into the repository. Test support only:
# the product does not ship these. Run as root (default cache folder).
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
#   CNI_BENCH_CP_TOOLS   space-separated subset to build (default: all)
set -euo pipefail

KUBERNETES_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
KWOK_VERSION=v0.8.0
HELM_VERSION=v4.3.2
PROMETHEUS_VERSION=v0.316.0

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
wanted="${CNI_BENCH_CP_TOOLS:-etcd kubernetes kwok helm promtool}"

command -v go >/dev/null || { echo "build-control-plane: 'go' is not on PATH" >&2; exit 1; }

export GOMODCACHE="${tools_dir}/go/mod" GOCACHE="${tools_dir}/go/build"
export GOFLAGS="-modcacherw -buildvcs=false -mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off

link() {
  mkdir -p "${tools_dir}/bin"
  ln -sfn "$2" "${tools_dir}/bin/$1"
  echo "$1: $2"
}

# Prepares <tools_dir>/src/<key>/, a throwaway module that requires module@version,
# so packages with replace directives in their own go.mod (which `go install
# m@v` refuses) build against the published versions of what they replace.
# Extra go.mod lines come on stdin.
wrapper() {
  local key="$1" module="$2" version="$3" dir="${tools_dir}/src/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  {
    echo "module cni-bench.local/tools/${key}"
    echo
    echo "go $(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')"
    echo
    echo "require ${module} ${version}"
    cat
  } >"${dir}/go.mod"
  echo "$dir"
}

built() { [ -x "$1" ] && echo "build-control-plane: $(basename "$1") already built" >&2; }

# Builds <tools_dir>/<name>-<version>/<name> from package $4 of module $3 at $version, with go build -ldflags $5,
# unless it is built already, and links it.
build_binary() {
  local name="$1" version="$2" module="$3" pkg="$4" ldflags="$5" dest="${tools_dir}/$1-$2"
  if ! built "${dest}/${name}"; then
    echo "build-control-plane: building ${name} ${version}" >&2
    local dir; dir="$(wrapper "${name}-${version}" "$module" "$version" </dev/null)"
    (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "${dest}/${name}" "$pkg")
  fi
  link "$name" "${dest}/${name}"
}

build_etcd() {
  build_binary etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3 ""
}

build_kubernetes() {
  local dest="${tools_dir}/kubernetes-${KUBERNETES_VERSION}"
  local components=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
  local missing=()
  for c in "${components[@]}"; do built "${dest}/${c}" || missing+=("$c"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "build-control-plane: building ${missing[*]} ${KUBERNETES_VERSION}" >&2
    # k8s.io/kubernetes replaces its staging modules (k8s.io/api, client-go, ...)
    # with ./staging paths; the proxy serves each of them as k8s.io/<name> v0.<minor>.<patch>.
    local staging_version="v0.${KUBERNETES_VERSION#v1.}"
    local gomod; gomod="$(go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" | sed -nE 's/^\s*"GoMod": "(.*)",?$/\1/p')"
    [ -f "$gomod" ] || { echo "build-control-plane: no go.mod downloaded for k8s.io/kubernetes@${KUBERNETES_VERSION}" >&2; exit 1; }
    local dir; dir="$(sed -nE 's#^\s*(k8s\.io/[a-z0-9-]+) => \./staging/src/.*#replace \1 => \1 '"$staging_version"'#p' "$gomod" |
      wrapper "kubernetes-${KUBERNETES_VERSION}" k8s.io/kubernetes "$KUBERNETES_VERSION")"
    grep -q '^replace k8s.io/client-go ' "${dir}/go.mod" || { echo "build-control-plane: found no staging replaces in ${gomod}" >&2; exit 1; }
    local minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
    local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
    for c in "${missing[@]}"; do
      (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "${dest}/${c}" "k8s.io/kubernetes/cmd/${c}")
    done
  fi
  for c in "${components[@]}"; do link "$c" "${dest}/${c}"; done
}

build_kwok() {
  local dest="${tools_dir}/kwok-${KWOK_VERSION}"
  build_binary kwok "$KWOK_VERSION" sigs.k8s.io/kwok sigs.k8s.io/kwok/cmd/kwok "-s -w"
  # kwok acts only through Stage definitions; its default ones ship in the same
  # module version (nodes turn Ready and heartbeat, pods get an IP and run).
  # The harness passes them with --config; they stay in the cache.
  if [ ! -f "${dest}/stages/pod-ready.yaml" ]; then
    local src="${GOMODCACHE}/sigs.k8s.io/kwok@${KWOK_VERSION}/kustomize/stage"
    [ -d "$src" ] || (cd "${tools_dir}/src/kwok-${KWOK_VERSION}" && go mod download sigs.k8s.io/kwok)
    mkdir -p "${dest}/stages"
    cp "${src}/node/fast/node-initialize.yaml" "${src}/node/heartbeat/node-heartbeat.yaml" \
      "${src}/pod/fast/pod-ready.yaml" "${src}/pod/fast/pod-complete.yaml" "${src}/pod/fast/pod-delete.yaml" "${dest}/stages/"
  fi
}

build_helm() {
  build_binary helm "$HELM_VERSION" helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm \
    "-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}"
}

build_promtool() {
  build_binary promtool "$PROMETHEUS_VERSION" github.com/prometheus/prometheus \
    github.com/prometheus/prometheus/cmd/promtool "-s -w"
}

for tool in $wanted; do
  case "$tool" in
    etcd) build_etcd ;;
    kubernetes) build_kubernetes ;;
    kwok) build_kwok ;;
    helm) build_helm ;;
    promtool) build_promtool ;;
    *) echo "build-control-plane: unknown tool '${tool}' in CNI_BENCH_CP_TOOLS (known: etcd kubernetes kwok helm promtool)" >&2; exit 2 ;;
  esac
done
