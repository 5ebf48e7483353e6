#!/usr/bin/env bash
# e2e.sh: the end-to-end tests, in two runs of `go test`, for
# `make test-e2e` (under with-runtime.sh and with-registry.sh):
#
#  1. every test but TestCluster*, which need only containerd and the
#     registry;
#  2. the TestCluster* tests, under with-controlplane.sh.
#
# Why two: on a fresh machine the control plane (etcd, kube-apiserver,
# scheduler, controller-manager, kubectl, built from source by
# `make prebuild` in the background) is the last build to finish. One run
# under with-controlplane.sh waited for it before its first test; now the
# runtime's tests run while it builds. On a warm machine the split costs
# one more start of the test binary.
#
# A test that needs the control plane must be named TestCluster*: in the
# first run needControlPlane fails it (PODLINE_E2E_PHASE=runtime) instead
# of skipping it, so none can fall between the two runs unseen.
#
# Both runs always run; the script fails if either did. Extra arguments
# go to both `go test` calls.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

go=${GO:-go}
cd "$PODLINE_SCRIPTS/.."
rc=0
PODLINE_E2E_PHASE=runtime "$go" test -tags e2e -count=1 -timeout 20m -v -skip '^TestCluster' "$@" ./e2e/ || rc=1
"$PODLINE_SCRIPTS"/with-controlplane.sh "$go" test -tags e2e -count=1 -timeout 20m -v -run '^TestCluster' "$@" ./e2e/ || rc=1
exit "$rc"
