/*
 * ranktab - items by rank (see ranktab.h).
 */
#include "ranktab.h"

#include <errno.h>
#include <stdlib.h>

/* Index of the first entry with a rank >= `rank`. */
static size_t
lower_bound(const struct ranktab *t, uint32_t rank)
{
	size_t lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (t->e[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
rt_add(struct ranktab *t, uint32_t rank, void *item)
{
	struct rt_entry *grown;
	size_t i = lower_bound(t, rank), j;

	if (i < t->n && t->e[i].rank == rank)
		return -EEXIST;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;

		grown = realloc(t->e, cap * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		t->e = grown;
		t->cap = cap;
	}
	for (j = t->n; j > i; j--)
		t->e[j] = t->e[j - 1];
	t->e[i] = (struct rt_entry){ rank, item };
	t->n++;
	return 0;
}

void *
rt_find(const struct ranktab *t, uint32_t rank)
{
	size_t i = lower_bound(t, rank);

	return i < t->n && t->e[i].rank == rank ? t->e[i].item : NULL;
}

void *
rt_at(const struct ranktab *t, size_t i)
{
	return t->e[i].item;
}

void
rt_clear(struct ranktab *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}
