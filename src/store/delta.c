/* SPDX-License-Identifier: MIT */
/*
 * delta - what a receiver holds already, by block digests (store.h):
 * the digests of a stream's blocks, temporaries filled from the files
 * that stand where they land, and a store that carries only some blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY	/* XXH3_state_t on the stack */
#include <xxhash.h>

#include "store/store_int.h"
#include "util/bset.h"

/* Block digests are XXH3-128 (several times SHA-256's speed:
 * docs/performance.md), seeded with the job's token, random and known
 * only to the sender and the members: a file planted before a push
 * cannot aim at a seed drawn for it. */
uint64_t
store_digest_seed(const uint8_t token[PROTO_TOKEN_LEN])
{
	uint64_t seed = 0;
	int i;

	for (i = 7; i >= 0; i--)
		seed = seed << 8 | token[i];
	return seed;
}

/* Start hashing with `seed` in a state on the stack.  XXH3_INITSTATE
 * first: a reset compares the seed with the one the state held, which
 * on the stack is whatever was there (valgrind's uninitialised read,
 * and a secret left stale if it happened to match). */
static void
digest_start(XXH3_state_t *ctx, uint64_t seed)
{
	XXH3_INITSTATE(ctx);
	XXH3_128bits_reset_withSeed(ctx, seed);
}

/* The first STORE_DIGEST_LEN bytes of the canonical (big-endian) form
 * of a finished digest into out. */
static void
digest_out(XXH3_state_t *ctx, uint8_t *out)
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(ctx));
	memcpy(out, c.digest, STORE_DIGEST_LEN);
}

int
store_sum_fd(int fd, uint64_t seed, struct proto_sum *out)
{
	const size_t len = 1 << 20;
	uint8_t *buf = malloc(len);
	XXH3_state_t ctx;
	uint64_t total = 0;
	ssize_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (buf == NULL)
		return -ENOMEM;
	digest_start(&ctx, seed);
	while ((n = read(fd, buf, len)) > 0 || (n < 0 && errno == EINTR)) {
		XXH3_128bits_update(&ctx, buf, n > 0 ? (size_t)n : 0);
		total += n > 0 ? (uint64_t)n : 0;
	}
	rc = n < 0 ? -errno : 0;
	free(buf);
	if (rc == 0 && total > 0)
		digest_out(&ctx, out->b);
	return rc;
}

/* Hash `len` zero bytes. */
static void
digest_zeros(XXH3_state_t *ctx, uint64_t len)
{
	static const uint8_t zeros[64 << 10];

	for (; len > sizeof(zeros); len -= sizeof(zeros))
		XXH3_128bits_update(ctx, zeros, sizeof(zeros));
	XXH3_128bits_update(ctx, zeros, (size_t)len);
}

/* Where a file's data was last found: [data, hole) holds no hole.  On
 * tmpfs a SEEK_HOLE walks the page cache to the next hole, to the end of
 * a file that has none: asked once per block it made digesting a file
 * quadratic in its size (16 s for 8 copies of 256 MiB). */
struct extent_memo {
	const struct sfile *f;
	off_t data, hole;
};

/* The data and the hole after it from lo on, in f, each at most hi. */
static void
next_extent(const struct sfile *f, off_t lo, off_t hi,
	    struct extent_memo *memo, off_t *data, off_t *hole)
{
	if (memo->f == f && lo >= memo->data && lo < memo->hole) {
		*data = lo;
		*hole = memo->hole < hi ? memo->hole : hi;
		return;
	}
	*data = f->fd >= 0 ? lseek(f->fd, lo, SEEK_DATA) : lo;
	if (*data < 0)
		*data = errno == ENXIO ? hi : lo;	/* no holes known */
	*hole = *data < hi && f->fd >= 0 ? lseek(f->fd, *data, SEEK_HOLE)
					 : hi;
	if (*hole < 0)
		*hole = hi;
	if (*data < *hole && f->fd >= 0)
		*memo = (struct extent_memo){ f, *data, *hole };
	if (*data > hi)
		*data = hi;
	if (*hole > hi)
		*hole = hi;
}

/* Hash bytes [lo, hi) of file f: its holes as zeros, never read through
 * the mapping (on tmpfs that would allocate them). */
static void
digest_range(XXH3_state_t *ctx, const struct sfile *f, off_t lo,
	     off_t hi, struct extent_memo *memo)
{
	off_t data, hole;

	while (lo < hi) {
		next_extent(f, lo, hi, memo, &data, &hole);
		digest_zeros(ctx, (uint64_t)(data - lo));
		XXH3_128bits_update(ctx, f->map + data, (size_t)(hole - data));
		lo = hole;
	}
}

/* The digest of stream block b into out. */
static void
digest_block(const struct store *st, uint64_t b, uint8_t *out,
	     struct extent_memo *memo)
{
	uint64_t start = b * st->bsize, end, lo, hi;
	XXH3_state_t ctx;
	const struct sfile *f;
	size_t i;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	digest_start(&ctx, st->seed);
	for (i = store_file_at(st, start); i < st->nfull; i++) {
		f = &st->f[st->full[i]];
		if (f->off >= end)
			break;
		lo = start > f->off ? start - f->off : 0;
		hi = end < f->off + f->size ? end - f->off : f->size;
		digest_range(&ctx, f, (off_t)lo, (off_t)hi, memo);
	}
	digest_out(&ctx, out);
}

void
store_digests(const struct store *st, uint64_t first, uint64_t n,
	      uint8_t *out)
{
	struct extent_memo memo = { NULL, 0, 0 };
	uint64_t b;

	for (b = first; b < first + n; b++)
		digest_block(st, b, out + (b - first) * STORE_DIGEST_LEN, &memo);
}

void
store_seed_digests(struct store *st, const uint8_t token[PROTO_TOKEN_LEN])
{
	st->seed = store_digest_seed(token);
}

void
store_file_sums(const struct store *st, struct proto_sum *sums)
{
	struct extent_memo memo = { NULL, 0, 0 };
	const struct sfile *f;
	XXH3_state_t ctx;
	size_t i;

	memset(sums, 0, st->n * sizeof(*sums));	/* empty, or no file */
	for (i = 0; i < st->nfull; i++) {
		f = &st->f[st->full[i]];
		digest_start(&ctx, st->seed);
		digest_range(&ctx, f, 0, (off_t)f->size, &memo);
		digest_out(&ctx, sums[st->full[i]].b);
	}
}

void
store_mark_good(struct store *st, uint64_t b)
{
	if (st->good != NULL && b < st->blocks)
		st->good[b / 64] |= 1ull << (b % 64);
}

/* The first good block from b on, below `end`, or `end`: whole words of
 * none are passed over at once (a job of 2^32 blocks broken early has
 * almost none). */
static uint64_t
next_good(const struct store *st, uint64_t b, uint64_t end)
{
	while (st->good != NULL && b < end) {
		uint64_t word = st->good[b / 64] >> (b % 64);

		if (word != 0)
			return b + (uint64_t)__builtin_ctzll(word) < end
				       ? b + (uint64_t)__builtin_ctzll(word) : end;
		b = (b / 64 + 1) * 64;
	}
	return end;
}

int
store_good_ranges(const struct store *st, size_t i, struct bset **out)
{
	const struct sfile *f = &st->f[i];
	uint64_t b, lo, hi, bs = st->bsize, end;
	int rc = bset_new(out);

	end = f->size > 0 ? (f->off + f->size - 1) / bs + 1 : 0;
	for (b = next_good(st, f->off / bs, end); rc == 0 && b < end;
	     b = next_good(st, b + 1, end)) {
		lo = b * bs > f->off ? b * bs - f->off : 0;
		hi = (b + 1) * bs - f->off < f->size ? (b + 1) * bs - f->off
						     : f->size;
		rc = bset_add(*out, lo, hi - lo);
	}
	if (rc < 0) {
		bset_free(*out);
		*out = NULL;
	}
	return rc;
}

/* Bytes [lo, hi) of `in` (a file where f lands, or a partial copy) into
 * the same place of f: the kernel copies (sharing extents where it can;
 * on tmpfs without the page faults and zeroing of a read into the
 * mapping), else we read into the mapping.  0 or -errno; a file that
 * shrank as it was read leaves the rest as it was (its blocks will not
 * match). */
static int
copy_range(int in, struct sfile *f, uint64_t lo, uint64_t hi)
{
	loff_t off_in = (loff_t)lo, off_out = (loff_t)lo;
	ssize_t n = 0;

	while ((uint64_t)off_in < hi &&
	       (n = copy_file_range(in, &off_in, f->fd, &off_out,
				    (size_t)(hi - (uint64_t)off_in), 0)) > 0)
		;
	if (n < 0 && errno != EXDEV && errno != EINVAL &&
	    errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	while (n != 0 && (uint64_t)off_in < hi) {
		n = pread(in, f->map + off_in, (size_t)(hi - (uint64_t)off_in),
			  off_in);
		if (n < 0 && errno != EINTR)
			return -errno;
		off_in += n > 0 ? n : 0;
	}
	return 0;
}

/* dest_bases' call for each file standing where file i lands. */
static int
fill_one(void *ctx, size_t i, int fd)
{
	struct store *st = ctx;
	struct sfile *f = &st->f[i];
	struct stat sb;

	if (f->fd < 0 || f->size == 0)
		return 0;
	if (fstat(fd, &sb) < 0)
		return -errno;
	f->based = sb.st_size > 0;
	return copy_range(fd, f, 0, (uint64_t)sb.st_size < f->size
					    ? (uint64_t)sb.st_size : f->size);
}

/* Was any piece of stream block b filled from a file where it lands?
 * If not, it holds only the zeros of its new temporary: lacking, without
 * reading it (a job whose hosts hold nothing but unfinished copies). */
static bool
based(const struct store *st, uint64_t b)
{
	uint64_t start = b * st->bsize, end;
	const struct sfile *f;
	size_t i;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = store_file_at(st, start); i < st->nfull; i++) {
		f = &st->f[st->full[i]];
		if (f->off >= end)
			break;
		if (f->based)
			return true;
	}
	return false;
}

/* The length of block b of a stream of `total` bytes. */
static uint64_t
block_len(uint64_t total, uint64_t bsize, uint64_t b)
{
	return (b + 1) * bsize < total ? bsize : total - b * bsize;
}

/* Stream block b holds the source's bytes: marked, and with holes kept,
 * its zero pages punched. */
static int
held(struct store *st, uint64_t b)
{
	store_mark_good(st, b);
	return st->holes ? store_punch_block(st, b) : 0;
}

/* The digest of every stream block filled from a file where it lands
 * into mine (the others are not read: lacking). */
static void
digest_based(const struct store *st, uint8_t *mine)
{
	struct extent_memo memo = { NULL, 0, 0 };
	uint64_t b;

	for (b = 0; b < st->blocks; b++)
		if (based(st, b))
			digest_block(st, b, mine + b * STORE_DIGEST_LEN, &memo);
}

/* The stream blocks whose digest (mine) differs from the source's, or
 * that nothing filled, into *need; with holes kept, the zero pages of
 * those that match punched. */
static int
compare_blocks(struct store *st, const uint8_t *digests,
	       const uint8_t *mine, struct bset *need)
{
	uint64_t b;
	int rc = 0;

	for (b = 0; b < st->blocks && rc == 0; b++) {
		if (!based(st, b) ||
		    memcmp(mine + b * STORE_DIGEST_LEN,
			   digests + b * STORE_DIGEST_LEN,
			   STORE_DIGEST_LEN) != 0)
			rc = bset_add(need, b, 1);
		else
			rc = held(st, b);
	}
	return rc;
}

/* Could stream block b be right once taken from the partial copies?
 * Every piece of it in a file with one must be where that copy had
 * blocks land (goods[i], its byte ranges; NULL: not known, so maybe),
 * and one piece at least must be in such a file. */
static bool
resumable(const struct store *st, uint64_t b, const int *partials,
	  struct bset *const *goods)
{
	uint64_t start = b * st->bsize, end, lo, hi;
	const struct sfile *f;
	size_t i, k;
	bool any = false;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = store_file_at(st, start); i < st->nfull; i++) {
		k = st->full[i];
		f = &st->f[k];
		if (f->off >= end)
			break;
		if (partials[k] < 0)
			continue;
		lo = start > f->off ? start - f->off : 0;
		hi = end < f->off + f->size ? end - f->off : f->size;
		if (goods != NULL && goods[k] != NULL &&
		    !bset_covers_range(goods[k], lo, hi - lo))
			return false;
		any = true;
	}
	return any;
}

/* Stream block b's pieces in the files that have a partial copy
 * (partials[i] >= 0), copied from it into the temporaries.  0 or
 * -errno. */
static int
overlay_block(struct store *st, uint64_t b, const int *partials)
{
	uint64_t start = b * st->bsize, end, lo, hi;
	struct sfile *f;
	size_t i, k;
	int rc = 0;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = store_file_at(st, start); i < st->nfull && rc == 0; i++) {
		k = st->full[i];
		f = &st->f[k];
		if (f->off >= end)
			break;
		lo = start > f->off ? start - f->off : 0;
		hi = end < f->off + f->size ? end - f->off : f->size;
		if (partials[k] >= 0)
			rc = copy_range(partials[k], f, lo, hi);
	}
	return rc;
}

/* The blocks of *need taken from the partial copies where their digests
 * then match; *need keeps the others. */
static int
resume_blocks(struct store *st, const uint8_t *digests, const int *partials,
	      struct bset *const *goods, struct bset **need)
{
	struct extent_memo memo = { NULL, 0, 0 };
	uint8_t mine[STORE_DIGEST_LEN];
	struct bset *still;
	uint32_t r;
	uint64_t b;
	int rc = bset_new(&still);

	for (r = 0; rc == 0 && r < bset_nruns(*need); r++) {
		struct bset_run run = bset_run_at(*need, r);

		for (b = run.first; rc == 0 && b < run.first + run.count; b++) {
			if (!resumable(st, b, partials, goods)) {
				rc = bset_add(still, b, 1);
				continue;
			}
			rc = overlay_block(st, b, partials);
			if (rc < 0)
				break;
			digest_block(st, b, mine, &memo);
			if (memcmp(mine, digests + b * STORE_DIGEST_LEN,
				   STORE_DIGEST_LEN) != 0) {
				rc = bset_add(still, b, 1);
				continue;
			}
			rc = held(st, b);
			st->resumed += block_len(st->total, st->bsize, b);
		}
	}
	if (rc < 0) {
		bset_free(still);
		return rc;
	}
	bset_free(*need);
	*need = still;
	return 0;
}

static bool
any_partial(const struct store *st, const int *partials)
{
	size_t i;

	for (i = 0; partials != NULL && i < st->n; i++)
		if (partials[i] >= 0)
			return true;
	return false;
}

int
store_fill_local(struct store *st, const struct job *job,
		 const struct dest_policy *pol, uint8_t **mine,
		 struct rd_err *err)
{
	int rc;

	*mine = malloc(st->blocks * STORE_DIGEST_LEN + 1);
	if (*mine == NULL)
		return rd_errf(err, -ENOMEM, "out of memory for digests");
	rc = dest_bases(job, pol, fill_one, st, err);
	if (rc == 0)
		digest_based(st, *mine);
	if (rc < 0 && err->code == 0)
		rd_errf(err, rc, "cannot read the blocks held: %s",
			strerror(-rc));
	if (rc < 0) {
		free(*mine);
		*mine = NULL;
	}
	return rc;
}

int
store_fill_compare(struct store *st, const uint8_t *digests,
		   const uint8_t *mine, const int *partials,
		   struct bset *const *goods, struct bset **need,
		   struct rd_err *err)
{
	int rc = bset_new(need);

	if (rc == 0)
		rc = compare_blocks(st, digests, mine, *need);
	if (rc == 0 && bset_count(*need) > 0 && any_partial(st, partials))
		rc = resume_blocks(st, digests, partials, goods, need);
	if (rc < 0 && err->code == 0)
		rd_errf(err, rc, "cannot compare the blocks held: %s",
			strerror(-rc));
	if (rc < 0) {
		bset_free(*need);
		*need = NULL;
	}
	return rc;
}

int
store_fill(struct store *st, const struct job *job,
	   const struct dest_policy *pol, const uint8_t *digests,
	   const int *partials, struct bset *const *goods, struct bset **need,
	   struct rd_err *err)
{
	uint8_t *mine;
	int rc;

	*need = NULL;
	rc = store_fill_local(st, job, pol, &mine, err);
	if (rc == 0)
		rc = store_fill_compare(st, digests, mine, partials, goods,
					need, err);
	free(mine);
	return rc;
}

int
store_set_map(struct store *st, const struct bset *map)
{
	struct bset *none, *copy = NULL;
	int rc = 0;

	if (map != NULL) {
		rc = bset_new(&none);
		if (rc < 0)
			return rc;
		rc = bset_union(map, none, &copy);
		bset_free(none);
		if (rc < 0)
			return rc;
	}
	bset_free(st->map);
	st->map = copy;
	return 0;
}

uint64_t
store_resumed_bytes(const struct store *st)
{
	return st != NULL ? st->resumed : 0;
}

uint64_t
store_stream_blocks(const struct store *st)
{
	return st->blocks;
}

/* ---------------------------------------------------------------------
 * Predicting, for a dry run: the same comparison, nothing made
 */

/* What a dry run compares: per file, what stands where it lands (basis)
 * and an unfinished copy (partial), each open or -1, and the file's place
 * in the stream. */
struct view {
	const struct job *job;
	const int *partials;
	int *basis;
	uint64_t *have;		/* the basis' size */
	uint64_t *off;
	uint8_t *buf;		/* one block */
	uint64_t resumed;	/* bytes the unfinished copies would give */
};

static int
note_basis(void *ctx, size_t i, int fd)
{
	struct view *v = ctx;
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return -errno;
	v->basis[i] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	v->have[i] = (uint64_t)sb.st_size;
	return v->basis[i] < 0 ? -errno : 0;
}

/* Bytes [lo, hi) of file i as `fd` holds them (zeros past its end) into
 * buf.  0 or -errno. */
static int
read_piece(int fd, uint64_t have, uint8_t *buf, uint64_t lo, uint64_t hi)
{
	uint64_t end = hi < have ? hi : have;
	ssize_t n;

	memset(buf, 0, (size_t)(hi - lo));
	while (fd >= 0 && lo < end) {
		n = pread(fd, buf, (size_t)(end - lo), (off_t)lo);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		buf += n;
		lo += (uint64_t)n;
	}
	return 0;
}

/* Block [start, end) of the stream, as the bases (or, with `partial`,
 * the unfinished copies where there are some) would fill it: its digest
 * into out.  *first: the first file that may hold it (blocks come in
 * order).  0 or -errno. */
static int
view_digest(struct view *v, uint64_t start, uint64_t end, size_t *first,
	    bool partial, uint8_t *out)
{
	const struct job_file *f;
	XXH3_state_t ctx;
	uint64_t lo, hi;
	size_t i;
	int rc = 0, fd;

	while (*first < v->job->nfiles &&
	       v->off[*first] + v->job->files[*first].size <= start)
		(*first)++;
	for (i = *first; i < v->job->nfiles && rc == 0; i++) {
		f = &v->job->files[i];
		if (v->off[i] >= end)
			break;
		if (f->size == 0)
			continue;
		lo = start > v->off[i] ? start - v->off[i] : 0;
		hi = end < v->off[i] + f->size ? end - v->off[i] : f->size;
		fd = partial && v->partials && v->partials[i] >= 0
			     ? v->partials[i] : v->basis[i];
		rc = read_piece(fd, fd == v->basis[i] ? v->have[i] : UINT64_MAX,
				v->buf + (v->off[i] + lo - start), lo, hi);
	}
	digest_start(&ctx, store_digest_seed(v->job->token));
	XXH3_128bits_update(&ctx, v->buf, (size_t)(end - start));
	digest_out(&ctx, out);
	return rc;
}

/* The blocks whose digests differ from the source's, into need. */
static int
view_compare(struct view *v, const uint8_t *digests, struct bset *need)
{
	uint64_t total = 0, b, nb, bs = v->job->block_size, end;
	uint8_t mine[STORE_DIGEST_LEN];
	size_t i, first = 0, again = 0;
	int rc = 0;

	for (i = 0; i < v->job->nfiles; i++) {
		v->off[i] = total;
		total += v->job->files[i].size;
	}
	nb = job_blocks(v->job);
	for (b = 0; b < nb && rc == 0; b++) {
		end = (b + 1) * bs < total ? (b + 1) * bs : total;
		rc = view_digest(v, b * bs, end, &first, false, mine);
		if (rc == 0 && memcmp(mine, digests + b * STORE_DIGEST_LEN,
				      STORE_DIGEST_LEN) != 0) {
			again = first;
			rc = view_digest(v, b * bs, end, &again, true, mine);
			if (rc == 0 && memcmp(mine, digests + b * STORE_DIGEST_LEN,
					      STORE_DIGEST_LEN) != 0)
				rc = bset_add(need, b, 1);
			else if (rc == 0)
				v->resumed += end - b * bs;
		}
	}
	return rc;
}

int
store_predict(const struct job *job, const struct dest_policy *pol,
	      const uint8_t *digests, const int *partials, struct bset **need,
	      uint64_t *resumed, struct rd_err *err)
{
	size_t n = job->nfiles + 1, i;
	struct view v = {
		.job = job, .partials = partials,
		.basis = malloc(n * sizeof(*v.basis)),
		.have = calloc(n, sizeof(*v.have)),
		.off = calloc(n, sizeof(*v.off)),
		.buf = malloc(job->block_size ? job->block_size : 1),
	};
	int rc = v.basis && v.have && v.off && v.buf ? 0 : -ENOMEM;

	*need = NULL;
	*resumed = 0;
	for (i = 0; v.basis != NULL && i < n; i++)
		v.basis[i] = -1;
	if (rc == 0)
		rc = dest_bases(job, pol, note_basis, &v, err);
	if (rc == 0)
		rc = bset_new(need);
	if (rc == 0)
		rc = view_compare(&v, digests, *need);
	if (rc == 0)
		*resumed = v.resumed;
	if (rc < 0 && err->code == 0)
		rd_errf(err, rc, "cannot compare the blocks held: %s",
			strerror(-rc));
	for (i = 0; v.basis != NULL && i < n; i++)
		if (v.basis[i] >= 0)
			close(v.basis[i]);
	free(v.basis);
	free(v.have);
	free(v.off);
	free(v.buf);
	if (rc < 0) {
		bset_free(*need);
		*need = NULL;
	}
	return rc;
}
