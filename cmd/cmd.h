/* SPDX-License-Identifier: MIT */
/*
 * The rdmcp command line: options, modes and output.
 */
#ifndef RDMCP_CMD_H
#define RDMCP_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proto/auth.h"
#include "hosts/hostlist.h"
#include "proto/proto.h"
#include "send/push.h"
#include "sched/schedule.h"

/* Exit statuses (documented in rdmcp(1) and --help). */
enum {
	EXIT_ALL_OK = 0,	/* every replica complete */
	EXIT_REPLICAS = 1,	/* at least one replica failed */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_SENDER = 3,	/* the sender could not run the transfer */
	EXIT_DAEMON = 4,	/* the daemon could not start */
};

enum mode { MODE_PUSH, MODE_SERVE, MODE_PLAN, MODE_GENKEY };

/*
 * Errors: helpers return 0 or -errno, after printing why (warnx_) when
 * they fail; only main and the run_* modes turn errors into exit
 * statuses, and every non-zero exit has said why.
 */

/* The exit status for a helper's error: -EINVAL is a mistake on the
 * command line (EXIT_USAGE), anything else one of the sender's own
 * (EXIT_SENDER). */
int exit_status(int err);

/* --topology: the rack of each host of the list (-1: none; NULL without
 * --topology) and of this machine. */
struct host_racks {
	int *rack_of;
	int own;
};

struct opts {
	enum mode mode;
	enum sched_alg alg;
	uint32_t block_size;
	const char *dest_dir;
	bool recursive;		/* -r */
	bool preserve;		/* -p: modification times */
	bool send_libs;		/* --send-libs */
	bool force;
	bool verify;
	bool sparse;		/* -S: copies keep holes */
	bool whole_file;	/* -W: every block sent, whatever hosts hold */
	bool dry_run;		/* -n: check every host, send nothing */
	uint64_t bwlimit;	/* --bwlimit: bytes/s per member, 0: none */
	uint16_t port;
	unsigned timeout_ms;
	unsigned connect_timeout_ms;
	unsigned window;
	enum proto_transport transport;
	const char *bind;
	const char *device;
	int gid_index;		/* -1: from the address */
	bool interrupts;
	int verbose;		/* -1 quiet, 0 normal, 1.. more */
	bool log_epoch;		/* --log-time epoch */
	/* daemon */
	const char *listen;
	const char **roots;
	size_t nroots;
	const char *prefix;
	uid_t owner_uid;	/* --owner, -1 if not given */
	gid_t owner_gid;
	bool allow_setid;
	bool keep_owners;
	const char *state_dir;	/* --state-dir, NULL: the default */
	unsigned max_jobs;	/* --max-jobs, 0: no cap */
	uint64_t max_blocks;	/* --max-blocks, 0: no cap */
	unsigned job_idle_ms;	/* --job-idle-timeout, 0: no cap */
	unsigned keep_partial_ms;	/* --keep-partial, 0: none kept */
	/* plan */
	uint32_t plan_hosts;
	uint64_t plan_blocks;
	uint64_t plan_size;	/* --size: blocks from the chosen size */
	uint32_t *plan_racks;	/* --racks: sizes, rank by rank */
	size_t plan_nracks;
	/* push: FILE... HOSTS */
	char **args;
	int nargs;
	const char *hostfile;	/* -f */
	const char **wlists;	/* -w HOSTS, repeatable */
	size_t nwlists;
	const char **xlists;	/* -x HOSTS, repeatable: all left out */
	size_t nxlists;
	const char *topology;	/* --topology FILE: hosts in rack order */
	bool alg_set;		/* -a given (else --topology picks chain) */
	bool slow_wait;		/* --slow wait: no regroup around slow hosts */
	const char *ok_file;
	const char *failed_file;
	bool json;		/* --json: JSON Lines on stdout */
	const char *name;	/* --name: where '-' (stdin) lands */
	const char *key;	/* --key */
	int retries;		/* --retries */
	bool progress;		/* --progress: even when not a terminal */
	const char *trace_file;	/* --trace FILE */
	const char *genkey;	/* --genkey FILE */
	/* receivers without a daemon */
	bool once;		/* --serve --once */
	const char *rsh;	/* --rsh CMD, else $RDMCP_RSH; "" none */
	const char *remote_path;	/* --remote-path */
	const char *remote_opts;	/* --remote-opts */
	unsigned fanout;	/* --fanout */
	bool fanout_given;	/* ... on the command line */
};

/* The modes (send.c, modes.c): each runs to the end and returns rdmcp's
 * exit status. */
int run_push(const struct opts *o);
int run_serve(const struct opts *o);
int run_plan(const struct opts *o);
int run_genkey(const struct opts *o);

/* Is the schedule chosen per push (sched_auto_alg), not given by -a,
 * --topology (its chain) or --plan --racks (modes.c)? */
bool alg_is_chosen(const struct opts *o);

/* The schedule of a push of `bytes` to `members` (the sender included)
 * over `link`: the one given, else sched_auto_alg's choice (modes.c). */
enum sched_alg chosen_alg(const struct opts *o, uint64_t bytes,
			  uint32_t members, enum sched_link link);

struct manifest;
/* --send-libs: if `exe` is a dynamically linked ELF file, add the shared
 * libraries it needs (but the C library's own, which must match the
 * nodes' loader) to land in DEST_libs/, DEST being where exe lands.
 * Returns 0 (nothing to add for other files), or -errno after a message
 * (a library not found here, ldd missing). */
int add_libs(struct manifest *m, const char *exe, const char *dest);

/* Where each of the n sources lands, into dests[0..n) (malloc'd, freed by
 * the caller).  Returns 0, or -errno after a message: -EINVAL for a
 * mistake on the command line (-d not absolute, two sources on one
 * name) (sources.c). */
int destinations(const struct opts *o, char **sources, size_t n,
		 char **dests);

/* -d DIR/, with a trailing slash: DIR is made where it is missing, with
 * its missing parents, as mkdir -p (sources.c). */
bool dest_dir_made(const struct opts *o);

/* The manifest of the sources, landing at dests: -d DIR/, every file,
 * with -r every tree, with --send-libs the libraries.  Returns 0, or
 * -errno after a message (a source that cannot be read...). */
int build_manifest(const struct opts *o, char **sources, char **dests,
		   size_t n, struct manifest **out);

/* The bytes of the regular files in mf; *nfiles (unless NULL) gets how
 * many there are (sources.c). */
uint64_t manifest_bytes(const struct manifest *mf, size_t *nfiles);

/* The distinct directories the manifest's entries land in that it does
 * not make itself (the parents of entries not inside one of its
 * directories): where --rsh receivers are rooted.  *n of them, each and
 * the array malloc'd; NULL if out of memory (sources.c). */
char **landing_dirs(const struct manifest *m, size_t *n);

/* The hosts of a push (HOSTS argument, -f, or SLURM_JOB_NODELIST; minus
 * -x; without duplicates) into hl, and how many arguments are files; with
 * --topology, in rack order, their racks in hr (hr->rack_of malloc'd).
 * Returns 0, or -errno after a message on stderr: -EINVAL when the hosts
 * given are wrong (a usage error), -ENOMEM. */
int gather_hosts(const struct opts *o, struct hostlist *hl, int *nfiles,
		 struct host_racks *hr);

/* -EINVAL after a message if hl names this machine (its host name, short
 * or long, or one of its non-loopback addresses; with `bind`, a numeric
 * address or NULL, only that one): the sender is the root of every group,
 * never a destination.  0 otherwise. */
int refuse_self(const struct hostlist *hl, const char *bind);

/* The rack of this machine in t (self.c): with `bind` (a numeric
 * address, or NULL) that address's, else the first of its interfaces'
 * addresses that t lists (the host name is shared by containers and
 * network namespaces), else its host name's; -1 if t lists none. */
struct topo;
int own_rack(const struct topo *t, const char *bind);

/* The hosts with failed[i] == want as a compressed host list (malloc'd),
 * or NULL if out of memory. */
char *hosts_compressed(const struct hostlist *hl, const bool *failed,
		       bool want);

/* Before anything is sent: could --ok-file and --failed-file (either may
 * be NULL) be written at the end?  Creates and changes nothing.  Returns
 * 0, or -errno after a message (-EINVAL: both name one file). */
int check_host_files(const char *ok_file, const char *failed_file);

/* Write that list, one line, to path.  Returns 0 or -errno after a
 * message. */
int write_host_file(const char *path, const struct hostlist *hl,
		    const bool *failed, bool want);

/* The key file: --key, else $RDMCP_KEY, else the default. */
const char *key_path(const struct opts *o);

/* '-' as a source (spool.c).  check_stdin_source: usage errors in the
 * use of '-' among the nfiles sources (once, with --name, not with -f -,
 * not from a terminal): 0, or -EINVAL after a message.  spool_stdin:
 * copy standard input to a file without a name in $TMPDIR (default
 * /tmp), and put the path to read it by into path; *fd must stay open
 * while it is read.  Returns 0 or -errno after a message. */
int check_stdin_source(const struct opts *o, int nfiles);
int spool_stdin(char *path, size_t len, int *fd);

/* Load the key of key_path(); 0, or -errno after a message. */
int load_key(const struct opts *o, struct auth_key *key);

/* The --help text, to `out` (usage.c). */
void usage(FILE *out);

/* What getopt_long (quiet: opterr 0, the option string starting with
 * ':') found wrong, said on stderr as "rdmcp: ...": c is what it
 * returned ('?' or ':'), optopt_ its optopt, word the argument it looked
 * at last (argv[optind - 1]); an unknown long option near one of opts
 * gets "did you mean --NAME?", an ambiguous one the options it begins
 * (usage.c). */
struct option;
void usage_bad_option(int c, int optopt_, const char *word,
		      const struct option *opts);

/* Logging to stderr at `normal` level, adjusted by -q/-v; with stamp_all
 * every line carries the time, otherwise only debug lines do: ISO 8601
 * local time with its offset, to the microsecond
 * (2026-11-28T21:30:01.094241+01:00), or with epoch seconds since the
 * epoch (1795901401.094241). */
void setup_logging(int verbose, enum log_level normal, bool stamp_all,
		   bool epoch);

/* Output of a push: one line per host as it comes (-v; --json: an
 * object), then the summary (report.c). */
void report_replica(const struct opts *o, const struct push_report *r);
void report_summary(const struct opts *o, const struct push_summary *s);

/* The outcomes of a push grouped as clush -b does: one line per distinct
 * outcome with its hosts as a compressed host list (outcomes.c).
 * outcomes_new returns NULL when out of memory; every function takes a
 * NULL.  outcomes_add records a host's final outcome (r->index into hl);
 * outcomes_print prints the groups on stdout, complete copies first. */
struct outcomes;
struct outcomes *outcomes_new(const struct hostlist *hl);
void outcomes_add(struct outcomes *g, const struct push_report *r);
void outcomes_print(const struct outcomes *g, bool failures_only);
void outcomes_free(struct outcomes *g);

/* -n/--dry-run (dryrun.c): the plan of a push every host was asked
 * about, and its predicted time.  dry_plan_make: from the summary of the
 * dry run, the number of hosts that would take the job and the address
 * one of them was reached at (for the link speed; NULL if none);
 * dry_plan_print: on stdout (not with --json). */
struct dry_plan {
	size_t would;		/* hosts that would take the job */
	uint64_t bytes;
	uint64_t send;		/* of which the group would carry (the
				 * hosts hold the rest: a delta, a resume) */
	uint32_t block;
	uint64_t blocks, steps;
	enum sched_alg alg;
	double setup;		/* measured */
	double rate;		/* bytes/s a block moves at */
	char rate_from[160];	/* where the rate comes from */
	double step_s;		/* one block at that rate */
	double seconds;		/* predicted */
};
void dry_plan_make(const struct opts *o, enum sched_alg alg,
		   const struct push_summary *s, size_t would,
		   const char *addr, struct dry_plan *pl);
void dry_plan_print(const struct opts *o, const struct dry_plan *pl,
		    const struct push_summary *s);

/* The --json summary object, with the hosts ok, failed, and without a
 * copy for the sender's reason (not_copied), the final exit status (and
 * with --dry-run, the plan; else NULL). */
void report_json_summary(const struct push_summary *s, const char *ok_hosts,
			 const char *failed_hosts, const char *not_copied,
			 int status, const struct dry_plan *dry);

/* The progress of a push on stderr (progress.c).  progress_start: catch
 * SIGINT, SIGTERM and SIGHUP (an interrupted push says so and dies of
 * the signal) and choose the display: a line redrawn on a terminal,
 * plain lines at a bounded rate with --progress elsewhere, none with -q.
 * progress_on: is there one?  progress_show: throttled.  progress_clear:
 * erase the terminal line before other output. */
void progress_start(const struct opts *o);
bool progress_on(void);
void progress_show(const struct push_progress *pr);
void progress_clear(void);

/* --trace FILE: Chrome trace events (cmd/trace.c).  Open (checked
 * before anything is sent; 0 or -errno after a message), add a member's
 * timeline (host NULL, index SIZE_MAX: the sender), close (0, or -errno
 * after a message, a partial regular file removed: the trace failed,
 * which is no outcome of the push; NULL is a no-op). */
struct tracefile;
struct trace;
int tracefile_open(const char *path, struct tracefile **out);
void tracefile_add(struct tracefile *tf, const char *host, size_t index,
		   uint32_t rank, const struct trace *t, int64_t offset,
		   uint64_t error_us);
int tracefile_close(struct tracefile *tf);

/* units.c: "1.5 MiB", "512 B" */
void format_bytes(char *buf, size_t len, double bytes);

/* "1.5 MiB/s"; "-" for no time */
void format_rate(char *buf, size_t len, double bytes, double seconds);

/* Print "rdmcp: " + message on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
