/* SPDX-License-Identifier: MIT */
/*
 * What a push says on the command line besides each host's outcome
 * (see send_int.h): -v's announcement of what is sent and how, the slow
 * hosts and the retries between attempts, and at the end the summary,
 * the failed line, the host files and the JSON summary.
 */
#include <stdio.h>
#include <stdlib.h>

#include "send_int.h"
#include "store/manifest.h"

static const char *const transport_names[] = {
	[TRANSPORT_AUTO] = "auto", [TRANSPORT_TCP] = "tcp",
	[TRANSPORT_VERBS] = "verbs",
};

const char *
send_pending_host(const struct sender *sd, size_t i)
{
	return sd->targets != NULL ? sd->targets[sd->pending[i]]
				   : sd->hl->hosts[sd->pending[i]];
}

uint64_t
send_manifest_bytes(const struct manifest *mf, size_t *nfiles)
{
	const struct job_file *e = mf_entries(mf);
	size_t i, n = mf_count(mf), files = 0;
	uint64_t bytes = 0;

	for (i = 0; i < n; i++)
		if (e[i].type == JF_FILE) {
			files++;
			bytes += e[i].size;
		}
	if (nfiles != NULL)
		*nfiles = files;
	return bytes;
}

enum sched_link
send_pending_link(const struct sender *sd)
{
	const char **hosts = calloc(sd->npending + 1, sizeof(*hosts));
	enum sched_link link;
	size_t i;

	if (hosts == NULL)
		return sd->o->transport == TRANSPORT_VERBS ? SCHED_LINK_VERBS
							   : SCHED_LINK_NET;
	for (i = 0; i < sd->npending; i++)
		hosts[i] = send_pending_host(sd, i);
	link = push_link(sd->o->transport, hosts, sd->npending);
	free(hosts);
	return link;
}

/* The block size the push will choose (push.c does the same with its
 * hosts). */
static uint32_t
sender_block(const struct sender *sd, enum sched_alg alg, uint64_t bytes)
{
	return sched_auto_block(alg, bytes, (uint32_t)sd->npending + 1,
				send_pending_link(sd));
}

void
send_announce(const struct sender *sd, const struct manifest *mf,
	      enum sched_alg alg)
{
	const struct opts *o = sd->o;
	size_t nfiles, n = mf_count(mf);
	uint64_t bytes = send_manifest_bytes(mf, &nfiles), blocks;
	uint32_t block;
	char size[32], bs[32];

	if (o->verbose < 1)
		return;
	block = o->block_size ? o->block_size : sender_block(sd, alg, bytes);
	if (block == 0)
		return;
	blocks = (bytes + block - 1) / block;
	format_bytes(size, sizeof(size), (double)bytes);
	format_bytes(bs, sizeof(bs), (double)block);
	warnx_("sending %zu file%s (%zu entries, %s) to %zu host%s: %llu "
	       "block%s of %s%s, %s schedule%s of %llu steps, transport "
	       "%s%s%s%s", nfiles, nfiles == 1 ? "" : "s", n, size,
	       sd->npending, sd->npending == 1 ? "" : "s",
	       (unsigned long long)blocks, blocks == 1 ? "" : "s", bs,
	       o->block_size ? "" : " (chosen)", sched_alg_name(alg),
	       alg_is_chosen(o) ? " (chosen)" : "",
	       (unsigned long long)sched_total_steps(alg,
					(uint32_t)sd->npending + 1, blocks),
	       transport_names[o->transport], o->verify ? ", --verify" : "",
	       o->force ? ", --force" : "", o->preserve ? ", -p" : "");
}

/* The failed hosts, compressed, on one line: for a launcher to exclude. */
static void
print_failed(const struct hostlist *hl, const bool *failed, bool dry_run)
{
	char *list = hosts_compressed(hl, failed, true);

	if (list != NULL && list[0] != '\0')
		fprintf(stderr, "rdmcp: %s: %s\n", dry_run ? "would fail"
			: "failed", list);
	free(list);
}

/* The hosts without a copy for the sender's reason alone (a source that
 * changed while it was sent, at every attempt): named, and why they are
 * not among the failed ones (the exit status is 3: not the hosts'
 * fault, and a launcher must not leave them out for it). */
static void
print_unsent(const struct sender *sd)
{
	char *list = hosts_compressed(sd->hl, sd->unsent, true);

	if (list != NULL && list[0] != '\0' && sd->total.source_changed[0])
		warnx_("%s, in each attempt (%u): no copy on %s; not their "
		       "fault, so not listed as failed",
		       sd->total.source_changed, sd->total.attempts, list);
	else if (list != NULL && list[0] != '\0')
		warnx_("no copy on %s, for the sender's reason above, not "
		       "theirs: not listed as failed", list);
	free(list);
}

/* --ok-file and --failed-file.  Returns 0, or -errno after a message if
 * one could not be written (the other is written all the same). */
static int
write_host_files(const struct opts *o, const struct hostlist *hl,
		 const bool *okay, const bool *failed)
{
	int rc = 0, rc2 = 0;

	if (o->ok_file != NULL)
		rc = write_host_file(o->ok_file, hl, okay, true);
	if (o->failed_file != NULL)
		rc2 = write_host_file(o->failed_file, hl, failed, true);
	return rc < 0 ? rc : rc2;
}

void
send_json_summary(const struct hostlist *hl, const struct push_summary *sum,
		  const bool *okay, const bool *failed, const bool *not_sent,
		  int status, const struct dry_plan *dry)
{
	char *ok = hosts_compressed(hl, okay, true);
	char *bad = hosts_compressed(hl, failed, true);
	char *unsent = hosts_compressed(hl, not_sent, true);

	report_json_summary(sum, ok, bad, unsent, status, dry);
	free(ok);
	free(bad);
	free(unsent);
}

void
send_say_regroup(const struct sender *sd, uint64_t rate)
{
	bool *pick = calloc(sd->hl->n, sizeof(*pick));
	char *list = NULL, lo_s[48], hi_s[48];
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, n = 0;

	for (i = 0; pick != NULL && i < sd->hl->n; i++) {
		if (!sd->retry[i] || sd->slow[i] != SLOW_YES)
			continue;
		pick[i] = true;
		n++;
		lo = sd->rate[i] < lo ? sd->rate[i] : lo;
		hi = sd->rate[i] > hi ? sd->rate[i] : hi;
	}
	if (pick != NULL && n > 0)
		list = hosts_compressed(sd->hl, pick, true);
	free(pick);
	format_rate(lo_s, sizeof(lo_s), (double)lo, 1);
	format_rate(hi_s, sizeof(hi_s), (double)hi, 1);
	progress_clear();
	if (sd->o->verbose >= 0 && list != NULL)
		warnx_("slow: %s (blocks came in at %s%s%s, the others' at "
		       "%.1f MiB/s): sending again, to %s last, in a chain",
		       list, lo_s, lo != hi ? " to " : "", lo != hi ? hi_s : "",
		       (double)rate / 1048576, n > 1 ? "them" : "it");
	free(list);
}

void
send_say_changed(const struct sender *sd, size_t more)
{
	progress_clear();
	if (more > 0)
		warnx_("%s: sending it again as it is now",
		       sd->total.source_changed);
	else
		warnx_("%s: no host keeps what was sent",
		       sd->total.source_changed);
}

/* "retrying 3 hosts that failed (attempt 2: retry 1 of at most 1; 2 only
 * lost their group, not counted against --retries 1; in 1 s: 1 was busy):
 * LIST": the bound a host's own failures have, not the push's
 * (casualties are sent to again uncounted). */
void
send_say_retry(const struct sender *sd, int round)
{
	bool *pick = calloc(sd->hl->n, sizeof(*pick));
	char *list = NULL, why[260];
	size_t i, j, own = 0, n = sd->npending;
	int most = 0, bound = 0, len;

	for (i = 0; pick != NULL && i < n; i++) {
		j = sd->pending[i];
		pick[j] = true;
		own += sd->bound[j] > 0;
		most = sd->bound[j] > 0 && sd->faults[j] > most ? sd->faults[j]
								: most;
		bound = sd->bound[j] > bound ? sd->bound[j] : bound;
	}
	list = pick != NULL ? hosts_compressed(sd->hl, pick, true) : NULL;
	free(pick);
	len = snprintf(why, sizeof(why), "attempt %d", round + 1);
	if (own > 0)
		len += snprintf(why + len, sizeof(why) - (size_t)len, ": retry "
				"%d of at most %d", most, bound);
	if (own < n)
		len += snprintf(why + len, sizeof(why) - (size_t)len, "%s%zu "
				"only lost %s group, not counted against "
				"--retries %d", own > 0 ? "; " : ": ", n - own,
				n - own > 1 ? "their" : "its", sd->o->retries);
	if (sd->busy > 0)
		snprintf(why + len, sizeof(why) - (size_t)len, "; in %.0f s: "
			 "%zu %s busy", push_retry_wait_ms(round) / 1000.0,
			 sd->busy, sd->busy > 1 ? "were" : "was");
	progress_clear();
	if (sd->o->verbose >= 0 && list != NULL)
		warnx_("retrying %zu host%s that failed (%s): %s", n,
		       n > 1 ? "s" : "", why, list);
	free(list);
}

void
send_say_mass_silence(const struct sender *sd, size_t silent, size_t hosts)
{
	progress_clear();
	if (sd->o->verbose >= 0)
		warnx_("%zu of %zu hosts went silent at once: more likely this "
		       "machine or its network starved them than they all "
		       "hung; the retry waits for each as long as -t allows",
		       silent, hosts);
}

int
send_finish(struct sender *sd, bool ran)
{
	size_t i;

	progress_clear();
	sd->total.hosts = sd->hl->n;
	sd->total.failed = sd->total.unsent = 0;
	for (i = 0; i < sd->hl->n; i++) {
		sd->total.failed += sd->failed[i];
		sd->total.unsent += sd->unsent[i];
	}
	if (!sd->o->json)
		outcomes_print(sd->outcomes, sd->o->verbose < 0);
	if (ran && sd->o->dry_run) {
		dry_plan_make(sd->o, sd->alg, &sd->total, sd->would,
			      sd->would ? sd->would_addr : NULL, &sd->dry);
		dry_plan_print(sd->o, &sd->dry, &sd->total);
	} else if (ran || sd->total.ok > 0) {
		report_summary(sd->o, &sd->total);
	}
	if (ran && sd->o->verbose > 0 && !sd->o->json)
		warnx_("set-up (resolve, connect, authenticate, prepare) took "
		       "%.3f s of %.3f s", sd->total.setup, sd->total.seconds);
	print_failed(sd->hl, sd->failed, sd->o->dry_run);
	print_unsent(sd);
	return write_host_files(sd->o, sd->hl, sd->ok, sd->failed);
}
