/* SPDX-License-Identifier: MIT */
/* bset - a set of block numbers, as sorted runs (bset.h). */
#include "util/bset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct bset {
	struct bset_run *run;
	uint64_t *before;	/* blocks in the runs before run i */
	uint32_t n, cap;
	uint64_t count;
};

int
bset_new(struct bset **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void
bset_free(struct bset *s)
{
	if (!s)
		return;
	free(s->run);
	free(s->before);
	free(s);
}

static int
grow(struct bset *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 8;
	struct bset_run *run;
	uint64_t *before;

	if (cap <= s->cap)
		return -ENOMEM;
	run = realloc(s->run, cap * sizeof(*run));
	if (!run)
		return -ENOMEM;
	s->run = run;
	before = realloc(s->before, cap * sizeof(*before));
	if (!before)
		return -ENOMEM;
	s->before = before;
	s->cap = cap;
	return 0;
}

int
bset_add(struct bset *s, uint64_t first, uint64_t count)
{
	struct bset_run *last = s->n ? &s->run[s->n - 1] : NULL;

	if (count == 0)
		return 0;
	if (first > UINT64_MAX - count ||
	    (last && first < last->first + last->count))
		return -EINVAL;
	if (last && first == last->first + last->count) {
		last->count += count;
		s->count += count;
		return 0;
	}
	if (s->n == s->cap && grow(s) < 0)
		return -ENOMEM;
	s->run[s->n] = (struct bset_run){ first, count };
	s->before[s->n] = s->count;
	s->n++;
	s->count += count;
	return 0;
}

/* Add run r to s, where r may overlap the end of s's last run (both
 * inputs of a union are sorted, so r never starts before it). */
static int
add_overlapping(struct bset *s, struct bset_run r)
{
	struct bset_run *last = s->n ? &s->run[s->n - 1] : NULL;
	uint64_t end;

	if (last && r.first < last->first + last->count) {
		end = last->first + last->count;
		if (r.first + r.count <= end)
			return 0;
		r.count = r.first + r.count - end;
		r.first = end;
	}
	return bset_add(s, r.first, r.count);
}

int
bset_union(const struct bset *a, const struct bset *b, struct bset **out)
{
	uint32_t i = 0, j = 0;
	struct bset *s;
	int rc;

	rc = bset_new(&s);
	while (rc == 0 && (i < a->n || j < b->n)) {
		if (j == b->n || (i < a->n && a->run[i].first <= b->run[j].first))
			rc = add_overlapping(s, a->run[i++]);
		else
			rc = add_overlapping(s, b->run[j++]);
	}
	if (rc < 0) {
		bset_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

uint64_t
bset_count(const struct bset *s)
{
	return s->count;
}

uint32_t
bset_nruns(const struct bset *s)
{
	return s->n;
}

struct bset_run
bset_run_at(const struct bset *s, uint32_t i)
{
	return s->run[i];
}

/* The last run that starts at or before b, or -1. */
static int64_t
run_before(const struct bset *s, uint64_t b)
{
	int64_t lo = 0, hi = (int64_t)s->n - 1, found = -1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (s->run[mid].first <= b) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

bool
bset_has(const struct bset *s, uint64_t b)
{
	int64_t i = run_before(s, b);

	return i >= 0 && b - s->run[i].first < s->run[i].count;
}

bool
bset_covers(const struct bset *s, const struct bset *part)
{
	uint32_t i;

	for (i = 0; i < part->n; i++) {
		int64_t k = run_before(s, part->run[i].first);

		if (k < 0 || part->run[i].first + part->run[i].count >
				     s->run[k].first + s->run[k].count)
			return false;
	}
	return true;
}

bool
bset_covers_range(const struct bset *s, uint64_t first, uint64_t count)
{
	int64_t k = run_before(s, first);

	return count == 0 ||
	       (k >= 0 && first + count <= s->run[k].first + s->run[k].count);
}

uint64_t
bset_nth(const struct bset *s, uint64_t j)
{
	int64_t lo = 0, hi = (int64_t)s->n - 1, found = -1;

	if (j >= s->count)
		return UINT64_MAX;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (s->before[mid] <= j) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return s->run[found].first + (j - s->before[found]);
}

void
bset_mask(const struct bset *s, const struct bset *map, uint64_t k,
	  uint8_t *bits)
{
	uint64_t j, b;

	for (j = 0; j < k; j++) {
		b = map != NULL ? bset_nth(map, j) : j;
		if (s == NULL || bset_has(s, b))
			bits[j / 8] |= (uint8_t)(1u << (j % 8));
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The gap that, with every smaller one filled (and as many equal ones as
 * needed), leaves max_runs runs; 0 when no memory (nothing is filled). */
static uint64_t
gap_to_fill(const struct bset *s, uint32_t max_runs)
{
	uint64_t *gap = malloc((s->n - 1) * sizeof(*gap)), limit;
	uint32_t i;

	if (!gap)
		return 0;
	for (i = 1; i < s->n; i++)
		gap[i - 1] = s->run[i].first -
			     (s->run[i - 1].first + s->run[i - 1].count);
	qsort(gap, s->n - 1, sizeof(*gap), cmp_u64);
	limit = gap[s->n - max_runs - 1];
	free(gap);
	return limit;
}

void
bset_coarsen(struct bset *s, uint32_t max_runs)
{
	uint32_t i, kept = 0, fill;
	uint64_t limit;

	if (max_runs == 0)
		max_runs = 1;
	if (s->n <= max_runs || (limit = gap_to_fill(s, max_runs)) == 0)
		return;
	fill = s->n - max_runs;	/* gaps to fill: all below limit, then
				 * equal ones while some are left */
	for (i = 1; i < s->n; i++) {
		struct bset_run *last = &s->run[kept];
		uint64_t end = last->first + last->count;
		uint64_t gap = s->run[i].first - end;

		if (fill > 0 && gap <= limit) {
			last->count = s->run[i].first + s->run[i].count -
				      last->first;
			fill--;
		} else {
			s->run[++kept] = s->run[i];
		}
	}
	s->n = kept + 1;
	s->count = 0;
	for (i = 0; i < s->n; i++) {
		s->before[i] = s->count;
		s->count += s->run[i].count;
	}
}

void
bset_encode(const struct bset *s, struct wbuf *w)
{
	uint32_t i;

	wput_u32(w, s->n);
	for (i = 0; i < s->n; i++) {
		wput_u64(w, s->run[i].first);
		wput_u64(w, s->run[i].count);
	}
}

int
bset_decode(struct rbuf *r, uint32_t max_runs, uint64_t limit,
	    struct bset **out)
{
	struct bset *s = NULL;
	uint32_t n, i;
	int rc;

	if (rget_u32(r, &n) < 0 || n > max_runs ||
	    n > (r->len - r->off) / 16)
		return -EBADMSG;
	rc = bset_new(&s);
	for (i = 0; rc == 0 && i < n; i++) {
		uint64_t first, count;

		if (rget_u64(r, &first) < 0 || rget_u64(r, &count) < 0 ||
		    count == 0 || first >= limit || count > limit - first ||
		    (s->n && first <= s->run[s->n - 1].first +
					  s->run[s->n - 1].count))
			rc = -EBADMSG;
		else
			rc = bset_add(s, first, count);
	}
	if (rc < 0) {
		bset_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
