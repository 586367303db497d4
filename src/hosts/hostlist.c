/* SPDX-License-Identifier: MIT */
/*
 * hostlist - host list expressions (see hostlist.h).
 */
#include "hosts/hostlist.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/net.h"

#define MAX_HOST 300		/* an expanded entry, with its port */
#define MAX_DIGITS 18		/* range bounds fit in uint64_t */
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define NAME_CHARS ALNUM "-._"	/* of a host name */

/* ---------------------------------------------------------------------
 * Parsing
 */

struct range {
	uint64_t lo, hi;
	uint64_t step;		/* clush's lo-hi/step, else 1 */
	int width;		/* zero padding, 0: none */
};

/* One piece of an entry: literal text, or a bracketed list of ranges. */
struct part {
	const char *text;
	size_t len;
	struct range *ranges;
	size_t nranges;
};

struct parser {
	struct hostlist *hl;
	const char *spec;	/* the whole expression, for errors */
	struct rd_err *err;
	struct part *parts;
	size_t nparts;
	char host[MAX_HOST];
};

/* -EINVAL with the expression and a caret under character `at`. */
static int
syntax_error(struct parser *ps, const char *at, const char *what)
{
	size_t col = (size_t)(at - ps->spec);

	if (strlen(ps->spec) > 200 || col > 200)
		return rd_errf(ps->err, -EINVAL, "bad host list: %s at "
			       "character %zu", what, col + 1);
	return rd_errf(ps->err, -EINVAL, "bad host list: %s at character "
		       "%zu:\n  %s\n  %*s^", what, col + 1, ps->spec, (int)col,
		       "");
}

static size_t
hostlist_cap(const struct hostlist *hl)
{
	return hl->max > 0 && hl->max < HOSTLIST_MAX ? hl->max : HOSTLIST_MAX;
}

static int
hostlist_add(struct hostlist *hl, const char *s, size_t n)
{
	char **grown, *copy;

	if (hl->n >= hostlist_cap(hl))
		return -E2BIG;
	copy = strndup(s, n);
	if (copy == NULL)
		return -ENOMEM;
	grown = realloc(hl->hosts, (hl->n + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(copy);
		return -ENOMEM;
	}
	hl->hosts = grown;
	hl->hosts[hl->n++] = copy;
	return 0;
}

static const char *
parse_number(struct parser *ps, const char *p, uint64_t *v, size_t *ndig)
{
	*v = 0;
	*ndig = 0;
	while (isdigit((unsigned char)*p) && *ndig <= MAX_DIGITS) {
		*v = *v * 10 + (uint64_t)(*p - '0');
		(*ndig)++;
		p++;
	}
	return p;
}

/* A syntax error that quotes [from, to) of the expression between
 * `before` and `after`, e.g. "'0x' is not a number". */
static void
quoted_error(struct parser *ps, const char *from, const char *to,
	     const char *before, const char *after)
{
	char what[96];
	int len = (int)(to - from);

	snprintf(what, sizeof(what), "%s'%.*s'%s", before,
		 len > 40 ? 40 : len, from, after);
	syntax_error(ps, from, what);
}

/* A bound of a range at p, ending at a range delimiter: its end, or NULL
 * after saying what is wrong ("'0x' is not a number"). */
static const char *
parse_bound(struct parser *ps, const char *p, uint64_t *v, size_t *ndig)
{
	const char *end = parse_number(ps, p, v, ndig), *word = end;

	while (isalnum((unsigned char)*word))
		word++;
	if (word > end || (*ndig == 0 && isgraph((unsigned char)*end) &&
			   !strchr(",-]/", *end))) {
		quoted_error(ps, p, word > end ? word : end + 1, "",
			     " is not a number");
		return NULL;
	}
	if (*ndig == 0 || *ndig > MAX_DIGITS) {
		syntax_error(ps, p, *ndig ? "number too long" :
			     "expected a number");
		return NULL;
	}
	return end;
}

/* The "/step" of a range at p (clush's node[1-30/4]): the character
 * after it, or NULL after saying what is wrong. */
static const char *
parse_step(struct parser *ps, const char *p, struct range *r)
{
	const char *at = p;
	size_t n;

	p = parse_bound(ps, p + 1, &r->step, &n);
	if (p != NULL && r->step == 0) {
		quoted_error(ps, at, p, "step ", " is not a number of 1 or more");
		return NULL;
	}
	return p;
}

/* One "lo", "lo-hi" or "lo-hi/step" at p; returns the character after
 * it or NULL. */
static const char *
parse_range(struct parser *ps, const char *p, struct range *r)
{
	const char *start = p;
	size_t nlo, nhi;

	p = parse_bound(ps, p, &r->lo, &nlo);
	if (p == NULL)
		return NULL;
	r->width = (nlo > 1 && *start == '0') ? (int)nlo : 0;
	r->hi = r->lo;
	r->step = 1;
	if (*p == '/') {
		syntax_error(ps, p, "a step ('/') needs a range (lo-hi/step)");
		return NULL;
	}
	if (*p != '-')
		return p;
	p = parse_bound(ps, p + 1, &r->hi, &nhi);
	if (p == NULL)
		return NULL;
	if (r->hi < r->lo) {
		quoted_error(ps, start, p, "range ", " goes backwards");
		return NULL;
	}
	return *p == '/' ? parse_step(ps, p, r) : p;
}

static int
add_part(struct parser *ps, const char *text, size_t len)
{
	struct part *grown;

	grown = realloc(ps->parts, (ps->nparts + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	ps->parts = grown;
	ps->parts[ps->nparts++] = (struct part){ .text = text, .len = len };
	return 0;
}

/* The ranges between '[' at open and the matching ']'. */
static const char *
parse_group(struct parser *ps, const char *open)
{
	struct part *pt;
	struct range *grown;
	const char *p = open + 1;

	if (add_part(ps, NULL, 0) < 0) {
		rd_errf(ps->err, -ENOMEM, "out of memory");
		return NULL;
	}
	pt = &ps->parts[ps->nparts - 1];
	for (;;) {
		grown = realloc(pt->ranges, (pt->nranges + 1) * sizeof(*grown));
		if (grown == NULL) {
			rd_errf(ps->err, -ENOMEM, "out of memory");
			return NULL;
		}
		pt->ranges = grown;
		p = parse_range(ps, p, &pt->ranges[pt->nranges]);
		if (p == NULL)
			return NULL;
		pt->nranges++;
		if (*p == ']')
			return p + 1;
		if (*p != ',') {
			syntax_error(ps, p, *p ? "expected ',', '-' or ']'" :
				     "missing ']'");
			return NULL;
		}
		p++;
	}
}

/* Does the bracket at p hold an IPv6 address rather than ranges? */
static bool
is_v6_literal(const char *p, const char *end)
{
	const char *close = memchr(p, ']', (size_t)(end - p));

	return close != NULL && memchr(p, ':', (size_t)(close - p)) != NULL;
}

/* Split the entry [p, end) into literal parts and range groups. */
static int
split_entry(struct parser *ps, const char *p, const char *end)
{
	const char *start = p, *lit = p;

	while (p < end) {
		if (*p == '[' && p == start && is_v6_literal(p, end)) {
			p = (const char *)memchr(p, ']', (size_t)(end - p)) + 1;
		} else if (*p == '[') {
			if (p > lit && add_part(ps, lit, (size_t)(p - lit)) < 0)
				return rd_errf(ps->err, -ENOMEM, "out of memory");
			p = parse_group(ps, p);
			if (p == NULL)
				return ps->err->code;
			lit = p;
		} else if (*p == ']') {
			return syntax_error(ps, p, "']' without '['");
		} else if (!isgraph((unsigned char)*p)) {
			return syntax_error(ps, p, "unexpected character");
		} else {
			p++;
		}
	}
	if (p > lit && add_part(ps, lit, (size_t)(p - lit)) < 0)
		return rd_errf(ps->err, -ENOMEM, "out of memory");
	return 0;
}

/* How many hosts the parts make, capped above HOSTLIST_MAX. */
static uint64_t
count_hosts(const struct parser *ps)
{
	uint64_t total = 1, sum;
	size_t i, j;

	for (i = 0; i < ps->nparts; i++) {
		if (ps->parts[i].ranges == NULL)
			continue;
		sum = 0;
		for (j = 0; j < ps->parts[i].nranges; j++) {
			const struct range *r = &ps->parts[i].ranges[j];

			sum += (r->hi - r->lo) / r->step + 1;
			if (sum > HOSTLIST_MAX)
				return HOSTLIST_MAX + 1;
		}
		total *= sum;
		if (total > HOSTLIST_MAX)
			return HOSTLIST_MAX + 1;
	}
	return total;
}

/* Where name (a host without its port) fails to be a host name or IPv4
 * address (letters, digits, '-', '.', '_', a letter or digit first) or an
 * IPv6 address (with an optional %zone): NULL if it is one, else its
 * first wrong character (the first of all for an IPv6 address that does
 * not parse). */
static const char *
name_flaw(const char *name)
{
	size_t n = strcspn(name, "%");
	char v6[INET6_ADDRSTRLEN];
	struct in6_addr a;
	const char *zone;

	if (strchr(name, ':') == NULL) {
		n = strspn(name, NAME_CHARS);
		if (name[0] == '\0' || strchr(ALNUM, name[0]) == NULL)
			return name;
		return name[n] != '\0' ? name + n : NULL;
	}
	if (n >= sizeof(v6))
		return name;
	memcpy(v6, name, n);
	v6[n] = '\0';
	if (inet_pton(AF_INET6, v6, &a) != 1)
		return name;
	if (name[n] == '\0')
		return NULL;
	zone = name + n + 1;
	if (zone[0] == '\0')
		return zone - 1;	/* an empty zone */
	n = strspn(zone, NAME_CHARS);
	return zone[n] != '\0' ? zone + n : NULL;
}

/* Where the character `bad` of name, expanded from the entry at `entry`,
 * is written there: as often before it in the entry as in the name, for
 * ranges only add digits, ',' and '-' (none of them wrong past the
 * first character).  NULL if not found. */
static const char *
in_entry(const char *entry, const char *name, const char *bad)
{
	const char *at = strchr(entry, *bad), *p;

	for (p = name; at != NULL && p < bad; p++)
		if (*p == *bad)
			at = strchr(at + 1, *bad);
	return at;
}

/* -EINVAL: name, from the entry at `entry`, is not a host name or
 * address, for its character `bad` (from name_flaw). */
static int
name_error(struct parser *ps, const char *entry, const char *name,
	   const char *bad)
{
	const char *at = bad != name ? in_entry(entry, name, bad) : NULL;
	char what[200], why[48];

	if (bad == name && strchr(name, ':') != NULL)
		snprintf(why, sizeof(why), "with a ':' it must be an IPv6 "
			 "address");
	else
		snprintf(why, sizeof(why), "'%c' cannot %s one", *bad,
			 bad == name ? "start" : "be in");
	snprintf(what, sizeof(what), "'%.100s' is not a host name or address "
		 "(%s)", name, why);
	return syntax_error(ps, at != NULL ? at : entry, what);
}

static int
add_host(struct parser *ps, const char *entry, size_t len)
{
	char name[256];
	const char *bad;
	uint16_t port;

	if (net_split_hostport(ps->host, name, sizeof(name), &port, 1) < 0 ||
	    name[0] == '\0')
		return syntax_error(ps, entry, "not a host, host:port or "
				    "[address]:port");
	bad = name_flaw(name);
	if (bad != NULL)
		return name_error(ps, entry, name, bad);
	if (hostlist_add(ps->hl, ps->host, len) < 0)
		return rd_errf(ps->err, -ENOMEM, "out of memory");
	return 0;
}

/* Every host from part i on, after the len characters in ps->host. */
static int
expand(struct parser *ps, const char *entry, size_t i, size_t len)
{
	const struct part *pt = &ps->parts[i];
	size_t j;
	uint64_t v;
	int n, rc;

	if (i == ps->nparts) {
		ps->host[len] = '\0';
		return add_host(ps, entry, len);
	}
	if (pt->ranges == NULL) {
		if (len + pt->len >= sizeof(ps->host))
			return syntax_error(ps, entry, "host name too long");
		memcpy(ps->host + len, pt->text, pt->len);
		return expand(ps, entry, i + 1, len + pt->len);
	}
	for (j = 0; j < pt->nranges; j++) {
		for (v = pt->ranges[j].lo;; v += pt->ranges[j].step) {
			n = snprintf(ps->host + len, sizeof(ps->host) - len,
				     "%0*" PRIu64, pt->ranges[j].width, v);
			if (n < 0 || len + (size_t)n >= sizeof(ps->host))
				return syntax_error(ps, entry,
						    "host name too long");
			rc = expand(ps, entry, i + 1, len + (size_t)n);
			if (rc < 0)
				return rc;
			if (pt->ranges[j].hi - v < pt->ranges[j].step)
				break;	/* the last: no overflow past hi */
		}
	}
	return 0;
}

static void
free_parts(struct parser *ps)
{
	size_t i;

	for (i = 0; i < ps->nparts; i++)
		free(ps->parts[i].ranges);
	free(ps->parts);
	ps->parts = NULL;
	ps->nparts = 0;
}

static int
parse_entry(struct parser *ps, const char *p, const char *end)
{
	int rc;

	if (p == end)
		return syntax_error(ps, p, "empty entry");
	rc = split_entry(ps, p, end);
	if (rc == 0 && count_hosts(ps) + ps->hl->n > hostlist_cap(ps->hl))
		rc = rd_errf(ps->err, -E2BIG, "the host list expands to more "
			     "than %zu hosts", hostlist_cap(ps->hl));
	if (rc == 0)
		rc = expand(ps, p, 0, 0);
	free_parts(ps);
	return rc;
}

/* The end of the entry at p: a ',' (or with `blanks` a blank) outside
 * brackets, or the end. */
static const char *
entry_end(struct parser *ps, const char *p, bool blanks)
{
	const char *open = NULL;

	for (; *p != '\0'; p++) {
		if (blanks && open == NULL && isspace((unsigned char)*p))
			break;
		if (*p == '[') {
			if (open != NULL) {
				syntax_error(ps, p, "'[' inside '[...]'");
				return NULL;
			}
			open = p;
		} else if (*p == ']') {
			open = NULL;
		} else if (*p == ',' && open == NULL) {
			break;
		}
	}
	if (open != NULL) {
		syntax_error(ps, open, "'[' without ']'");
		return NULL;
	}
	return p;
}

/* The entries of spec, separated by commas, and with `blanks` by blanks
 * too. */
static int
parse_list(struct hostlist *hl, const char *spec, bool blanks,
	   struct rd_err *err)
{
	struct parser ps = { .hl = hl, .spec = spec, .err = err };
	const char *p = spec, *end, *last;
	int rc;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		end = entry_end(&ps, p, blanks);
		if (end == NULL)
			return err->code;
		last = end;
		while (last > p && isspace((unsigned char)last[-1]))
			last--;
		rc = parse_entry(&ps, p, last);
		if (rc < 0)
			return rc;
		while (blanks && isspace((unsigned char)*end))
			end++;	/* "a b", "a , b": one separator */
		if (*end == '\0')
			return 0;
		p = *end == ',' ? end + 1 : end;
	}
}

int
hostlist_parse(struct hostlist *hl, const char *spec, struct rd_err *err)
{
	return parse_list(hl, spec, false, err);
}

int
hostlist_parse_line(struct hostlist *hl, const char *line,
		    struct rd_err *err)
{
	return parse_list(hl, line, true, err);
}

int
hostlist_parse_file(struct hostlist *hl, const char *text, const char *name,
		    struct rd_err *err)
{
	char line[4096], msg[sizeof(err->msg)];
	const char *p = text, *nl;
	unsigned lineno = 0;
	size_t n;
	int rc;

	for (; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		lineno++;
		n = strcspn(p, "#\n");
		if (n >= sizeof(line))
			return rd_errf(err, -EINVAL, "%s:%u: line too long",
				       name, lineno);
		memcpy(line, p, n);
		line[n] = '\0';
		if (line[strspn(line, " \t\r")] == '\0')
			continue;
		rc = hostlist_parse_line(hl, line, err);
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "%s", err->msg);
			rd_err_clear(err);
			return rd_errf(err, rc, "%s:%u: %s", name, lineno, msg);
		}
	}
	return 0;
}

void
hostlist_clear(struct hostlist *hl)
{
	size_t i;

	for (i = 0; i < hl->n; i++)
		free(hl->hosts[i]);
	free(hl->hosts);
	hl->hosts = NULL;
	hl->n = 0;
}
