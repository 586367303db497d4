/* SPDX-License-Identifier: MIT */
/*
 * memory - the memory the verbs transport sends from and receives into
 * (xv_int.h): regions given with xp_reg(), registered with the device
 * as a whole (read-only ones: the sender's sources) or chunk by chunk as
 * receives first reach them (writable ones: a receiver's destination), so
 * that pinning and faulting in a large destination is spread over the
 * transfer instead of delaying its start.  A chunk the device cannot
 * register (the locked-memory limit, memory that cannot be pinned) makes
 * its region's blocks go through the bounce buffers from then on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/xv_int.h"

/* Bytes registered at a time in a writable region: a few blocks' worth,
 * pinned well before the window's receives reach the chunk's end. */
#define CHUNK_BYTES (8u << 20)

static int
region_init(struct xv *x, struct region *r, void *addr, size_t len,
	    bool writable)
{
	struct rd_err err = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	r->addr = addr;
	r->len = len;
	r->writable = writable;
	r->chunk = writable ? CHUNK_BYTES : len;
	r->nchunks = (len + r->chunk - 1) / r->chunk;
	r->mrs = calloc(r->nchunks, sizeof(*r->mrs));
	if (r->mrs == NULL)
		return -ENOMEM;
	if (writable)
		return 0;
	rc = vb_reg(x->dev, addr, len, 0, &r->mrs[0], &err);
	if (rc < 0)
		snprintf(x->base.errmsg, sizeof(x->base.errmsg), "%s", err.msg);
	return rc;
}

static void
region_fini(struct region *r)
{
	size_t i;

	for (i = 0; i < r->nchunks; i++)
		if (r->mrs[i] != NULL)
			ibv_dereg_mr(r->mrs[i]);
	free(r->mrs);
}

int
xv_reg(struct xp *xp, void *addr, size_t len, bool writable, int fd,
       uint64_t off)
{
	struct xv *x = (struct xv *)xp;
	struct region *grown;
	int rc;

	if (len == 0)
		return 0;
	grown = realloc(x->regions, (x->nregions + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	x->regions = grown;
	rc = region_init(x, &grown[x->nregions], addr, len, writable);
	if (rc < 0) {
		region_fini(&grown[x->nregions]);
		return rc;
	}
	x->nregions++;
	return 0;
}

void
xv_regions_free(struct xv *x)
{
	size_t i;

	for (i = 0; i < x->nregions; i++)
		region_fini(&x->regions[i]);
	free(x->regions);
	x->regions = NULL;
	x->nregions = 0;
	x->region_hint = 0;
}

/* The region holding [a, a + len) (writable, if `write`), or NULL.  The
 * search starts at the last one found: the pieces of a block, and blocks
 * after one another, lie in the same or the next file. */
static struct region *
region_find(struct xv *x, const uint8_t *a, size_t len, bool write)
{
	size_t i, k;

	for (k = 0; k < x->nregions; k++) {
		struct region *r;

		i = (x->region_hint + k) % x->nregions;
		r = &x->regions[i];
		if (a >= r->addr && a + len <= r->addr + r->len &&
		    (r->writable || !write)) {
			x->region_hint = i;
			return r;
		}
	}
	return NULL;
}

/* Chunk i of writable region r, registered now if it is not yet and
 * `reg`; NULL if it is not (then, after a failure, never will be). */
static struct ibv_mr *
chunk_mr(struct xv *x, struct region *r, size_t i, bool reg)
{
	struct rd_err err = { 0 };
	size_t len;

	if (r->mrs[i] != NULL || !reg || r->failed)
		return r->mrs[i];
	len = i + 1 < r->nchunks ? r->chunk : r->len - i * r->chunk;
	if (vb_reg(x->dev, r->addr + i * r->chunk, len, IBV_ACCESS_LOCAL_WRITE,
		   &r->mrs[i], &err) < 0) {
		r->failed = true;
		r->mrs[i] = NULL;
		log_info("rdma: %s: blocks land in bounce buffers and are "
			 "copied into place", err.msg);
	}
	return r->mrs[i];
}

/* Piece [a, a + len) of region r as entries from sge[*n] on, split where
 * chunks end; false if a chunk is not registered or too many entries. */
static bool
piece_sges(struct xv *x, struct region *r, const uint8_t *a, size_t len,
	   bool write, struct ibv_sge *sge, int *n)
{
	while (len > 0) {
		size_t at = (size_t)(a - r->addr), i = at / r->chunk;
		size_t take = (i + 1) * r->chunk - at;
		struct ibv_mr *mr = chunk_mr(x, r, i, write);

		if (mr == NULL || *n >= x->max_sge)
			return false;
		take = take < len ? take : len;
		sge[*n].addr = (uintptr_t)a;
		sge[*n].length = (uint32_t)take;
		sge[*n].lkey = mr->lkey;
		(*n)++;
		a += take;
		len -= take;
	}
	return true;
}

int
xv_in_place(struct xv *x, const struct iovec *iov, int niov, bool write,
	    struct ibv_sge *sge)
{
	struct region *r;
	int i, n = 0;

	for (i = 0; i < niov; i++) {
		r = region_find(x, iov[i].iov_base, iov[i].iov_len, write);
		if (r == NULL || !piece_sges(x, r, iov[i].iov_base,
					     iov[i].iov_len, write, sge, &n))
			return 0;
	}
	return n;
}
