/* SPDX-License-Identifier: MIT */
/*
 * hostset - host lists as sets (see hostlist.h): exclusion, duplicates,
 * and the compressed form that writes a set back as an expression.
 */
#include "hosts/hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "util/net.h"

#define MAX_DIGITS 18		/* as hostlist.c: numbers fit in uint64_t */
#define MAX_HOST 300		/* as hostlist.c: an entry, with its port */

/* ---------------------------------------------------------------------
 * Set operations
 */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
hostlist_exclude(struct hostlist *hl, const struct hostlist *ex)
{
	char **sorted;
	size_t i, kept = 0;

	if (ex->n == 0 || hl->n == 0)
		return;
	sorted = malloc(ex->n * sizeof(*sorted));
	if (sorted == NULL)
		return;
	memcpy(sorted, ex->hosts, ex->n * sizeof(*sorted));
	qsort(sorted, ex->n, sizeof(*sorted), cmp_str);
	for (i = 0; i < hl->n; i++) {
		if (bsearch(&hl->hosts[i], sorted, ex->n, sizeof(*sorted),
			    cmp_str) != NULL)
			free(hl->hosts[i]);
		else
			hl->hosts[kept++] = hl->hosts[i];
	}
	hl->n = kept;
	free(sorted);
}

/* An entry of -x: its name and port (0: none), its index. */
struct named {
	char name[MAX_HOST];
	uint16_t port;
	size_t i;
};

static int
cmp_named(const void *a, const void *b)
{
	return strcasecmp(((const struct named *)a)->name,
			  ((const struct named *)b)->name);
}

/* host (a list entry) as a name and a port (0: none); -EINVAL if it is
 * not one (hostlist_parse made it: never). */
static int
split_named(const char *host, struct named *out)
{
	return net_split_hostport(host, out->name, sizeof(out->name),
				  &out->port, 0);
}

/* Does some entry of ex (sorted by name) name host?  Marks each that
 * does in matched. */
static bool
named_by(const struct named *ex, size_t n, const char *host,
	 uint16_t default_port, bool *matched)
{
	struct named h;
	const struct named *at;
	size_t i;
	bool hit = false;

	if (split_named(host, &h) < 0)
		return false;
	at = bsearch(&h, ex, n, sizeof(*ex), cmp_named);
	if (at == NULL)
		return false;
	while (at > ex && cmp_named(at - 1, &h) == 0)
		at--;
	for (i = (size_t)(at - ex); i < n && cmp_named(&ex[i], &h) == 0; i++) {
		if (ex[i].port != 0 &&
		    ex[i].port != (h.port != 0 ? h.port : default_port))
			continue;
		hit = true;
		if (matched != NULL)
			matched[ex[i].i] = true;
	}
	return hit;
}

ssize_t
hostlist_leave_out(struct hostlist *hl, const struct hostlist *ex,
		   uint16_t default_port, bool *matched)
{
	struct named *k = calloc(ex->n ? ex->n : 1, sizeof(*k));
	size_t i, n = 0, kept = 0;

	if (k == NULL)
		return -ENOMEM;
	for (i = 0; i < ex->n; i++)
		if (split_named(ex->hosts[i], &k[n]) == 0)
			k[n++].i = i;
	qsort(k, n, sizeof(*k), cmp_named);
	for (i = 0; i < hl->n; i++) {
		if (named_by(k, n, hl->hosts[i], default_port, matched))
			free(hl->hosts[i]);
		else
			hl->hosts[kept++] = hl->hosts[i];
	}
	free(k);
	i = hl->n - kept;
	hl->n = kept;
	return (ssize_t)i;
}

struct keyed {
	const char *s;
	size_t i;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

size_t
hostlist_dedupe(struct hostlist *hl)
{
	struct keyed *k;
	const char *first;
	size_t i, kept = 0, dropped = 0;

	if (hl->n < 2)
		return 0;
	k = malloc(hl->n * sizeof(*k));
	if (k == NULL)
		return 0;
	for (i = 0; i < hl->n; i++)
		k[i] = (struct keyed){ hl->hosts[i], i };
	qsort(k, hl->n, sizeof(*k), cmp_keyed);
	for (i = 1, first = k[0].s; i < hl->n; i++) {
		if (strcmp(k[i].s, first) != 0) {
			first = k[i].s;		/* kept: the first of its run */
			continue;
		}
		free(hl->hosts[k[i].i]);
		hl->hosts[k[i].i] = NULL;
		dropped++;
	}
	for (i = 0; i < hl->n; i++)
		if (hl->hosts[i] != NULL)
			hl->hosts[kept++] = hl->hosts[i];
	hl->n = kept;
	free(k);
	return dropped;
}

/* ---------------------------------------------------------------------
 * Compression
 */

/* A host as prefix, number, suffix ("node", 7, 2 digits, ":7000"), or a
 * literal when it has no number to range over. */
struct citem {
	const char *host;
	size_t plen;		/* prefix length */
	const char *suffix;
	uint64_t value;
	int ndig;
	bool padded;		/* written with leading zeros */
	bool literal;
};

/* Split at the last run of digits in the name (not in the port). */
static void
citem_split(struct citem *c, const char *host)
{
	const char *colon = strchr(host, ':'), *end, *d;

	memset(c, 0, sizeof(*c));
	c->host = host;
	c->literal = true;
	if (host[0] == '[' || (colon != NULL && strchr(colon + 1, ':')))
		return;			/* IPv6 */
	end = colon != NULL ? colon : host + strlen(host);
	while (end > host && !isdigit((unsigned char)end[-1]))
		end--;
	for (d = end; d > host && isdigit((unsigned char)d[-1]); d--)
		;
	if (d == end || end - d > MAX_DIGITS)
		return;
	c->plen = (size_t)(d - host);
	c->suffix = end;
	c->ndig = (int)(end - d);
	c->padded = c->ndig > 1 && *d == '0';
	c->value = strtoull(d, NULL, 10);
	c->literal = false;
}

static int
cmp_citem(const void *a, const void *b)
{
	const struct citem *x = a, *y = b;
	size_t n = x->plen < y->plen ? x->plen : y->plen;
	int c;

	if (x->literal || y->literal)
		return x->literal != y->literal ? (x->literal ? 1 : -1)
						: strcmp(x->host, y->host);
	c = memcmp(x->host, y->host, n);
	if (c == 0 && x->plen != y->plen)
		c = x->plen < y->plen ? -1 : 1;
	if (c == 0)
		c = strcmp(x->suffix, y->suffix);
	if (c == 0 && x->value != y->value)
		c = x->value < y->value ? -1 : 1;
	return c ? c : x->ndig - y->ndig;
}

static bool
same_group(const struct citem *x, const struct citem *y)
{
	return !x->literal && !y->literal && x->plen == y->plen &&
	       memcmp(x->host, y->host, x->plen) == 0 &&
	       strcmp(x->suffix, y->suffix) == 0;
}

/* Would y print as itself with the zero padding of a range of width w? */
static bool
fits_width(const struct citem *y, int w)
{
	return y->padded ? y->ndig == w : y->ndig >= w;
}

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *grown;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->s ? b->s + b->len : NULL,
		      b->s ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0 || b->oom)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)n + 1) * 2;

		grown = realloc(b->s, cap);
		if (grown == NULL) {
			b->oom = true;
			return;
		}
		b->s = grown;
		b->cap = cap;
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Items [i, j) form one group: prefix[runs]suffix. */
static void
write_group(struct sbuf *b, const struct citem *it, size_t i, size_t j)
{
	size_t k, end;
	int w;

	if (j - i == 1) {
		sb_add(b, "%s", it[i].host);
		return;
	}
	sb_add(b, "%.*s[", (int)it[i].plen, it[i].host);
	for (k = i; k < j; k = end) {
		w = it[k].padded ? it[k].ndig : 0;
		for (end = k + 1; end < j && it[end].value == it[end - 1].value + 1
		     && fits_width(&it[end], w); end++)
			;
		sb_add(b, "%s%0*" PRIu64, k > i ? "," : "", w, it[k].value);
		if (end - k > 1)
			sb_add(b, "-%0*" PRIu64, w, it[end - 1].value);
	}
	sb_add(b, "]%s", it[i].suffix);
}

/* Sorted items, duplicates removed; returns the count. */
static size_t
collect(char *const *hosts, size_t n, const bool *pick, struct citem *it)
{
	size_t i, m = 0, kept = 0;

	for (i = 0; i < n; i++)
		if (pick == NULL || pick[i])
			citem_split(&it[m++], hosts[i]);
	qsort(it, m, sizeof(*it), cmp_citem);
	for (i = 0; i < m; i++)
		if (kept == 0 || strcmp(it[i].host, it[kept - 1].host) != 0)
			it[kept++] = it[i];
	return kept;
}

long
hostlist_compress(char *const *hosts, size_t n, const bool *pick, char *buf,
		  size_t len)
{
	struct sbuf b = { 0 };
	struct citem *it = calloc(n ? n : 1, sizeof(*it));
	size_t i, j, m;
	long need;

	if (it == NULL)
		return -ENOMEM;
	m = collect(hosts, n, pick, it);
	sb_add(&b, "%s", "");
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && same_group(&it[i], &it[j]); j++)
			;
		if (i > 0)
			sb_add(&b, ",");
		write_group(&b, it, i, j);
	}
	free(it);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	need = (long)b.len;
	if (len > 0) {
		snprintf(buf, len, "%s", b.s);
		if (b.len >= len && len > 4)
			memcpy(buf + len - 4, "...", 4);
	}
	free(b.s);
	return need;
}
