/* SPDX-License-Identifier: MIT */
/*
 * path - lexical path handling (see path.h).
 */
#include "util/path.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool
path_is_clean(const char *p)
{
	const char *c;
	size_t n;

	if (p[0] != '/')
		return false;
	if (p[1] == '\0')
		return true;
	for (c = p + 1;; c += n + 1) {
		n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (c[n] == '\0')
			return true;
	}
}

/* Append component [c, c+n) to out (which holds an absolute path). */
static void
push_component(char *out, size_t *len, const char *c, size_t n)
{
	char *slash;

	if (n == 0 || (n == 1 && c[0] == '.'))
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		slash = strrchr(out, '/');
		*len = slash > out ? (size_t)(slash - out) : 1;
		out[*len] = '\0';
		return;
	}
	if (*len > 1)
		out[(*len)++] = '/';
	memcpy(out + *len, c, n);
	*len += n;
	out[*len] = '\0';
}

char *
path_absolute(const char *cwd, const char *p)
{
	size_t len = 1, n, total = strlen(p) + (p[0] == '/' ? 0 : strlen(cwd));
	const char *parts[2] = { p[0] == '/' ? "" : cwd, p };
	const char *c;
	char *out;
	int i;

	if (total + 2 > PATH_MAX)
		return NULL;
	out = malloc(total + 2);
	if (out == NULL)
		return NULL;
	strcpy(out, "/");
	for (i = 0; i < 2; i++) {
		for (c = parts[i]; *c != '\0'; c += n) {
			while (*c == '/')
				c++;
			n = strcspn(c, "/");
			push_component(out, &len, c, n);
		}
	}
	return out;
}

char *
path_join(const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);
	char *out = malloc(d + n + 2);

	if (out == NULL)
		return NULL;
	memcpy(out, dir, d);
	if (d == 0 || dir[d - 1] != '/')
		out[d++] = '/';
	memcpy(out + d, name, n + 1);
	return out;
}

const char *
path_base(const char *p)
{
	const char *slash = strrchr(p, '/');

	if (slash == NULL || (slash == p && slash[1] == '\0'))
		return p;
	return slash + 1;
}

char *
path_parent(const char *p)
{
	const char *slash = strrchr(p, '/');
	size_t n = (slash == NULL || slash == p) ? 1 : (size_t)(slash - p);

	return strndup(slash == NULL ? "/" : p, n);
}

const char *
path_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISLNK(m))
		return "a symbolic link";
	return S_ISDIR(m) ? "a directory" : "a file";
}

bool
path_under(const char *root, const char *p)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return p[0] == '/';
	return strncmp(root, p, n) == 0 && (p[n] == '\0' || p[n] == '/');
}
