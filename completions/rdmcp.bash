# bash completion for rdmcp
_rdmcp() {
	local cur prev opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-a | --algorithm)
		COMPREPLY=($(compgen -W "binomial chain tree sequential" -- "$cur"))
		return ;;
	-d | --dest | --root | --prefix)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-f | --hostfile | --ok-file | --failed-file | --key | --genkey)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--transport)
		COMPREPLY=($(compgen -W "auto verbs tcp" -- "$cur"))
		return ;;
	--device)
		COMPREPLY=($(compgen -W "$(ls /sys/class/infiniband 2>/dev/null)" -- "$cur"))
		return ;;
	-x | --exclude | --bind | --gid-index)
		return ;;
	--rsh)
		COMPREPLY=($(compgen -c -- "$cur"))
		return ;;
	--remote-path)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--remote-opts | --fanout)
		return ;;
	-b | --block-size | -p | --port | -t | --timeout | --connect-timeout | \
	--listen | --hosts | --blocks | --window | --retries)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		opts=$(rdmcp --help 2>/dev/null | grep -o -- '--[a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts -a -b -d -f -h -p -q -t -v -V -x" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _rdmcp rdmcp
