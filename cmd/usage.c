/* SPDX-License-Identifier: MIT */
/*
 * rdmcp --help: what every mode and option does, in one screen per mode.
 * Kept apart from the option parser (cmd/rdmcp.c); check-docs.sh holds
 * both to the man page.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "proto/auth.h"
#include "cmd.h"
#include "proto/proto.h"

void
usage(FILE *out)
{
	fprintf(out,
"usage: rdmcp [OPTIONS] FILE... HOSTS\n"
"       rdmcp [OPTIONS] -w HOSTS FILE...\n"
"       rdmcp [OPTIONS] -f HOSTFILE FILE...\n"
"       rdmcp --rsh CMD [OPTIONS] FILE... HOSTS\n"
"       rdmcp --serve --root DIR [--listen ADDR[:PORT]] [OPTIONS]\n"
"       rdmcp --plan --hosts N --blocks K|--size SIZE [--algorithm ALG]\n"
"             [--racks S1,S2,...]\n"
"       rdmcp --genkey FILE\n"
"\n"
"Copy FILEs to every host in HOSTS at once: the data is cut into blocks\n"
"and the hosts relay blocks to one another (RDMC binomial pipeline), so\n"
"N copies take about as long as one.  Each host runs 'rdmcp --serve',\n"
"or --rsh starts a one-shot receiver on each (ssh, no daemon needed).\n"
"HOSTS is a host list: host, host:port or [address]:port entries,\n"
"separated by commas, with ranges as in Slurm and pdsh: node[01-64,70],\n"
"rack[1-2]n[01-16], and clush's steps: node[1-30/4].  Inside a Slurm\n"
"allocation HOSTS may be left out: the hosts are then\n"
"$SLURM_JOB_NODELIST.  Host names have letters, digits, '-', '.' and\n"
"'_', a letter or digit first; a name with a '/' (outside brackets) is\n"
"a FILE, never a host, and so is a last argument that is a file here or\n"
"an unknown name that looks like one (inptu.dat), which outside an\n"
"allocation is a usage error.  The destination is -d DIR only: with the\n"
"hosts given by -w, -f or Slurm and no -d, a last argument that is a\n"
"directory here is an error ('did you mean -d DIR/?', as for pdcp's\n"
"DEST; DIR/. names it as a source).  A FILE '-' is standard input\n"
"(with --name): it is first kept in a file without a name in $TMPDIR\n"
"(default /tmp), which needs room for all of it, then sent; nothing of\n"
"it is left there.\n"
"\n"
"Sending:\n"
"  -d, --dest DIR           land files in DIR on every host (default: the\n"
"                           same absolute path as the source); DIR must\n"
"                           exist, or with a trailing slash (DIR/) it is\n"
"                           made where it is missing, with its missing\n"
"                           parents (as mkdir -p)\n"
"      --name NAME          the name '-' (standard input) lands as, like a\n"
"                           FILE named NAME: e.g. tar c dir | rdmcp --name\n"
"                           dir.tar -d /dst - HOSTS\n"
"  -r, --recursive          copy directories: the whole tree, as one\n"
"                           transfer; symbolic links are kept as links\n"
"  -p, --preserve           also give copies their modification times,\n"
"                           and their owners where the daemon allows it\n"
"                           (modes are always kept)\n"
"      --send-libs          with an ELF executable, also send the shared\n"
"                           libraries it needs (but the C library's own)\n"
"                           to DEST_libs/ next to it\n"
"  -a, --algorithm ALG      binomial, chain, tree or sequential (default:\n"
"                           over TCP the chain for 16K per host and\n"
"                           more, but not on one machine, else binomial;\n"
"                           --plan --size shows it)\n"
"  -b, --block-size SIZE    block size, with K, M or G suffix (default:\n"
"                           chosen for the size, the hosts and their links,\n"
"                           16K to 1M; --plan --size shows it)\n"
"      --verify             compare a crc32 of every copy with the source\n"
"                           before it lands\n"
"      --force              replace existing destination files that differ\n"
"                           (identical ones are kept as they are); only the\n"
"                           blocks a host lacks are sent, the others are\n"
"                           taken from the file it holds\n"
"  -W, --whole-file         send every block, whatever the hosts hold\n"
"  -S, --sparse             copies keep the source's holes: zero pages are\n"
"                           not stored (and no space is reserved ahead)\n"
"      --bwlimit RATE       each host (and the sender) sends at most RATE\n"
"                           bytes/s, on average over a block: a number of\n"
"                           KiB/s, or with K, M or G suffix (as rsync;\n"
"                           1.5M: a fraction)\n"
"  -n, --dry-run            contact and authenticate every host, check its\n"
"                           destination, what exists and its free space;\n"
"                           print the block size, schedule and a predicted\n"
"                           time; create and send nothing\n"
"  -f, --hostfile FILE      read the hosts from FILE ('-': stdin), host\n"
"                           lists separated by blanks, commas or lines,\n"
"                           '#' comments; then every argument is a FILE\n"
"                           (not pdsh's fanout: rdmcp needs none)\n"
"  -w, --nodes HOSTS        the hosts, as with pdsh -w (repeatable, and\n"
"                           with -f; ^FILE: from FILE); then every\n"
"                           argument is a FILE\n"
"  -x, --exclude HOSTS      leave these hosts out (repeatable: all of them;\n"
"                           ^FILE: those of FILE); an entry without a port\n"
"                           names the host at any port; one that names no\n"
"                           host is a warning\n"
"      --topology FILE      which rack each host is in (lines 'RACK: HOSTS',\n"
"                           or Slurm's topology.conf): hosts go in rack\n"
"                           order, this machine's rack (by its addresses,\n"
"                           else its name) first, and the\n"
"                           algorithm is chain unless -a says otherwise\n"
"                           (binomial: a pipeline in each rack, fed from\n"
"                           the rack before), so the data crosses each\n"
"                           rack's uplink once\n"
"      --slow MODE          hosts much slower than the others (TCP, binomial\n"
"                           or chain): 'last' (default) stops the push once\n"
"                           they are found and sends again, to them last,\n"
"                           in a chain; 'wait' lets all go at their pace\n"
"      --ok-file FILE       write the hosts that got a complete copy to\n"
"                           FILE, as one host list\n"
"      --failed-file FILE   write the hosts that did not to FILE (both\n"
"                           are checked before anything is sent)\n"
"  -P, --port PORT          daemon port of hosts given without one\n"
"                           (default %d)\n"
"  -t, --timeout SECS       a peer silent this long has failed (default 30;\n"
"                           0.001 to 86400)\n"
"      --retries N          send again, N times at most, to the hosts that\n"
"                           failed in a way that sending again may cure\n"
"                           (default 1; not a name that does not resolve,\n"
"                           a refused connection or a hung handshake once);\n"
"                           a host whose group broke only because another\n"
"                           host failed, or after the sender itself went\n"
"                           silent to it for nearly --timeout, is sent to\n"
"                           again without using one (2(N+1) attempts at\n"
"                           most); a retry after a silence doubles\n"
"                           --timeout, and a host that went silent is\n"
"                           waited for only a little longer than the others\n"
"      --connect-timeout SECS  give up connecting after this (default 5),\n"
"                           on a handshake, or on a silent host's set-up\n"
"      --bind ADDR          send from this local address\n"
"      --json               print JSON Lines on stdout instead: one object\n"
"                           per replica, then a summary (see rdmcp(1))\n"
"      --progress           show progress on stderr even when it is not a\n"
"                           terminal: plain lines, one per 5 s at most\n"
"                           (on a terminal a line is redrawn in place)\n"
"      --trace FILE         write the push's timeline to FILE: every\n"
"                           member's blocks received and sent and its\n"
"                           waits, as Chrome trace events (Perfetto,\n"
"                           chrome://tracing)\n"
"  -q, --quiet              print only failures (and no progress)\n"
"  -v, --verbose            also one line per host as it comes, what is\n"
"                           sent and how (block size, schedule, transport)\n"
"                           and the set-up time; -vv: hosts' addresses and\n"
"                           ranks, debug log\n"
"\n"
"Receiving (daemon):\n"
"      --serve              run the receiving daemon\n"
"      --listen ADDR[:PORT] address to listen on (default 0.0.0.0:%d)\n"
"      --log-time FORMAT    stamp the log's lines with the local time in\n"
"                           ISO 8601 ('iso', default) or with seconds since\n"
"                           the epoch ('epoch')\n"
"      --root DIR           write only below DIR (repeatable; required\n"
"                           unless --prefix is given)\n"
"      --prefix DIR         land every destination path below DIR, e.g.\n"
"                           to run several daemons on one machine\n"
"      --owner USER[:GROUP] a daemon running as root gives what it\n"
"                           creates to USER (default: the owner of the\n"
"                           --root it lands under)\n"
"      --allow-setid        keep set-user-ID and set-group-ID bits\n"
"                           (dropped by default)\n"
"      --keep-owners        a daemon running as root gives copies sent\n"
"                           with -p their owners on the sender\n"
"      --max-blocks N       blocks a transfer may have, at most (K, M or\n"
"                           G suffix; default 16M; 0: no cap): more are\n"
"                           refused, saying the block size that would do\n"
"                           (across racks: blocks x hosts)\n"
"      --max-jobs N         transfers running at once, at most (default\n"
"                           64; 0: no cap): more are refused as busy\n"
"      --job-idle-timeout SECS  drop a transfer that made no progress (no\n"
"                           block, no word from its sender but\n"
"                           keepalives) for SECS, its temporaries removed\n"
"                           (default 3600; 0: never)\n"
"      --keep-partial SECS  keep the unfinished copies of a transfer that\n"
"                           did not land for SECS, open and unnamed, for\n"
"                           the next transfer of the same sources to resume\n"
"                           (default 3600; 0: remove them at once)\n"
"      --state-dir DIR      record running jobs' temporaries in DIR and\n"
"                           remove those of a killed predecessor at start\n"
"                           (default: with --prefix, .rdmcp-state in it;\n"
"                           else /var/lib/rdmcp when root; none with\n"
"                           --once; '' for none)\n"
"\n"
"Receivers without a daemon:\n"
"      --rsh CMD            start a one-shot receiver on every host with\n"
"                           'CMD HOST rdmcp --serve --once ...' (e.g. ssh,\n"
"                           which gets '--' before HOST; CMD is split into\n"
"                           words; default $RDMCP_RSH) and push to them;\n"
"                           no daemon or key file needed\n"
"      --fanout N           at most N remote commands starting at once\n"
"                           (default 32; nothing without --rsh)\n"
"      --remote-path PATH   rdmcp on the hosts (default: rdmcp in PATH)\n"
"      --remote-opts OPTS   append OPTS to the remote command line (%%h: the\n"
"                           host, quoted), e.g. '--prefix /tmp/%%h'\n"
"      --once               with --serve: listen on a port of the system's\n"
"                           choice unless --listen names one, print\n"
"                           'RDMCP-PORT n', exit after one complete\n"
"                           transfer, at the end of standard input, or\n"
"                           when no transfer came for --timeout\n"
"\n"
"Authentication (both sides):\n"
"      --key FILE           the cluster's shared key (default $RDMCP_KEY,\n"
"                           else %s); daemons accept only\n"
"                           senders that prove they hold it; '-' (with\n"
"                           --serve): read it from standard input\n"
"      --genkey FILE        create a new random key in FILE (mode 0600)\n"
"\n"
"Transport (both sides):\n"
"      --transport T        auto (default: RDMA verbs when every member has\n"
"                           an active device on its address, else TCP),\n"
"                           verbs or tcp\n"
"      --device NAME        the RDMA device that must serve the address\n"
"      --gid-index N        use the IPv4 address of this GID of the device\n"
"      --interrupts         never busy-poll the completion queue\n"
"\n"
"Planning:\n"
"      --plan               print the schedule and exit: one line per block\n"
"                           transfer, step<TAB>from<TAB>to<TAB>block\n"
"      --hosts N            group size including the sender (rank 0)\n"
"      --blocks K           number of blocks\n"
"      --size SIZE          or the bytes to send: the block size the push\n"
"                           would choose for them, and its blocks\n"
"      --racks S1,S2,...    the members in racks of these sizes, rank by\n"
"                           rank (the sender's first): the schedule\n"
"                           --topology makes (--hosts is their sum)\n"
"\n"
"  -h, --help               show this help\n"
"  -V, --version            show the version\n"
"\n"
"The report: one line per distinct outcome, its hosts as one host list\n"
"(as clush -b), e.g. 'node[01-06]: FAILED (6 hosts): REASON', then a\n"
"summary; with -v one line per host first, as each outcome comes.  It is\n"
"the disk: 'ok' = the host holds every file, complete and identical to\n"
"the source ('verified' with --verify; 'already identical' = it had them\n"
"and was not sent to); 'FAILED' = nothing of this push was renamed into\n"
"place there.  A host that landed before the group broke is ok.\n"
"\n"
"Exit status: 0 every replica complete, 1 some replica failed, 2 usage\n"
"error, 3 the sender could not run the transfer (or --genkey failed), 4\n"
"the daemon could not start (or did not shut down cleanly); interrupted\n"
"(SIGINT, SIGTERM, SIGHUP): killed by the signal (130, 143, 129).\n",
		PROTO_DEFAULT_PORT, PROTO_DEFAULT_PORT, AUTH_DEFAULT_KEY);
}

/* ---------------------------------------------------------------------
 * What getopt_long found wrong, said as rdmcp says it
 */

/* The edit distance of a and b (insertions, deletions, substitutions and
 * swaps of neighbours), capped at 9. */
static unsigned
distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	unsigned d[32][32], best;

	if (la >= 32 || lb >= 32)
		return 9;
	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb] < 9 ? d[la][lb] : 9;
}

/* The option of opts named by name (up to '=' or its end), exactly or as
 * the only one it begins: its entry, or NULL; *prefixed counts the
 * options it begins. */
static const struct option *
find_long(const struct option *opts, const char *name, size_t len,
	  size_t *prefixed)
{
	const struct option *o, *found = NULL;

	*prefixed = 0;
	for (o = opts; o->name != NULL; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		if (o->name[len] == '\0')
			return o;
		(*prefixed)++;
		found = o;
	}
	return *prefixed == 1 ? found : NULL;
}

/* An unknown or ambiguous long option: what it may have meant. */
static void
bad_long(const struct option *opts, const char *word)
{
	const char *name = word + 2;
	size_t len = strcspn(name, "="), n;
	const struct option *o, *best = NULL;
	unsigned d, bestd = 9;
	char want[32];

	find_long(opts, name, len, &n);
	if (n > 1) {
		fprintf(stderr, "rdmcp: option '--%.*s' is ambiguous; it "
			"begins", (int)len, name);
		for (o = opts; o->name != NULL; o++)
			if (strncmp(o->name, name, len) == 0)
				fprintf(stderr, " --%s", o->name);
		fprintf(stderr, "\n");
		return;
	}
	snprintf(want, sizeof(want), "%.*s", (int)(len < 31 ? len : 31), name);
	for (o = opts; o->name != NULL; o++) {
		d = distance(want, o->name);
		if (d < bestd) {
			bestd = d;
			best = o;
		}
	}
	if (best != NULL && bestd <= (len > 5 ? 2u : 1u))
		fprintf(stderr, "rdmcp: unknown option '--%.*s'; did you mean "
			"--%s?\n", (int)len, name, best->name);
	else
		fprintf(stderr, "rdmcp: unknown option '--%.*s'\n", (int)len,
			name);
}

void
usage_bad_option(int c, int optopt_, const char *word,
		 const struct option *opts)
{
	size_t n;
	const struct option *o = NULL;
	bool is_long = word != NULL && strncmp(word, "--", 2) == 0;

	if (is_long)
		o = find_long(opts, word + 2, strcspn(word + 2, "="), &n);
	/* a short option in a cluster leaves word at the one before */
	if (is_long && optopt_ != 0 && (o == NULL || o->val != optopt_))
		is_long = false;
	if (is_long && c == ':')
		fprintf(stderr, "rdmcp: option '--%s' needs a value\n",
			o != NULL ? o->name : word + 2);
	else if (is_long && optopt_ == 0)
		bad_long(opts, word);
	else if (is_long)
		fprintf(stderr, "rdmcp: option '--%s' takes no value\n",
			o != NULL ? o->name : word + 2);
	else if (c == ':')
		fprintf(stderr, "rdmcp: option '-%c' needs a value\n", optopt_);
	else if (optopt_ > ' ' && optopt_ < 127)
		fprintf(stderr, "rdmcp: unknown option '-%c'\n", optopt_);
	else
		fprintf(stderr, "rdmcp: unknown option\n");
	fprintf(stderr, "Try 'rdmcp --help'.\n");
}
