#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-deps.sh [--missing] [build|all] - install what building (build)
# or building and testing (all, the default) rdmcp needs on Debian 12
# (bookworm).  Run as root.  Does nothing when every package is already
# installed, so it is safe to run again.  With --missing it installs
# nothing and prints the packages that are missing, one per line.
# 'make demo' and 'make check' run it when something is missing
# (scripts/deps.sh).
#
#   build:  gcc, make (build-essential), pkg-config, libuv1-dev, zlib1g-dev,
#           nettle-dev (HMAC-SHA-256 for authentication), libxxhash-dev
#           (XXH3-128: the block digests of resume and delta)
#   RDMA:   libibverbs-dev, librdmacm-dev (the verbs transport, next)
#   tests:  check (unit tests), iproute2 (ip, tc: cluster tests and
#           benchmarks on network namespaces), procps, mandoc and groff-base (man page lint and rendering),
#           jq (checks the --json output), clang (libFuzzer: make fuzz),
#           zsh (runs the zsh completion), shellcheck (lints the example
#           scripts), systemd (systemd-analyze verifies the unit),
#           valgrind (make check-valgrind), gnuplot-nox (the plots of
#           make bench: bench/plot.sh), xxhash (xxhsum, for
#           make bench-delta-host), xfsprogs (mkfs.xfs: make
#           bench-delta BENCH_DELTA_FS=xfs),
#           openssh-server and openssh-client (tests/cluster/rsh.sh runs sshd
#           on the emulated hosts for --rsh), slurmctld, slurmd,
#           slurm-client and munge (scripts/slurm-cluster.sh: make
#           check-slurm, make bench-slurm; their services are not used),
#           and QEMU with what scripts/rxe-vm.sh builds the Soft-RoCE VM from
set -euo pipefail

list_only=0
if [ "${1:-}" = --missing ]; then
	list_only=1
	shift
fi
level=${1:-all}
case $level in
build | all) ;;
*) echo "usage: install-deps.sh [--missing] [build|all]" >&2; exit 2 ;;
esac

BUILD_PACKAGES=(
	build-essential
	pkg-config
	libuv1-dev
	zlib1g-dev
	nettle-dev
	libxxhash-dev
	libibverbs-dev
	librdmacm-dev
)
PACKAGES=(
	"${BUILD_PACKAGES[@]}"
	check
	iproute2
	# a rule that drops the sender's pure ACKs (tests/cluster/held_block_time.sh)
	nftables
	mandoc
	groff-base
	procps
	jq
	clang
	zsh
	shellcheck
	systemd
	valgrind
	# the bench plots (bench/plot.sh; make bench draws one)
	gnuplot-nox
	# xxhsum: the digest time make bench-delta-host measures beside rdmcp
	xxhash
	# mkfs.xfs: make bench-delta's hosts on xfs with reflinks (BENCH_DELTA_FS)
	xfsprogs
	# --rsh over real ssh (tests/cluster/rsh.sh)
	openssh-server
	openssh-client
	# a real Slurm on the emulated hosts (scripts/slurm-cluster.sh): the
	# daemons run from there with a configuration of their own
	slurmctld
	slurmd
	slurm-client
	munge
	# the Soft-RoCE VM of make check-rdma (scripts/rxe-vm.sh)
	qemu-system-x86
	busybox-static
	cpio
	kmod
	xz-utils
	zstd
	ibverbs-providers
	ibverbs-utils
	rdmacm-utils
	perftest
	util-linux
)

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = installed ]
}

[ "$level" = all ] || PACKAGES=("${BUILD_PACKAGES[@]}")
missing=()
for pkg in "${PACKAGES[@]}"; do
	installed "$pkg" || missing+=("$pkg")
done

if [ "$list_only" -eq 1 ]; then
	[ ${#missing[@]} -eq 0 ] || printf '%s\n' "${missing[@]}"
	exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing: ${missing[*]}" >&2
	echo "install-deps: run as root (sudo $0)" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
