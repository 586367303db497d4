/* SPDX-License-Identifier: MIT */
/*
 * bset - a set of block numbers, as sorted runs.  Pure: no I/O.
 *
 * What a host lacks of a job's blocks, and what a group must carry (the
 * union of what its members lack), are bsets: a delta of a few changed
 * blocks, or a tail that grew, is a handful of runs whatever the file's
 * size.  Runs are kept disjoint, in increasing order, and never adjacent
 * (adding a run next to the last one extends it).
 */
#ifndef RDMCP_BSET_H
#define RDMCP_BSET_H

#include <stdbool.h>
#include <stdint.h>

#include "util/wire.h"

struct bset;

struct bset_run {
	uint64_t first;
	uint64_t count;		/* >= 1 */
};

/* An empty set, or -ENOMEM. */
int bset_new(struct bset **out);

/* Free a set; NULL is a no-op. */
void bset_free(struct bset *s);

/* Add blocks [first, first + count), which must start at or after the
 * end of the last run: 0, -EINVAL (out of order, or past UINT64_MAX) or
 * -ENOMEM.  A count of 0 adds nothing. */
int bset_add(struct bset *s, uint64_t first, uint64_t count);

/* A new set of the blocks in a or b (or both), or -ENOMEM. */
int bset_union(const struct bset *a, const struct bset *b,
	       struct bset **out);

/* Blocks in the set, and runs that hold them. */
uint64_t bset_count(const struct bset *s);
uint32_t bset_nruns(const struct bset *s);

/* Run i (< bset_nruns). */
struct bset_run bset_run_at(const struct bset *s, uint32_t i);

/* Whether block b is in the set. */
bool bset_has(const struct bset *s, uint64_t b);

/* Whether every block of `part` is in `s`. */
bool bset_covers(const struct bset *s, const struct bset *part);

/* Whether every block of [first, first + count) is in `s`. */
bool bset_covers_range(const struct bset *s, uint64_t first, uint64_t count);

/* The set's j-th block in increasing order (j < bset_count), in
 * O(log runs); UINT64_MAX when j is past the end. */
uint64_t bset_nth(const struct bset *s, uint64_t j);

/* Bits 0 .. k-1 of `bits` (k / 8 + 1 bytes, zeroed by the caller; bit j
 * is bit j % 8 of byte j / 8): bit j set when the j-th block of `map`
 * (NULL: block j itself) is in `s` (NULL: every block is). */
void bset_mask(const struct bset *s, const struct bset *map, uint64_t k,
	       uint8_t *bits);

/* Fill the smallest gaps between runs until at most max_runs (>= 1)
 * remain: a superset, so that a set meant for the wire stays small however
 * scattered its blocks. */
void bset_coarsen(struct bset *s, uint32_t max_runs);

/* Wire form: u32 runs, then each run as u64 first, u64 count. */
void bset_encode(const struct bset *s, struct wbuf *w);

/* Read a set written by bset_encode, from hostile input: at most max_runs
 * runs, every block below `limit`, runs in order and not empty.  0,
 * -EBADMSG or -ENOMEM. */
int bset_decode(struct rbuf *r, uint32_t max_runs, uint64_t limit,
		struct bset **out);

#endif
