/* SPDX-License-Identifier: MIT */
/*
 * slots - buffer slots and credits (see slots.h).
 */
#include "transport/verbs/slots.h"

#include <assert.h>
#include <arpa/inet.h>
#include <stdlib.h>

struct slots {
	uint32_t n;
	uint32_t nfree;
	uint32_t *stack;	/* free indices */
	uint8_t *taken;
};

struct slots *
slots_new(uint32_t n)
{
	struct slots *s;
	uint32_t i;

	if (n == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->stack = calloc(n, sizeof(*s->stack));
	s->taken = calloc(n, 1);
	if (s->stack == NULL || s->taken == NULL) {
		slots_free(s);
		return NULL;
	}
	s->n = s->nfree = n;
	for (i = 0; i < n; i++)
		s->stack[i] = n - 1 - i;	/* hands out 0, 1, 2, ... */
	return s;
}

bool
slots_get(struct slots *s, uint32_t *index)
{
	if (s->nfree == 0)
		return false;
	*index = s->stack[--s->nfree];
	s->taken[*index] = 1;
	return true;
}

bool
slots_put(struct slots *s, uint32_t index)
{
	if (index >= s->n || !s->taken[index])
		return false;
	s->taken[index] = 0;
	s->stack[s->nfree++] = index;
	return true;
}

uint32_t
slots_free_count(const struct slots *s)
{
	return s->nfree;
}

uint32_t
slots_size(const struct slots *s)
{
	return s->n;
}

void
slots_free(struct slots *s)
{
	if (s == NULL)
		return;
	free(s->stack);
	free(s->taken);
	free(s);
}

void
slots_credit_init(struct credit *c, uint32_t buffers, uint32_t reserve)
{
	assert(reserve >= 1 && buffers > reserve);
	c->buffers = buffers;
	c->reserve = reserve;
	c->avail = buffers;
	c->owed = 0;
}

bool
slots_credit_take(struct credit *c)
{
	if (c->avail <= c->reserve)
		return false;
	c->avail--;
	return true;
}

bool
slots_credit_take_reserved(struct credit *c)
{
	if (c->avail == 0)
		return false;
	c->avail--;
	return true;
}

void
slots_credit_returned(struct credit *c, uint32_t n)
{
	c->avail = c->avail + n > c->buffers ? c->buffers : c->avail + n;
}

void
slots_credit_reposted(struct credit *c)
{
	if (c->owed < c->buffers)
		c->owed++;
}

uint32_t
slots_credit_piggyback(struct credit *c)
{
	uint32_t n = c->owed;

	c->owed = 0;
	return n;
}

bool
slots_credit_update_due(const struct credit *c)
{
	return c->owed >= c->buffers / 2;
}

uint32_t
slots_imm_encode(uint64_t block)
{
	return htonl((uint32_t)block);
}

bool
slots_imm_matches(uint32_t imm, uint64_t block)
{
	return ntohl(imm) == (uint32_t)block;
}
