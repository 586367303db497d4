/* SPDX-License-Identifier: MIT */
/* partial - unfinished copies kept for the next job (partial.h). */
#include "daemon/partial.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

struct kept {
	char *path;		/* destination, as the job gave it */
	uint64_t size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	int fd;
	struct bset *good;	/* byte ranges holding the source's, or NULL */
	uint64_t until;		/* uv_now() it is given up at */
	struct kept *next;	/* oldest first */
};

struct partials {
	uv_loop_t *loop;
	unsigned keep_ms;
	uv_timer_t timer;
	bool closing;
	size_t n;
	struct kept *head, *tail;
};

int
partials_new(uv_loop_t *loop, unsigned keep_ms, struct partials **out)
{
	struct partials *ps = calloc(1, sizeof(*ps));

	*out = ps;
	if (ps == NULL)
		return -ENOMEM;
	ps->loop = loop;
	ps->keep_ms = keep_ms;
	uv_timer_init(loop, &ps->timer);
	ps->timer.data = ps;
	return 0;
}

static void
drop(struct kept *k)
{
	close(k->fd);
	bset_free(k->good);
	free(k->path);
	free(k);
}

/* Give up the oldest. */
static void
drop_head(struct partials *ps)
{
	struct kept *k = ps->head;

	ps->head = k->next;
	if (ps->head == NULL)
		ps->tail = NULL;
	ps->n--;
	drop(k);
}

static void
on_expiry(uv_timer_t *t)
{
	struct partials *ps = t->data;
	size_t before = ps->n;

	while (ps->head != NULL && ps->head->until <= uv_now(ps->loop))
		drop_head(ps);
	if (before > ps->n)
		log_info("gave up %zu unfinished cop%s kept %u s", before - ps->n,
			 before - ps->n == 1 ? "y" : "ies", ps->keep_ms / 1000);
	if (ps->head != NULL)
		uv_timer_start(&ps->timer, on_expiry,
			       ps->head->until - uv_now(ps->loop), 0);
}

static int
keep_one(struct partials *ps, const struct job_file *f, int fd,
	 struct bset *good)
{
	struct kept *k = calloc(1, sizeof(*k));

	if (k == NULL || (k->path = strdup(f->path)) == NULL) {
		free(k);
		return -ENOMEM;
	}
	k->size = f->size;
	k->mtime_sec = f->mtime_sec;
	k->mtime_nsec = f->mtime_nsec;
	k->fd = fd;
	k->good = good;
	k->until = uv_now(ps->loop) + ps->keep_ms;
	if (ps->n == PARTIALS_MAX)
		drop_head(ps);
	if (ps->tail != NULL)
		ps->tail->next = k;
	else
		ps->head = k;
	ps->tail = k;
	ps->n++;
	if (!uv_is_active((uv_handle_t *)&ps->timer))
		uv_timer_start(&ps->timer, on_expiry, ps->keep_ms, 0);
	return 0;
}

void
partials_keep(struct partials *ps, const struct job *job, int *fds,
	      struct bset **goods)
{
	struct bset *good;
	size_t i, kept = 0;

	for (i = 0; i < job->nfiles; i++) {
		good = goods != NULL ? goods[i] : NULL;
		if (goods != NULL)
			goods[i] = NULL;
		if (fds[i] < 0) {
			bset_free(good);
			continue;
		}
		if (ps == NULL || ps->closing || ps->keep_ms == 0 ||
		    keep_one(ps, &job->files[i], fds[i], good) < 0) {
			close(fds[i]);
			bset_free(good);
		} else {
			kept++;
		}
		fds[i] = -1;
	}
	if (kept > 0)
		log_info("kept %zu unfinished cop%s for %u s (--keep-partial)",
			 kept, kept == 1 ? "y" : "ies", ps->keep_ms / 1000);
}

static bool
same_source(const struct kept *k, const struct job_file *f)
{
	return k->size == f->size && k->mtime_sec == f->mtime_sec &&
	       k->mtime_nsec == f->mtime_nsec && strcmp(k->path, f->path) == 0;
}

/* Take the newest file kept for f out of the registry: its fd, or -1,
 * and its good ranges into *good. */
static int
take_one(struct partials *ps, const struct job_file *f, struct bset **good)
{
	struct kept *k, *prev = NULL, *found = NULL, *found_prev = NULL;
	int fd;

	for (k = ps->head; k != NULL; prev = k, k = k->next)
		if (same_source(k, f)) {
			found = k;
			found_prev = prev;
		}
	if (found == NULL)
		return -1;
	if (found_prev != NULL)
		found_prev->next = found->next;
	else
		ps->head = found->next;
	if (ps->tail == found)
		ps->tail = found_prev;
	ps->n--;
	fd = found->fd;
	*good = found->good;
	found->fd = -1;
	free(found->path);
	free(found);
	return fd;
}

size_t
partials_take(struct partials *ps, const struct job *job, int *fds,
	      struct bset **goods)
{
	size_t i, n = 0;

	for (i = 0; i < job->nfiles; i++) {
		fds[i] = -1;
		goods[i] = NULL;
		if (ps != NULL && job->files[i].type == JF_FILE &&
		    job->files[i].size > 0 && ps->n > 0)
			fds[i] = take_one(ps, &job->files[i], &goods[i]);
		n += fds[i] >= 0;
	}
	return n;
}

size_t
partials_count(const struct partials *ps)
{
	return ps != NULL ? ps->n : 0;
}

void
partials_close(struct partials *ps)
{
	if (ps == NULL || ps->closing)
		return;
	ps->closing = true;
	while (ps->head != NULL)
		drop_head(ps);
	uv_close((uv_handle_t *)&ps->timer, NULL);
}

void
partials_free(struct partials *ps)
{
	if (ps == NULL)
		return;
	while (ps->head != NULL)
		drop_head(ps);
	free(ps);
}
