/* SPDX-License-Identifier: MIT */
/*
 * slots - bookkeeping for registered buffers and message credits, as the
 * verbs transport uses them.  Pure: no I/O, no verbs.
 *
 * A slot pool hands out indices of fixed-size buffers (bounce buffers
 * for blocks, small buffers for signals) and takes them back in any order.
 *
 * Credits follow the persistent-buffer scheme of Liu et al. ("High
 * Performance RDMA-Based MPI Implementation over InfiniBand"): a peer may
 * send a message only while it holds a credit, one per receive buffer the
 * other side has posted.  The receiver counts the buffers it reposted and
 * returns them in batches, piggybacked on its own messages or, when it has
 * none to send, in an explicit credit message, which needs no credit of
 * its own thanks to a reserve kept for it.
 */
#ifndef RDMCP_SLOTS_H
#define RDMCP_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

struct slots;

/* A pool of n slots, all free.  Returns NULL on ENOMEM or n == 0. */
struct slots *slots_new(uint32_t n);

/* Take a free slot: true and its index, or false if none is free. */
bool slots_get(struct slots *s, uint32_t *index);

/* Give a slot back.  Returns false (and changes nothing) if it was not
 * taken: a double free. */
bool slots_put(struct slots *s, uint32_t index);

uint32_t slots_free_count(const struct slots *s);
uint32_t slots_size(const struct slots *s);

/* Free the pool; NULL is a no-op. */
void slots_free(struct slots *s);

/* Credits of one direction of one connection. */
struct credit {
	uint32_t buffers;	/* receive buffers each side posts */
	uint32_t reserve;	/* of those, kept for credit messages */
	uint32_t avail;		/* sending: credits we hold */
	uint32_t owed;		/* receiving: buffers reposted, not yet
				 * returned to the peer */
};

/* Both sides post `buffers` receives, `reserve` of them for credit
 * messages; buffers > reserve >= 1 (asserted). */
void slots_credit_init(struct credit *c, uint32_t buffers, uint32_t reserve);

/* May we send an ordinary message now?  If so, takes its credit. */
bool slots_credit_take(struct credit *c);

/* May we send a credit message now?  (Uses the reserve.) */
bool slots_credit_take_reserved(struct credit *c);

/* The peer returned `n` credits. */
void slots_credit_returned(struct credit *c, uint32_t n);

/* We reposted a receive buffer after consuming a message. */
void slots_credit_reposted(struct credit *c);

/* Credits to return now, piggybacked on a message we send: all owed. */
uint32_t slots_credit_piggyback(struct credit *c);

/* Should we send an explicit credit message?  True when half the buffers
 * are owed and nothing else is going out to carry them. */
bool slots_credit_update_due(const struct credit *c);

/* Immediate values of block sends: the block number, big-endian on the
 * wire as verbs expects (wc.imm_data and wr.imm_data are in network order).
 * Block numbers beyond 32 bits are carried modulo 2^32; the receiver
 * knows the full number from its posted receive and checks the low bits. */
uint32_t slots_imm_encode(uint64_t block);
bool slots_imm_matches(uint32_t imm, uint64_t block);

#endif
