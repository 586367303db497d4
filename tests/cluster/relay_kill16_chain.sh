# SPDX-License-Identifier: MIT
# relay_kill16.sh in the chain rdmcp chooses for 32 MiB to 16 hosts: the
# head of the chain (host 2, rank 1) killed mid-transfer cuts every host
# after it off; the same bounds and the same truth of the report.
FAULT_ALG=chain
# shellcheck source=relay_kill16.sh
. "$(dirname "$0")/relay_kill16.sh"
