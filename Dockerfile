# One image, two entrypoints (cni-bench-agent, cni-bench-collector), on Node 24
# like the tests. Build: docker build -t cni-bench .
# The agent runs as root in its DaemonSet (it needs NET_ADMIN/NET_RAW and
# nsenter into the host network namespace); the collector runs as the image's
# non-root user.

# fortio is not packaged by Debian: built from the Go module proxy at the
# version scripts/build-go-tools.sh pins (keep the two in step).
FROM golang:1.26-bookworm AS fortio
ARG FORTIO_VERSION=v1.68.2
RUN CGO_ENABLED=0 GOBIN=/out go install "fortio.org/fortio@${FORTIO_VERSION}"

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY gen ./gen
COPY core ./core
COPY agent ./agent
COPY collector ./collector
COPY lab ./lab
COPY cli ./cli
RUN node_modules/.bin/tsc -p tsconfig.build.json \
 && npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM node:24-bookworm-slim
# Tools the agent drives and the dataplane readers it samples with.
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
RUN ln -s /opt/cni-bench/dist/agent/main.js /usr/local/bin/cni-bench-agent \
 && ln -s /opt/cni-bench/dist/collector/main.js /usr/local/bin/cni-bench-collector \
 && ln -s /opt/cni-bench/dist/cli/main.js /usr/local/bin/cni-bench \
 && chmod +x dist/agent/main.js dist/collector/main.js dist/cli/main.js
USER node
EXPOSE 7070 8080
ENTRYPOINT ["node", "--enable-source-maps"]
CMD ["/opt/cni-bench/dist/collector/main.js"]
