# SPDX-License-Identifier: MIT
# make install into a DESTDIR with a custom PREFIX: every file where it
# belongs with its mode, the unit's ExecStart pointing at the installed
# binary (and accepted by systemd-analyze verify, with a bounded exposure
# in systemd-analyze security), the installed binary runs; then make
# uninstall leaves no file behind.
. "$(dirname "$0")/../lib.sh"
dest=$WORK/dest
prefix=/opt/rdmcp-test
# install the binary under test: ./rdmcp, or B/rdmcp of another build
# directory (make check-asan: build-asan/rdmcp)
build=()
if ! [ "$RDMCP" -ef "$TOP/rdmcp" ]; then
	case $RDMCP in
	"$TOP"/*/rdmcp)
		b=${RDMCP#"$TOP"/}
		b=${b%/rdmcp}
		build=(B="$b" BIN="$b/rdmcp") ;;
	*) fail "RDMCP ($RDMCP) is not a binary built in $TOP" ;;
	esac
fi

make -s -C "$TOP" "${build[@]}" install DESTDIR="$dest" PREFIX="$prefix" \
	>"$WORK/install.log" 2>&1 || { cat "$WORK/install.log" >&2; fail "make install"; }

# want PATH MODE: installed, a regular file with this mode
want() {
	local f=$dest$prefix/$1
	[ -f "$f" ] || fail "not installed: $prefix/$1"
	[ "$(stat -c %a "$f")" = "$2" ] ||
		fail "$prefix/$1: mode $(stat -c %a "$f"), want $2"
}
want bin/rdmcp 755
want share/man/man1/rdmcp.1 644
want share/bash-completion/completions/rdmcp 644
want share/zsh/vendor-completions/_rdmcp 644
want lib/systemd/system/rdmcp.service 644
want lib/sysusers.d/rdmcp.conf 644
want share/doc/rdmcp/rdmcp.default 644
want share/doc/rdmcp/slurm-stage-example.sh 755
want share/doc/rdmcp/spark-hadoop-stage-example.sh 755
cmp -s "$RDMCP" "$dest$prefix/bin/rdmcp" || fail "installed binary differs"
cmp -s "$TOP/man/rdmcp.1" "$dest$prefix/share/man/man1/rdmcp.1" ||
	fail "installed man page differs"
cmp -s "$TOP/completions/_rdmcp" "$dest$prefix/share/zsh/vendor-completions/_rdmcp" ||
	fail "installed zsh completion differs"
nfiles=$(find "$dest" -type f | wc -l)
[ "$nfiles" -eq 9 ] || fail "$nfiles files installed, want 9: $(find "$dest" -type f)"
[ -z "$(find "$dest" ! -type f ! -type d)" ] ||
	fail "not files: $(find "$dest" ! -type f ! -type d)"
note "make install: 9 files with their modes below DESTDIR$prefix"

# the installed binary runs and says its version (the Makefile's)
version=$(sed -n 's/^VERSION := *//p' "$TOP/Makefile")
[ -n "$version" ] || fail "no VERSION in the Makefile"
out=$("$dest$prefix/bin/rdmcp" --version) || fail "installed rdmcp --version failed"
[ "$out" = "rdmcp $version" ] || fail "--version says '$out', want 'rdmcp $version'"
note "installed rdmcp --version: $out"

# the unit runs the binary where it is installed (PREFIX, not DESTDIR)
unit=$dest$prefix/lib/systemd/system/rdmcp.service
grep -qx "ExecStart=$prefix/bin/rdmcp --serve --state-dir /var/lib/rdmcp \$RDMCP_OPTS" "$unit" ||
	fail "ExecStart: $(grep ExecStart "$unit")"
! grep -q '@[A-Z]*@' "$unit" || fail "unsubstituted: $(grep '@[A-Z]*@' "$unit")"
! grep -q "$dest" "$unit" || fail "the unit names DESTDIR"
# the hardening the unit promises
for setting in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes PrivateDevices=no LimitMEMLOCK=infinity \
	"CapabilityBoundingSet=" "DeviceAllow=char-infiniband_verbs rw" \
	"DeviceAllow=/dev/infiniband/rdma_cm rw" DevicePolicy=closed \
	"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK AF_IB" \
	RestrictNamespaces=yes LockPersonality=yes MemoryDenyWriteExecute=yes \
	SystemCallArchitectures=native RestrictSUIDSGID=yes \
	ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes \
	ProtectControlGroups=yes Restart=on-failure RestartPreventExitStatus=2 \
	User=rdmcp EnvironmentFile=-/etc/default/rdmcp; do
	grep -qxF "$setting" "$unit" || fail "the unit lacks '$setting'"
done
# the env file sets RDMCP_OPTS to options rdmcp --serve accepts
opts=$(sed -n 's/^RDMCP_OPTS="\(.*\)"$/\1/p' "$dest$prefix/share/doc/rdmcp/rdmcp.default")
[ -n "$opts" ] || fail "rdmcp.default sets no RDMCP_OPTS"
# (the roots moved below $WORK/pfx, where they exist)
read -r -a words <<<"$opts"
serve=()
for ((i = 0; i < ${#words[@]}; i++)); do
	if [ "${words[i]}" = --root ] && [ $((i + 1)) -lt ${#words[@]} ]; then
		i=$((i + 1))
		mkdir -p "$WORK/pfx${words[i]}"
		serve+=(--root "$WORK/pfx${words[i]}")
	else
		serve+=("${words[i]}")
	fi
done
"$RDMCP" --serve "${serve[@]}" --listen "$(host_addr 1):$PORT" \
	2>"$WORK/daemon1.log" &
DAEMON_PIDS[1]=$!
wait_listening "$(host_addr 1)" ||
	fail "rdmcp --serve $opts did not start: $(cat "$WORK/daemon1.log")"
stop_daemon 1

# systemd's own checks, where systemd-analyze is installed (CI: it is)
if command -v systemd-analyze >/dev/null 2>&1; then
	# ExecStart must exist for verify: the same unit with the installed
	# binary's DESTDIR path
	sed "s|^ExecStart=$prefix/|ExecStart=$dest$prefix/|" "$unit" \
		>"$WORK/rdmcp.service"
	MANPATH=$dest$prefix/share/man timeout 60 systemd-analyze verify \
		"$WORK/rdmcp.service" >"$WORK/verify.out" 2>&1 ||
		{ cat "$WORK/verify.out" >&2; fail "systemd-analyze verify"; }
	[ ! -s "$WORK/verify.out" ] ||
		{ cat "$WORK/verify.out" >&2; fail "systemd-analyze verify warns"; }
	note "systemd-analyze verify: no warnings"
	timeout 60 systemd-analyze security --offline=yes --threshold=25 \
		"$WORK/rdmcp.service" >"$WORK/security.out" 2>&1 ||
		{ cat "$WORK/security.out" >&2; fail "systemd-analyze security: exposure above 2.5"; }
	note "systemd-analyze security: $(grep -o 'Overall exposure level.*' "$WORK/security.out")"
elif [ "${RDMCP_REQUIRE_ALL:-0}" = 1 ]; then
	fail "systemd-analyze is not installed (scripts/install-deps.sh installs systemd)"
else
	note "systemd-analyze is not installed: unit not verified by systemd"
fi

# the installed zsh completion is found through $fpath
if command -v zsh >/dev/null 2>&1; then
	got=$(timeout 30 zsh -f "$TOP/tests/helpers/zsh-complete.zsh" \
		"$dest$prefix/share/zsh/vendor-completions" rdmcp --transport '') ||
		fail "zsh completion from the installed file"
	printf '%s\n' "$got" | grep -q '^verbs' ||
		fail "installed zsh completion: $got"
fi

make -s -C "$TOP" "${build[@]}" uninstall DESTDIR="$dest" PREFIX="$prefix" \
	>"$WORK/uninstall.log" 2>&1 || { cat "$WORK/uninstall.log" >&2; fail "make uninstall"; }
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "left after make uninstall: $left"
[ ! -e "$dest$prefix/share/doc/rdmcp" ] || fail "share/doc/rdmcp left"
note "make uninstall: no file left"
