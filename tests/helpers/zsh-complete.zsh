#!/usr/bin/env zsh
# SPDX-License-Identifier: MIT
# zsh-complete.zsh FPATH_DIR WORDS...: run zsh's own completion system on
# the command line WORDS (joined by spaces, completion at its end) and
# print every match it offers, one per line, as "match -- description"
# when there is one.  A real interactive zsh in a pseudo-terminal (zpty),
# with compinit and the completion functions of FPATH_DIR first in $fpath;
# compadd is wrapped to print the matches it adds
# (after github.com/Valodim/zsh-capture-completion).  Run it under a
# timeout: it waits on the child shell.

if [[ $1 == --child ]]; then
	# sourced by the interactive child shell: set up completion
	PROMPT= RPROMPT= PS2=
	fpath=("$2" $fpath)
	# -D: no dump file (with "-d /dev/null", compinit as root replaced
	# /dev/null with a dump file of its own)
	autoload -Uz compinit && compinit -u -D
	zstyle ':completion:*' list-grouped false
	zstyle ':completion:*' insert-tab false
	zstyle ':completion:*' list-separator ''
	zstyle ':completion:*' matcher-list ''
	# the matches are printed between two lines holding a NUL; then the
	# child exits
	null-line() { print -rn -- $'\0\n' }
	compprefuncs=(null-line)
	comppostfuncs=(null-line exit)
	compadd() {
		# -O, -A, -D: the caller wants the matches in an array
		if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
			builtin compadd "$@"
			return $?
		fi
		typeset -a __hits __dscr __tmp
		if (( $@[(I)-d] )); then
			__tmp=${@[$[${@[(i)-d]}+1]]}
			if [[ $__tmp == \(* ]]; then
				eval "__dscr=$__tmp"
			else
				__dscr=( "${(@P)__tmp}" )
			fi
		fi
		builtin compadd -A __hits -D __dscr "$@"
		# and add them for real: the tag loops of _files and friends
		# stop at the first tag that produced matches
		builtin compadd "$@"
		local ret=$?
		setopt localoptions norcexpandparam extendedglob
		typeset -A apre hpre
		zparseopts -E P:=apre p:=hpre
		integer i
		for i in {1..$#__hits}; do
			if (( $#__dscr >= i )); then
				print -r -- "$IPREFIX$apre$hpre$__hits[$i] -- ${${__dscr[$i]}##$__hits[$i] #}"
			else
				print -r -- "$IPREFIX$apre$hpre$__hits[$i]"
			fi
		done
		return ret
	}
	bindkey '^I' complete-word
	return 0
fi

zmodload zsh/zpty || exit 2
dir=$1
shift
zpty z zsh -f -i
zpty -w z "source ${(q)0:A} --child ${(q)dir:A}"
zpty -n -w z "$*"$'\t'
# everything between the two NUL lines is the matches
integer tog=0
while zpty -r z; do :; done | while IFS= read -r line; do
	if [[ $line == *$'\0'* ]]; then
		(( tog++ )) && exit 0 || continue
	fi
	(( tog )) && print -r -- "${line%$'\r'}"
done
