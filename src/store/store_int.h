/* SPDX-License-Identifier: MIT */
/*
 * store_int.h - what the files of the store module share: the store
 * itself, and walking a block's pieces.
 */
#ifndef RDMCP_STORE_INT_H
#define RDMCP_STORE_INT_H

#include <sys/stat.h>

#include "store/store.h"

struct bset;

struct sfile {
	char *path;	/* sender: the source, or NULL */
	struct stat sb;	/* sender: the source when opened */
	uint64_t off;	/* offset in the stream */
	uint64_t size;
	uint32_t mode;
	uint8_t *map;
	int fd;		/* the file, open while the store lives, or -1 */
	bool based;	/* receiver: filled from a file where it lands */
};

struct store {
	bool receiver;
	struct dest *dest;	/* receiver: where the files land */
	uint32_t bsize;
	uint64_t total;
	uint64_t blocks;
	size_t n;
	struct sfile *f;
	size_t *full;		/* indices of non-empty files, by offset */
	size_t nfull;
	bool holes;		/* receiver: punch zero pages (JOB_SPARSE) */
	uint64_t *good;		/* receiver: a bit per stream block that holds
				 * the source's bytes (arrived, or filled and
				 * matched), for a partial copy's record */
	struct bset *map;	/* the stream blocks carried, or NULL: all
				 * (store_set_map) */
	uint64_t resumed;	/* receiver: bytes store_fill took from
				 * unfinished copies */
	uint64_t seed;		/* of the block digests (store_seed_digests) */
};

/* Index into st->full of the non-empty file holding stream offset `at`. */
size_t store_file_at(const struct store *st, uint64_t at);

/* Call fn on each piece of stream block `block` (one per file it spans);
 * returns the number of pieces. */
int store_walk_block(const struct store *st, uint64_t block,
		     void (*fn)(void *arg, int i, uint8_t *p, size_t len),
		     void *arg);

/* The sum of the file open at fd, read from its start (struct
 * proto_sum; zeros when it is empty) into *out.  0 or -errno. */
int store_sum_fd(int fd, uint64_t seed, struct proto_sum *out);

/* Stream block b holds the source's bytes (receivers). */
void store_mark_good(struct store *st, uint64_t b);

/* Stream block `block`'s zero pages, in each file it spans, made holes. */
int store_punch_block(const struct store *st, uint64_t block);

#endif
