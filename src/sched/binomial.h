/* SPDX-License-Identifier: MIT */
/*
 * binomial - the binomial pipeline schedule, for schedule.c.  Pure.
 *
 * Computes one member's transfers at one step from the group size, the
 * block count and the member's rank alone, in O(log n).
 */
#ifndef RDMCP_BINOMIAL_H
#define RDMCP_BINOMIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/schedule.h"

/* The parameters of one group's binomial pipeline. */
struct bp {
	uint32_t n;
	uint64_t k;
	unsigned l;
	uint32_t cube;
	uint64_t vsteps;	/* steps of the hypercube exchange */
	uint64_t steps;		/* vsteps, plus one for twins */
};

/* floor(log2 x); x >= 1 (asserted). */
unsigned bp_log2(uint64_t x);

/* Set up the pipeline of a group of n members and k blocks. */
void bp_init(struct bp *p, uint32_t n, uint64_t k);

/* The block `rank` sends (receives) at `step`, and to (from) whom; false
 * if none.  Steps at or beyond p->steps hold nothing. */
bool bp_send(const struct bp *p, uint32_t rank, uint64_t step,
	     struct sched_xfer *out);
bool bp_recv(const struct bp *p, uint32_t rank, uint64_t step,
	     struct sched_xfer *out);

#endif
