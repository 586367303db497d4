/* SPDX-License-Identifier: MIT */
/*
 * store - a set of files seen as one byte stream cut into blocks.
 *
 * The files of a transfer are concatenated in manifest order; block b is
 * bytes [b * block_size, (b + 1) * block_size) of that stream, the last one
 * shorter.  A block may span several files, so its memory is a list of
 * iovecs into the files' mappings.
 *
 * On the sender the sources are mapped read-only: no copy.  On a receiver
 * each file is created under a temporary name in its destination directory,
 * its space reserved up front and the temporary mapped; blocks land there
 * and are relayed from there, so memory use does not grow with file size.
 * store_commit() gives each temporary its mode and renames it into place;
 * store_free() removes temporaries that were not committed.
 */
#ifndef RDMCP_STORE_H
#define RDMCP_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "dest/dest.h"
#include "util/log.h"
#include "proto/proto.h"
#include "util/bset.h"

struct store;

/* A source file as the sender sees it. */
struct store_source {
	const char *path;	/* as given */
	uint64_t size;
	uint32_t mode;
};

/* Open and map source files; sizes and modes are read here and can be
 * listed with store_file().  A NULL path is an entry without data (a
 * directory or link of the manifest).  Directories and special files are
 * refused. */
int store_open_sources(const char *const *paths, size_t n,
		       uint32_t block_size, struct store **out,
		       struct rd_err *err);

/* Cut the stream into blocks of this size from now on (before any block
 * is asked for). */
void store_set_block_size(struct store *st, uint32_t block_size);

/* Check that no source changed (size, times, identity) since it was
 * opened: a copy taken from a file that changed under us may be
 * inconsistent.  -ESTALE with the file named in `err`. */
int store_check_sources(const struct store *st, struct rd_err *err);

/* Create every entry of the job where it will land (dest.h), files
 * under temporary names with their space reserved and mapped. */
int store_create(const struct job *job, const struct dest_policy *pol,
		 struct store **out, struct rd_err *err);

/* What stands where the job's entries land (dest_look): seen[i], and
 * for each DS_CANDIDATE the sum of the file there (struct proto_sum,
 * seeded by the job's token), sums[i], for the caller to compare with
 * the source's.  0, or -errno with `err`. */
int store_look(const struct job *job, const struct dest_policy *pol,
	       uint8_t *seen, struct proto_sum *sums, struct rd_err *err);

/* The memory of block b: see eng_blocks.iov. */
int store_iov(struct store *st, uint64_t block, struct iovec *iov, int max);

/* Block b arrived: with store_keep_holes, its zero pages are punched. */
int store_arrived(struct store *st, uint64_t block);

/* Make holes of the zero pages of blocks as they arrive (receivers,
 * JOB_SPARSE; where the file system cannot, the zeros stay written). */
void store_keep_holes(struct store *st);

/* crc32 of the whole stream, read from the mappings: the sender's
 * sources, or a receiver's temporaries as they are, once every block is
 * in (--verify: what lands is what is checked).  Slow, safe to run on
 * another thread; holes are not read, so not allocated. */
uint32_t store_compute_crc(const struct store *st);

/* Modes, times, and every temporary renamed into place (dest.h). */
int store_commit(struct store *st, struct rd_err *err);

/* ---------------------------------------------------------------------
 * Deltas (delta.c): what a receiver holds already, by block digests.
 */

#define STORE_DIGEST_LEN 16	/* XXH3-128, seeded by the job's token */

/* The seed of a job's block digests, from its token (the same on every
 * host: little-endian). */
uint64_t store_digest_seed(const uint8_t token[PROTO_TOKEN_LEN]);

/* Digest blocks with the seed of the job whose token this is (the
 * sender's store; store_create seeds a receiver's from its job).  The
 * seed is 0 until then. */
void store_seed_digests(struct store *st, const uint8_t token[PROTO_TOKEN_LEN]);

/* Each source file's sum (struct proto_sum: XXH3-128 of the whole file,
 * its holes read as zeros; zeros for an empty file) into sums[i], with
 * the seed of store_seed_digests: what REPLACE carries.  Safe on a
 * thread of its own beside store_digests. */
void store_file_sums(const struct store *st, struct proto_sum *sums);

/* The digest of each stream block in [first, first + n) into `out` (n *
 * STORE_DIGEST_LEN bytes), read from the mappings.  Before store_set_map;
 * safe on several threads at once for ranges that do not overlap. */
void store_digests(const struct store *st, uint64_t first, uint64_t n,
		   uint8_t *out);

/* Receiver: fill the temporaries from what stands where they land: each
 * file of the job that finds a regular file there (its old version, or a
 * file found identical) takes that file's first bytes, as many as both
 * have (copy_file_range: shared extents where the file system can, else a
 * copy in the kernel).  Then every stream block whose digest equals the
 * source's (`digests`, one per stream block) is held.  Of the others,
 * those that a partial copy of the same source holds (file i's open at
 * partials[i] >= 0, a temporary an earlier job left; partials may be
 * NULL) are taken from it where their digests then match, if they lie
 * where that copy had blocks land (goods[i], byte ranges of the file;
 * goods or goods[i] NULL: not known, read and compared).  *need gets
 * the rest, which the stream must bring.  0, or -errno with `err`. */
int store_fill(struct store *st, const struct job *job,
	       const struct dest_policy *pol, const uint8_t *digests,
	       const int *partials, struct bset *const *goods,
	       struct bset **need, struct rd_err *err);

/* store_fill in two steps, the first before the source's digests are
 * known: the temporaries filled from what stands where they land, and
 * the digest of each block so filled into *mine (malloc'd, one per
 * stream block; the caller frees it).  0, or -errno with `err`. */
int store_fill_local(struct store *st, const struct job *job,
		     const struct dest_policy *pol, uint8_t **mine,
		     struct rd_err *err);

/* ... then, the source's digests come: the blocks whose digests match
 * are held, the others taken from the partial copies where they match,
 * the rest into *need, as store_fill.  0, or -errno with `err`. */
int store_fill_compare(struct store *st, const uint8_t *digests,
		       const uint8_t *mine, const int *partials,
		       struct bset *const *goods, struct bset **need,
		       struct rd_err *err);

/* Of the bytes store_fill found held, those it took from the unfinished
 * copies (resumed; the others were reused from the files where the job
 * lands).  0 on a NULL store. */
uint64_t store_resumed_bytes(const struct store *st);

/* The byte ranges of file i (receivers) that hold the source's bytes:
 * its blocks that arrived, or were filled and matched; what a partial
 * copy kept for the next job holds (store_fill's goods[i]).  0 or
 * -ENOMEM. */
int store_good_ranges(const struct store *st, size_t i, struct bset **out);

/* What store_fill would find, for a dry run: the blocks a receiver
 * would lack, into *need, from what stands where the files land and the
 * unfinished copies (partials, as for store_fill), read and digested
 * block by block, and the bytes it would take from those copies into
 * *resumed; nothing is made.  0, or -errno with `err`. */
int store_predict(const struct job *job, const struct dest_policy *pol,
		  const uint8_t *digests, const int *partials,
		  struct bset **need, uint64_t *resumed, struct rd_err *err);

/* Carry only the stream blocks of `map` from now on (a copy is kept):
 * block j of store_iov, store_arrived and store_blocks is the map's j-th;
 * NULL carries them all.  0 or -ENOMEM. */
int store_set_map(struct store *st, const struct bset *map);

/* The stream block that block j is (store_set_map). */
uint64_t store_stream_block(const struct store *st, uint64_t block);

/* Blocks of the whole stream, whatever the map. */
uint64_t store_stream_blocks(const struct store *st);

uint64_t store_total(const struct store *st);

/* Blocks carried: the map's, or the whole stream's. */
uint64_t store_blocks(const struct store *st);
size_t store_nfiles(const struct store *st);

/* Size and mode of file i (sender: as opened). */
void store_file(const struct store *st, size_t i, uint64_t *size,
		uint32_t *mode);

/* The mapping of file i: its address and length (NULL, 0 when empty),
 * and the file, open (-1 if not), so a transport can register them. */
void store_mapping(const struct store *st, size_t i, void **addr,
		   size_t *len, int *fd);

/* Unmap, close, remove uncommitted temporaries; NULL is a no-op. */
void store_free(struct store *st);

#endif
