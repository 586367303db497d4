# SPDX-License-Identifier: MIT
# Receivers without a daemon, over real ssh: every receiver host runs its
# own sshd (keys made here), and the sender, host 1, pushes with
# '--rsh "ssh -F ..."' to 8 hosts, 3 remote commands starting at a time.
# Every host gets its copy; the one-time key is on no command line; a
# host whose sshd is down is reported with ssh's reason while the others
# complete; no receiver outlives a transfer, even an interrupted one.
. "$(dirname "$0")/../lib.sh"
need_root
[ -x /usr/sbin/sshd ] || fail "no /usr/sbin/sshd (scripts/install-deps.sh installs openssh-server)"
command -v ssh >/dev/null || fail "no ssh (scripts/install-deps.sh installs openssh-client)"
N=9	# host 1 sends to hosts 2..9
cluster_up $N 200mbit
src=$WORK/src
mkdir -p "$src"
head -c $((16 << 20)) /dev/urandom >"$src/data"
chmod 640 "$src/data"

# --- sshd on every receiver host, ssh configured for the sender ---------
ssh-keygen -q -t ed25519 -N '' -C rdmcp-test-host -f "$WORK/hostkey"
ssh-keygen -q -t ed25519 -N '' -C rdmcp-test-user -f "$WORK/userkey"
cp "$WORK/userkey.pub" "$WORK/authorized_keys"
echo "198.18.*.* $(cut -d' ' -f1,2 "$WORK/hostkey.pub")" >"$WORK/known_hosts"
# sshd insists on its privilege separation directory
[ -d /run/sshd ] || { mkdir -p /run/sshd && on_exit rmdir /run/sshd; }
SSHD_PIDS=()
start_sshd() {
	local i=$1 addr
	addr=$(cluster_addr "$i")
	cat >"$WORK/sshd_config.$i" <<-EOF
	ListenAddress $addr:22
	HostKey $WORK/hostkey
	AuthorizedKeysFile $WORK/authorized_keys
	StrictModes no
	PermitRootLogin prohibit-password
	PubkeyAuthentication yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	PidFile $WORK/sshd.$i.pid
	MaxStartups 64
	LogLevel ERROR
	EOF
	# a plain command, so that $! is sshd itself
	"$TOP/scripts/netns-cluster.sh" exec "$i" /usr/sbin/sshd -D \
		-f "$WORK/sshd_config.$i" -E "$WORK/sshd.$i.log" &
	SSHD_PIDS[$i]=$!
}
stop_sshd() {
	[ -n "${SSHD_PIDS[$1]:-}" ] || return 0
	kill "${SSHD_PIDS[$1]}" 2>/dev/null || true
	wait "${SSHD_PIDS[$1]}" 2>/dev/null || true
	SSHD_PIDS[$1]=
}
stop_all_sshd() {
	local i
	for i in $(seq 2 $N); do stop_sshd "$i"; done
}
on_exit stop_all_sshd
for i in $(seq 2 $N); do
	start_sshd "$i"
	mkdir -p "$WORK/h$(cluster_addr "$i")$src"
done
for i in $(seq 2 $N); do
	cluster_wait_port "$i" 22 ||
		fail "sshd on host $i did not start: $(cat "$WORK/sshd.$i.log")"
done
cat >"$WORK/ssh_config" <<EOF
Host *
	User root
	IdentityFile $WORK/userkey
	IdentitiesOnly yes
	UserKnownHostsFile $WORK/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	ConnectTimeout 5
	LogLevel ERROR
EOF
on_host 1 ssh -F "$WORK/ssh_config" "$(cluster_addr 2)" true ||
	fail "ssh to host 2 does not work: $(cat "$WORK/sshd.2.log")"

HOSTS="198.18.0.[2-9]"
landed_at() {	# landed_at I -> where host I keeps the file
	echo "$WORK/h$(cluster_addr "$1")$src/data"
}
once_pids() {	# the one-shot receivers of this test
	pgrep -f -- "--serve --once.*$WORK" || true
}
wait_gone() {
	local t
	for t in $(seq 1 100); do
		[ -z "$(once_pids)" ] && return 0
		sleep 0.05
	done
	fail "receivers left: $(once_pids | xargs -r ps -o pid,args -p)"
}
# watch_cmdlines FILE: until FILE.stop exists, record in FILE every
# command line of this test's receivers and remote shells
watch_cmdlines() {
	while [ ! -e "$1.stop" ]; do
		ps -ww -eo args | grep -a -e "--serve --once.*$WORK" \
			-e "ssh -F $WORK" >>"$1" || true
		sleep 0.02
	done
}
RSH=(--rsh "ssh -F $WORK/ssh_config" --remote-path "$RDMCP"
	--remote-opts "--prefix $WORK/h%h")

# --- 1. eight hosts, fanout 3 -------------------------------------------
# each remote command takes 0.3 s to report: 3 at a time, the 8 take at
# least 3 rounds
printf '#!/bin/sh\nsleep 0.3\nexec %s "$@"\n' "$RDMCP" >"$WORK/slow-rdmcp"
chmod +x "$WORK/slow-rdmcp"
watch_cmdlines "$WORK/cmdlines" &
watcher=$!
on_exit "kill $watcher"	# if the test fails before it stops it
start=$(date +%s%N)
expect_status 0 on_host 1 "$RDMCP" -v "${RSH[@]}" --remote-path "$WORK/slow-rdmcp" \
	--fanout 3 --verify -b 256K "$src/data" "$HOSTS"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
touch "$WORK/cmdlines.stop"
wait "$watcher"
for i in $(seq 2 $N); do
	cmp -s "$src/data" "$(landed_at "$i")" || fail "host $i: no good copy"
	[ "$(stat -c %a "$(landed_at "$i")")" = 640 ] || fail "host $i: mode"
	grep -q "^$(cluster_addr "$i")  *ok" "$WORK/out" || fail "$(cat "$WORK/out")"
done
note "$(grep -o "receivers started.*" "$WORK/err"); whole push $ms ms"
note "$(tail -1 "$WORK/out")"
secs=$(sed -n 's/.*receivers started on 8 of 8 hosts in \([0-9.]*\) s.*/\1/p' "$WORK/err")
[ -n "$secs" ] || fail "$(cat "$WORK/err")"
awk -v s="$secs" 'BEGIN { exit !(s >= 0.9) }' ||
	fail "8 slow receivers started in $secs s: more than 3 at a time"
grep -c -- "--serve --once" "$WORK/cmdlines" >/dev/null ||
	fail "no receiver seen running: the key check proves nothing"
! grep -Eq "[0-9a-fA-F]{64}" "$WORK/cmdlines" || fail "a key on a command line: $(grep -E "[0-9a-fA-F]{64}" "$WORK/cmdlines" | head -1)"
note "$(sort -u "$WORK/cmdlines" | grep -c -- "--key - ") receiver command lines seen, none with a key"
# ssh gets the host after '--' (it is never an option), %h goes quoted
grep -q -- "^ssh -F $WORK/ssh_config -- 198\.18\.0\.[2-9] .* --prefix $WORK/h'198\.18\.0\.[2-9]'" \
	"$WORK/cmdlines" || fail "no 'ssh ... -- HOST' with %h quoted: $(grep -m3 "^ssh" "$WORK/cmdlines")"
wait_gone

# --- 2. a host without sshd: FAILED with ssh's reason, the rest complete -
stop_sshd 5
rm -f "$WORK"/h*"$src"/data
start=$(date +%s%N)
expect_status 1 on_host 1 "$RDMCP" -v "${RSH[@]}" --fanout 3 \
	--failed-file "$WORK/failed" "$src/data" "$HOSTS"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "^$(cluster_addr 5)  *FAILED.*ssh: connect to host $(cluster_addr 5) port 22: Connection refused" \
	"$WORK/out" || fail "$(cat "$WORK/out")"
[ "$(host_lines ok "$WORK/out")" -eq $((N - 2)) ] || fail "$(cat "$WORK/out")"
[ "$(cat "$WORK/failed")" = "$(cluster_addr 5)" ] || fail "$(cat "$WORK/failed")"
for i in 2 3 4 6 7 8 9; do
	cmp -s "$src/data" "$(landed_at "$i")" || fail "host $i: no copy"
done
note "sshd down on host 5: $(grep FAILED "$WORK/out" | tr -s ' '), $ms ms"
note "$(grep -o "receivers started.*" "$WORK/err")"
wait_gone
start_sshd 5

# --- 3. the sender interrupted mid-transfer: every receiver ends ---------
rm -f "$WORK"/h*"$src"/data
head -c $((64 << 20)) /dev/urandom >"$src/data"
# (not through on_host, a function: $! must be rdmcp itself; --bwlimit:
# the transfer lasts 16 s, so that it is still under way when a loaded
# machine lets this shell see its first block: at full speed it took
# 2.8 s, and a CI run under load once saw it only once it had landed)
"$TOP/scripts/netns-cluster.sh" exec 1 "$RDMCP" -v "${RSH[@]}" --fanout 3 \
	-a chain --bwlimit 4M "$src/data" "$HOSTS" >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_event "receivers started" "$WORK/err" 10 "the start of the receivers"
wait_blocks "$WORK/h$(cluster_addr 2)" 10	# mid-transfer
[ -n "$(once_pids)" ] || fail "no receiver running: $(cat "$WORK/err")"
kill -INT "$pid"
start=$(date +%s%N)
for t in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "the sender did not end on SIGINT"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "interrupted sender: status $rc: $(cat "$WORK/err")"
wait_gone
note "SIGINT: sender and receivers gone $(( ($(date +%s%N) - start) / 1000000 )) ms later"
assert_no_temporaries
pgrep -f "ssh -F $WORK" >/dev/null && fail "ssh left running"
for i in $(seq 2 $N); do
	[ ! -e "$(landed_at "$i")" ] || fail "host $i: a final file"
done
