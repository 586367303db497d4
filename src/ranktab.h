/*
 * ranktab - a table of items by rank, kept sorted: what each transport
 * holds per peer.  Pure.
 */
#ifndef RDMCP_RANKTAB_H
#define RDMCP_RANKTAB_H

#include <stddef.h>
#include <stdint.h>

struct rt_entry {
	uint32_t rank;
	void *item;
};

/* Start from a zeroed table. */
struct ranktab {
	struct rt_entry *e;	/* sorted by rank */
	size_t n, cap;
};

/* Add `item` under `rank`.  Returns 0, -EEXIST or -ENOMEM. */
int rt_add(struct ranktab *t, uint32_t rank, void *item);

/* The item of `rank`, or NULL. */
void *rt_find(const struct ranktab *t, uint32_t rank);

/* The i-th item in rank order (i < t->n). */
void *rt_at(const struct ranktab *t, size_t i);

/* Release the table (not the items); it is empty afterwards. */
void rt_clear(struct ranktab *t);

#endif
