"""The bash functions every block's shell has (the session's bash defines them once): the `trap` wrapper
that keeps Director's EXIT capture armed, the `kill` wrapper that reads `$$` as the block itself, and
`__director_exit`, the capture (`director.exec.session` says what it captures and how it flows).

Pure: text only. `OWN` names the wrappers that stay defined through the capture, for the block's own EXIT
handler, and that the session never carries.
"""

from __future__ import annotations

import shlex

from director.exec import markers

__all__ = ["ARM", "CAPTURE_FUNCTIONS", "OWN"]

# The wrappers and the capture; `@MARKS@` is the line `trap -p` shows for a traced block's command marks,
# `@COMMAND@` the marks' command itself (`markers.COMMAND`).
CAPTURE_FUNCTIONS = r"""trap() {
    # Keep Director's EXIT capture armed: record the block's own EXIT handler, pass the rest on. What bash
    # shows (`trap`, `trap -p`) has the block's own EXIT handler where Director's is, so that saving and
    # restoring it (`old=$(trap -p EXIT)` ... `eval "$old"`) works as in plain bash.
    { if [[ $- == *x* && -z ${__director_traced-} ]] && (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 ))
      then local -; builtin set +x; fi; } 2>/dev/null  # a block's own xtrace shows its call, not the inside
    local __director_q=\' __director_e=\'\\\'\' __director_t __director_r __director_x __director_own
    if [[ $# -eq 0 || ${1-} == -p ]]; then
        __director_t=$(builtin trap "$@")
        __director_r=$?
        __director_own=("trap -- '__director_exit' EXIT")
        [[ -z ${__director_traced-} ]] || __director_own+=(@MARKS@)  # the command marks (`markers`)
        if [[ -n ${__director_user_exit+x} ]]; then
            __director_x=${__director_user_exit//$__director_q/"$__director_e"}  # quoted as bash quotes
            __director_x="trap -- $__director_q$__director_x$__director_q EXIT"
            __director_t=${__director_t/"${__director_own[0]}"/"$__director_x"}
        fi
        for __director_x in "${__director_own[@]}"; do  # Director's own lines: plain bash has none
            case $__director_t in
                "$__director_x") __director_t= ;;
                "$__director_x"$'\n'*) __director_t=${__director_t#"$__director_x"$'\n'} ;;
                *$'\n'"$__director_x"*) __director_t=${__director_t/$'\n'"$__director_x"/} ;;
            esac
        done
        [[ -z $__director_t ]] || builtin printf '%s\n' "$__director_t"
        return "$__director_r"
    fi
    if [[ $BASHPID != "${__director_pid:-$$}" || ${1-} == -[lp]* ]]; then
        builtin trap "$@"; return
    fi
    [[ $1 == -- ]] && shift
    local __director_cmd __director_sig __director_keep=() __director_return=
    if (( $# == 1 )); then __director_cmd=-; else __director_cmd=$1; shift; fi
    for __director_sig in "$@"; do
        case ${__director_sig^^} in
            EXIT|0)
                if [[ $__director_cmd == - ]]; then builtin unset -v __director_user_exit
                else __director_user_exit=$__director_cmd; fi ;;
            RETURN) __director_return=1 ;;
            DEBUG) builtin unset -v __director_marks; __director_keep+=("$__director_sig") ;;
            *) __director_keep+=("$__director_sig") ;;
        esac
    done
    if [[ -n $__director_return && $__director_cmd == - ]]; then
        builtin trap - RETURN
    elif [[ -n $__director_return ]]; then
        # Set from this function, a RETURN trap would fire when it returns: it is set then, by a trap that
        # only sets it, and first fires when the block's own function (or sourced file) returns.
        __director_t=${__director_cmd//$__director_q/"$__director_e"}
        builtin trap -- "builtin trap -- $__director_q$__director_t$__director_q RETURN" RETURN
    fi
    # Last: its status is the call's (a bad signal name fails as in bash), and a DEBUG trap it sets first
    # runs before the block's next command, not before the rest of this function.
    (( ${#__director_keep[@]} == 0 )) || builtin trap -- "$__director_cmd" "${__director_keep[@]}"
}
kill() {
    # `$$` is the session's bash in every block, as in a terminal; a block that signals `$$` (or its group,
    # `-$$`) means itself, as a script does: the signal goes to the block's shell (or its group) instead.
    { if [[ $- == *x* && -z ${__director_traced-} ]] && (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 ))
      then local -; builtin set +x; fi; } 2>/dev/null  # a block's own xtrace shows its call, not the inside
    local __director_w __director_a=()
    for __director_w in "$@"; do
        case $__director_w in
            "$$") __director_a+=("${__director_pid:-$$}") ;;
            "-$$") __director_a+=("-${__director_pid:-$$}") ;;
            *) __director_a+=("$__director_w") ;;
        esac
    done
    builtin kill "${__director_a[@]}"
}
__director_exit() {
    __director_rc=$?
    { builtin set +eux +o pipefail; } 2>/dev/null
    # A traced block's command marks end here (`markers`): the first command above was marked, which says the
    # block reached its end; Director's own commands are not.
    [[ -z ${__director_marks-} ]] || builtin trap - DEBUG
    builtin trap - RETURN  # inherited under functrace (a traced block): it must not fire as this returns
    if [[ -n ${__director_traced-} && ${PS4-} == "$__director_trace_ps4" ]]; then
        # Tracing was Director's: give the session its own PS4 back before capturing it.
        if [[ -n $__director_ps4_set ]]; then PS4=$__director_ps4; else builtin unset PS4; fi
    fi
    builtin unset -f __director_exit  # `trap` and `kill` stay for the block's own EXIT handler (`OWN`)
    # Director's per-block variables: an unchanged session dumps the same bytes from block to block
    builtin unset -v __director_pid __director_s __director_q __director_u
    if [[ -n ${__director_kept-} ]]; then
        # The block cannot change the session (`Shell.run(keeps_session=True)`): its status and directory
        builtin printf '%s\0%s\0\0\0\0KEPT\0' "$__director_rc" "$PWD" >"$__director_state_file" 2>/dev/null
    else
        {
            builtin printf '%s\0%s\0' "$__director_rc" "$PWD"
            builtin declare -p
            builtin declare -p DIRSTACK  # listed empty above: a dynamic variable shows its value when named
            builtin printf '\0'
            builtin declare -f
            builtin printf '\0'
            builtin declare -F
            builtin printf '\0'
            builtin umask
            builtin printf '\0'
            builtin ulimit -a -S
            builtin printf '\0'
            builtin ulimit -a -H
            builtin printf '\0END\0'
        } >"$__director_state_file" 2>/dev/null
    fi
    if [[ -n ${__director_user_exit-} ]]; then
        __director_pid=$BASHPID  # for the wrappers, as the block had them
        __director_setrc() { return "$1"; }
        [[ -z ${__director_marks-} ]] || builtin trap -- @COMMAND@ DEBUG  # marked, as the block was
        __director_setrc "$__director_rc"
        builtin eval -- "$__director_user_exit"
    fi
}
"""
CAPTURE_FUNCTIONS = CAPTURE_FUNCTIONS.replace(
    "@MARKS@", shlex.quote(f"trap -- '{markers.COMMAND}' DEBUG")
).replace("@COMMAND@", shlex.quote(markers.COMMAND))
ARM = "builtin unset -v __director_user_exit\nbuiltin trap __director_exit EXIT"

OWN = ("trap", "kill")  # defined through the capture; never session state (`session._without_own`)
