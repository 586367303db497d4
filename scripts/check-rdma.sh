#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-rdma.sh - run the RDMA tests (tests/rdma) on real verbs devices:
# a throwaway QEMU VM with Debian's stock kernel and Soft-RoCE
# (scripts/rxe-vm.sh), six rxe devices on 198.18.0.1-6.  Needs root (to
# install QEMU the first time) and ~1 GiB of RAM; the first run downloads
# the kernel package.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP check-rdma: needs root (QEMU packages, the VM's kernel)"
	[ "${RDMCP_REQUIRE_ALL:-0}" = 1 ] && exit 1
	exit 0
fi
cd "$TOP"
export RXE_VM_NDEV=${RXE_VM_NDEV:-6} RXE_VM_SHARE=$TOP
export RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1500} RXE_VM_MEM=${RXE_VM_MEM:-3072}
exec scripts/rxe-vm.sh -- "RDMCP_TEST_TIMEOUT=${RDMCP_TEST_TIMEOUT:-600} \
	RDMCP_REQUIRE_ALL=1 tests/run-integration.sh tests/rdma"
