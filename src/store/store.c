/* SPDX-License-Identifier: MIT */
/*
 * store - files as one block stream (see store.h).
 */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dest/dest.h"
#include "store/store_int.h"
#include "util/bset.h"
#include "util/path.h"

static int
store_alloc(size_t n, uint32_t bsize, bool receiver, struct store **out)
{
	struct store *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return -ENOMEM;
	st->f = calloc(n ? n : 1, sizeof(*st->f));
	st->full = calloc(n ? n : 1, sizeof(*st->full));
	if (st->f == NULL || st->full == NULL) {
		free(st->f);
		free(st->full);
		free(st);
		return -ENOMEM;
	}
	st->n = n;
	st->bsize = bsize;
	st->receiver = receiver;
	for (size_t i = 0; i < n; i++)
		st->f[i].fd = -1;
	*out = st;
	return 0;
}

/* Lay the files out in the stream once their sizes are known. */
static void
store_layout(struct store *st)
{
	size_t i;

	st->total = 0;
	st->nfull = 0;
	for (i = 0; i < st->n; i++) {
		st->f[i].off = st->total;
		st->total += st->f[i].size;
		if (st->f[i].size > 0)
			st->full[st->nfull++] = i;
	}
	st->blocks = (st->total + st->bsize - 1) / st->bsize;
}

static int
map_file(int fd, uint64_t size, bool writable, uint8_t **out)
{
	void *p;

	*out = NULL;
	if (size == 0)
		return 0;
	if (size > SIZE_MAX)
		return -EFBIG;
	/* Sources are mapped private: we never write them, so the pages stay
	 * the page cache's own, and unlike a shared read-only mapping an RDMA
	 * device may register them (Linux 6.1 refuses the latter). */
	p = mmap(NULL, (size_t)size, PROT_READ | (writable ? PROT_WRITE : 0),
		 writable ? MAP_SHARED : MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, (size_t)size, MADV_SEQUENTIAL);
	*out = p;
	return 0;
}

/* ---------------------------------------------------------------------
 * Sender
 */

static int
open_source(struct sfile *f, const char *path, struct rd_err *err)
{
	int fd, rc;

	f->path = strdup(path);
	if (f->path == NULL)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rd_errf(err, -errno, "cannot open %s: %s", path,
			       strerror(errno));
	rc = fstat(fd, &f->sb) < 0 ? -errno : 0;
	if (rc == 0 && S_ISDIR(f->sb.st_mode))
		rc = rd_errf(err, -EISDIR, "%s is a directory (-r copies "
			     "directories)", path);
	else if (rc == 0 && !S_ISREG(f->sb.st_mode))
		rc = rd_errf(err, -EINVAL, "%s is not a regular file", path);
	if (rc == 0) {
		f->size = (uint64_t)f->sb.st_size;
		f->mode = f->sb.st_mode & 07777;
		rc = map_file(fd, f->size, false, &f->map);
		if (rc < 0)
			rd_errf(err, rc, "cannot map %s: %s", path,
				strerror(-rc));
	}
	if (rc == 0 && f->size > 0)
		f->fd = fd;	/* its bytes go out with sendfile */
	else
		close(fd);
	return rc;
}

int
store_open_sources(const char *const *paths, size_t n, uint32_t block_size,
		   struct store **out, struct rd_err *err)
{
	struct store *st;
	size_t i;
	int rc;

	*out = NULL;
	rc = store_alloc(n, block_size, false, &st);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		rc = paths[i] != NULL ? open_source(&st->f[i], paths[i], err)
				      : 0;
		if (rc < 0) {
			store_free(st);
			return rc;
		}
	}
	store_layout(st);
	*out = st;
	return 0;
}

void
store_set_block_size(struct store *st, uint32_t block_size)
{
	st->bsize = block_size;
	store_layout(st);
}

static bool
same_timespec(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

int
store_check_sources(const struct store *st, struct rd_err *err)
{
	const struct sfile *f;
	struct stat sb;
	size_t i;

	for (i = 0; i < st->n; i++) {
		f = &st->f[i];
		if (f->path == NULL)
			continue;
		if (stat(f->path, &sb) < 0)
			return rd_errf(err, -ESTALE, "source %s changed while "
				       "it was sent: %s", f->path,
				       strerror(errno));
		if (sb.st_dev != f->sb.st_dev || sb.st_ino != f->sb.st_ino ||
		    sb.st_size != f->sb.st_size ||
		    !same_timespec(&sb.st_mtim, &f->sb.st_mtim) ||
		    !same_timespec(&sb.st_ctim, &f->sb.st_ctim))
			return rd_errf(err, -ESTALE, "source %s changed while "
				       "it was sent", f->path);
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Receiver
 */

/* dest_prepare made file i's temporary: map it, and keep it open (blocks
 * come in and go out through it). */
static int
map_temporary(void *ctx, size_t i, int fd)
{
	struct store *st = ctx;
	int rc = map_file(fd, st->f[i].size, true, &st->f[i].map);

	if (rc == 0 && st->f[i].size > 0)
		st->f[i].fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return rc;
}

int
store_create(const struct job *job, const struct dest_policy *pol,
	     struct store **out, struct rd_err *err)
{
	struct store *st;
	size_t i;
	int rc;

	*out = NULL;
	rc = store_alloc(job->nfiles, job->block_size, true, &st);
	if (rc < 0)
		return rc;
	for (i = 0; i < st->n; i++) {
		st->f[i].size = job->files[i].size;
		st->f[i].mode = job->files[i].mode;
	}
	rc = dest_prepare(job, pol, map_temporary, st, &st->dest, err);
	if (rc < 0) {
		if (err != NULL && err->code == 0)
			rd_errf(err, rc, "%s", strerror(-rc));
		store_free(st);
		return rc;
	}
	store_layout(st);
	store_seed_digests(st, job->token);
	st->good = calloc(st->blocks / 64 + 1, sizeof(uint64_t));
	if (st->good == NULL) {
		store_free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

struct look {
	struct proto_sum *sums;
	uint64_t seed;
};

/* What dest_look calls for each file that may be identical: its sum
 * into sums[i]. */
static int
sum_present(void *ctx, size_t i, int fd)
{
	struct look *lk = ctx;

	return store_sum_fd(fd, lk->seed, &lk->sums[i]);
}

int
store_look(const struct job *job, const struct dest_policy *pol,
	   uint8_t *seen, struct proto_sum *sums, struct rd_err *err)
{
	struct look lk = { sums, store_digest_seed(job->token) };

	return dest_look(job, pol, sum_present, &lk, seen, err);
}

/* ---------------------------------------------------------------------
 * Blocks
 */

size_t
store_file_at(const struct store *st, uint64_t at)
{
	size_t lo = 0, hi = st->nfull, mid;
	const struct sfile *f;

	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		f = &st->f[st->full[mid]];
		if (f->off <= at)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int
store_walk_block(const struct store *st, uint64_t block,
	   void (*fn)(void *arg, int i, uint8_t *p, size_t len), void *arg)
{
	uint64_t start = block * st->bsize, end, lo, hi;
	const struct sfile *f;
	size_t i;
	int n = 0;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = store_file_at(st, start); i < st->nfull; i++, n++) {
		f = &st->f[st->full[i]];
		if (f->off >= end)
			break;
		lo = start > f->off ? start - f->off : 0;
		hi = end < f->off + f->size ? end - f->off : f->size;
		fn(arg, n, f->map + lo, (size_t)(hi - lo));
	}
	return n;
}

struct iov_fill {
	struct iovec *iov;
	int max;
};

static void
fill_iov(void *arg, int i, uint8_t *p, size_t len)
{
	struct iov_fill *fill = arg;

	if (i < fill->max) {
		fill->iov[i].iov_base = p;
		fill->iov[i].iov_len = len;
	}
}

int
store_iov(struct store *st, uint64_t block, struct iovec *iov, int max)
{
	struct iov_fill fill = { iov, max };

	if (block >= store_blocks(st))
		return -EINVAL;
	return store_walk_block(st, store_stream_block(st, block), fill_iov, &fill);
}

void
store_keep_holes(struct store *st)
{
	st->holes = true;
}

static bool
all_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Free the file's whole pages in [lo, hi) that hold only zeros: they
 * read back as zeros, and the copy keeps the source's holes. */
static int
punch_zero_pages(const struct sfile *f, uint64_t lo, uint64_t hi)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t at = (lo + page - 1) / page * page, run = at;

	hi = hi / page * page;
	for (; at <= hi; at += page) {
		if (at < hi && all_zero(f->map + at, (size_t)page))
			continue;
		if (at > run && fallocate(f->fd, FALLOC_FL_PUNCH_HOLE |
					  FALLOC_FL_KEEP_SIZE, (off_t)run,
					  (off_t)(at - run)) < 0 &&
		    errno != EOPNOTSUPP)
			return -errno;
		run = at + page;
	}
	return 0;
}

int
store_punch_block(const struct store *st, uint64_t block)
{
	uint64_t start = block * st->bsize, end, lo, hi;
	const struct sfile *f;
	size_t i;
	int rc = 0;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = store_file_at(st, start); i < st->nfull && rc == 0; i++) {
		f = &st->f[st->full[i]];
		if (f->off >= end)
			break;
		lo = start > f->off ? start - f->off : 0;
		hi = end < f->off + f->size ? end - f->off : f->size;
		rc = punch_zero_pages(f, lo, hi);
	}
	return rc;
}

int
store_arrived(struct store *st, uint64_t block)
{
	uint64_t b;

	if (block >= store_blocks(st))
		return -EINVAL;
	b = store_stream_block(st, block);
	store_mark_good(st, b);
	return st->holes ? store_punch_block(st, b) : 0;
}

/* crc32 of `len` zero bytes appended to `crc`, without touching memory
 * that big: runs of 4 KiB combined by doubling. */
static uLong
crc_zeros(uLong crc, uint64_t len)
{
	static const uint8_t zeros[4096];
	uLong run = crc32(0, zeros, sizeof(zeros));
	uint64_t n = len / sizeof(zeros), runlen = sizeof(zeros);

	for (; n > 0; n >>= 1) {
		if (n & 1)
			crc = crc32_combine(crc, run, (z_off_t)runlen);
		run = crc32_combine(run, run, (z_off_t)runlen);
		runlen *= 2;
	}
	return crc32_z(crc, zeros, (size_t)(len % sizeof(zeros)));
}

/* The file's crc32 from its mapping, its holes taken as the zeros they
 * read as: reading a hole through a mapping would allocate it (tmpfs). */
static uLong
crc_of_file(uLong crc, const struct sfile *f)
{
	off_t at = 0, data, hole;
	const off_t size = (off_t)f->size;

	while (at < size) {
		data = lseek(f->fd, at, SEEK_DATA);
		if (data < 0)
			data = errno == ENXIO ? size : at;	/* no holes known */
		if (data > size)
			data = size;	/* it grew: a changed source, found later */
		hole = data < size ? lseek(f->fd, data, SEEK_HOLE) : size;
		if (hole < 0 || hole > size)
			hole = size;
		crc = crc_zeros(crc, (uint64_t)(data - at));
		crc = crc32_z(crc, f->map + data, (size_t)(hole - data));
		at = hole;
	}
	return crc;
}

uint32_t
store_compute_crc(const struct store *st)
{
	uLong crc = crc32(0, Z_NULL, 0);
	size_t i;

	for (i = 0; i < st->nfull; i++)
		crc = crc_of_file(crc, &st->f[st->full[i]]);
	return (uint32_t)crc;
}

int
store_commit(struct store *st, struct rd_err *err)
{
	return dest_commit(st->dest, err);
}

uint64_t
store_total(const struct store *st)
{
	return st->total;
}

uint64_t
store_blocks(const struct store *st)
{
	return st->map != NULL ? bset_count(st->map) : st->blocks;
}

uint64_t
store_stream_block(const struct store *st, uint64_t block)
{
	return st->map != NULL ? bset_nth(st->map, block) : block;
}

size_t
store_nfiles(const struct store *st)
{
	return st->n;
}

void
store_file(const struct store *st, size_t i, uint64_t *size, uint32_t *mode)
{
	*size = st->f[i].size;
	*mode = st->f[i].mode;
}

void
store_mapping(const struct store *st, size_t i, void **addr, size_t *len,
	      int *fd)
{
	*addr = st->f[i].map;
	*len = st->f[i].map != NULL ? (size_t)st->f[i].size : 0;
	*fd = st->f[i].fd;
}

void
store_free(struct store *st)
{
	size_t i;

	if (st == NULL)
		return;
	bset_free(st->map);
	free(st->good);
	for (i = 0; i < st->n; i++) {
		if (st->f[i].map != NULL)
			munmap(st->f[i].map, (size_t)st->f[i].size);
		if (st->f[i].fd >= 0)
			close(st->f[i].fd);
		free(st->f[i].path);
	}
	dest_free(st->dest);
	free(st->f);
	free(st->full);
	free(st);
}
