/* SPDX-License-Identifier: MIT */
/*
 * Where a job's entries land: hostile manifests (entries through links,
 * out of order, out of the root), what is in the way (FIFOs, files,
 * directories), merging through a link that stays inside the root,
 * set-ID bits, long names, that nothing is left when a job is not
 * committed, that nothing lands in the daemon's state directory, and the
 * parents -d DIR/ makes.
 * Real files in a scratch directory used as the root.
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

#include "dest/dest.h"
#include "unit.h"

static char root[128];
static const char *roots[1];
static const char *reserved;	/* the policy's, for run() */

static void
setup(void)
{
	char made[64] = "/tmp/rdmcp-test-dest.XXXXXX", real[PATH_MAX];

	ck_assert_ptr_nonnull(mkdtemp(made));
	ck_assert_ptr_nonnull(realpath(made, real));
	ck_assert_uint_lt(strlen(real), sizeof(root));
	memcpy(root, real, strlen(real) + 1);
	roots[0] = root;
	reserved = NULL;
}

static void
teardown(void)
{
	char cmd[2 * sizeof(root) + 64];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", root,
		 root);
	ck_assert_int_eq(system(cmd), 0);
}

static char *
at(const char *name)
{
	static char buf[8][sizeof(root) + 320];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%.300s", root, name);
	return p;
}

/* A job of up to 8 entries: "d NAME", "f NAME", "l NAME TARGET", and
 * "p NAME", a directory the job lands in (-d DIR/). */
static struct job *
make_job(const char *const *spec, size_t n)
{
	struct job *job = calloc(1, sizeof(*job));
	char kind, name[300], target[300];
	size_t i;

	job->nfiles = (uint32_t)n;
	job->block_size = 4096;
	job->files = calloc(n, sizeof(*job->files));
	for (i = 0; i < n; i++) {
		struct job_file *f = &job->files[i];

		target[0] = '\0';
		ck_assert_int_ge(sscanf(spec[i], "%c %299s %299s", &kind, name,
					target), 2);
		f->path = strdup(name[0] == '/' ? name : at(name));
		f->type = kind == 'd' || kind == 'p' ? JF_DIR
			  : kind == 'l' ? JF_LINK : JF_FILE;
		f->place = kind == 'p';
		f->mode = f->type == JF_DIR ? 0755 : 04755;
		f->size = kind == 'f' ? 10 : 0;
		if (kind == 'l')
			f->target = strdup(target);
	}
	return job;
}

static int
fill(void *ctx, size_t i, int fd)
{
	return pwrite(fd, "0123456789", 10, 0) == 10 ? 0 : -EIO;
}

static int
run(const char *const *spec, size_t n, bool allow_setid, bool commit,
    struct rd_err *err)
{
	struct dest_policy pol = { .roots = roots, .nroots = 1,
				    .allow_setid = allow_setid,
				    .reserved = reserved };
	struct job *job = make_job(spec, n);
	struct dest *d = NULL;
	int rc;

	rd_err_clear(err);
	rc = dest_prepare(job, &pol, fill, NULL, &d, err);
	if (rc == 0 && commit)
		rc = dest_commit(d, err);
	dest_free(d);
	job_free(job);
	return rc;
}

/* Names in the root, "" if none, sorted, space-separated. */
static const char *
listing(void)
{
	static char out[4096];
	char cmd[sizeof(root) + 64];
	FILE *p;
	size_t len;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -mindepth 1 | sort | "
		 "tr '\\n' ' '", root);
	p = popen(cmd, "r");
	len = fread(out, 1, sizeof(out) - 1, p);
	pclose(p);
	out[len] = '\0';
	return out;
}

START_TEST(tree_lands_whole)
{
	const char *spec[] = { "d a", "d a/b", "f a/b/x", "l a/l b/x",
			       "f a/y" };
	struct rd_err err;
	struct stat sb;
	char buf[64];

	ck_assert_int_eq(run(spec, 5, false, true, &err), 0);
	ck_assert_str_eq(listing(), "./a ./a/b ./a/b/x ./a/l ./a/y ");
	ck_assert_int_eq(stat(at("a/b/x"), &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0755);	/* set-ID dropped */
	ck_assert_int_eq(readlink(at("a/l"), buf, sizeof(buf)), 3);
}
END_TEST

/* -d DIR/ (JOB_PARENTS): the ancestors of the first entry missing below
 * the root join the job before it, top first, like it; nothing above or
 * outside the root is looked at; then the tree lands whole, or, not
 * committed, leaves nothing. */
START_TEST(parents_join_the_job)
{
	const char *spec[] = { "d a/b/c/d", "f a/b/c/d/x" };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = make_job(spec, 2);
	struct rd_err err = { 0 };
	struct dest *d = NULL;

	ck_assert_int_eq(mkdir(at("a"), 0700), 0);
	job->flags = JOB_PARENTS;
	job->files[0].mtime_sec = 12345;
	ck_assert_int_eq(dest_add_parents(job, &pol, &err), 0);
	ck_assert_uint_eq(job->nfiles, 4);
	ck_assert_str_eq(job->files[0].path, at("a/b"));
	ck_assert_str_eq(job->files[1].path, at("a/b/c"));
	ck_assert_str_eq(job->files[2].path, at("a/b/c/d"));
	ck_assert_str_eq(job->files[3].path, at("a/b/c/d/x"));
	ck_assert_uint_eq(job->files[0].type, JF_DIR);
	ck_assert_uint_eq(job->files[1].mode, 0755);
	ck_assert_int_eq(job->files[0].mtime_sec, 12345);
	/* again (REPLACE sets up again): nothing more to add */
	ck_assert_int_eq(dest_add_parents(job, &pol, &err), 0);
	ck_assert_uint_eq(job->nfiles, 4);
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	dest_free(d);		/* not committed */
	ck_assert_str_eq(listing(), "./a ");
	d = NULL;
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	ck_assert_int_eq(dest_commit(d, &err), 0);
	dest_free(d);
	ck_assert_str_eq(listing(), "./a ./a/b ./a/b/c ./a/b/c/d ./a/b/c/d/x ");
	job_free(job);
	/* without the flag, or outside the root: the job as it came */
	job = make_job((const char *[]){ "d /nonexistent-rdmcp/p/q" }, 1);
	ck_assert_int_eq(dest_add_parents(job, &pol, &err), 0);
	job->flags = JOB_PARENTS;
	ck_assert_int_eq(dest_add_parents(job, &pol, &err), 0);
	ck_assert_uint_eq(job->nfiles, 1);
	job_free(job);
}
END_TEST

START_TEST(setid_kept_when_allowed)
{
	const char *spec[] = { "f x" };
	struct rd_err err;
	struct stat sb;

	ck_assert_int_eq(run(spec, 1, true, true, &err), 0);
	ck_assert_int_eq(stat(at("x"), &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 04755);
}
END_TEST

START_TEST(uncommitted_leaves_nothing)
{
	const char *spec[] = { "d a", "d a/b", "f a/b/x", "l a/l b/x",
			       "f top" };
	struct rd_err err;

	ck_assert_int_eq(mkdir(at("keep"), 0755), 0);
	ck_assert_int_eq(run(spec, 5, false, false, &err), 0);
	ck_assert_str_eq(listing(), "./keep ");
}
END_TEST

START_TEST(through_a_link_entry)
{
	/* the link is made by the job itself; its child may not follow it */
	const char *spec[] = { "d a", "l a/l /etc", "f a/l/passwd" };
	struct rd_err err;

	ck_assert_int_lt(run(spec, 3, false, true, &err), 0);
	ck_assert_str_eq(listing(), "");
}
END_TEST

START_TEST(child_before_parent)
{
	const char *spec[] = { "f a/x", "d a" };
	struct rd_err err;

	ck_assert_int_eq(run(spec, 2, false, true, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "comes before its directory"));
	ck_assert_str_eq(listing(), "");
}
END_TEST

START_TEST(link_out_of_root)
{
	const char *spec[] = { "f esc/x" };
	struct rd_err err;

	ck_assert_int_eq(symlink("/tmp", at("esc")), 0);
	ck_assert_int_eq(run(spec, 1, false, true, &err), -EACCES);
	ck_assert_ptr_nonnull(strstr(err.msg, "not under a --root"));
	/* as the directory the job lands in (-d DIR/), merged into
	 * through the link, too (a tree's directory is refused at once) */
	const char *spec2[] = { "p esc", "f esc/x" };
	ck_assert_int_eq(run(spec2, 2, false, true, &err), -EACCES);
	ck_assert_ptr_nonnull(strstr(err.msg, "leads out of the --root"));
}
END_TEST

/* The daemon's state directory in its root (a --prefix daemon's): no
 * entry may be it, land in it, or reach it through a link. */
START_TEST(state_dir_reserved)
{
	const char *in_it[] = { "f .rdmcp-state/job-x" };
	const char *it[] = { "d .rdmcp-state", "f .rdmcp-state/job-x" };
	const char *as_file[] = { "f .rdmcp-state" };
	const char *through[] = { "f alias/job-x" };
	const char *beside[] = { "f .rdmcp-statex" };
	struct rd_err err;

	ck_assert_int_eq(mkdir(at(".rdmcp-state"), 0700), 0);
	ck_assert_int_eq(symlink(".rdmcp-state", at("alias")), 0);
	reserved = at(".rdmcp-state");
	ck_assert_int_eq(run(in_it, 1, false, true, &err), -EACCES);
	ck_assert_ptr_nonnull(strstr(err.msg, "state directory"));
	ck_assert_int_eq(run(it, 2, false, true, &err), -EACCES);
	ck_assert_int_eq(run(as_file, 1, true, true, &err), -EACCES);
	ck_assert_int_eq(run(through, 1, false, true, &err), -EACCES);
	ck_assert_str_eq(listing(), "./.rdmcp-state ./alias ");
	ck_assert_int_eq(run(beside, 1, false, true, &err), 0);
	ck_assert_int_eq(access(at(".rdmcp-statex"), F_OK), 0);
}
END_TEST

/* A link where a tree's directory lands is refused, even with --force
 * (the man page's DESTINATIONS); where the job lands (-d DIR/), merged
 * through, as a destination's parents are. */
START_TEST(merge_through_inner_link)
{
	const char *tree[] = { "d alias", "f alias/x" };
	const char *place[] = { "p alias", "f alias/x" };
	struct rd_err err;

	ck_assert_int_eq(mkdir(at("real"), 0700), 0);
	ck_assert_int_eq(symlink(at("real"), at("alias")), 0);
	ck_assert_int_eq(run(tree, 2, false, true, &err), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err.msg, "a tree is not merged through "
					      "a link"));
	ck_assert_int_ne(access(at("real/x"), F_OK), 0);
	ck_assert_int_eq(run(place, 2, false, true, &err), 0);
	ck_assert_int_eq(access(at("real/x"), F_OK), 0);
}
END_TEST

START_TEST(things_in_the_way)
{
	const char *file[] = { "f fifo" };
	const char *dir[] = { "d f", "f f/x" };
	const char *onto_dir[] = { "f d" };
	struct rd_err err;

	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(run(file, 1, false, true, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "is a FIFO"));
	ck_assert_int_eq(mkdir(at("d"), 0755), 0);
	ck_assert_int_eq(run(onto_dir, 1, false, true, &err), -EISDIR);
	ck_assert_int_eq(close(creat(at("f"), 0600)), 0);
	ck_assert_int_eq(run(dir, 2, false, true, &err), -ENOTDIR);
	ck_assert_str_eq(listing(), "./d ./f ./fifo ");
}
END_TEST

START_TEST(dot_dot_and_duplicates)
{
	const char *dots[] = { "f /x/../y" };
	const char *twice[] = { "f x", "f x" };
	struct rd_err err;

	ck_assert_int_eq(run(dots, 1, false, true, &err), -EINVAL);
	ck_assert_int_eq(run(twice, 2, false, true, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "appears twice"));
	ck_assert_str_eq(listing(), "");
}
END_TEST

START_TEST(long_names)
{
	char name[300], spec_s[320];
	const char *spec[] = { spec_s };
	struct rd_err err;

	memset(name, 'n', 250);
	name[250] = '\0';
	snprintf(spec_s, sizeof(spec_s), "f %s", name);
	ck_assert_int_eq(run(spec, 1, false, true, &err), 0);
	ck_assert_int_eq(access(at(name), F_OK), 0);
}
END_TEST

/* The temporary in the root (".NAME.rdmcp-XXXXXXXX") of a job made for
 * entry `name`. */
static const char *
temporary_of(const char *name)
{
	static char found[300];
	char pat[64], cmd[sizeof(root) + 128];
	FILE *p;
	size_t len;

	snprintf(pat, sizeof(pat), ".%s.rdmcp-", name);
	snprintf(cmd, sizeof(cmd), "cd '%s' && ls -a | grep -F -- '%s'", root,
		 pat);
	p = popen(cmd, "r");
	len = fread(found, 1, sizeof(found) - 1, p);
	pclose(p);
	found[len] = '\0';
	found[strcspn(found, "\n")] = '\0';
	ck_assert_ptr_nonnull(strstr(found, pat));
	return found;
}

/* Replace `name` in the root, atomically, with a link to `target`, as a
 * user who may write the directory can at any moment. */
static void
swap_for_link(const char *name, const char *target)
{
	ck_assert_int_eq(symlink(target, at("swap")), 0);
	ck_assert_int_eq(rename(at("swap"), at(name)), 0);
}

static mode_t
mode_of(const char *path)
{
	struct stat sb;

	ck_assert_int_eq(lstat(path, &sb), 0);
	return sb.st_mode & 07777;
}

/* A temporary replaced by a link to a file of someone else's during the
 * transfer: the commit fails and neither follows the link (the victim
 * keeps its mode) nor places the link, nor removes it. */
START_TEST(temporary_swapped_for_link)
{
	const char *spec[] = { "f x" };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = make_job(spec, 1);
	struct dest *d = NULL;
	struct rd_err err;
	struct stat sb;
	char temp[300];

	ck_assert_int_eq(close(open(at("victim"), O_CREAT | O_WRONLY, 0600)),
			 0);
	ck_assert_int_eq(chmod(at("victim"), 0600), 0);
	rd_err_clear(&err);
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	snprintf(temp, sizeof(temp), "%s", temporary_of("x"));
	swap_for_link(temp, at("victim"));
	ck_assert_int_eq(dest_commit(d, &err), -ESTALE);
	ck_assert_ptr_nonnull(strstr(err.msg, "was replaced"));
	dest_free(d);
	job_free(job);
	ck_assert_uint_eq(mode_of(at("victim")), 0600);
	ck_assert_int_eq(access(at("x"), F_OK), -1);
	ck_assert_int_eq(lstat(at(temp), &sb), 0);	/* the link is left */
	ck_assert(S_ISLNK(sb.st_mode));
}
END_TEST

/* A directory the job made, replaced by a link to another directory of
 * the root: nothing is created, changed or removed through the link. */
START_TEST(made_directory_swapped_for_link)
{
	const char *spec[] = { "d a", "f a/x" };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = make_job(spec, 2);
	struct dest *d = NULL;
	struct rd_err err;
	char temp[300];

	ck_assert_int_eq(mkdir(at("victim"), 0755), 0);
	ck_assert_int_eq(close(open(at("victim/x"), O_CREAT | O_WRONLY, 0600)),
			 0);
	rd_err_clear(&err);
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	snprintf(temp, sizeof(temp), "%s", temporary_of("a"));
	ck_assert_int_eq(rename(at(temp), at("moved")), 0);
	swap_for_link(temp, at("victim"));
	ck_assert_int_eq(dest_commit(d, &err), -ESTALE);
	dest_free(d);
	job_free(job);
	ck_assert_uint_eq(mode_of(at("victim/x")), 0600);
	ck_assert_uint_eq(mode_of(at("victim")), 0755);
	ck_assert_int_eq(access(at("a"), F_OK), -1);
}
END_TEST

static int
nothing(void *ctx, size_t i, int fd)
{
	(*(int *)ctx)++;	/* a candidate was opened */
	return 0;
}

/* What dest_look sees, and a job that keeps what is identical: the file
 * kept is left as it is (same inode, no temporary left), the missing one
 * made; a file kept that went meanwhile lands from its temporary. */
START_TEST(look_and_keep)
{
	const char *spec[] = { "f same", "f missing", "f other", "l ln ." };
	struct dest_policy pol = { .roots = roots, .nroots = 1 };
	struct job *job = make_job(spec, 4);
	struct rd_err err = { 0 };
	uint8_t seen[4];
	struct dest *d = NULL;
	struct stat before, after;
	int fd, opened = 0;

	fd = open(at("same"), O_CREAT | O_WRONLY, 04755);
	ck_assert_int_eq(pwrite(fd, "0123456789", 10, 0), 10);
	ck_assert_int_eq(fchmod(fd, 0755), 0);	/* no set-id: the mask */
	close(fd);
	ck_assert_int_eq(close(creat(at("other"), 0600)), 0);
	ck_assert_int_eq(symlink(".", at("ln")), 0);
	ck_assert_int_eq(dest_look(job, &pol, nothing, &opened, seen, &err),
			 0);
	ck_assert_int_eq(seen[0], DS_CANDIDATE);
	ck_assert_int_eq(seen[1], DS_MISSING);
	ck_assert_int_eq(seen[2], DS_OLD_FILE);	/* a file of another size */
	ck_assert_int_eq(seen[3], DS_SAME);
	ck_assert_int_eq(opened, 1);
	/* the caller found "same" identical; "other" is not to be made */
	seen[0] = DS_SAME;
	job->files[2].path[strlen(job->files[2].path) - 5] = 'x';	/* xther */
	seen[2] = DS_MISSING;
	pol.seen = seen;
	ck_assert_int_eq(stat(at("same"), &before), 0);
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	ck_assert_int_eq(dest_commit(d, &err), 0);
	dest_free(d);
	ck_assert_int_eq(stat(at("same"), &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	ck_assert_int_eq(access(at("missing"), F_OK), 0);
	ck_assert_str_eq(listing(), "./ln ./missing ./other ./same ./xther ");
	/* kept, but gone by the commit: its temporary lands instead */
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), -EEXIST);
	ck_assert_int_eq(unlink(at("missing")), 0);
	ck_assert_int_eq(unlink(at("xther")), 0);
	ck_assert_int_eq(dest_prepare(job, &pol, fill, NULL, &d, &err), 0);
	ck_assert_int_eq(unlink(at("same")), 0);
	ck_assert_int_eq(dest_commit(d, &err), 0);
	dest_free(d);
	ck_assert_int_eq(stat(at("same"), &after), 0);
	ck_assert_uint_eq(after.st_size, 10);
	ck_assert_str_eq(listing(), "./ln ./missing ./other ./same ./xther ");
	job_free(job);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dest");
	TCase *tc = tcase_create("dest");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tree_lands_whole);
	tcase_add_test(tc, parents_join_the_job);
	tcase_add_test(tc, setid_kept_when_allowed);
	tcase_add_test(tc, uncommitted_leaves_nothing);
	tcase_add_test(tc, through_a_link_entry);
	tcase_add_test(tc, child_before_parent);
	tcase_add_test(tc, link_out_of_root);
	tcase_add_test(tc, merge_through_inner_link);
	tcase_add_test(tc, state_dir_reserved);
	tcase_add_test(tc, things_in_the_way);
	tcase_add_test(tc, dot_dot_and_duplicates);
	tcase_add_test(tc, long_names);
	tcase_add_test(tc, temporary_swapped_for_link);
	tcase_add_test(tc, made_directory_swapped_for_link);
	tcase_add_test(tc, look_and_keep);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
