/* SPDX-License-Identifier: MIT */
/*
 * path - lexical path handling, and file types in words.  Pure: no file
 * system access.
 */
#ifndef RDMCP_PATH_H
#define RDMCP_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True if `p` is absolute and canonical in form: no empty, "." or ".."
 * components, no trailing slash (except "/" itself). */
bool path_is_clean(const char *p);

/* Make `p` absolute against `cwd` (if relative) and remove ".", ".." and
 * repeated slashes lexically.  Returns a new string, or NULL (ENOMEM, or
 * ENAMETOOLONG beyond PATH_MAX). */
char *path_absolute(const char *cwd, const char *p);

/* `dir` + "/" + `name` as a new string (NULL on ENOMEM). */
char *path_join(const char *dir, const char *name);

/* The last component ("b" for "/a/b", "/" for "/"); points into p. */
const char *path_base(const char *p);

/* The parent of a clean absolute path as a new string ("/" for "/a"). */
char *path_parent(const char *p);

/* What a file of type `mode` (st_mode) is, in words: "a directory",
 * "a symbolic link", "a FIFO", "a socket", "a device" or "a file". */
const char *path_kind(mode_t mode);

/* True if `p` is `root` or lies below it (both clean and absolute). */
bool path_under(const char *root, const char *p);

#endif
