# One image, two entrypoints (cni-bench-agent, cni-bench-collector), on Node 24
# like the tests. Build: docker build -t cni-bench .
# The agent runs as root in its DaemonSet (runAsUser: 0 in its securityContext:
# it needs NET_ADMIN/NET_RAW and nsenter into the host network namespace); the
# collector runs as the image's non-root user, node (uid 1000).
# Every binary `cni-bench doctor` checks (the tool catalogue, core/tool-catalogue/)
# comes from this file; test/unit/dockerfile.test.ts holds it to that (through
# dpkg) and lints it with hadolint, and test/unit/core/tool-catalogue.test.ts holds
# the apt list and the build stages to the catalogue. No HEALTHCHECK: Kubernetes ignores it, the manifests
# probe /healthz instead.

# fortio is not packaged by Debian: built from the Go module proxy at the
# version scripts/build-go-tools.sh pins (keep the two in step).
FROM golang:1.26-bookworm AS fortio
ARG FORTIO_VERSION=v1.68.2
RUN CGO_ENABLED=0 GOBIN=/out go install "fortio.org/fortio@${FORTIO_VERSION}"

# netperf is not in Debian bookworm's main archive but is in its non-free one
# (2.7.0, the version the agent's driver was checked against). This stage turns
# on non-free for itself alone and unpacks that one package, signed by Debian's
# archive keys like every other; the final stage copies the two binaries and
# the licence, and its own apt sources stay main only. (It used to build the
# netperf-2.7.0 tag from GitHub: no build can reach GitHub from where the
# image is built, only the package registries.)
FROM debian:bookworm-slim AS netperf
ARG NETPERF_VERSION=2.7.0-0.1
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /tmp/netperf
RUN sed -i -E 's/^(Components:.*)$/\1 non-free/' /etc/apt/sources.list.d/debian.sources \
 && chown _apt . \
 && apt-get update \
 && apt-get download "netperf=${NETPERF_VERSION}" \
 && dpkg-deb -x "netperf_${NETPERF_VERSION}_$(dpkg --print-architecture).deb" /out \
 && /out/usr/bin/netperf -V | grep -qx 'Netperf version 2.7.0' \
 && rm -rf /var/lib/apt/lists/*

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
#   iputils-ping          ping -M do: the path-MTU probes after each client job
#   bpftool               BPF map totals (Cilium)
#   procps util-linux     sysctl and ps; nsenter into the host network namespace
# Versions come from the bookworm release the base tag pins; exact apt pins
# break at every Debian point release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      iperf3 wrk sockperf \
      iptables nftables conntrack iproute2 iputils-ping bpftool \
      procps util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/cni-bench
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY assets ./assets
# The .proto files gen/ is generated from: the collector serves them over gRPC reflection.
COPY proto ./proto
COPY --from=fortio /out/fortio /usr/local/bin/fortio
COPY --from=netperf /out/usr/bin/netperf /out/usr/bin/netserver /usr/local/bin/
COPY --from=netperf /out/usr/share/doc/netperf/copyright /usr/share/doc/netperf/copyright
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
