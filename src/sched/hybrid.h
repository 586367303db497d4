/* SPDX-License-Identifier: MIT */
/*
 * hybrid - the binomial pipeline across racks, as one member's table of
 * transfers (used by schedule.c; pure).
 *
 * Ranks are numbered rack by rack: rack 0 holds ranks 0 (the sender) ..
 * sizes[0] - 1, rack 1 the next sizes[1], and so on.  Inside each rack the
 * binomial pipeline runs with the rack's first rank as its root.  The root
 * of rack r + 1 (its leader) is fed by rack r: at each step, one member of
 * rack r that sends nothing in its own pipeline at that step (a binomial
 * pipeline of n members leaves one send per step unused) sends the leader
 * the lowest block it lacks and that member holds.  Rack r + 1's pipeline
 * starts late enough that its leader always holds the block it must send
 * on.  Every block crosses each rack boundary once, every member sends and
 * receives at most one block per step, and no leader sends twice.
 */
#ifndef RDMCP_HYBRID_H
#define RDMCP_HYBRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hy_xfer {
	uint64_t step;
	uint64_t block;
	uint32_t peer;
};

/* A peer of the member, and the last step it sends to (receives from)
 * it, if it does. */
struct hy_peer {
	uint32_t rank;
	bool sends, recvs;
	uint64_t last_send, last_recv;
};

/* One member's transfers, each list in step order, and its peers in
 * ascending rank order. */
struct hy_table {
	struct hy_xfer *send, *recv;
	size_t nsend, nrecv;
	struct hy_peer *peers;
	size_t npeers;
	uint64_t steps;		/* of the whole group */
};

/* Build the table of member `rank` for k blocks over racks of the given
 * sizes (nracks >= 1, each >= 1, summing to the group's size).  Returns 0,
 * -EINVAL (bad sizes or rank) or -ENOMEM.  Simulates the racks up to the
 * one after the member's: time and memory grow as k times their members
 * (a daemon bounds k, serve.h). */
int hy_build(const uint32_t *sizes, size_t nracks, uint32_t rank, uint64_t k,
	     struct hy_table *out);

/* The peer `rank` of the table, or NULL: O(log peers). */
const struct hy_peer *hy_peer_of(const struct hy_table *t, uint32_t rank);

/* Release what hy_build allocated; a zeroed table is a no-op. */
void hy_free(struct hy_table *t);

#endif
