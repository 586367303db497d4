/* SPDX-License-Identifier: MIT */
/*
 * rdmcp FILE... HOSTS: the sending side on the command line.  Runs the
 * push, then again for the hosts that failed (--retries), and reports one
 * outcome per host.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/auth.h"
#include "send_int.h"
#include "hosts/hostlist.h"
#include "util/log.h"
#include "store/manifest.h"
#include "util/path.h"
#include "rsh.h"

/* ---------------------------------------------------------------------
 * push
 */

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
wait_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A host's final outcome: its line now (-v, --json), its group at the
 * end. */
static void
report_host(struct sender *sd, const struct push_report *r)
{
	report_replica(sd->o, r);
	outcomes_add(sd->outcomes, r);
}

/* A host's outcome in this attempt: reported now, unless it failed in a
 * way another attempt may cure. */
static void
on_push_report(void *ctx, const struct push_report *r)
{
	struct sender *sd = ctx;
	struct push_report out = *r;
	size_t idx = sd->pending[r->index];
	uint8_t faults = sd->faults[idx];
	char why[512];

	if (r->regroup) {	/* not an outcome: sent again, in order */
		sd->retry[idx] = true;
		sd->slow[idx] = r->slow;
		sd->rate[idx] = r->link_rate;
		sd->regrouped = true;
		return;
	}
	out.index = idx;
	out.host = sd->hl->hosts[idx];	/* as given, even with --rsh */
	out.seconds += sd->offset;
	if (!r->ok && !r->maybe_landed && sd->maybe_landed[idx]) {
		snprintf(why, sizeof(why), "%.400s; an earlier attempt lost it "
			 "after its go to land: its copy may be in place",
			 r->reason);
		out.reason = why;
		out.maybe_landed = true;
	}
	sd->maybe_landed[idx] = out.maybe_landed;	/* kept to the end */
	if (r->dry_run && sd->would++ == 0 && r->addr != NULL)
		snprintf(sd->would_addr, sizeof(sd->would_addr), "%s", r->addr);
	if (r->ok) {
		sd->ok[idx] = true;
		sd->total.copied += !r->identical && !r->dry_run;
		if (sd->total.ok++ == 0)
			sd->total.first_ok = out.seconds;
		sd->total.last_ok = out.seconds;
	} else if (push_may_retry(r, sd->last, sd->o->retries,
				  &sd->faults[idx])) {
		sd->retry[idx] = true;
		sd->busy += r->error == -EBUSY;
		sd->silence |= push_retry_patient(r);
		sd->suspect[idx] = (r->error == -ETIMEDOUT ||
				    r->error == -ETIME) && !r->casualty;
		sd->bound[idx] = sd->faults[idx] == faults ? 0
			: (uint8_t)push_retry_bound(r, sd->o->retries);
		if (sd->o->verbose > 0)
			warnx_("%s failed (%s); will retry", r->host, r->reason);
		return;
	} else if (r->sender_fault) {
		sd->sender_failed = true;	/* not the host's fault */
		sd->unsent[idx] = true;
	} else {
		sd->failed[idx] = true;
	}
	report_host(sd, &out);
}

static void
on_progress(void *ctx, const struct push_progress *pr)
{
	progress_show(pr);
}

static void
on_trace(void *ctx, size_t index, uint32_t rank, const struct trace *t,
	 int64_t offset, uint64_t error_us)
{
	struct sender *sd = ctx;

	tracefile_add(sd->tf, index == SIZE_MAX ? NULL
			      : sd->hl->hosts[sd->pending[index]],
		      index == SIZE_MAX ? SIZE_MAX : sd->pending[index], rank,
		      t, offset, error_us);
}

/* After a regroup: the hosts that are not slow in list order, then
 * those that may be, then the slow ones, fastest first. */
static int
cmp_regrouped(const void *a, const void *b, void *arg)
{
	const struct sender *sd = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (sd->slow[i] != sd->slow[j])
		return sd->slow[i] < sd->slow[j] ? -1 : 1;
	if (sd->slow[i] == SLOW_YES && sd->rate[i] != sd->rate[j])
		return sd->rate[i] > sd->rate[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The hosts of the next attempt; returns their count. */
static size_t
next_pending(struct sender *sd)
{
	size_t i;

	sd->npending = 0;
	for (i = 0; i < sd->hl->n; i++) {
		if (sd->retry[i])
			sd->pending[sd->npending++] = i;
		sd->retry[i] = false;
	}
	if (sd->regroup_done)
		qsort_r(sd->pending, sd->npending, sizeof(*sd->pending),
			cmp_regrouped, sd);
	return sd->npending;
}

/* --slow last: may this attempt stop around slow hosts? */
static bool
may_regroup(const struct sender *sd, const struct push_cfg *cfg)
{
	return !sd->o->slow_wait && !sd->o->dry_run && !sd->regroup_done &&
	       sd->racks.rack_of == NULL && sd->npending >= 3 &&
	       (cfg->alg == SCHED_BINOMIAL || cfg->alg == SCHED_CHAIN);
}

/* May host idx's late handshake be cut short in the coming attempt?
 * Only in a retry (a first attempt has no measure of its hosts yet),
 * and only if the attempt after would send to it again: cut so, it
 * fails as a hung handshake (-ETIME), a fault of its own. */
static bool
may_cut_short(const struct sender *sd, size_t idx)
{
	struct push_report hung = { .error = -ETIME };

	return sd->retried && !sd->last &&
	       sd->faults[idx] + 1 <= push_retry_bound(&hung, sd->o->retries);
}

/* One attempt to the pending hosts.  Returns push_run's status. */
static int
attempt(struct sender *sd, struct push_cfg *cfg, const char **hosts,
	struct rd_err *err)
{
	struct push_summary sum;
	int *racks = NULL;
	bool *slow = calloc(sd->npending + 1, sizeof(*slow));
	bool *suspect = calloc(sd->npending + 1, sizeof(*suspect));
	bool *expendable = calloc(sd->npending + 1, sizeof(*expendable));
	size_t i;
	int rc;

	if (slow == NULL || suspect == NULL || expendable == NULL ||
	    (sd->racks.rack_of != NULL &&
	     (racks = calloc(sd->npending + 1, sizeof(*racks))) == NULL)) {
		free(slow);
		free(suspect);
		free(expendable);
		return -ENOMEM;
	}
	for (i = 0; i < sd->npending; i++) {
		hosts[i] = send_pending_host(sd, i);
		if (racks != NULL)
			racks[i] = sd->racks.rack_of[sd->pending[i]];
		slow[i] = sd->slow[sd->pending[i]] == SLOW_YES;
		suspect[i] = sd->suspect[sd->pending[i]];
		sd->suspect[sd->pending[i]] = false;
		expendable[i] = may_cut_short(sd, sd->pending[i]);
	}
	cfg->hosts = hosts;
	cfg->nhosts = sd->npending;
	cfg->racks = racks;
	cfg->own_rack = sd->racks.own;
	cfg->slow = slow;
	cfg->suspect = suspect;
	cfg->expendable = expendable;
	cfg->regroup = may_regroup(sd, cfg);
	sd->regrouped = false;
	rc = push_run(cfg, &sum, err);
	cfg->racks = NULL;
	cfg->slow = NULL;
	cfg->suspect = NULL;
	cfg->expendable = NULL;
	free(racks);
	free(slow);
	free(suspect);
	free(expendable);
	if (rc == 0 && sd->regrouped) {	/* them last, in a chain */
		send_say_regroup(sd, sum.link_rate);
		cfg->alg = SCHED_CHAIN;
		sd->regroup_done = true;
	}
	sd->changed = sum.source_changed[0] != '\0';
	if (sd->changed)
		snprintf(sd->total.source_changed,
			 sizeof(sd->total.source_changed), "%s",
			 sum.source_changed);
	if (rc == 0) {
		sd->total.bytes = sum.bytes;
		sd->total.sent += sum.sent;
		sd->total.reused += sum.reused;
		sd->total.resumed += sum.resumed;
		sd->total.would_send += sum.would_send;
		sd->total.attempts += sum.attempts;
		sd->total.transport = sum.transport;
		sd->total.block_size = sum.block_size;
		if (sd->total.setup == 0)
			sd->total.setup = sd->offset + sum.setup;
	}
	return rc;
}

/* After an attempt of `hosts` hosts: if most of them went silent at once
 * (push_retry_mass_silence), none is a suspect in the retry. */
static void
forgive_mass_silence(struct sender *sd, size_t hosts)
{
	size_t i, silent = 0;

	for (i = 0; i < sd->hl->n; i++)
		silent += sd->suspect[i];
	if (!push_retry_mass_silence(silent, hosts))
		return;
	memset(sd->suspect, 0, sd->hl->n * sizeof(*sd->suspect));
	send_say_mass_silence(sd, silent, hosts);
}

/* Attempts until every host has an outcome.  Returns 0, or -errno after
 * a message if the sender itself failed. */
static int
run_attempts(struct sender *sd, struct push_cfg *cfg)
{
	struct rd_err err = { 0 };
	const char **hosts = calloc(sd->hl->n, sizeof(*hosts));
	double start = now_seconds();
	size_t more;
	int round, rc = 0;

	if (hosts == NULL) {
		warnx_("cannot start: out of memory");
		return -ENOMEM;
	}
	sd->max_attempts = push_retry_limit(sd->o->retries, sd->o->dry_run);
	for (round = 0; rc == 0 && sd->npending > 0;) {
		sd->last = round + 1 >= sd->max_attempts;
		sd->offset = now_seconds() - start;
		sd->busy = 0;
		cfg->timeout_ms = push_retry_timeout(sd->o->timeout_ms,
						     sd->silences);
		cfg->first_timeout_ms = sd->o->timeout_ms;
		sd->silence = false;
		rc = attempt(sd, cfg, hosts, &err);
		sd->retried = true;
		sd->silences += sd->silence;
		if (rc == 0)
			forgive_mass_silence(sd, sd->npending);
		more = rc == 0 ? next_pending(sd) : 0;
		if (sd->changed)	/* once it is known whether it goes again */
			send_say_changed(sd, more);
		if (sd->regrouped)	/* not a retry: sent again, in order */
			continue;
		round++;
		if (more > 0)
			send_say_retry(sd, round);
		if (more > 0 && sd->busy > 0)	/* give their jobs time */
			wait_ms(push_retry_wait_ms(round));
	}
	sd->total.seconds = now_seconds() - start;
	free(hosts);
	if (rc < 0)
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
	return rc;
}

/* Sources are mapped: one truncated while we read it raises SIGBUS.  The
 * members then see the sender go without its final go, and discard. */
static void
on_sigbus(int sig)
{
	static const char msg[] = "rdmcp: a source file shrank while it was "
				  "being sent; no host keeps a copy\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_SENDER);
	_exit(EXIT_SENDER);
}

/* ---------------------------------------------------------------------
 * --rsh: receivers without a daemon
 */

static bool
use_rsh(const struct opts *o)
{
	return o->rsh != NULL && o->rsh[0] != '\0';
}

/* The key: with --rsh a fresh one for this push alone, else the file's.
 * Returns 0 or -errno after a message. */
static int
sender_key(const struct opts *o, struct auth_key *key)
{
	int rc;

	if (!use_rsh(o))
		return load_key(o, key);
	rc = auth_nonce(key->k);
	if (rc < 0)
		warnx_("cannot make a one-time key: no random numbers");
	return rc;
}

/* A host whose receiver did not start: reported, and left out. */
static void
report_no_receiver(struct sender *sd, size_t i, const char *reason)
{
	struct push_report r = {
		.index = i, .host = sd->hl->hosts[i], .addr = "",
		.error = -EHOSTUNREACH, .reason = reason, .permanent = true,
	};

	sd->failed[i] = true;
	report_host(sd, &r);
}

/* Start the receivers and aim the push at them: the hosts that have one
 * are pending.  Returns 0, or -errno after a message (-EINVAL: a bad
 * --rsh, or a host with a port). */
static int
start_receivers(struct sender *sd, const struct manifest *m,
		const struct auth_key *key, struct rsh **rsh)
{
	const struct opts *o = sd->o;
	size_t i, ndirs;
	char **dirs = landing_dirs(m, &ndirs);
	struct rsh_cfg cfg = {
		.rsh = o->rsh, .remote_path = o->remote_path,
		.remote_opts = o->remote_opts, .fanout = o->fanout,
		.connect_timeout_ms = o->connect_timeout_ms,
		.timeout_ms = o->timeout_ms, .roots = (const char *const *)dirs,
		.nroots = ndirs, .verbose = o->verbose,
	};
	int rc = dirs == NULL ? -ENOMEM : rsh_start(&cfg, sd->hl, key, rsh);

	if (dirs == NULL)
		warnx_("cannot start the receivers: out of memory");
	for (i = 0; dirs != NULL && i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	if (rc < 0)
		return rc;
	sd->npending = 0;
	for (i = 0; i < sd->hl->n; i++) {
		sd->targets[i] = rsh_target(*rsh, i);
		if (sd->targets[i] == NULL)
			report_no_receiver(sd, i, rsh_reason(*rsh, i));
		else
			sd->pending[sd->npending++] = i;
	}
	if (o->verbose > 0)
		warnx_("receivers started on %zu of %zu hosts in %.3f s "
		       "(fanout %u)", sd->npending, sd->hl->n,
		       rsh_seconds(*rsh), o->fanout);
	return 0;
}

/* The per-host state of a push, and room for where its nfiles sources
 * land.  Returns 0 or -ENOMEM after a message. */
static int
sender_alloc(struct sender *sd, int nfiles)
{
	size_t n = sd->hl->n, i;

	sd->ok = calloc(n, sizeof(bool));
	sd->failed = calloc(n, sizeof(bool));
	sd->unsent = calloc(n, sizeof(bool));
	sd->retry = calloc(n, sizeof(bool));
	sd->bound = calloc(n, sizeof(*sd->bound));
	sd->faults = calloc(n, sizeof(*sd->faults));
	sd->maybe_landed = calloc(n, sizeof(bool));
	sd->slow = calloc(n, sizeof(*sd->slow));
	sd->suspect = calloc(n, sizeof(*sd->suspect));
	sd->rate = calloc(n, sizeof(*sd->rate));
	sd->pending = calloc(n, sizeof(size_t));
	sd->targets = calloc(n, sizeof(char *));
	sd->ndests = nfiles > 0 ? (size_t)nfiles : 0;
	sd->dests = calloc(sd->ndests + 1, sizeof(char *));
	sd->sources = calloc(sd->ndests + 1, sizeof(char *));
	sd->outcomes = outcomes_new(sd->hl);
	if (!sd->ok || !sd->failed || !sd->unsent || !sd->retry || !sd->bound ||
	    !sd->faults || !sd->maybe_landed ||
	    !sd->slow || !sd->suspect || !sd->rate || !sd->pending ||
	    !sd->targets || !sd->dests || !sd->sources || !sd->outcomes) {
		warnx_("cannot start: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		sd->pending[i] = i;
	sd->npending = n;
	return 0;
}

static void
sender_free(struct sender *sd)
{
	size_t i;

	for (i = 0; sd->dests != NULL && i < sd->ndests; i++)
		free(sd->dests[i]);
	free(sd->dests);
	free(sd->sources);
	if (sd->spool_fd >= 0)
		close(sd->spool_fd);
	outcomes_free(sd->outcomes);
	free(sd->ok);
	free(sd->failed);
	free(sd->unsent);
	free(sd->retry);
	free(sd->bound);
	free(sd->faults);
	free(sd->maybe_landed);
	free(sd->slow);
	free(sd->suspect);
	free(sd->rate);
	free(sd->pending);
	free(sd->targets);
}

/* What is read for each source: the argument, but for '-', standard
 * input, spooled.  Returns 0 or -errno after a message. */
static int
read_sources(struct sender *sd)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < sd->ndests && rc == 0; i++) {
		sd->sources[i] = sd->o->args[i];
		if (strcmp(sd->o->args[i], "-") != 0)
			continue;
		rc = spool_stdin(sd->spooled, sizeof(sd->spooled),
				 &sd->spool_fd);
		sd->sources[i] = sd->spooled;
	}
	return rc;
}

/* What push_run needs from the options. */
static void
push_settings(struct sender *sd, const struct manifest *mf, uint64_t bytes,
	      const struct auth_key *key, struct push_cfg *cfg)
{
	const struct opts *o = sd->o;

	*cfg = (struct push_cfg){
		.files = mf_entries(mf), .sources = mf_sources(mf),
		.nfiles = mf_count(mf), .times = o->preserve,
		.default_port = o->port,
		.block_size = o->block_size, .verify = o->verify,
		.force = o->force, .timeout_ms = o->timeout_ms,
		.sparse = o->sparse, .dry_run = o->dry_run,
		.whole_file = o->whole_file,
		.parents = dest_dir_made(o),
		.bwlimit = o->bwlimit,
		.connect_timeout_ms = o->connect_timeout_ms,
		.window = o->window, .report = on_push_report,
		.ctx = sd, .transport = o->transport, .bind = o->bind,
		.verbs = { .device = o->device, .gid_index = o->gid_index,
			   .interrupts = o->interrupts },
		.key = key, .key_name = sd->key_name,
		.progress = progress_on() ? on_progress : NULL,
		.trace = sd->tf != NULL ? on_trace : NULL,
	};
	cfg->alg = sd->alg = chosen_alg(o, bytes, (uint32_t)sd->npending + 1,
					send_pending_link(sd));
	if (use_rsh(o))
		snprintf(sd->key_name, sizeof(sd->key_name), "the one-time "
			 "key");
	else
		snprintf(sd->key_name, sizeof(sd->key_name), "the key in %s",
			 key_path(o));
}

int
run_push(const struct opts *o)
{
	struct hostlist hl = { 0 };
	struct sender sd = { .o = o, .hl = &hl, .spool_fd = -1,
			     .racks = { .own = -1 } };
	struct manifest *mf = NULL;
	struct push_cfg cfg;
	struct auth_key key;
	struct rsh *rsh = NULL;
	int nfiles, rc, status = EXIT_SENDER;

	setup_logging(o->verbose, LOG_WARN, false, o->log_epoch);
	signal(SIGBUS, on_sigbus);
	progress_start(o);
	rc = gather_hosts(o, &hl, &nfiles, &sd.racks);
	if (rc == 0)
		rc = check_stdin_source(o, nfiles);
	if (rc == 0 && (rc = sender_alloc(&sd, nfiles)) == 0)
		rc = destinations(o, o->args, sd.ndests, sd.dests);
	if (rc == 0)
		rc = check_host_files(o->ok_file, o->failed_file);
	if (rc == 0)
		rc = read_sources(&sd);
	if (rc < 0) {
		status = exit_status(rc);
		if (status == EXIT_USAGE)
			fprintf(stderr, "Try 'rdmcp --help'.\n");
		goto out;
	}
	rc = build_manifest(o, (char **)sd.sources, sd.dests, sd.ndests, &mf);
	if (rc < 0) {	/* a directory without -r is a usage error */
		status = rc == -EISDIR ? EXIT_USAGE : EXIT_SENDER;
		send_finish(&sd, false);	/* no host failed: nothing was sent */
		goto report;
	}
	if (sender_key(o, &key) < 0)
		goto out;
	if (o->trace_file != NULL && tracefile_open(o->trace_file, &sd.tf) < 0)
		goto out;
	if (use_rsh(o)) {
		rc = start_receivers(&sd, mf, &key, &rsh);
		if (rc < 0) {
			status = exit_status(rc);
			goto out;
		}
	} else {
		if (o->fanout_given)
			warnx_("warning: --fanout bounds the remote commands of "
			       "--rsh, and does nothing without it: every host "
			       "receives at once and passes blocks on");
		free(sd.targets);
		sd.targets = NULL;
	}
	push_settings(&sd, mf, send_manifest_bytes(mf, NULL), &key, &cfg);
	send_announce(&sd, mf, cfg.alg);
	rc = run_attempts(&sd, &cfg);
	rsh_finish(rsh);	/* the receivers end with the transfer */
	tracefile_close(sd.tf);	/* says if it failed: the push's own
				 * outcome and exit status stand */
	sd.tf = NULL;
	if (send_finish(&sd, rc == 0) == 0 && rc == 0 && !sd.sender_failed)
		status = sd.total.failed > 0 ? EXIT_REPLICAS : EXIT_ALL_OK;
report:
	if (o->json)
		send_json_summary(&hl, &sd.total, sd.ok, sd.failed, sd.unsent,
				  status,
			     o->dry_run && sd.total.hosts > 0 ? &sd.dry : NULL);
out:
	tracefile_close(sd.tf);
	rsh_free(rsh);
	mf_free(mf);
	sender_free(&sd);
	free(sd.racks.rack_of);
	hostlist_clear(&hl);
	return status;
}
