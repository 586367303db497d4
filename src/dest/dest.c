/* SPDX-License-Identifier: MIT */
/*
 * dest - where a job's entries land (see dest.h).
 */
#include "dest/dest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dest/dest_int.h"
#include "util/path.h"
#include "dest/pending.h"

/* ---------------------------------------------------------------------
 * Opening directories beneath a root
 */

/* Open `rel` below `rootfd` following no link: the fallback where the
 * kernel has no openat2. */
static int
walk_beneath(int rootfd, const char *rel)
{
	char buf[PATH_MAX], *save = NULL, *comp;
	int fd = dup(rootfd), next;

	if (fd < 0)
		return -errno;
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	for (comp = strtok_r(buf, "/", &save); comp != NULL;
	     comp = strtok_r(NULL, "/", &save)) {
		if (strcmp(comp, "..") == 0)
			next = -1, errno = EXDEV;
		else
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY |
				      O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
	}
	return fd;
}

/* A directory `rel` ("" for the root itself) beneath `rootfd`; -EXDEV if
 * resolving it would leave the root. */
static int
open_beneath(int rootfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, rootfd, rel[0] ? rel : ".", &how,
			  sizeof(how));

	if (fd >= 0)
		return (int)fd;
	if (errno == ENOSYS || errno == EPERM)	/* old kernel, or seccomp */
		return walk_beneath(rootfd, rel);
	return -errno;
}

int
dest_dir_fd(struct dest *d, size_t root, const char *dir)
{
	int fd;

	if (d->cache_fd >= 0 && d->cache_root == root &&
	    strcmp(d->cache_dir, dir) == 0)
		return d->cache_fd;
	fd = open_beneath(d->rootfd[root], dir);
	if (fd < 0)
		return fd;
	if (d->cache_fd >= 0)
		close(d->cache_fd);
	free(d->cache_dir);
	d->cache_dir = strdup(dir);
	if (d->cache_dir == NULL) {
		close(fd);
		d->cache_fd = -1;
		return -ENOMEM;
	}
	d->cache_fd = fd;
	d->cache_root = root;
	return fd;
}

/* "dir/name", or "name" when dir is the root (""). */
static char *
rel_join(const char *dir, const char *name)
{
	return dir[0] ? path_join(dir, name) : strdup(name);
}

/* ---------------------------------------------------------------------
 * Setting up
 */

static int
open_roots(struct dest *d, struct rd_err *err)
{
	size_t i;

	d->rootfd = malloc((d->pol.nroots ? d->pol.nroots : 1) * sizeof(*d->rootfd));
	d->rootst = calloc(d->pol.nroots ? d->pol.nroots : 1, sizeof(*d->rootst));
	if (d->rootfd == NULL || d->rootst == NULL)
		return -ENOMEM;
	for (i = 0; i < d->pol.nroots; i++)
		d->rootfd[i] = -1;
	for (i = 0; i < d->pol.nroots; i++) {
		d->rootfd[i] = open(d->pol.roots[i], O_RDONLY | O_DIRECTORY |
				    O_CLOEXEC);
		if (d->rootfd[i] < 0 || fstat(d->rootfd[i], &d->rootst[i]) < 0)
			return rd_errf(err, -errno, "root %s: %s", d->pol.roots[i],
				       strerror(errno));
	}
	return 0;
}

static int
cmp_lex(const void *a, const void *b, void *arg)
{
	const struct dent *e = arg;

	return strcmp(e[*(const size_t *)a].lex, e[*(const size_t *)b].lex);
}

/* Sort every entry by destination: duplicates are refused, and the
 * directories are kept in that order to look parents up. */
static int
index_entries(struct dest *d, struct rd_err *err)
{
	size_t *all = malloc((d->n ? d->n : 1) * sizeof(*all)), i;
	int rc = 0;

	d->dirs = malloc((d->n ? d->n : 1) * sizeof(*d->dirs));
	if (all == NULL || d->dirs == NULL) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < d->n; i++)
		all[i] = i;
	qsort_r(all, d->n, sizeof(*all), cmp_lex, d->e);
	for (i = 0; i < d->n && rc == 0; i++) {
		if (i > 0 && strcmp(d->e[all[i - 1]].lex, d->e[all[i]].lex) == 0)
			rc = rd_errf(err, -EINVAL, "%s appears twice in the "
				     "job", dest_upath(d, &d->e[all[i]]));
		if (d->e[all[i]].type == JF_DIR)
			d->dirs[d->ndirs++] = all[i];
	}
	free(all);
	return rc;
}

/* The directory entry of this job whose destination is `lex`, or -1. */
static long
find_dir(const struct dest *d, const char *lex)
{
	size_t lo = 0, hi = d->ndirs, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(d->e[d->dirs[mid]].lex, lex);
		if (c == 0)
			return (long)d->dirs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int
copy_entries(struct dest *d, const struct job *job, const char *prefix,
	     struct rd_err *err)
{
	const struct job_file *f;
	size_t i;

	for (i = 0; i < d->n; i++) {
		f = &job->files[i];
		if (!path_is_clean(f->path) || strcmp(f->path, "/") == 0)
			return rd_errf(err, -EINVAL, "destination '%s' is not "
				       "a clean absolute path", f->path);
		d->e[i].lex = prefix ? path_absolute(prefix, f->path + 1)
				     : strdup(f->path);
		if (d->e[i].lex == NULL)
			return -ENOMEM;
		d->e[i].type = f->type;
		d->e[i].mode = f->mode & d->mask;
		d->e[i].mtime.tv_sec = (time_t)f->mtime_sec;
		d->e[i].mtime.tv_nsec = f->mtime_nsec;
		d->e[i].uid = f->uid;
		d->e[i].gid = f->gid;
	}
	return 0;
}

/* Which root holds the existing directory `real`, and where below it. */
static int
locate(const struct dest *d, const char *real, size_t *root,
       const char **rel)
{
	size_t i, len;

	for (i = 0; i < d->pol.nroots; i++) {
		if (!path_under(d->pol.roots[i], real))
			continue;
		len = strlen(d->pol.roots[i]);
		*root = i;
		*rel = real + len + (real[len] == '/' ? 1 : 0);
		if (strcmp(d->pol.roots[i], "/") == 0)
			*rel = real + 1;
		return 0;
	}
	return -EACCES;
}

/* `real`, where entry e lands or is merged into, is or is in the
 * directory reserved to the daemon. */
static int
check_reserved(const struct dest *d, const struct dent *e, const char *real,
	       struct rd_err *err)
{
	if (d->pol.reserved == NULL || !path_under(d->pol.reserved, real))
		return 0;
	return rd_errf(err, -EACCES, "%s is in this daemon's state directory, "
		       "where no job may write", dest_upath(d, e));
}

/* The parent directory of entry e, as the user wrote it, cannot be
 * resolved (errno en). */
static int
no_parent(const struct dest *d, const struct dent *e, int en,
	  struct rd_err *err)
{
	char *parent = path_parent(dest_upath(d, e));
	int rc = rd_errf(err, -en, "destination directory %s: %s%s",
			 parent ? parent : "?", strerror(en), en != ENOENT ? ""
			 : " (-d DIR/, with a trailing slash, makes it and "
			 "its parents)");

	free(parent);
	return rc;
}

/* Entry i's parent exists on disk: resolve it to a root. */
static int
place_on_disk(struct dest *d, struct dent *e, struct rd_err *err)
{
	char *parent = path_parent(e->lex), real[PATH_MAX];
	char *uparent = path_parent(dest_upath(d, e));
	const char *rel;
	int rc = 0;

	if (parent == NULL || uparent == NULL)
		rc = -ENOMEM;
	else if (realpath(parent, real) == NULL)
		rc = no_parent(d, e, errno, err);
	else if (locate(d, real, &e->root, &rel) < 0)
		rc = rd_errf(err, -EACCES, "destination directory %s is not "
			     "under a --root of this daemon", uparent);
	else if ((e->dir = strdup(rel)) == NULL ||
		 (e->final = path_join(real, path_base(e->lex))) == NULL)
		rc = -ENOMEM;
	else
		rc = check_reserved(d, e, e->final, err);
	free(uparent);
	free(parent);
	return rc;
}

/* Entry e lies in directory entry p of the same job: in the directory
 * itself if it existed, else in what the job makes of it (its directory
 * is known once p is made: see create_entry). */
static int
place_in_job(struct dent *e, const struct dent *p)
{
	e->root = p->root;
	e->final = path_join(p->final, path_base(e->lex));
	if (p->merged && (e->dir = strdup(p->inside)) == NULL)
		return -ENOMEM;
	return e->final != NULL ? 0 : -ENOMEM;
}

/* A directory entry that exists (perhaps through a link): where it really
 * is, which must be under a root too. */
static int
merge_into(struct dest *d, struct dent *e, struct rd_err *err)
{
	char real[PATH_MAX];
	const char *rel;

	if (realpath(e->final, real) == NULL)
		return rd_errf(err, -errno, "%s: %s", dest_upath(d, e),
			       strerror(errno));
	if (locate(d, real, &e->root, &rel) < 0)
		return rd_errf(err, -EACCES, "%s leads out of the --root "
			       "directories of this daemon", dest_upath(d, e));
	if (check_reserved(d, e, real, err) < 0)
		return -EACCES;
	e->merged = true;
	e->inside = strdup(rel);
	return e->inside != NULL ? 0 : -ENOMEM;
}

/* Probing: is what stands at e's final name (sb, in directory fd) what
 * the job would put there? */
static void
probe_existing(struct dest *d, struct dent *e, int fd, const struct stat *sb)
{
	const struct job_file *jf = &d->job->files[e - d->e];
	char target[PATH_MAX];
	ssize_t len;

	e->exists = true;
	e->regular = S_ISREG(sb->st_mode);
	if (e->type == JF_FILE)
		e->present = S_ISREG(sb->st_mode) &&
			     (uint64_t)sb->st_size == jf->size &&
			     (sb->st_mode & 07777) == e->mode;
	if (e->type == JF_LINK && S_ISLNK(sb->st_mode)) {
		len = readlinkat(fd, e->base, target, sizeof(target));
		e->present = len >= 0 && (size_t)len < sizeof(target) &&
			     jf->target != NULL &&
			     strlen(jf->target) == (size_t)len &&
			     memcmp(jf->target, target, (size_t)len) == 0;
	}
	e->same_time = sb->st_mtim.tv_sec == e->mtime.tv_sec &&
		       sb->st_mtim.tv_nsec == e->mtime.tv_nsec;
}

/* A directory of the job lands where a symbolic link is: refused, even
 * with --force, as a file is (rdmcp replaces no link by a tree, and does
 * not merge a tree into what a link points to, which may be elsewhere
 * in the root); say what to give instead. */
static int
refuse_dir_link(const struct dest *d, const struct dent *e, int fd,
		struct rd_err *err)
{
	char target[PATH_MAX];
	ssize_t len = readlinkat(fd, e->base, target, sizeof(target) - 1);

	target[len > 0 ? len : 0] = '\0';
	return rd_errf(err, -ENOTDIR, "%s is a symbolic link (to %s), not a "
		       "directory: a tree is not merged through a link, even "
		       "with --force (give the directory it leads to with -d)",
		       dest_upath(d, e), len > 0 ? target : "?");
}

/* What is at e's final name decides how it lands. */
static int
check_existing(struct dest *d, struct dent *e, struct rd_err *err)
{
	struct stat sb;
	int fd = dest_dir_fd(d, e->root, e->dir);

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", dest_upath(d, e), strerror(-fd));
	if (fstatat(fd, e->base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : rd_errf(err, -errno, "%s: %s",
						     dest_upath(d, e), strerror(errno));
	if (e->type == JF_DIR) {
		if (S_ISLNK(sb.st_mode) && !d->job->files[e - d->e].place)
			return refuse_dir_link(d, e, fd, err);	/* DESTINATIONS */
		if (S_ISLNK(sb.st_mode) && fstatat(fd, e->base, &sb, 0) < 0)
			return rd_errf(err, -errno, "%s: %s", dest_upath(d, e),
				       strerror(errno));
		if (!S_ISDIR(sb.st_mode))
			return rd_errf(err, -ENOTDIR, "%s exists and is %s, "
				       "not a directory", dest_upath(d, e),
				       path_kind(sb.st_mode));
		return merge_into(d, e, err);
	}
	if (S_ISDIR(sb.st_mode))
		return rd_errf(err, -EISDIR, "%s is a directory", dest_upath(d, e));
	if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
		return rd_errf(err, -EINVAL, "%s is %s; rdmcp replaces only "
			       "files and symbolic links", dest_upath(d, e),
			       path_kind(sb.st_mode));
	if (d->probing)
		probe_existing(d, e, fd, &sb);
	e->keep = d->pol.seen != NULL && d->pol.seen[e - d->e] == DS_SAME;
	if (d->probing || e->keep || d->pol.force)
		return 0;
	return rd_errf(err, -EEXIST, "%s exists (--force replaces it)",
		       dest_upath(d, e));
}

/* Find entry i's place and what is already there. */
static int
resolve_entry(struct dest *d, size_t i, struct rd_err *err)
{
	struct dent *e = &d->e[i];
	char *parent = path_parent(e->lex);
	long p;
	int rc;

	if (parent == NULL)
		return -ENOMEM;
	p = find_dir(d, parent);
	free(parent);
	e->parent = p;
	if (p >= (long)i)
		return rd_errf(err, -EINVAL, "%s comes before its directory",
			       dest_upath(d, e));
	rc = p >= 0 ? place_in_job(e, &d->e[p]) : place_on_disk(d, e, err);
	if (rc < 0)
		return rc;
	e->base = path_base(e->final);
	if (p >= 0 && !d->e[p].merged) {
		e->name = strdup(e->base);	/* inside a new directory */
		return e->name != NULL ? 0 : -ENOMEM;
	}
	/* its parent exists: what is there already decides */
	rc = check_existing(d, e, err);
	if (rc < 0)
		return rc;
	e->top = !e->merged;	/* made under a temporary name */
	e->name = strdup(e->base);
	return e->name != NULL ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------------
 * Creating
 */

/* A fresh temporary name for e, next to its final name. */
static int
temp_name(struct dent *e)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)rand();
	free(e->name);
	/* cut long names so the temporary stays within NAME_MAX */
	if (asprintf(&e->name, ".%.200s.rdmcp-%08x", e->base, r) < 0) {
		e->name = NULL;
		return -ENOMEM;
	}
	return 0;
}

int
dest_check_free(int fd, uint64_t size)
{
	struct statvfs vfs;

	if (fstatvfs(fd, &vfs) < 0)
		return errno;
	return (uint64_t)vfs.f_bavail * vfs.f_frsize < size ? ENOSPC : 0;
}

/* Space for the file's `size` bytes, before any comes: reserved where the
 * file system does it with a few extents (ext4, xfs, btrfs), so that the
 * transfer cannot run out of it; on tmpfs a reservation allocates every
 * page at once, before the first block may come (a third of a 1 -> 4 push
 * of 64 MiB on loopback), so there the free space is only checked and
 * pages come with the blocks; with `sparse` nothing is reserved.  The
 * file gets its size either way. */
static int
reserve(int fd, uint64_t size, bool sparse, const char *final,
	struct rd_err *err)
{
	struct statfs fs;
	int rc;

	if (size == 0)
		return 0;
	if (sparse)
		rc = 0;
	else if (fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC)
		rc = dest_check_free(fd, size);
	else
		rc = fallocate(fd, 0, 0, (off_t)size) < 0 ? errno : 0;
	if (rc == 0 || rc == EOPNOTSUPP || rc == EINVAL)
		rc = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	if (rc == ENOSPC || rc == EDQUOT)
		return rd_errf(err, -rc, "%s: %s (%llu bytes needed)", final,
			       strerror(rc), (unsigned long long)size);
	if (rc != 0)
		return rd_errf(err, -rc, "cannot reserve space for %s: %s",
			       final, strerror(rc));
	return 0;
}

/* Write down temporary e before it is made, so that a daemon killed
 * meanwhile removes it when it starts again. */
static int
record_temporary(struct dest *d, const struct dent *e)
{
	char *dir, *full;
	int rc;

	if (d->record == NULL || !e->top)
		return 0;
	dir = e->dir[0] ? path_join(d->pol.roots[e->root], e->dir)
			: strdup(d->pol.roots[e->root]);
	full = dir ? path_join(dir, e->name) : NULL;
	rc = full ? pending_add(d->record, full) : -ENOMEM;
	free(full);
	free(dir);
	return rc;
}

/* Make entry e under e->name in directory fd: 0, -EEXIST (the name is
 * taken), or another -errno.  Files come back open in *file. */
static int
make_entry(int fd, struct dent *e, const char *target, int *file)
{
	*file = -1;
	if (e->type == JF_DIR)
		return mkdirat(fd, e->name, 0700) < 0 ? -errno : 0;
	if (e->type == JF_LINK)
		return symlinkat(target, fd, e->name) < 0 ? -errno : 0;
	*file = openat(fd, e->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		       O_CLOEXEC, 0600);
	return *file < 0 ? -errno : 0;
}

/* Give what we made away, when the daemon may and is told to: `fd` is
 * the entry's own descriptor (open, or O_PATH). */
static int
give_away(struct dest *d, int fd, const struct dent *e)
{
	uid_t uid = d->pol.uid;
	gid_t gid = d->pol.gid;

	if (d->owners) {
		uid = e->uid;
		gid = e->gid;
	} else if (d->pol.owner_of_root) {
		uid = d->rootst[e->root].st_uid;
		gid = d->rootst[e->root].st_gid;
	} else if (!d->pol.set_owner) {
		return 0;
	}
	return dest_chown_made(fd, uid, gid);
}

/* Remember what was made as e (file: open in `file`) and give it away:
 * both on the entry itself, never through its name again. */
static int
claim_made(struct dest *d, struct dent *e, int holder, int file,
	   struct rd_err *err)
{
	int fd = file, rc;

	rc = dest_note_made(e, holder, file);
	if (rc == 0 && fd < 0)
		fd = dest_open_made(d, e, &holder);
	if (rc == 0 && fd < 0)
		rc = fd;
	if (rc < 0)
		return rd_errf(err, rc, "%s was replaced as it was made: %s",
			       dest_upath(d, e), strerror(-rc));
	rc = give_away(d, fd, e);
	if (rc < 0)
		rd_errf(err, rc, "cannot give %s its owner: %s%s", dest_upath(d, e),
			strerror(-rc), rc == -EPERM ? " (a daemon running as "
			"root needs CAP_CHOWN to give what it creates to the "
			"owner of its --root, or to --owner)" : "");
	if (fd != file)
		close(fd);
	return rc;
}

static int
create_entry(struct dest *d, size_t i, const struct job_file *jf,
	     dest_file_fn file_cb, void *ctx, struct rd_err *err)
{
	struct dent *e = &d->e[i];
	int fd, file = -1, tries = 0, rc;

	if (e->dir == NULL) {	/* in a directory this job just made */
		e->dir = rel_join(d->e[e->parent].dir, d->e[e->parent].name);
		if (e->dir == NULL)
			return -ENOMEM;
	}
	fd = dest_holder_fd(d, e);
	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", dest_upath(d, e), strerror(-fd));
	do {
		rc = e->top ? temp_name(e) : 0;
		if (rc == 0)
			rc = record_temporary(d, e);
		if (rc == 0)
			rc = make_entry(fd, e, jf->target, &file);
	} while (rc == -EEXIST && e->top && ++tries < 100);
	if (rc < 0)
		return rd_errf(err, rc, "cannot create %s: %s", dest_upath(d, e),
			       strerror(-rc));
	e->made = true;
	rc = claim_made(d, e, fd, file, err);
	if (rc == 0 && file >= 0)
		rc = reserve(file, jf->size, d->pol.sparse, dest_upath(d, e),
			     err);
	if (rc == 0 && file >= 0)
		rc = file_cb(ctx, i, file);
	if (file >= 0)
		close(file);
	return rc;
}

int
dest_alloc(const struct job *job, const struct dest_policy *pol,
	   struct dest **out)
{
	struct dest *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return -ENOMEM;
	d->n = job->nfiles;
	d->e = calloc(d->n ? d->n : 1, sizeof(*d->e));
	if (d->e == NULL) {
		free(d);
		return -ENOMEM;
	}
	d->pol = *pol;
	d->job = job;
	d->times = (job->flags & JOB_TIMES) != 0;
	d->mask = pol->allow_setid ? 07777 : 01777;
	d->owners = pol->keep_owners && (job->flags & JOB_OWNERS);
	d->cache_fd = -1;
	d->made_fd = -1;
	d->made_ent = -1;
	*out = d;
	return 0;
}

int
dest_resolve(struct dest *d, struct rd_err *err)
{
	size_t i;
	int rc;

	rc = open_roots(d, err);
	if (rc == 0 && d->pol.state_dir != NULL && !d->probing) {
		rc = pending_open(d->pol.state_dir, d->job->token,
				  PROTO_TOKEN_LEN, &d->record);
		if (rc < 0)
			rd_errf(err, rc, "cannot record the job in %s: %s",
				d->pol.state_dir, strerror(-rc));
	}
	if (rc == 0)
		rc = copy_entries(d, d->job, d->pol.prefix, err);
	if (rc == 0)
		rc = index_entries(d, err);
	for (i = 0; i < d->n && rc == 0; i++)
		rc = resolve_entry(d, i, err);
	return rc;
}

int
dest_prepare(const struct job *job, const struct dest_policy *pol,
	     dest_file_fn file, void *ctx, struct dest **out,
	     struct rd_err *err)
{
	struct dest *d;
	size_t i;
	int rc;

	*out = NULL;
	rc = dest_alloc(job, pol, &d);
	if (rc < 0)
		return rc;
	rc = dest_resolve(d, err);
	if (rc == 0)	/* all of them: each file's reservation sees only
			 * itself (and on tmpfs reserves nothing) */
		rc = dest_check_space(d, err);
	for (i = 0; i < d->n && rc == 0; i++)	/* a link kept needs nothing */
		if (!d->e[i].merged &&
		    !(d->e[i].keep && d->e[i].type == JF_LINK))
			rc = create_entry(d, i, &job->files[i], file, ctx, err);
	if (rc < 0) {
		dest_free(d);
		return dest_access_hint(rc, err);
	}
	*out = d;
	return 0;
}
