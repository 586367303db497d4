/* SPDX-License-Identifier: MIT */
/*
 * The outcomes of a push, grouped as clush -b and dshbak -c group the
 * output of many hosts: one line per distinct outcome, its hosts as one
 * compressed host list, complete copies first, then failures:
 *
 *   node[01-58]: ok, verified (58 hosts, 0.912 to 0.950 s)
 *   node[59-64]: FAILED (6 hosts): /data/a.bin exists and differs from the source (--force replaces it)
 *
 * Failures group by their reason, in which each host's own name and
 * address read <host> and <address>, so that "cannot connect to
 * 10.0.0.7:7471: connection refused" from many hosts is one group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

enum kind { K_OK, K_WOULD, K_IDENTICAL, K_FAILED };

struct outcome {
	bool seen;
	enum kind kind;
	bool verified;
	bool slow;	/* found much slower than the others */
	double seconds;
	char *reason;	/* failed: as reported */
	char *key;	/* failed: with <host> and <address> */
};

struct outcomes {
	const struct hostlist *hl;
	struct outcome *o;	/* by host index */
};

/* One group: hosts idx[from, from + n) once sorted. */
struct group {
	size_t from, n;
	size_t first;		/* its first host: groups keep list order */
	double lo, hi;		/* seconds */
};

struct outcomes *
outcomes_new(const struct hostlist *hl)
{
	struct outcomes *g = calloc(1, sizeof(*g));

	if (g != NULL)
		g->o = calloc(hl->n ? hl->n : 1, sizeof(*g->o));
	if (g == NULL || g->o == NULL) {
		free(g);
		return NULL;
	}
	g->hl = hl;
	return g;
}

void
outcomes_free(struct outcomes *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->hl->n; i++) {
		free(g->o[i].reason);
		free(g->o[i].key);
	}
	free(g->o);
	free(g);
}

static bool
name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Does `word` at s[at] stand alone: not inside a longer name? */
static bool
stands_alone(const char *s, size_t at, size_t len)
{
	char before = at > 0 ? s[at - 1] : ' ', after = s[at + len];

	if (name_char(before) || before == '.')
		return false;
	if (after == '.')	/* a sentence's end, or a longer name? */
		return !name_char(s[at + len + 1]);
	return !name_char(after);
}

/* s with every standalone `word` replaced by `with`, malloc'd; NULL on
 * ENOMEM.  An empty word replaces nothing. */
static char *
replace_word(const char *s, const char *word, const char *with)
{
	size_t wl = strlen(word), rl = strlen(with), n = 0, i;
	const char *hit;
	char *out, *p;

	for (hit = wl ? strstr(s, word) : NULL; hit != NULL;
	     hit = strstr(hit + 1, word))
		n++;
	out = malloc(strlen(s) + n * (rl > wl ? rl - wl : 0) + 1);
	if (out == NULL)
		return NULL;
	for (p = out, i = 0; s[i] != '\0';) {
		if (wl && strncmp(s + i, word, wl) == 0 &&
		    stands_alone(s, i, wl)) {
			memcpy(p, with, rl);
			p += rl;
			i += wl;
		} else {
			*p++ = s[i++];
		}
	}
	*p = '\0';
	return out;
}

/* The reason with the host's own address and name made generic. */
static char *
reason_key(const struct push_report *r)
{
	char *a = replace_word(r->reason ? r->reason : "", r->addr ? r->addr
			       : "", "<address>");
	char *h = a ? replace_word(a, r->host, "<host>") : NULL;

	free(a);
	return h;
}

void
outcomes_add(struct outcomes *g, const struct push_report *r)
{
	struct outcome *o;

	if (g == NULL || r->index >= g->hl->n)
		return;
	o = &g->o[r->index];
	free(o->reason);
	free(o->key);
	*o = (struct outcome){
		.seen = true, .verified = r->verified, .seconds = r->seconds,
		.slow = r->ok && r->slow == SLOW_YES,
		.kind = !r->ok ? K_FAILED : r->identical ? K_IDENTICAL
			: r->dry_run ? K_WOULD : K_OK,
	};
	if (r->ok)
		return;
	o->reason = strdup(r->reason ? r->reason : "");
	o->key = reason_key(r);
}

/* Sorting hosts into groups: by kind, then key (failures) or verified;
 * arg is the outcomes. */
static int
cmp_outcome(const void *a, const void *b, void *arg)
{
	const struct outcome *o = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct outcome *x = &o[i], *y = &o[j];
	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == K_FAILED) {
		c = strcmp(x->key ? x->key : "", y->key ? y->key : "");
		if (c != 0)
			return c;
	} else if (x->verified != y->verified) {
		return x->verified ? -1 : 1;
	} else if (x->slow != y->slow) {
		return x->slow ? 1 : -1;
	}
	return i < j ? -1 : i > j;
}

static bool
same_group(const struct outcome *x, const struct outcome *y)
{
	if (x->kind != y->kind)
		return false;
	if (x->kind == K_FAILED)
		return strcmp(x->key ? x->key : "", y->key ? y->key : "") == 0;
	return x->verified == y->verified && x->slow == y->slow;
}

/* Groups: complete copies first, then in host list order. */
static int
cmp_group(const void *a, const void *b, void *arg)
{
	const struct outcome *o = arg;
	const struct group *x = a, *y = b;
	enum kind kx = o[x->first].kind, ky = o[y->first].kind;

	if ((kx == K_FAILED) != (ky == K_FAILED))
		return kx == K_FAILED ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The groups of the sorted hosts idx[0, n); returns how many. */
static size_t
make_groups(const struct outcome *o, const size_t *idx, size_t n,
	    struct group *gr)
{
	size_t i, ng = 0;
	struct group *cur = NULL;
	double s;

	for (i = 0; i < n; i++) {
		s = o[idx[i]].seconds;
		if (cur == NULL || !same_group(&o[cur->first], &o[idx[i]])) {
			cur = &gr[ng++];
			*cur = (struct group){ .from = i, .first = idx[i],
					       .lo = s, .hi = s };
		}
		cur->n++;
		cur->lo = s < cur->lo ? s : cur->lo;
		cur->hi = s > cur->hi ? s : cur->hi;
	}
	return ng;
}

/* One group's line. */
static void
print_group(const struct outcomes *g, const size_t *idx, const struct group *gr,
	    bool *pick)
{
	const struct outcome *o = &g->o[gr->first];
	size_t i;
	long need;
	char *list;

	memset(pick, 0, g->hl->n * sizeof(*pick));
	for (i = gr->from; i < gr->from + gr->n; i++)
		pick[idx[i]] = true;
	need = hostlist_compress(g->hl->hosts, g->hl->n, pick, NULL, 0);
	list = need >= 0 ? malloc((size_t)need + 1) : NULL;
	if (list == NULL)
		return;
	hostlist_compress(g->hl->hosts, g->hl->n, pick, list, (size_t)need + 1);
	if (o->kind == K_FAILED)
		printf("%s: FAILED (%zu host%s): %s\n", list, gr->n,
		       gr->n > 1 ? "s" : "", gr->n > 1 && o->key ? o->key
		       : o->reason ? o->reason : "(out of memory)");
	else if (o->kind == K_WOULD)
		printf("%s: ok, would take it (%zu host%s; dry run)\n", list,
		       gr->n, gr->n > 1 ? "s" : "");
	else if (o->kind == K_IDENTICAL)
		printf("%s: ok, already identical%s (%zu host%s)\n", list,
		       o->verified ? ", verified" : "", gr->n,
		       gr->n > 1 ? "s" : "");
	else if (gr->n > 1)
		printf("%s: ok%s%s (%zu hosts, %.3f to %.3f s)\n", list,
		       o->verified ? ", verified" : "", o->slow ? ", slow" : "",
		       gr->n, gr->lo, gr->hi);
	else
		printf("%s: ok%s%s (1 host, %.3f s)\n", list,
		       o->verified ? ", verified" : "", o->slow ? ", slow" : "",
		       gr->lo);
	free(list);
}

void
outcomes_print(const struct outcomes *g, bool failures_only)
{
	size_t n = 0, i, ng;
	size_t *idx = g ? calloc(g->hl->n + 1, sizeof(*idx)) : NULL;
	struct group *gr = g ? calloc(g->hl->n + 1, sizeof(*gr)) : NULL;
	bool *pick = g ? calloc(g->hl->n + 1, sizeof(*pick)) : NULL;

	for (i = 0; idx != NULL && i < g->hl->n; i++)
		if (g->o[i].seen)
			idx[n++] = i;
	if (idx != NULL && gr != NULL && pick != NULL && n > 0) {
		qsort_r(idx, n, sizeof(*idx), cmp_outcome, g->o);
		ng = make_groups(g->o, idx, n, gr);
		qsort_r(gr, ng, sizeof(*gr), cmp_group, g->o);
		for (i = 0; i < ng; i++)
			if (!failures_only ||
			    g->o[gr[i].first].kind == K_FAILED)
				print_group(g, idx, &gr[i], pick);
		fflush(stdout);
	}
	free(idx);
	free(gr);
	free(pick);
}
