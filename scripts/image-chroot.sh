#!/usr/bin/env bash
# Runs a command from an image's root filesystem in this machine's network and
# PID namespaces (as a hostNetwork pod would run), without an OCI runtime:
# `buildah from` + `buildah mount`, then, in a private mount namespace, /proc,
# /sys, /dev and /run bound in and chroot. /run is the host's, so a lab started
# in the image creates its namespaces where `ip netns` and the lab's leftover
# cleanup on the host see them. The image's environment is used (PATH, no host
# variables). The working container, with whatever the command wrote, is
# removed afterwards.
#
#   scripts/image-chroot.sh [--user UID] [--bind HOSTDIR:DIR]... IMAGE CMD [ARG...]
#     --user  run as this uid (and gid), e.g. 1000, the image's USER
#     --bind  a host folder visible in the image at DIR (read-write)
#
# Run as root. The command's exit code is this script's.
set -euo pipefail

if [ "${1:-}" = --inner ]; then
  # In the private mount namespace: mounts here never reach the host's.
  shift
  root="$1" uid="$2" binds="$3"; shift 3
  for d in proc sys dev run; do mount --rbind "/${d}" "${root}/${d}"; done
  if [ -n "$binds" ]; then
    while IFS= read -r b; do
      [ -n "$b" ] || continue
      mkdir -p "${root}${b#*:}"
      mount --bind "${b%%:*}" "${root}${b#*:}"
    done <<<"$binds"
  fi
  home=/root
  [ "$uid" = 0 ] || home=/tmp
  env=(env -i "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "HOME=${home}")
  [ -n "${CNI_BENCH_LOG_LEVEL:-}" ] && env+=("CNI_BENCH_LOG_LEVEL=${CNI_BENCH_LOG_LEVEL}")
  if [ "$uid" = 0 ]; then exec chroot "$root" "${env[@]}" "$@"; fi
  exec chroot --userspec="${uid}:${uid}" --groups="${uid}" "$root" "${env[@]}" "$@"
fi

uid=0
binds=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --user) uid="${2:?--user needs a uid}"; shift 2 ;;
    --bind) b="${2:?--bind needs HOSTDIR:DIR}"; [ -d "${b%%:*}" ] || { echo "image-chroot: no folder ${b%%:*}" >&2; exit 2; }
            binds+="${b}"$'\n'; shift 2 ;;
    --) shift; break ;;
    -*) echo "image-chroot: unknown option '$1' (known: --user UID, --bind HOSTDIR:DIR)" >&2; exit 2 ;;
    *) break ;;
  esac
done
image="${1:?usage: scripts/image-chroot.sh [--user UID] [--bind HOSTDIR:DIR]... IMAGE CMD [ARG...]}"
shift
[ "$#" -gt 0 ] || { echo "image-chroot: no command given" >&2; exit 2; }
ctr="$(buildah from --pull=never "$image")"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
root="$(buildah mount "$ctr")"
set +e
unshare --mount --propagation private -- "$0" --inner "$root" "$uid" "$binds" "$@"
code=$?
set -e
exit "$code"
