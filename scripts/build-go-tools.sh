#!/usr/bin/env bash
# Builds the Go load generators Debian does not package (fortio, the HTTP and
# TCP load generator the reference study used) from the Go module proxy at a
# pinned version, into a cache outside the repository so a warm re-run does
# nothing. The agent looks tools up on PATH, so the binary is also linked into
# /usr/local/bin. Safe to run again; run as root (for /usr/local/bin and the
# default cache folder).
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
#   CNI_BENCH_BIN_DIR    where the PATH link goes (default /usr/local/bin)
set -euo pipefail

# Pinned to the newest release that builds from the module proxy alone. The
# proxy lists up to v1.75.3, but every release from v1.69.0 on imports
# grol.io/grol (fortio's scripting engine, linked into the main binary), and the
# proxy answers 403 for every grol.io/grol version, so those cannot be built.
FORTIO_VERSION=v1.68.2
# grpcurl: only with --test (the REST/gRPC contract suite calls the collector's
# reflection service with it).
GRPCURL_VERSION=v1.9.4
with_test_tools=false
for arg in "$@"; do
  case "$arg" in
    --test) with_test_tools=true ;;
    *) echo "build-go-tools: unknown option '${arg}' (known: --test)" >&2; exit 2 ;;
  esac
done

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
bin_dir="${CNI_BENCH_BIN_DIR:-/usr/local/bin}"

command -v go >/dev/null || { echo "build-go-tools: 'go' is not on PATH" >&2; exit 1; }

# Builds module@version's main package into <tools_dir>/<name>-<version>/ unless
# that binary is already there; then points <tools_dir>/bin/<name> and
# <bin_dir>/<name> at it.
install_go_tool() {
  local name="$1" module="$2" version="$3"
  local dest="${tools_dir}/${name}-${version}"
  local binary="${dest}/${name}"
  if [ -x "$binary" ]; then
    echo "build-go-tools: ${name} ${version} already built" >&2
  else
    echo "build-go-tools: building ${module}@${version}" >&2
    mkdir -p "$dest"
    # Module and build caches live in the tools cache, not in $HOME, so a warm
    # re-run (or a rebuild after deleting only the binary) downloads nothing.
    GOBIN="$dest" \
      GOMODCACHE="${tools_dir}/go/mod" \
      GOCACHE="${tools_dir}/go/build" \
      GOFLAGS="-modcacherw -buildvcs=false" \
      GOTOOLCHAIN=local \
      CGO_ENABLED=0 \
      go install "${module}@${version}"
    [ -x "$binary" ] || { echo "build-go-tools: go install left no ${binary}" >&2; exit 1; }
  fi
  mkdir -p "${tools_dir}/bin" "$bin_dir"
  ln -sfn "$binary" "${tools_dir}/bin/${name}"
  ln -sfn "$binary" "${bin_dir}/${name}"
  echo "${name} ${version}: ${binary} (linked from ${tools_dir}/bin/${name} and ${bin_dir}/${name})"
}

install_go_tool fortio fortio.org/fortio "$FORTIO_VERSION"
if "$with_test_tools"; then install_go_tool grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"; fi
