#!/usr/bin/env bash
# Builds netperf and netserver (the TCP_RR/TCP_CRR reference tools; Debian does
# not package netperf) from upstream at the commit the Dockerfile pins, into a
# cache outside the repository, and links both into PATH. netperf's code and
# binaries never enter the repository.
#
# Optional: scripts/setup.sh installs Debian's netperf package instead
# (scripts/install-netperf.sh); this builds the same release from source. The
# agent uses netperf for TCP_RR and TCP_CRR where it is installed (the image
# has it) and falls back to sockperf/fortio and the built-in tcp-rr otherwise;
# the lab benchmark `npm run bench:fallback` needs it to validate the TCP_CRR
# fallback. Safe to run again (a warm run builds nothing); run as root (for
# /usr/local/bin and the default cache folder).
#
#   CNI_BENCH_NETPERF_GIT  a local git directory (bare or not) holding the pinned
#                          commit; default /work/.mirror/HewlettPackard+netperf
#                          (or its repo/ folder) when it exists, else GitHub
#   CNI_BENCH_TOOLS_DIR    cache folder (default /var/cache/cni-bench/tools)
#   CNI_BENCH_BIN_DIR      where the PATH links go (default /usr/local/bin)
#
# Exits non-zero, saying so, when neither the local git directory nor GitHub
# has the commit.
set -euo pipefail

# netperf-2.7.0 (tag "netperf-2.7.0"), fetched by commit so a moved tag cannot
# change what is built. Keep in step with NETPERF_COMMIT in the Dockerfile.
NETPERF_COMMIT=f46c0319851d85e135e46289fa484b01705af73e
NETPERF_VERSION=2.7.0
NETPERF_URL=https://github.com/HewlettPackard/netperf.git
# gcc >= 10: -fcommon (2.7.0 defines the same globals in several files) and
# -fgnu89-inline (its --enable-demo helpers are plain `inline`, which C99 emits
# no symbol for, so netperf fails to link without it).
NETPERF_CFLAGS="-O2 -fcommon -fgnu89-inline"

tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
bin_dir="${CNI_BENCH_BIN_DIR:-/usr/local/bin}"
dest="${tools_dir}/netperf-${NETPERF_VERSION}"

say() { echo "build-netperf: $*" >&2; }
die() { say "$*"; exit 1; }

for tool in git gcc make tar; do
  command -v "$tool" >/dev/null || die "'${tool}' is not on PATH (apt-get install git gcc make libc6-dev tar)"
done

built() {
  [ -x "${dest}/bin/netperf" ] && [ -x "${dest}/bin/netserver" ] \
    && "${dest}/bin/netperf" -V 2>/dev/null | grep -qx "Netperf version ${NETPERF_VERSION}"
}

# Prints the first git directory that holds the pinned commit: the one asked
# for, else the default mirror (the folder itself or its repo/ folder).
local_git_dir() {
  local candidates=()
  if [ -n "${CNI_BENCH_NETPERF_GIT:-}" ]; then
    candidates=("$CNI_BENCH_NETPERF_GIT" "${CNI_BENCH_NETPERF_GIT}/repo")
  else
    candidates=(/work/.mirror/HewlettPackard+netperf /work/.mirror/HewlettPackard+netperf/repo)
  fi
  local d
  for d in "${candidates[@]}"; do
    if [ -d "$d" ] && git --git-dir="$d" cat-file -e "${NETPERF_COMMIT}^{commit}" 2>/dev/null; then
      echo "$d"
      return 0
    fi
    [ -d "$d/.git" ] && git --git-dir="$d/.git" cat-file -e "${NETPERF_COMMIT}^{commit}" 2>/dev/null && { echo "$d/.git"; return 0; }
  done
  return 1
}

# Writes the pinned commit's tree into $1: `git archive`, not a checkout, so
# every file gets the commit's time and make never reruns autoconf/automake.
export_source() {
  local into="$1" gitdir
  if gitdir="$(local_git_dir)"; then
    say "source: ${gitdir} at ${NETPERF_COMMIT}"
  else
    [ -n "${CNI_BENCH_NETPERF_GIT:-}" ] && say "CNI_BENCH_NETPERF_GIT=${CNI_BENCH_NETPERF_GIT} has no commit ${NETPERF_COMMIT}; trying ${NETPERF_URL}"
    gitdir="${into}.git"
    git init -q --bare "$gitdir"
    if ! timeout 120 git --git-dir="$gitdir" fetch -q --depth 1 "$NETPERF_URL" "$NETPERF_COMMIT"; then
      die "cannot get netperf ${NETPERF_VERSION} (commit ${NETPERF_COMMIT}): no local git directory has it (set CNI_BENCH_NETPERF_GIT) and ${NETPERF_URL} is unreachable. netperf is optional: without it TCP_RR/TCP_CRR use sockperf, fortio or the built-in tcp-rr."
    fi
    say "source: ${NETPERF_URL} at ${NETPERF_COMMIT}"
  fi
  mkdir -p "$into"
  git --git-dir="$gitdir" archive --format=tar "$NETPERF_COMMIT" | tar -x -C "$into"
}

if built; then
  say "netperf ${NETPERF_VERSION} already built"
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/cnib-netperf.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  export_source "${work}/src"
  rm -rf "$dest"
  say "building netperf ${NETPERF_VERSION} into ${dest}"
  (
    cd "${work}/src"
    ./configure --enable-demo --prefix="$dest" CFLAGS="$NETPERF_CFLAGS" >"${work}/configure.log" 2>&1 \
      || { tail -n 30 "${work}/configure.log" >&2; exit 1; }
    make -j"$(nproc)" >"${work}/make.log" 2>&1 || { tail -n 30 "${work}/make.log" >&2; exit 1; }
    make install >>"${work}/make.log" 2>&1 || { tail -n 30 "${work}/make.log" >&2; exit 1; }
  ) || { rm -rf "$dest"; die "netperf build failed (log above)"; }
  built || { rm -rf "$dest"; die "the build left no working ${dest}/bin/netperf reporting ${NETPERF_VERSION}"; }
fi

mkdir -p "${tools_dir}/bin" "$bin_dir"
for name in netperf netserver; do
  ln -sfn "${dest}/bin/${name}" "${tools_dir}/bin/${name}"
  ln -sfn "${dest}/bin/${name}" "${bin_dir}/${name}"
done
echo "netperf ${NETPERF_VERSION}: ${dest}/bin/{netperf,netserver} (linked from ${tools_dir}/bin and ${bin_dir})"
