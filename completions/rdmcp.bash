# SPDX-License-Identifier: MIT
# bash completion for rdmcp(1).  Installed as
# $(PREFIX)/share/bash-completion/completions/rdmcp.  Keep the options in
# step with 'rdmcp --help' (tests/completions.sh checks that every option
# is offered).
_rdmcp() {
	local cur prev words cword i opts
	local long="--algorithm --allow-setid --bind --block-size --blocks
		--bwlimit --connect-timeout --dest --device --dry-run --exclude --failed-file --fanout
		--force --genkey --gid-index --help --hostfile --hosts --interrupts
		--job-idle-timeout --json --keep-owners --keep-partial --key --listen --log-time --max-blocks --max-jobs --name --nodes --ok-file --once --owner --plan --port
		--prefix --preserve --progress --quiet --racks --recursive --remote-opts
		--remote-path --retries --root --rsh --send-libs --serve --size
		--slow --sparse --state-dir --timeout --topology --trace
		--transport --verbose --verify --version --whole-file --window"
	local short="-a -b -d -f -h -n -p -P -q -r -S -t -v -V -w -W -x"
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	# --opt=value: complete the value as after '--opt value'
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	elif [[ $cur == = && $prev == --* ]]; then
		cur=
	elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	case $prev in
	-a | --algorithm)
		COMPREPLY=($(compgen -W "binomial chain tree sequential" -- "$cur"))
		return ;;
	-d | --dest | --root | --prefix | --state-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-f | --hostfile | --ok-file | --failed-file | --key | --genkey | --trace | --topology)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--transport)
		COMPREPLY=($(compgen -W "auto verbs tcp" -- "$cur"))
		return ;;
	--slow)
		COMPREPLY=($(compgen -W "last wait" -- "$cur"))
		return ;;
	--log-time)
		COMPREPLY=($(compgen -W "iso epoch" -- "$cur"))
		return ;;
	--device)
		COMPREPLY=($(compgen -W "$(ls /sys/class/infiniband 2>/dev/null)" -- "$cur"))
		return ;;
	-w | --nodes | -x | --exclude)
		COMPREPLY=($(compgen -A hostname -- "$cur"))
		return ;;
	--owner)
		COMPREPLY=($(compgen -u -- "$cur"))
		return ;;
	--rsh)
		COMPREPLY=($(compgen -c -- "$cur"))
		return ;;
	--remote-path)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-b | --block-size | -P | --port | -t | --timeout | --connect-timeout | \
	--listen | --hosts | --blocks | --racks | --window | --retries | --bind | \
	--gid-index | --remote-opts | --fanout | --name | --size | --bwlimit | \
	--max-jobs | --max-blocks | --job-idle-timeout | --keep-partial)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$long $short" -- "$cur"))
		return
	fi
	# the daemon, --plan and --genkey take no arguments; with -f or -w
	# every argument is a FILE; else FILE... HOSTS: a file or a host
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--serve | --plan | --genkey | --genkey=*) return ;;
		-f | --hostfile | --hostfile=* | -f?*) opts=files ;;
		-w | --nodes | --nodes=* | -w?*) opts=files ;;
		esac
	done
	if [[ $opts == files ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur") $(compgen -A hostname -- "$cur"))
	fi
}
complete -o filenames -F _rdmcp rdmcp
