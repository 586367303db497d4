/* SPDX-License-Identifier: MIT */
/*
 * schedule - block transfer schedules for one member of a multicast group.
 *
 * Pure logic: no I/O, no allocation beyond the handle, no global state.
 * Members are ranks 0..n-1, rank 0 is the sender; the data is k blocks
 * numbered 0..k-1.  A schedule is a sequence of steps; at each step a member
 * sends at most one block and receives at most one block.  Each member
 * computes only its own transfers, in O(log n) per step.
 */
#ifndef RDMCP_SCHED_H
#define RDMCP_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sched_alg {
	SCHED_BINOMIAL = 0,	/* binomial pipeline (RDMC), the default */
	SCHED_CHAIN,		/* bucket brigade 0 -> 1 -> ... -> n-1 */
	SCHED_TREE,		/* binomial tree, whole message per hop */
	SCHED_SEQUENTIAL,	/* sender to each receiver in turn */
	SCHED_NALG
};

/* One block transfer as seen by one member: the peer is the target of a
 * send or the source of a receive. */
struct sched_xfer {
	uint32_t peer;
	uint64_t block;
};

struct sched;

/* Largest group size a schedule accepts. */
#define SCHED_MAX_MEMBERS (1u << 20)

/* Create the schedule of member `rank` in a group of `n` for `k` blocks.
 * Returns 0 or -EINVAL (bad algorithm, n == 0 or too large, rank >= n). */
int sched_new(enum sched_alg alg, uint32_t n, uint32_t rank, uint64_t k,
	      struct sched **out);

/* The same, with the members in racks: sizes[0..nracks) members each,
 * ranks numbered rack by rack from 0 (the sender's rack first).  With the
 * binomial pipeline and two racks or more, each rack runs its own
 * pipeline and each rack's first rank is fed by the rack before
 * (hybrid.h): every block crosses each rack boundary once.  Other
 * algorithms and nracks < 2 ignore the racks (sizes may then be NULL).
 * -EINVAL also if the sizes do not sum to n or one is 0; -ENOMEM.  The
 * only call whose cost grows with k: across racks the member's table is
 * built by simulating the racks up to the one after its own, in time and
 * memory that grow as k times their members (hybrid.h); any other
 * schedule is made in O(1). */
int sched_new_racks(enum sched_alg alg, uint32_t n, uint32_t rank,
		    uint64_t k, const uint32_t *sizes, size_t nracks,
		    struct sched **out);

/* Free a schedule; NULL is a no-op. */
void sched_free(struct sched *s);

/* Number of steps of the whole schedule (the same for every member). */
uint64_t sched_steps(const struct sched *s);

/* The block this member sends at `step`, and to whom. False if none. */
bool sched_send(const struct sched *s, uint64_t step, struct sched_xfer *out);

/* The block this member receives at `step`, and from whom. False if none. */
bool sched_recv(const struct sched *s, uint64_t step, struct sched_xfer *out);

/* The first step >= `from` at which this member sends (or receives), and
 * the transfer.  False when there is none left.  Looks at O(log n) steps
 * whatever k is (idle stretches are skipped by their bounds: a member
 * that never sends, or never again, costs no scan to the end); across
 * racks, a binary search of the member's table. */
bool sched_next_send(const struct sched *s, uint64_t from, uint64_t *step,
		     struct sched_xfer *out);
bool sched_next_recv(const struct sched *s, uint64_t from, uint64_t *step,
		     struct sched_xfer *out);

/* The last step at which this member sends to (send == true) or receives
 * from `peer`.  False if it never does.  Looks at O(log n) steps whatever
 * k is (a closed form, or the binomial pipeline's periodic stretch: see
 * schedule.c), or O(log n) entries of a table across racks. */
bool sched_last_with(const struct sched *s, uint32_t peer, bool send,
		     uint64_t *step);

/* The first block this member will receive and its source, computed without
 * knowing k: the result for k blocks is the same peer and
 * min(block, k - 1).  False for the sender (rank 0) and for n == 1. */
bool sched_first_recv(enum sched_alg alg, uint32_t n, uint32_t rank,
		      struct sched_xfer *out);

/* Ranks this member exchanges blocks with under this schedule, ascending and
 * without duplicates.  Writes at most `max` ranks to `out`; returns how many
 * there are in all (call with max 0 to size the array). */
size_t sched_peers(const struct sched *s, uint32_t *out, size_t max);

/* The peer that sends this member half its blocks or more, judged by its
 * first 256 receives (the binomial pipeline's relays: with 7 members,
 * rank 5 gets 48 of 96 blocks from rank 2): true and *peer; false if no
 * peer does (the blocks come from several alike, or none come: rank 0),
 * or if the member has more than 64 peers. */
bool sched_main_source(const struct sched *s, uint32_t *peer);

/* What the members' links are, for sched_auto_block: a network, between
 * processes of this machine (loopback addresses), or RDMA verbs. */
enum sched_link {
	SCHED_LINK_NET,
	SCHED_LINK_LOOPBACK,
	SCHED_LINK_VERBS,
};

/* Steps of the whole schedule `alg` for n members and k blocks (the same
 * for every member), or 0 if it cannot be made. */
uint64_t sched_total_steps(enum sched_alg alg, uint32_t n, uint64_t k);

/* The block size to use when none is asked for, to send `total` bytes to
 * a group of n members (the sender included) with `alg` over `link`.  A
 * push of k blocks takes k + F steps (F: the schedule's fill and drain,
 * log2 n - 1 for the binomial pipeline, n - 2 for the chain), each a
 * block's time on the wire plus its fixed cost: the chosen size is the
 * power of two that loses least to the two together, F block times
 * against k fixed costs (schedule.c says what a fixed cost is taken to
 * be), between 16 KiB (256 KiB over verbs, where a block is a bounce slot
 * too) and 1 MiB.  The chain over a network (TCP), whose relays pass
 * blocks on as they land, fills in a few packets per hop whatever the
 * size: the largest that cuts the file into 128 blocks at least, between
 * 64 KiB and 1 MiB.  Between members on this machine, and for the tree and
 * sequential, which send whole blocks per hop: 1 MiB. */
uint32_t sched_auto_block(enum sched_alg alg, uint64_t total, uint32_t n,
			  enum sched_link link);

/* The schedule to use when none is asked for, to send `bytes` to n
 * members (the sender included) over `link`.  Over a network (TCP) the
 * chain, once its n - 2 hops of filling cost at most half the time that
 * moves the data: its relays pass each block on as it lands, a hop costs
 * a few packets (counted as 8 KiB), so from 16 KiB per hop (64 hosts:
 * 992 KiB; 1,024 hosts: 15.98 MiB); its links each carry one
 * steady flow, where the binomial pipeline's members wait, block after
 * block, on a control round trip with a different neighbour (figures:
 * docs/performance.md, its constants).  Otherwise, always over verbs (whose
 * relays store each block, and wait on no control round trip) and
 * between processes of this machine (whose members share its cores and
 * caches, where a chain's head races ahead of its tail), the binomial
 * pipeline, whose fill grows as log2 n. */
enum sched_alg sched_auto_alg(uint64_t bytes, uint32_t n,
			      enum sched_link link);

/* "binomial", "chain", "tree", "sequential". */
const char *sched_alg_name(enum sched_alg alg);

/* Parse an algorithm name (also accepts "pipeline", "binomial-tree",
 * "seq"); returns 0 or -EINVAL. */
int sched_alg_parse(const char *name, enum sched_alg *out);

#endif
