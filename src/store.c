/*
 * store - files as one block stream (see store.h).
 */
#include "store.h"

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

#include "path.h"

struct sfile {
	char *path;	/* sender: the source; receiver: the final name */
	char *tmp;	/* receiver: the temporary, until committed */
	uint64_t off;	/* offset in the stream */
	uint64_t size;
	uint32_t mode;
	uint8_t *map;
};

struct store {
	bool receiver;
	bool force;
	uint32_t bsize;
	uint64_t total;
	uint64_t blocks;
	size_t n;
	struct sfile *f;
	size_t *full;		/* indices of non-empty files, by offset */
	size_t nfull;
	uint32_t *crc;		/* per block, when tracking */
};

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
	struct stat sb;
	int fd, rc;

	f->path = strdup(path);
	if (f->path == NULL)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rd_errf(err, -errno, "cannot open %s: %s", path,
			       strerror(errno));
	rc = fstat(fd, &sb) < 0 ? -errno : 0;
	if (rc == 0 && S_ISDIR(sb.st_mode))
		rc = rd_errf(err, -EISDIR, "%s is a directory", path);
	else if (rc == 0 && !S_ISREG(sb.st_mode))
		rc = rd_errf(err, -EINVAL, "%s is not a regular file", path);
	if (rc == 0) {
		f->size = (uint64_t)sb.st_size;
		f->mode = sb.st_mode & 07777;
		rc = map_file(fd, f->size, false, &f->map);
		if (rc < 0)
			rd_errf(err, rc, "cannot map %s: %s", path,
				strerror(-rc));
	}
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
		rc = open_source(&st->f[i], paths[i], err);
		if (rc < 0) {
			store_free(st);
			return rc;
		}
	}
	store_layout(st);
	*out = st;
	return 0;
}

/* ---------------------------------------------------------------------
 * Receiver
 */

static bool
under_roots(const struct store_policy *pol, const char *dir)
{
	size_t i;

	for (i = 0; i < pol->nroots; i++)
		if (path_under(pol->roots[i], dir))
			return true;
	return false;
}

/* Where file `path` of a job lands: the directory, resolved and checked
 * against the roots, and the final name in it. */
static int
resolve_destination(const char *path, const struct store_policy *pol,
		    char **final, struct rd_err *err)
{
	char *full = NULL, *parent = NULL, real[PATH_MAX];
	int rc = 0;

	*final = NULL;
	if (!path_is_clean(path) || strcmp(path, "/") == 0)
		return rd_errf(err, -EINVAL, "destination '%s' is not a clean "
			       "absolute file path", path);
	full = pol->prefix ? path_absolute(pol->prefix, path + 1)
			   : strdup(path);
	parent = full ? path_parent(full) : NULL;
	if (parent == NULL) {
		rc = -ENOMEM;
	} else if (realpath(parent, real) == NULL) {
		rc = rd_errf(err, -errno, "destination directory %s: %s",
			     parent, strerror(errno));
	} else if (!under_roots(pol, real)) {
		rc = rd_errf(err, -EACCES, "destination directory %s is not "
			     "under a --root of this daemon", parent);
	} else {
		*final = path_join(real, path_base(full));
		rc = *final ? 0 : -ENOMEM;
	}
	free(parent);
	free(full);
	return rc;
}

static int
check_existing(const char *final, bool force, struct rd_err *err)
{
	struct stat sb;

	if (lstat(final, &sb) < 0)
		return errno == ENOENT ? 0
				       : rd_errf(err, -errno, "%s: %s", final,
						 strerror(errno));
	if (S_ISDIR(sb.st_mode))
		return rd_errf(err, -EISDIR, "%s is a directory", final);
	if (!force)
		return rd_errf(err, -EEXIST, "%s exists (--force replaces "
			       "it)", final);
	return 0;
}

static int
reserve(int fd, uint64_t size, const char *final, struct rd_err *err)
{
	int rc;

	if (size == 0)
		return 0;
	rc = posix_fallocate(fd, 0, (off_t)size);
	if (rc == EOPNOTSUPP || rc == EINVAL)
		rc = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	if (rc == ENOSPC || rc == EDQUOT)
		return rd_errf(err, -rc, "%s: %s (%llu bytes needed)", final,
			       strerror(rc), (unsigned long long)size);
	if (rc != 0)
		return rd_errf(err, -rc, "cannot reserve space for %s: %s",
			       final, strerror(rc));
	return 0;
}

static int
create_temporary(struct sfile *f, struct rd_err *err)
{
	char *dir = path_parent(f->path), *name = NULL;
	int fd = -1, rc = -ENOMEM;

	if (dir == NULL || asprintf(&name, ".%s.rdmcp-XXXXXX",
				    path_base(f->path)) < 0)
		goto out;
	f->tmp = path_join(dir, name);
	if (f->tmp == NULL)
		goto out;
	fd = mkostemp(f->tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = rd_errf(err, -errno, "cannot create a file in %s: %s",
			     dir, strerror(errno));
		free(f->tmp);
		f->tmp = NULL;
		goto out;
	}
	rc = reserve(fd, f->size, f->path, err);
	if (rc == 0)
		rc = map_file(fd, f->size, true, &f->map);
	if (rc < 0)
		rd_errf(err, rc, "cannot map %s: %s", f->tmp, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	free(name);
	free(dir);
	return rc;
}

static int
cmp_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No two files of one job may land on the same name. */
static int
check_duplicates(const struct store *st, struct rd_err *err)
{
	char **names = malloc((st->n ? st->n : 1) * sizeof(*names));
	size_t i;
	int rc = 0;

	if (names == NULL)
		return -ENOMEM;
	for (i = 0; i < st->n; i++)
		names[i] = st->f[i].path;
	qsort(names, st->n, sizeof(*names), cmp_paths);
	for (i = 1; i < st->n && rc == 0; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			rc = rd_errf(err, -EINVAL, "%s appears twice in the job",
				     names[i]);
	free(names);
	return rc;
}

int
store_create(const struct job *job, const struct store_policy *pol,
	     struct store **out, struct rd_err *err)
{
	struct store *st;
	size_t i;
	int rc;

	*out = NULL;
	rc = store_alloc(job->nfiles, job->block_size, true, &st);
	if (rc < 0)
		return rc;
	st->force = pol->force;
	for (i = 0; i < st->n && rc == 0; i++) {
		st->f[i].size = job->files[i].size;
		st->f[i].mode = job->files[i].mode;
		rc = resolve_destination(job->files[i].path, pol, &st->f[i].path,
					 err);
		if (rc == 0)
			rc = check_existing(st->f[i].path, pol->force, err);
	}
	if (rc == 0)
		rc = check_duplicates(st, err);
	for (i = 0; i < st->n && rc == 0; i++)
		rc = create_temporary(&st->f[i], err);
	if (rc < 0) {
		store_free(st);
		return rc;
	}
	store_layout(st);
	*out = st;
	return 0;
}

/* ---------------------------------------------------------------------
 * Blocks
 */

/* Index into st->full of the non-empty file holding stream offset `at`. */
static size_t
file_at(const struct store *st, uint64_t at)
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

/* Call fn on each piece of block `block` (one per file it spans); returns
 * the number of pieces. */
static int
walk_block(const struct store *st, uint64_t block,
	   void (*fn)(void *arg, int i, uint8_t *p, size_t len), void *arg)
{
	uint64_t start = block * st->bsize, end, lo, hi;
	const struct sfile *f;
	size_t i;
	int n = 0;

	end = start + st->bsize < st->total ? start + st->bsize : st->total;
	for (i = file_at(st, start); i < st->nfull; i++, n++) {
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

	if (block >= st->blocks)
		return -EINVAL;
	return walk_block(st, block, fill_iov, &fill);
}

int
store_track_crc(struct store *st)
{
	st->crc = calloc(st->blocks ? st->blocks : 1, sizeof(*st->crc));
	return st->crc != NULL ? 0 : -ENOMEM;
}

static void
crc_piece(void *arg, int i, uint8_t *p, size_t len)
{
	uLong *crc = arg;

	*crc = crc32_z(*crc, p, len);
}

int
store_arrived(struct store *st, uint64_t block)
{
	uLong crc = crc32(0, Z_NULL, 0);

	if (st->crc == NULL)
		return 0;
	if (block >= st->blocks)
		return -EINVAL;
	walk_block(st, block, crc_piece, &crc);
	st->crc[block] = (uint32_t)crc;
	return 0;
}

uint32_t
store_stream_crc(const struct store *st)
{
	uLong crc = crc32(0, Z_NULL, 0);
	uint64_t b, len;

	for (b = 0; b < st->blocks; b++) {
		len = b + 1 < st->blocks ? st->bsize
					 : st->total - b * (uint64_t)st->bsize;
		crc = crc32_combine(crc, st->crc[b], (z_off_t)len);
	}
	return (uint32_t)crc;
}

uint32_t
store_compute_crc(const struct store *st)
{
	uLong crc = crc32(0, Z_NULL, 0);
	size_t i;

	for (i = 0; i < st->nfull; i++) {
		const struct sfile *f = &st->f[st->full[i]];

		crc = crc32_z(crc, f->map, (size_t)f->size);
	}
	return (uint32_t)crc;
}

/* ---------------------------------------------------------------------
 * Landing
 */

static int
land(struct sfile *f, bool force, struct rd_err *err)
{
	/* set-id bits are never created */
	mode_t mode = f->mode & 01777;

	if (chmod(f->tmp, mode) < 0)
		return rd_errf(err, -errno, "cannot set mode of %s: %s",
			       f->tmp, strerror(errno));
	if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path,
		      force ? 0 : RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL && !force) {
		/* no RENAME_NOREPLACE here: link() never replaces either */
		if (link(f->tmp, f->path) == 0) {
			unlink(f->tmp);
			return 0;
		}
	}
	if (errno == EEXIST)
		return rd_errf(err, -EEXIST, "%s appeared during the "
			       "transfer (--force replaces it)", f->path);
	return rd_errf(err, -errno, "cannot rename %s into place: %s",
		       f->path, strerror(errno));
}

int
store_commit(struct store *st, struct rd_err *err)
{
	size_t i;
	int rc;

	for (i = 0; i < st->n; i++) {
		if (st->f[i].tmp == NULL)
			continue;
		rc = land(&st->f[i], st->force, err);
		if (rc < 0)
			return rc;
		free(st->f[i].tmp);
		st->f[i].tmp = NULL;
	}
	return 0;
}

uint64_t
store_total(const struct store *st)
{
	return st->total;
}

uint64_t
store_blocks(const struct store *st)
{
	return st->blocks;
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
store_mapping(const struct store *st, size_t i, void **addr, size_t *len)
{
	*addr = st->f[i].map;
	*len = st->f[i].map != NULL ? (size_t)st->f[i].size : 0;
}

void
store_free(struct store *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->n; i++) {
		if (st->f[i].map != NULL)
			munmap(st->f[i].map, (size_t)st->f[i].size);
		if (st->f[i].tmp != NULL) {
			unlink(st->f[i].tmp);
			free(st->f[i].tmp);
		}
		free(st->f[i].path);
	}
	free(st->f);
	free(st->full);
	free(st->crc);
	free(st);
}
