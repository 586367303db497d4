# SPDX-License-Identifier: MIT
# Helpers for the RDMA tests, which run inside the Soft-RoCE VM
# (scripts/rxe-vm.sh, make check-rdma): host I has device rxe(I-1) on
# 198.18.0.I; host 1 sends, daemons run on hosts 2.., as in tests/lib.sh
# whose helpers apply with these addresses.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

host_addr() {
	echo "198.18.0.$(($1 + 1))"
}

SENDER=(--bind 198.18.0.1)

# need_rxe N: skip unless N rxe devices are up (i.e. we are in the VM).
need_rxe() {
	local have
	have=$(rdma link 2>/dev/null | grep -c 'state ACTIVE' || true)
	if [ "${RXE_VM:-}" != 1 ] || [ "$have" -lt "$1" ]; then
		echo "  $TEST_NAME: skipped: needs $1 Soft-RoCE devices (make check-rdma)"
		exit 77
	fi
}

# push ARGS...: the sender, bound to host 1's device.
push() {
	"$RDMCP" -v "${SENDER[@]}" "$@"
}
