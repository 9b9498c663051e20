#!/usr/bin/env bash
# Puts netperf and netserver 2.7.0 (the TCP_RR/TCP_CRR reference tools) on
# PATH from Debian's own package, the one the Dockerfile's netperf stage takes.
# netperf is in Debian's non-free component only, so this reads the machine's
# own Debian apt sources, adds non-free to a private copy of them (the
# machine's sources and package lists are never changed: its own apt sees
# nothing new), fetches the package's lists and the one .deb into a temporary
# folder, checks it, and unpacks it into the tools cache without installing it
# (the package's maintainer scripts would start a netserver daemon on the
# host). The binaries are linked into PATH. scripts/setup.sh runs this. Safe to
# run again: where netperf 2.7.0 already answers on PATH it does nothing.
#
#   CNI_BENCH_TOOLS_DIR  cache folder (default /var/cache/cni-bench/tools)
#   CNI_BENCH_BIN_DIR    where the PATH links go (default /usr/local/bin)
#
# Exits non-zero, saying so, when the machine has no Debian apt sources or the
# package cannot be fetched (scripts/build-netperf.sh builds it from source
# instead where the source can be reached).
set -euo pipefail

# Keep in step with NETPERF_VERSION in the Dockerfile.
NETPERF_DEB_VERSION=2.7.0-0.1
NETPERF_VERSION=2.7.0

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
bin_dir="${CNI_BENCH_BIN_DIR:-/usr/local/bin}"
dest="${tools_dir}/netperf-${NETPERF_DEB_VERSION}-debian"

say() { echo "install-netperf: $*" >&2; }
die() { say "$*"; exit 1; }

answers() { [ -x "$1" ] && "$1" -V 2>/dev/null | grep -qx "Netperf version ${NETPERF_VERSION}"; }

if answers "${bin_dir}/netperf" && [ -x "${bin_dir}/netserver" ]; then
  say "netperf ${NETPERF_VERSION} already in ${bin_dir}"
  exit 0
fi

if ! answers "${dest}/usr/bin/netperf"; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "${work}/parts" "${work}/lists/partial" "${work}/deb"
  : >"${work}/sources.list"
  # The machine's own Debian sources, with non-free added to their components:
  # deb822 files (Debian 12 and later) and one-line entries alike.
  found=false
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    [ "$(basename "$f")" = debian.sources ] || grep -qE '^Signed-By:.*debian-archive-keyring' "$f" || continue
    sed -E '/^Components:/{/non-free( |$)/!s/$/ non-free/}' "$f" >"${work}/parts/$(basename "$f")"
    found=true
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    grep -E '^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[a-z]+://[^[:space:]]+/debian(-security)?/?[[:space:]]' "$f" \
      | grep -E '[[:space:]]main([[:space:]]|$)' | grep -v 'non-free' \
      | sed -E 's/$/ non-free/' >>"${work}/sources.list" || true
  done
  [ -s "${work}/sources.list" ] && found=true
  "$found" || die "no Debian apt sources found in /etc/apt (netperf is in Debian's non-free component)"

  apt_private=(
    -o "Dir::Etc::SourceList=${work}/sources.list"
    -o "Dir::Etc::SourceParts=${work}/parts"
    -o "Dir::State::Lists=${work}/lists"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
    -o "APT::Sandbox::User=root"
  )
  say "fetching Debian's netperf ${NETPERF_DEB_VERSION} (non-free) with the machine's own apt sources"
  apt-get "${apt_private[@]}" update -qq >/dev/null || die "apt-get update of the private non-free sources failed"
  (cd "${work}/deb" && apt-get "${apt_private[@]}" download -qq "netperf=${NETPERF_DEB_VERSION}") \
    || die "apt-get download netperf=${NETPERF_DEB_VERSION} failed (is non-free reachable from this machine's mirror?)"
  deb="$(ls "${work}/deb"/netperf_*.deb)"
  mkdir -p "$tools_dir"
  rm -rf "${dest}.tmp"
  dpkg-deb -x "$deb" "${dest}.tmp"
  answers "${dest}.tmp/usr/bin/netperf" || die "the unpacked netperf does not answer 'Netperf version ${NETPERF_VERSION}'"
  rm -rf "$dest"
  mv "${dest}.tmp" "$dest"
fi

mkdir -p "$bin_dir"
ln -sfn "${dest}/usr/bin/netperf" "${bin_dir}/netperf"
ln -sfn "${dest}/usr/bin/netserver" "${bin_dir}/netserver"
say "netperf ${NETPERF_VERSION} and netserver linked into ${bin_dir} (from ${dest})"
