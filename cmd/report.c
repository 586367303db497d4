/* SPDX-License-Identifier: MIT */
/*
 * Output of a push: with -v (or --json) one line per replica as its
 * outcome is known, then (outcomes.c) one line per distinct outcome, then
 * a summary.  Lines go to stdout; failures also make the exit status
 * non-zero.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "cmd.h"
#include "util/json.h"

/* The last message, for the --json summary of a push that could not run. */
static char last_message[PROTO_MAX_TEXT + 512];

void
warnx_(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	va_start(ap, fmt);
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rdmcp: %s\n", last_message);
}

/* Print `s` as a JSON string literal. */
static void
print_json_str(const char *s)
{
	char *q = json_quote(s);

	fputs(q != NULL ? q : "null", stdout);
	free(q);
}

static void
json_replica(const struct push_report *r)
{
	printf("{\"event\":\"replica\",\"host\":");
	print_json_str(r->host);
	printf(",\"address\":");
	print_json_str(r->addr[0] ? r->addr : NULL);
	printf(",\"ok\":%s,\"identical\":%s,\"verified\":%s,"
	       "\"dry_run\":%s,\"maybe_landed\":%s,\"slow\":%s,"
	       "\"link_rate\":%llu,\"seconds\":%.6f,\"bytes\":%llu,"
	       "\"reused\":%llu,\"resumed\":%llu,\"reason\":",
	       r->ok ? "true" : "false", r->identical ? "true" : "false",
	       r->verified ? "true" : "false", r->dry_run ? "true" : "false",
	       !r->ok && r->maybe_landed ? "true" : "false",
	       r->slow == SLOW_YES ? "true" : "false",
	       (unsigned long long)r->link_rate, r->seconds,
	       (unsigned long long)r->bytes, (unsigned long long)r->reused,
	       (unsigned long long)r->resumed);
	print_json_str(r->ok ? NULL : r->reason);
	printf("}\n");
}

void
report_json_summary(const struct push_summary *s, const char *ok_hosts,
		    const char *failed_hosts, const char *not_copied,
		    int status, const struct dry_plan *dry)
{
	/* nothing sent (every host had it already, or every block): no
	 * rate either */
	double tput = s->last_ok > 0 && dry == NULL && s->sent > 0
			      ? (double)s->bytes / s->last_ok : 0;

	printf("{\"event\":\"summary\",\"hosts\":%zu,\"complete\":%zu,"
	       "\"failed\":%zu,\"bytes\":%llu,\"seconds\":%.6f,"
	       "\"setup\":%.6f,\"first\":%.6f,\"last\":%.6f,\"skew\":%.6f,"
	       "\"throughput\":%.0f,\"sent\":%llu,\"reused\":%llu,"
	       "\"resumed\":%llu,\"attempts\":%u,\"transport\":", s->hosts,
	       s->ok, s->failed, (unsigned long long)s->bytes, s->seconds,
	       s->setup, s->first_ok, s->last_ok, s->last_ok - s->first_ok, tput,
	       (unsigned long long)s->sent, (unsigned long long)s->reused,
	       (unsigned long long)s->resumed, s->attempts);
	print_json_str(s->transport);
	printf(",\"error\":");
	print_json_str(status == EXIT_SENDER && last_message[0] ? last_message
							   : NULL);
	printf(",\"source_changed\":");
	print_json_str(s->source_changed[0] ? s->source_changed : NULL);
	printf(",\"ok_hosts\":");
	print_json_str(ok_hosts);
	printf(",\"failed_hosts\":");
	print_json_str(failed_hosts);
	printf(",\"not_copied\":%zu,\"not_copied_hosts\":", s->unsent);
	print_json_str(not_copied);
	if (dry != NULL)
		printf(",\"dry_run\":{\"would\":%zu,\"block_size\":%u,"
		       "\"blocks\":%llu,\"steps\":%llu,\"rate\":%.0f,"
		       "\"predicted\":%.6f,\"send\":%llu}", dry->would,
		       dry->block, (unsigned long long)dry->blocks,
		       (unsigned long long)dry->steps, dry->rate, dry->seconds,
		       (unsigned long long)dry->send);
	printf(",\"exit\":%d}\n", status);
	fflush(stdout);
}

/* -vv: where a host was reached, and its rank in the group. */
static void
format_where(char *buf, size_t len, const struct opts *o,
	     const struct push_report *r)
{
	buf[0] = '\0';
	if (o->verbose < 2 || r->addr == NULL || r->addr[0] == '\0')
		return;
	if (r->rank > 0)
		snprintf(buf, len, "  (%s, rank %u)", r->addr, r->rank);
	else
		snprintf(buf, len, "  (%s)", r->addr);
}

/* "  2.0 MiB held already (reused)": what of its copy a host had, from
 * an old version (reused), an unfinished copy (resumed) or both; or
 * nothing. */
static void
format_reused(char *buf, size_t len, const struct push_report *r)
{
	char size[24], reused[24], resumed[24];

	buf[0] = '\0';
	if (r->reused + r->resumed == 0)
		return;
	format_bytes(size, sizeof(size), (double)(r->reused + r->resumed));
	format_bytes(reused, sizeof(reused), (double)r->reused);
	format_bytes(resumed, sizeof(resumed), (double)r->resumed);
	if (r->resumed == 0 || r->reused == 0)
		snprintf(buf, len, "  %s held already (%s)", size,
			 r->resumed == 0 ? "reused" : "resumed");
	else
		snprintf(buf, len, "  %s held already (%s reused, %s resumed)",
			 size, reused, resumed);
}

/* A host's line, as its outcome comes: with -v (--json: always). */
void
report_replica(const struct opts *o, const struct push_report *r)
{
	char rate[48], where[300], reused[128];

	progress_clear();
	format_where(where, sizeof(where), o, r);
	if (o->json)
		json_replica(r);
	else if (o->verbose < 1)
		return;
	else if (!r->ok)
		printf("%-22s FAILED  %8.3f s  %s%s\n", r->host, r->seconds,
		       r->reason, where);
	else if (r->dry_run)
		printf("%-22s ok      %8.3f s  %12s  would take it%s\n",
		       r->host, r->seconds, "-", where);
	else if (r->identical)
		printf("%-22s ok      %8.3f s  %12s  already identical%s%s\n",
		       r->host, r->seconds, "-", r->verified ? ", verified" : "",
		       where);
	else {
		format_rate(rate, sizeof(rate), (double)r->bytes, r->seconds);
		format_reused(reused, sizeof(reused), r);
		printf("%-22s ok      %8.3f s  %12s%s%s%s%s\n", r->host,
		       r->seconds, rate, r->verified ? "  verified" : "",
		       r->slow == SLOW_YES ? "  slow" : "", reused, where);
	}
	fflush(stdout);
}

void
report_summary(const struct opts *o, const struct push_summary *s)
{
	char size[32], rate[48];
	double gbit;

	if (o->json || (o->verbose < 0 && s->failed == 0))
		return;
	format_bytes(size, sizeof(size), (double)s->bytes);
	format_rate(rate, sizeof(rate), (double)s->bytes, s->last_ok);
	gbit = s->last_ok > 0 ? (double)s->bytes * 8 / s->last_ok / 1e9 : 0;
	printf("%zu of %zu replicas complete", s->ok, s->hosts);
	if (s->unsent > 0)
		printf(" (%zu not copied, for the sender's reason)", s->unsent);
	if (s->ok > 0 && s->copied == 0)	/* no rate: nothing moved */
		printf(": already identical, nothing sent");
	else if (s->ok > 0 && s->sent == 0 && s->bytes > 0)	/* no rate */
		printf(": %s, nothing sent (already there), in %.3f s", size,
		       s->last_ok);	/* of what was not sent: the copies
					 * were made of blocks held */
	else if (s->ok > 0 && s->sent == 0)
		printf(": %s in %.3f s, over %s", size, s->last_ok,
		       s->transport);
	else if (s->ok > 0)
		printf(": %s in %.3f s, %s (%.3f Gbit/s), skew %.3f s, over %s",
		       size, s->last_ok, rate, gbit, s->last_ok - s->first_ok,
		       s->transport);
	printf("\n");
	fflush(stdout);
}
