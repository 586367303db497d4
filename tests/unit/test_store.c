/* SPDX-License-Identifier: MIT */
/*
 * The manifest mapping: files seen as one stream cut into blocks.  Every
 * block's iovecs cover exactly its bytes of the concatenated files, across
 * empty files and file boundaries; receivers' temporaries land under their
 * final names with their modes, or vanish; checksums combine per block to
 * the stream's crc32.  Real files in a scratch directory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "unit.h"
#include "store/store.h"

static char scratch[256];	/* a mkdtemp in /tmp */

static void
setup(void)
{
	snprintf(scratch, sizeof(scratch), "/tmp/rdmcp-test-store.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	ck_assert_int_eq(system(cmd), 0);
}

static char *
scratch_path(const char *name)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", scratch, name);
	return p;
}

static void
write_file(const char *path, const uint8_t *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	chmod(path, mode);
}

/* Files of the given sizes with distinct bytes; returns their stream. */
static uint8_t *
make_sources(const size_t *sizes, size_t n, char **paths, size_t *total)
{
	uint8_t *stream;
	size_t i, j, off = 0;

	for (i = 0, *total = 0; i < n; i++)
		*total += sizes[i];
	stream = malloc(*total + 1);
	for (i = 0; i < n; i++) {
		for (j = 0; j < sizes[i]; j++)
			stream[off + j] = (uint8_t)(i * 31 + j * 7 + j / 253);
		paths[i] = malloc(PATH_MAX);
		snprintf(paths[i], PATH_MAX, "%s/src%zu", scratch, i);
		write_file(paths[i], stream + off, sizes[i], 0640);
		off += sizes[i];
	}
	return stream;
}

/* Every block's iovecs reproduce the stream. */
static void
check_blocks(struct store *st, const uint8_t *stream, size_t total,
	     uint32_t bsize)
{
	struct iovec iov[64];
	uint64_t b, off = 0;
	int n, i;

	ck_assert_uint_eq(store_total(st), total);
	ck_assert_uint_eq(store_blocks(st), (total + bsize - 1) / bsize);
	for (b = 0; b < store_blocks(st); b++) {
		uint64_t len = 0;

		n = store_iov(st, b, iov, 64);
		ck_assert_int_ge(n, 1);
		ck_assert_int_le(n, 64);
		for (i = 0; i < n; i++) {
			ck_assert_uint_gt(iov[i].iov_len, 0);
			ck_assert_mem_eq(iov[i].iov_base, stream + off + len,
					 iov[i].iov_len);
			len += iov[i].iov_len;
		}
		ck_assert_uint_eq(len, b + 1 < store_blocks(st)
					       ? bsize : total - off);
		off += len;
	}
	ck_assert_uint_eq(off, total);
	ck_assert_int_eq(store_iov(st, store_blocks(st), iov, 64), -EINVAL);
}

START_TEST(sources_map_to_blocks)
{
	static const size_t layouts[][8] = {
		{ 0, 5, 0, 3000, 1, 0, 10000, 0 },
		{ 512, 512, 512, 0, 0, 0, 0, 0 },
		{ 511, 1, 513, 1023, 0, 2, 0, 700 },
		{ 0, 0, 0, 0, 0, 0, 0, 0 },
		{ 100000, 0, 0, 0, 0, 0, 0, 1 },
	};
	size_t l, total, i;
	char *paths[8];
	uint8_t *stream;
	struct store *st;
	struct rd_err err = { 0 };

	for (l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		stream = make_sources(layouts[l], 8, paths, &total);
		ck_assert_int_eq(store_open_sources((const char *const *)paths,
						    8, 512, &st, &err), 0);
		check_blocks(st, stream, total, 512);
		ck_assert_uint_eq(store_compute_crc(st),
				  crc32(0, stream, (uInt)total));
		store_free(st);
		for (i = 0; i < 8; i++)
			free(paths[i]);
		free(stream);
	}
	store_free(NULL);
}
END_TEST

START_TEST(many_small_files_in_one_block)
{
	size_t sizes[200], total, i;
	char *paths[200];
	uint8_t *stream;
	struct store *st;
	struct iovec iov[8];

	for (i = 0; i < 200; i++)
		sizes[i] = i % 3;
	stream = make_sources(sizes, 200, paths, &total);
	ck_assert_int_eq(store_open_sources((const char *const *)paths, 200,
					    4096, &st, NULL), 0);
	/* one block, more pieces than the array holds: the count says so */
	ck_assert_int_eq(store_iov(st, 0, iov, 8), 133);
	store_free(st);
	for (i = 0; i < 200; i++)
		free(paths[i]);
	free(stream);
}
END_TEST

START_TEST(bad_sources)
{
	struct rd_err err = { 0 };
	const char *dir[] = { scratch };
	const char *missing[] = { scratch_path("nope") };
	struct store *st;

	ck_assert_int_eq(store_open_sources(dir, 1, 4096, &st, &err), -EISDIR);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(err.msg, "is a directory"));
	rd_err_clear(&err);
	ck_assert_int_eq(store_open_sources(missing, 1, 4096, &st, &err),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "nope"));
}
END_TEST

/* A job that lands `n` files of the given sizes in scratch/dst. */
static struct job *
landing_job(const size_t *sizes, size_t n, uint32_t bsize)
{
	struct job *job = calloc(1, sizeof(*job));
	size_t i;

	job->block_size = bsize;
	job->nfiles = (uint32_t)n;
	job->files = calloc(n, sizeof(*job->files));
	for (i = 0; i < n; i++) {
		job->files[i].path = malloc(PATH_MAX);
		snprintf(job->files[i].path, PATH_MAX, "%s/dst/f%zu", scratch,
			 i);
		job->files[i].size = sizes[i];
		job->files[i].mode = i == 0 ? 04755 : 0600;
		job->total += sizes[i];
	}
	return job;
}

static size_t
count_entries(const char *dir)
{
	char cmd[PATH_MAX + 32], line[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	pclose(f);
	return (size_t)atol(line);
}

START_TEST(land_and_discard)
{
	static const size_t sizes[] = { 70000, 0, 1, 4096 };
	const char *roots[] = { scratch };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = landing_job(sizes, 4, 4096);
	struct rd_err err = { 0 };
	struct iovec iov[8];
	struct store *st;
	struct stat sb;
	uint64_t b;
	int n, i;

	mkdir(scratch_path("dst"), 0755);
	ck_assert_int_eq(store_create(job, &pol, &st, &err), 0);
	/* temporaries exist, full size, under hidden names; no final names */
	ck_assert_uint_eq(count_entries(scratch_path("dst")), 4);
	ck_assert_int_ne(access(job->files[0].path, F_OK), 0);
	for (b = 0; b < store_blocks(st); b++) {
		n = store_iov(st, b, iov, 8);
		for (i = 0; i < n; i++)
			memset(iov[i].iov_base, (int)(b + 1), iov[i].iov_len);
		ck_assert_int_eq(store_arrived(st, b), 0);
	}
	ck_assert_int_eq(store_commit(st, &err), 0);
	ck_assert_int_eq(stat(job->files[0].path, &sb), 0);
	ck_assert_uint_eq(sb.st_size, 70000);
	ck_assert_uint_eq(sb.st_mode & 07777, 0755);	/* no set-uid */
	ck_assert_int_eq(stat(job->files[1].path, &sb), 0);
	ck_assert_uint_eq(sb.st_size, 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	store_free(st);
	ck_assert_uint_eq(count_entries(scratch_path("dst")), 4);

	/* again without --force: every existing name is refused up front */
	ck_assert_int_eq(store_create(job, &pol, &st, &err), -EEXIST);
	ck_assert_ptr_null(st);
	/* with --force, created then dropped: temporaries go, files stay */
	pol.force = true;
	ck_assert_int_eq(store_create(job, &pol, &st, &err), 0);
	ck_assert_uint_eq(count_entries(scratch_path("dst")), 8);
	store_free(st);
	ck_assert_uint_eq(count_entries(scratch_path("dst")), 4);
	job_free(job);
}
END_TEST

/* --verify reads the copy back as it is once every block is in: a byte
 * changed after its block arrived changes the crc (it once came from the
 * blocks as they arrived, and such a change passed as verified). */
START_TEST(stream_crc_of_the_copy)
{
	static const size_t sizes[] = { 3000, 0, 5000, 1 };
	const char *roots[] = { scratch };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = landing_job(sizes, 4, 1024);
	uint8_t *all = malloc(8001);
	struct iovec iov[8];
	struct store *st;
	size_t off = 0;
	uint64_t b;
	int n, i;

	mkdir(scratch_path("dst"), 0755);
	ck_assert_int_eq(store_create(job, &pol, &st, NULL), 0);
	/* blocks arrive out of order, as they do in the pipeline */
	for (b = store_blocks(st); b-- > 0;) {
		n = store_iov(st, b, iov, 8);
		for (i = 0; i < n; i++)
			memset(iov[i].iov_base, (int)(b * 3 + i), iov[i].iov_len);
		store_arrived(st, b);
	}
	for (b = 0; b < store_blocks(st); b++) {
		n = store_iov(st, b, iov, 8);
		for (i = 0; i < n; i++) {
			memcpy(all + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
	}
	ck_assert_uint_eq(off, 8001);
	ck_assert_uint_eq(store_compute_crc(st), crc32(0, all, 8001));
	/* a byte of the second file changed in its temporary, later */
	n = store_iov(st, 4, iov, 8);
	ck_assert_int_ge(n, 1);
	((uint8_t *)iov[0].iov_base)[7] ^= 0x5a;
	all[4 * 1024 + 7] ^= 0x5a;
	ck_assert_uint_eq(store_compute_crc(st), crc32(0, all, 8001));
	store_free(st);
	job_free(job);
	free(all);
}
END_TEST

static void
expect_create_fails(struct job *job, const struct dest_policy *pol,
		    int code, const char *what)
{
	struct rd_err err = { 0 };
	struct store *st;

	ck_assert_int_eq(store_create(job, pol, &st, &err), code);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(err.msg, what) != NULL, "'%s' lacks '%s'",
		      err.msg, what);
}

START_TEST(confinement)
{
	static const size_t sizes[] = { 10, 10 };
	char inside[512];
	const char *roots[] = { inside };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = landing_job(sizes, 2, 4096);

	snprintf(inside, sizeof(inside), "%s/inside", scratch);
	mkdir(inside, 0755);
	mkdir(scratch_path("dst"), 0755);
	/* scratch/dst is outside the root scratch/inside */
	expect_create_fails(job, &pol, -EACCES, "not under a --root");
	/* a symlink inside the root that leads out of it */
	symlink(scratch_path("dst"), scratch_path("inside/link"));
	snprintf(job->files[0].path, PATH_MAX, "%s/inside/link/f", scratch);
	snprintf(job->files[1].path, PATH_MAX, "%s/inside/g", scratch);
	expect_create_fails(job, &pol, -EACCES, "not under a --root");
	/* lexical escapes are refused before any lookup */
	snprintf(job->files[0].path, PATH_MAX, "%s/inside/../dst/f", scratch);
	expect_create_fails(job, &pol, -EINVAL, "not a clean");
	/* the same name twice */
	snprintf(job->files[0].path, PATH_MAX, "%s/inside/g", scratch);
	expect_create_fails(job, &pol, -EINVAL, "appears twice");
	/* a missing directory */
	snprintf(job->files[0].path, PATH_MAX, "%s/inside/no/f", scratch);
	expect_create_fails(job, &pol, -ENOENT, "inside/no");
	/* nothing was created anywhere */
	ck_assert_uint_eq(count_entries(inside), 1);
	ck_assert_uint_eq(count_entries(scratch_path("dst")), 0);
	job_free(job);
}
END_TEST

/* A file of `size` bytes whose only data are the `n` pieces at offs[k]
 * (DATA_LEN bytes each, a pattern from seed): the rest holes. */
#define DATA_LEN 3000
static void
sparse_file(const char *path, uint64_t size, const uint64_t *offs, size_t n,
	    uint8_t seed, uint8_t *image)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	uint8_t piece[DATA_LEN];
	size_t k, i;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	memset(image, 0, size);
	for (k = 0; k < n; k++) {
		for (i = 0; i < sizeof(piece); i++)
			piece[i] = (uint8_t)(seed + k * 31 + i * 7);
		ck_assert_int_eq(pwrite(fd, piece, sizeof(piece), (off_t)offs[k]),
				 (ssize_t)sizeof(piece));
		memcpy(image + offs[k], piece, sizeof(piece));
	}
	close(fd);
}

/* Block digests read the sources' holes as the zeros they are, across
 * files and blocks, whatever the block size: the data extents found for
 * one block serve the next ones (issue 37: digesting must not ask the
 * file system for the next hole per block).  They are XXH3-128 seeded
 * by the token of the job (little-endian), so another job digests
 * differently. */
START_TEST(digests_across_holes)
{
	static const uint64_t offs_a[] = { 0, 200000, 700000 };
	static const uint64_t offs_c[] = { 4096, 8192, 65536 };
	static const uint32_t sizes[] = { 4096, 12288, 65536, 1000, 1 << 20 };
	const uint64_t la = 800000, lb = 100000, lc = 70000;
	uint8_t *stream = malloc(la + lb + lc), got[STORE_DIGEST_LEN],
		want[STORE_DIGEST_LEN], *all;
	const char *paths[3] = { scratch_path("a"), scratch_path("b"),
				 scratch_path("c") };
	static const uint8_t token[PROTO_TOKEN_LEN] = { 7, 1, 2, 3, 4, 5, 6, 8 },
			     other[PROTO_TOKEN_LEN] = { 7, 1, 2, 3, 4, 5, 6, 9 };
	XXH128_canonical_t want128;
	struct store *st;
	uint64_t b, nb, len;
	size_t z;

	ck_assert_ptr_nonnull(stream);
	sparse_file(paths[0], la, offs_a, 3, 1, stream);
	sparse_file(paths[1], lb, NULL, 0, 0, stream + la);
	sparse_file(paths[2], lc, offs_c, 3, 9, stream + la + lb);
	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		ck_assert_int_eq(store_open_sources(paths, 3, sizes[z], &st,
						    NULL), 0);
		store_seed_digests(st, token);
		nb = store_stream_blocks(st);
		ck_assert_uint_eq(nb, (la + lb + lc + sizes[z] - 1) / sizes[z]);
		all = malloc(nb * STORE_DIGEST_LEN);
		ck_assert_ptr_nonnull(all);
		store_digests(st, 0, nb, all);
		for (b = 0; b < nb; b++) {
			len = (b + 1) * sizes[z] < la + lb + lc
				      ? sizes[z] : la + lb + lc - b * sizes[z];
			XXH128_canonicalFromHash(&want128, XXH3_128bits_withSeed(
				stream + b * sizes[z], (size_t)len,
				0x0806050403020107ull));	/* the token, LE */
			memcpy(want, want128.digest, STORE_DIGEST_LEN);
			ck_assert_mem_eq(all + b * STORE_DIGEST_LEN, want,
					 STORE_DIGEST_LEN);
			store_digests(st, b, 1, got);	/* alone: the same */
			ck_assert_mem_eq(got, want, STORE_DIGEST_LEN);
		}
		store_seed_digests(st, other);	/* another job's: others */
		store_digests(st, 0, 1, got);
		ck_assert_mem_ne(got, all, STORE_DIGEST_LEN);
		free(all);
		store_free(st);
	}
	free(stream);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sources_map_to_blocks);
	tcase_add_test(tc, many_small_files_in_one_block);
	tcase_add_test(tc, bad_sources);
	tcase_add_test(tc, land_and_discard);
	tcase_add_test(tc, stream_crc_of_the_copy);
	tcase_add_test(tc, confinement);
	tcase_add_test(tc, digests_across_holes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(store_suite());
}
