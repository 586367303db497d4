/* SPDX-License-Identifier: MIT */
/*
 * ranktab - items by key (see ranktab.h).
 */
#include "transport/ranktab.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Index of the first entry with a key >= `key`. */
static size_t
lower_bound(const struct ranktab *t, uint64_t key)
{
	size_t lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (t->e[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
rt_add(struct ranktab *t, uint64_t key, void *item)
{
	struct rt_entry *grown;
	size_t i = lower_bound(t, key), j;

	if (i < t->n && t->e[i].key == key)
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
	t->e[i] = (struct rt_entry){ key, item };
	t->n++;
	return 0;
}

void *
rt_find(const struct ranktab *t, uint64_t key)
{
	size_t i = lower_bound(t, key);

	return i < t->n && t->e[i].key == key ? t->e[i].item : NULL;
}

void *
rt_remove(struct ranktab *t, uint64_t key)
{
	size_t i = lower_bound(t, key);
	void *item;

	if (i >= t->n || t->e[i].key != key)
		return NULL;
	item = t->e[i].item;
	memmove(&t->e[i], &t->e[i + 1], (t->n - i - 1) * sizeof(*t->e));
	t->n--;
	return item;
}

void *
rt_at(const struct ranktab *t, size_t i)
{
	assert(i < t->n);
	return t->e[i].item;
}

void
rt_clear(struct ranktab *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}
