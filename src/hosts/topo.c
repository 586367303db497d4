/* SPDX-License-Identifier: MIT */
/*
 * topo - racks of hosts from a topology file, and host lists put in rack
 * order (topo.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/hostlist.h"
#include "util/net.h"
#include "hosts/topo.h"

struct topo_host {
	char *key;		/* the name without a port */
	char *shortkey;		/* up to the first '.' */
	int rack;
};

struct topo {
	struct topo_host *h;	/* sorted by key */
	struct topo_host **by_short;	/* sorted by shortkey */
	size_t nh;
	char **racks;
	size_t nracks;
};

/* ---------------------------------------------------------------------
 * Names
 */

/* host without its ":port" ("[v6]:port" gives "v6"; what net.c cannot
 * split is kept whole); malloc'd or NULL */
static char *
host_key(const char *host)
{
	char name[1025];	/* NI_MAXHOST */
	uint16_t port;

	if (net_split_hostport(host, name, sizeof(name), &port, 0) < 0)
		return strdup(host);
	return strdup(name);
}

/* key up to its first '.', unless key is an address */
static char *
short_key(const char *key)
{
	const char *dot = strchr(key, '.');

	if (dot == NULL || isdigit((unsigned char)key[0]) ||
	    strchr(key, ':') != NULL)
		return strdup(key);
	return strndup(key, (size_t)(dot - key));
}

static int
cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct topo_host *)a)->key,
		      ((const struct topo_host *)b)->key);
}

static int
cmp_short(const void *a, const void *b)
{
	return strcmp((*(struct topo_host *const *)a)->shortkey,
		      (*(struct topo_host *const *)b)->shortkey);
}

/* ---------------------------------------------------------------------
 * Parsing
 */

/* The index of rack `name` (len bytes), added if new; -ENOMEM. */
static int
rack_index(struct topo *t, const char *name, size_t len)
{
	char **grown;
	size_t i;

	for (i = 0; i < t->nracks; i++)
		if (strlen(t->racks[i]) == len &&
		    memcmp(t->racks[i], name, len) == 0)
			return (int)i;
	grown = realloc(t->racks, (t->nracks + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	t->racks = grown;
	if ((t->racks[t->nracks] = strndup(name, len)) == NULL)
		return -ENOMEM;
	return (int)t->nracks++;
}

static int
add_hosts(struct topo *t, int rack, const struct hostlist *hl)
{
	struct topo_host *grown;
	size_t i;

	grown = realloc(t->h, (t->nh + hl->n) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	t->h = grown;
	for (i = 0; i < hl->n; i++) {
		struct topo_host *h = &t->h[t->nh];

		h->rack = rack;
		h->key = host_key(hl->hosts[i]);
		h->shortkey = h->key ? short_key(h->key) : NULL;
		if (h->key == NULL || h->shortkey == NULL) {
			free(h->key);
			return -ENOMEM;
		}
		t->nh++;
	}
	return 0;
}

/* The value of "key=" in line (up to whitespace), or NULL. */
static const char *
slurm_value(const char *line, const char *key, size_t *len)
{
	const char *p = line;
	size_t kl = strlen(key);

	while ((p = strstr(p, key)) != NULL) {
		if (p == line || isspace((unsigned char)p[-1]))
			break;
		p += kl;
	}
	if (p == NULL)
		return NULL;
	p += kl;
	*len = strcspn(p, " \t");
	return p;
}

/* One line, comments and blanks removed: its rack name and host list
 * (pointers into line, lengths); -EINVAL if it is neither form, 1 for a
 * Slurm line without Nodes= (a switch above the racks: skipped). */
static int
split_line(const char *line, const char **name, size_t *nlen,
	   const char **list, size_t *llen)
{
	size_t word = strcspn(line, " \t");

	if ((*list = slurm_value(line, "Nodes=", llen)) != NULL) {
		*name = slurm_value(line, "SwitchName=", nlen);
		if (*name == NULL || *nlen == 0)
			return -EINVAL;
		return *llen > 0 ? 0 : -EINVAL;
	}
	if (slurm_value(line, "SwitchName=", nlen) != NULL)
		return 1;
	if (word < 2 || line[word - 1] != ':' || line[word] == '\0')
		return -EINVAL;
	*name = line;
	*nlen = word - 1;
	*list = line + word + strspn(line + word, " \t");
	*llen = strlen(*list);
	return *llen > 0 ? 0 : -EINVAL;
}

static int
parse_line(struct topo *t, char *line, const char *file, unsigned no,
	   struct rd_err *err)
{
	struct hostlist hl = { 0 };
	const char *name, *list;
	size_t nlen, llen;
	char *spec, why[sizeof(err->msg)];
	int rc, rack = -1;

	line[strcspn(line, "#")] = '\0';
	while (isspace((unsigned char)*line))
		line++;
	if (*line == '\0')
		return 0;
	rc = split_line(line, &name, &nlen, &list, &llen);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return rd_errf(err, -EINVAL, "%s, line %u: not 'RACK: HOSTS' "
			       "nor 'SwitchName=RACK Nodes=HOSTS'", file, no);
	if ((spec = strndup(list, llen)) == NULL)
		return -ENOMEM;
	rc = hostlist_parse_line(&hl, spec, err);	/* "A: n1 n2, n3" */
	if (rc == -EINVAL) {
		snprintf(why, sizeof(why), "%s", err->msg);
		rd_err_clear(err);
		rd_errf(err, rc, "%s, line %u: %s", file, no, why);
	}
	if (rc == 0 && (rack = rack_index(t, name, nlen)) < 0)
		rc = rack;
	if (rc == 0)
		rc = add_hosts(t, rack, &hl);
	hostlist_clear(&hl);
	free(spec);
	return rc;
}

/* Sort for lookups; a host in two places is an error. */
static int
index_hosts(struct topo *t, const char *file, struct rd_err *err)
{
	size_t i;

	qsort(t->h, t->nh, sizeof(*t->h), cmp_key);
	for (i = 1; i < t->nh; i++)
		if (strcmp(t->h[i - 1].key, t->h[i].key) == 0)
			return rd_errf(err, -EINVAL, "%s: host %s is listed "
				       "twice (racks %s and %s)", file,
				       t->h[i].key, t->racks[t->h[i - 1].rack],
				       t->racks[t->h[i].rack]);
	t->by_short = malloc((t->nh ? t->nh : 1) * sizeof(*t->by_short));
	if (t->by_short == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nh; i++)
		t->by_short[i] = &t->h[i];
	qsort(t->by_short, t->nh, sizeof(*t->by_short), cmp_short);
	return 0;
}

int
topo_parse(const char *text, const char *name, struct topo **out,
	   struct rd_err *err)
{
	struct topo *t = calloc(1, sizeof(*t));
	char *copy = strdup(text), *line, *next;
	unsigned no = 1;
	int rc = t != NULL && copy != NULL ? 0 : -ENOMEM;

	for (line = copy; rc == 0 && line != NULL; line = next, no++) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		rc = parse_line(t, line, name, no, err);
	}
	if (rc == 0 && t->nh == 0)
		rc = rd_errf(err, -EINVAL, "%s: no racks in it (lines "
			     "'RACK: HOSTS' or 'SwitchName=RACK Nodes=HOSTS')",
			     name);
	if (rc == 0)
		rc = index_hosts(t, name, err);
	free(copy);
	if (rc < 0) {
		topo_free(t);
		t = NULL;
	}
	*out = t;
	return rc;
}

void
topo_free(struct topo *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nh; i++) {
		free(t->h[i].key);
		free(t->h[i].shortkey);
	}
	for (i = 0; i < t->nracks; i++)
		free(t->racks[i]);
	free(t->h);
	free(t->by_short);
	free(t->racks);
	free(t);
}

/* ---------------------------------------------------------------------
 * Lookups and order
 */

int
topo_rack_of(const struct topo *t, const char *host)
{
	struct topo_host want = { 0 }, *pw = &want, *hit, **shit;
	int rack = -1;

	if ((want.key = host_key(host)) == NULL)
		return -1;
	hit = bsearch(&want, t->h, t->nh, sizeof(*t->h), cmp_key);
	if (hit != NULL)
		rack = hit->rack;
	else if ((want.shortkey = short_key(want.key)) != NULL) {
		shit = bsearch(&pw, t->by_short, t->nh, sizeof(*t->by_short),
			       cmp_short);
		rack = shit != NULL ? (*shit)->rack : -1;
	}
	free(want.key);
	free(want.shortkey);
	return rack;
}

size_t
topo_racks(const struct topo *t)
{
	return t->nracks;
}

const char *
topo_rack_name(const struct topo *t, size_t i)
{
	return i < t->nracks ? t->racks[i] : NULL;
}

struct placed {
	size_t pos;	/* the rack's place in the order; unlisted last */
	size_t idx;	/* the host's place in the list */
	int rack;
	char *host;
};

static int
cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int
topo_order(const struct topo *t, int first, char **hosts, size_t n,
	   int *rack_of)
{
	struct placed *pl = calloc(n ? n : 1, sizeof(*pl));
	size_t *pos = malloc((t->nracks ? t->nracks : 1) * sizeof(*pos));
	size_t i, next = 0;

	if (pl == NULL || pos == NULL) {
		free(pl);
		free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < t->nracks; i++)
		pos[i] = SIZE_MAX;
	if (first >= 0 && (size_t)first < t->nracks)
		pos[first] = next++;
	for (i = 0; i < n; i++) {
		pl[i] = (struct placed){ .idx = i, .host = hosts[i],
					 .rack = topo_rack_of(t, hosts[i]) };
		if (pl[i].rack >= 0 && pos[pl[i].rack] == SIZE_MAX)
			pos[pl[i].rack] = next++;
		pl[i].pos = pl[i].rack >= 0 ? pos[pl[i].rack] : SIZE_MAX;
	}
	qsort(pl, n, sizeof(*pl), cmp_placed);
	for (i = 0; i < n; i++) {
		hosts[i] = pl[i].host;
		rack_of[i] = pl[i].rack;
	}
	free(pl);
	free(pos);
	return 0;
}
