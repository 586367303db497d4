/* SPDX-License-Identifier: MIT */
/*
 * ranktab - a table of items by a 64-bit key, kept sorted: what each
 * transport holds per peer (by rank), the RDMA completion slots (by id).
 * Pure.
 */
#ifndef RDMCP_RANKTAB_H
#define RDMCP_RANKTAB_H

#include <stddef.h>
#include <stdint.h>

struct rt_entry {
	uint64_t key;
	void *item;
};

/* Start from a zeroed table. */
struct ranktab {
	struct rt_entry *e;	/* sorted by key */
	size_t n, cap;
};

/* Add `item` under `key`.  Returns 0, -EEXIST or -ENOMEM. */
int rt_add(struct ranktab *t, uint64_t key, void *item);

/* The item of `key`, or NULL. */
void *rt_find(const struct ranktab *t, uint64_t key);

/* Take the item of `key` out of the table; returns it, or NULL. */
void *rt_remove(struct ranktab *t, uint64_t key);

/* The i-th item in key order; i < t->n (asserted). */
void *rt_at(const struct ranktab *t, size_t i);

/* Release the table (not the items); it is empty afterwards. */
void rt_clear(struct ranktab *t);

#endif
