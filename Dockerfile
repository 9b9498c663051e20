# One image, two entrypoints (cni-bench-agent, cni-bench-collector), on Node 24
# like the tests. Build: docker build -t cni-bench .
# The agent runs as root in its DaemonSet (runAsUser: 0 in its securityContext:
# it needs NET_ADMIN/NET_RAW and nsenter into the host network namespace); the
# collector runs as the image's non-root user, node (uid 1000).
# Every binary `cni-bench doctor` checks (the tool catalogue, core/tool-catalogue/)
# comes from this file; test/unit/dockerfile.test.ts holds it to that (through
# dpkg) and lints it with hadolint, and test/unit/tool-catalogue.test.ts holds
# the apt list and the build stages to the catalogue. No HEALTHCHECK: Kubernetes ignores it, the manifests
# probe /healthz instead.

# fortio is not packaged by Debian: built from the Go module proxy at the
# version scripts/build-go-tools.sh pins (keep the two in step).
FROM golang:1.26-bookworm AS fortio
ARG FORTIO_VERSION=v1.68.2
RUN CGO_ENABLED=0 GOBIN=/out go install "fortio.org/fortio@${FORTIO_VERSION}"

# netperf is not in Debian bookworm's main archive: built from upstream at the
# netperf-2.7.0 tag, fetched by its commit so a moved tag cannot change what is
# built. With gcc 10 and later 2.7.0 needs -fcommon (it defines the same globals
# in several files) and -fgnu89-inline (its --enable-demo helpers are plain
# `inline`, for which C99 emits no symbol, so netperf fails to link).
FROM debian:bookworm-slim AS netperf
ARG NETPERF_COMMIT=f46c0319851d85e135e46289fa484b01705af73e
# Versions come from the bookworm release the base tag pins; exact apt pins
# break at every Debian point release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates gcc git libc6-dev make \
 && rm -rf /var/lib/apt/lists/*
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src/netperf
# git archive, not a checkout: every file gets the commit's time, so make never
# tries to rerun autoconf/automake over the shipped configure.
RUN git init -q /tmp/netperf.git \
 && git -C /tmp/netperf.git fetch -q --depth 1 https://github.com/HewlettPackard/netperf.git "${NETPERF_COMMIT}" \
 && test "$(git -C /tmp/netperf.git rev-parse FETCH_HEAD)" = "${NETPERF_COMMIT}" \
 && git -C /tmp/netperf.git archive --format=tar FETCH_HEAD | tar -x -C /src/netperf \
 && ./configure --enable-demo --prefix=/out CFLAGS="-O2 -fcommon -fgnu89-inline" \
 && make -j"$(nproc)" \
 && make install \
 && /out/bin/netperf -V

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY gen ./gen
COPY core ./core
COPY report ./report
COPY agent ./agent
COPY collector ./collector
COPY lab ./lab
COPY cli ./cli
RUN node_modules/.bin/tsc -p tsconfig.build.json \
 && npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM node:24-bookworm-slim
# The tools the agent drives and the dataplane readers it samples with:
#   iperf3 wrk sockperf   load generators (fortio and netperf come from the stages above)
#   iptables              both backends: iptables-legacy-save and iptables-nft-save
#                         (plain iptables is the nft one, chosen by update-alternatives)
#   nftables conntrack    nft; conntrack -C
#   iproute2              ip (routes, links) and tc
#   bpftool               BPF map totals (Cilium)
#   procps util-linux     sysctl and ps; nsenter into the host network namespace
# Versions come from the bookworm release the base tag pins; exact apt pins
# break at every Debian point release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      iperf3 wrk sockperf \
      iptables nftables conntrack iproute2 bpftool \
      procps util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/cni-bench
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY assets ./assets
COPY --from=fortio /out/fortio /usr/local/bin/fortio
COPY --from=netperf /out/bin/netperf /out/bin/netserver /usr/local/bin/
RUN ln -s /opt/cni-bench/dist/agent/main.js /usr/local/bin/cni-bench-agent \
 && ln -s /opt/cni-bench/dist/collector/main.js /usr/local/bin/cni-bench-collector \
 && ln -s /opt/cni-bench/dist/cli/main.js /usr/local/bin/cni-bench \
 && chmod +x dist/agent/main.js dist/collector/main.js dist/cli/main.js
# node, by uid: runAsNonRoot can only verify a numeric user. The agent's
# DaemonSet overrides it with runAsUser: 0.
USER 1000
EXPOSE 7070 8080
ENTRYPOINT ["node", "--enable-source-maps"]
CMD ["/opt/cni-bench/dist/collector/main.js"]
