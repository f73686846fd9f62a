# ruff: noqa: E101  (the authors indented some checks with tabs; the blocks keep them)
"""Mined verify idioms, a third part: an out-of-sample set mined after the first two (see `mined.py` for the format).

Health checks, wait loops, service and process checks, doctor/preflight scripts and CI sanity checks, each from a
repository not drawn on by `mined_a`/`mined_b`. Adapted only as far as a world needs: a daemon, a kernel knob or
a tool we lack became a file in `$W` or a tiny script in `$W/bin` (put first on PATH); a script's arguments
became a `set --` line; a `note` says so when more than paths changed.
"""

from __future__ import annotations

from tests.verify_corpus.mined import Mined, m, sh

_SYSCTL = (
    sh(r"""
    mkdir -p "$W/bin" "$W/proc"
    cat > "$W/bin/sysctl" <<EOF
    #!/bin/sh
    v=\$(cat "$W/proc/ip_forward" 2>/dev/null || echo 1)
    if [ "\$1" = -n ]; then echo "\$v"; else echo "\$1 = \$v"; fi
    EOF
    chmod +x "$W/bin/sysctl"
""")
    + "\n"
)

# systemctl as a script reading the state of each unit from a file in $W/units (`list-units`, `is-active`)
_SYSTEMCTL = (
    sh(r"""
    mkdir -p "$W/bin" "$W/units"
    cat > "$W/bin/systemctl" <<EOF
    #!/bin/sh
    case \$1 in
      list-units) for u in \$(ls "$W/units"); do echo "\$u.service loaded \$(cat "$W/units/\$u") running"; done ;;
      is-active) s=\$(cat "$W/units/\$2" 2>/dev/null || echo unknown); echo "\$s"; [ "\$s" = active ] ;;
    esac
    EOF
    chmod +x "$W/bin/systemctl"
""")
    + "\n"
)


def _fakes(*names: str) -> str:
    """Empty executables in $W/bin that print a version line."""
    lines = ['mkdir -p "$W/bin"']
    for n in names:
        lines.append(f'printf \'#!/bin/sh\\necho "{n} 1.0"\\n\' > "$W/bin/{n}"; chmod +x "$W/bin/{n}"')
    return "\n".join(lines)


IDIOMS: tuple[Mined, ...] = (
    m(
        "nagios-apache-last-line-down-braces",
        "nakkumar/aiops:Nagios-code/log-http-error.sh",
        "exit",
        "en",
        r"""
        msg=$(tail -n 1 $W/apache2/error.log | grep -w down)

        down=$(tail -n 1 $W/apache2/error.log | grep -w down | wc -l)

        #echo "$down"

        if (( $down>=1 ));then

                {

                echo "WARNING $msg "
                exit 1
                }
        else
                {
                echo "ok "
                exit 0
                }
        fi
        """,
        r"""mkdir -p "$W/apache2"; printf '[error] proxy: backend down\n[notice] backend up\n' > "$W/apache2/error.log" """,
        r"""mkdir -p "$W/apache2"; printf '[notice] backend up\n[error] proxy: backend down\n' > "$W/apache2/error.log" """,
        r"""mkdir -p "$W/apache2"; echo '[notice] backend up' >> "$W/apache2/error.log" """,
        p="ok",
        f="WARNING [error] proxy: backend down",
    ),
    m(
        "pg-isready-dots-loop-success-exit",
        "TimTosi/mimick-testing:deployments/docker/wait-docker.sh",
        "exit",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        for i in `seq 1 3`;
        do
            pg_isready -h localhost -p 5432 && \
            echo 'Success' && exit 0
            echo -n .
            sleep 1
        done
        echo 'Failed waiting for Postgres' && exit 1
        """,
        r"""
        mkdir -p "$W/bin" "$W/pg"; touch "$W/pg/accepting"
        cat > "$W/bin/pg_isready" <<EOF
        #!/bin/sh
        [ -e "$W/pg/accepting" ] && { echo "localhost:5432 - accepting connections"; exit 0; }
        echo "localhost:5432 - no response"; exit 2
        EOF
        chmod +x "$W/bin/pg_isready"
        """,
        r"""
        mkdir -p "$W/bin"
        cat > "$W/bin/pg_isready" <<EOF
        #!/bin/sh
        [ -e "$W/pg/accepting" ] && { echo "localhost:5432 - accepting connections"; exit 0; }
        echo "localhost:5432 - no response"; exit 2
        EOF
        chmod +x "$W/bin/pg_isready"
        """,
        r"""
        mkdir -p "$W/bin" "$W/pg"; touch "$W/pg/accepting"
        cat > "$W/bin/pg_isready" <<EOF
        #!/bin/sh
        [ -e "$W/pg/accepting" ] && { echo "localhost:5432 - accepting connections"; exit 0; }
        echo "localhost:5432 - no response"; exit 2
        EOF
        chmod +x "$W/bin/pg_isready"
        """,
        p="Success",
        f=".Failed waiting for Postgres",
        note="pg_isready is a script in $W/bin; the loop runs 3 times (20 in the original)",
    ),
    m(
        "daemon-en-ejecucion-list-units-spanish",
        "jg2kpy/TAABash:SegundoParcialito/testdaemon.sh",
        "message",
        "es",
        r"""
        set -- nginx
        PATH="$W/bin:$PATH"
        services=`systemctl list-units --type=service --state=running`
        #ps -ax

        if echo $services | grep -v grep | grep $1 > /dev/null
        then
            echo "El daemon $1 esta en ejecucion"
        else
            echo "El daemon $1 no esta en ejecucion"
        fi
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "UNIT LOAD ACTIVE SUB DESCRIPTION"\ncat "%s/running" 2>/dev/null\n' "$W" > "$W/bin/systemctl"
        chmod +x "$W/bin/systemctl"
        printf 'ssh.service loaded active running OpenBSD Secure Shell server\nnginx.service loaded active running A high performance web server\n' > "$W/running"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "UNIT LOAD ACTIVE SUB DESCRIPTION"\ncat "%s/running" 2>/dev/null\n' "$W" > "$W/bin/systemctl"
        chmod +x "$W/bin/systemctl"
        printf 'ssh.service loaded active running OpenBSD Secure Shell server\n' > "$W/running"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "UNIT LOAD ACTIVE SUB DESCRIPTION"\ncat "%s/running" 2>/dev/null\n' "$W" > "$W/bin/systemctl"
        chmod +x "$W/bin/systemctl"
        grep -q '^nginx.service' "$W/running" 2>/dev/null || echo 'nginx.service loaded active running A high performance web server' >> "$W/running"
        """,
        p="El daemon nginx esta en ejecucion",
        f="El daemon nginx no esta en ejecucion",
        note="$1 set to nginx; systemctl is a script in $W/bin listing $W/running",
    ),
    m(
        "verif-service-french-elif-exit-codes",
        "Massil-br/bash_linux:verif_service.sh",
        "exit",
        "fr",
        r"""
        set -- nginx
        PATH="$W/bin:$PATH"
        service_name=$1
        if [ -z "$service_name" ]; then
            echo "Erreur : aucun nom de service founi."
            exit 1
        fi

        if ! systemctl list-units --type=service --all | grep -q "$service_name"; then
            echo "Erreur : le service '$service_name' n'est pas installé ou reconnu."
            exit 3
        fi


        service_status=$(systemctl is-active "$service_name")

        if [ "$service_status" = "active" ]; then
            echo "$service_name est actif."
            exit 0
        elif [ "$service_status" = "inactive" ]; then
            echo "$service_name est inactif."
            exit 1
        else
            echo "$service_name est dans un état inconnu ou a échoué."
            exit 2
        fi
        """,
        _SYSTEMCTL + r"""echo active > "$W/units/nginx" """,
        _SYSTEMCTL + r"""echo inactive > "$W/units/nginx" """,
        _SYSTEMCTL + r"""echo active > "$W/units/nginx" """,
        p="nginx est actif.",
        f="nginx est inactif.",
        note="$1 set to nginx; systemctl is a script in $W/bin reading $W/units",
    ),
    m(
        "travis-http-test-curl-verbose-grep-200",
        "CheggWPTdocker/nginx:.travis/test_http.sh",
        "exit",
        "en",
        r"""
        echo -n 'HTTP test: '
        curl -vsf -H 'Accept-Encoding: gzip' "http://127.0.0.1:$HTTP_PORT/index.html" &> /dev/stdout | grep -i '200 OK'
        RESULT=$?
        if [ $RESULT -eq 0 ]; then
            echo OK
            exit 0
        else
            echo FAIL
            exit $RESULT
        fi
        """,
        r"""echo '<h1>nginx</h1>' > "$W/index.html" """,
        r""":""",
        r"""echo '<h1>nginx</h1>' > "$W/index.html" """,
        p="OK",
        f="HTTP test: FAIL",
        server=True,
        note="the URL became the loopback server's /index.html (its / is a directory listing, 200 in any world)",
    ),
    m(
        "arquivo-existe-portuguese-if-else",
        "edyjrdev/250bash:01-50/018.sh",
        "message",
        "pt",
        r"""
        cd "$W"
        # Objetivo Verificar se arquivo Existe

        file="exemplo.txt"

        # -e verifica se o arquivo existe
        if [ -e "$file" ]; then
            echo "O arquivo '$file' existe."
        else
            echo "O arquivo '$file' não existe."
        fi
        """,
        r"""echo dados > "$W/exemplo.txt" """,
        r""":""",
        r"""echo dados > "$W/exemplo.txt" """,
        p="O arquivo 'exemplo.txt' existe.",
        f="O arquivo 'exemplo.txt' não existe.",
        note="run from $W (cd) so the relative file name is the author's",
    ),
    m(
        "arquivo-nao-existe-usage-then-failure-exit",
        "iagorafaellm/OS2_2023.1:Trab04/atv4.sh",
        "failure-branch",
        "pt",
        r"""
        cd "$W"
        set -- relatorio.txt
        if [ $# -ne 1 ]; then # Se o numero de argumentos for diferente de 1
            echo "Uso: $0 <Arquivo>"
            exit 1
        fi

        if [ ! -f $1 ]; then # Se o arquivo $1 nao existir
            echo "Arquivo $1 não existe"
            exit 1
        fi

        echo "Arquivo $1 existe"
        """,
        r"""echo ok > "$W/relatorio.txt" """,
        r""":""",
        r"""echo ok > "$W/relatorio.txt" """,
        p="Arquivo relatorio.txt existe",
        f="Arquivo relatorio.txt não existe",
        note="run from $W with $1 set to relatorio.txt",
    ),
    m(
        "tools-loop-emoji-counter-summary",
        "bao-mathmod/Gliomas:stuff/tools.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        # Define the list of tools to check
        tools=(
            curl
            column
            awk
            grep
            sed
            wc
            prefetch
            fasterq-dump
            pigz
            zcat
        )

        # Initialize a counter for missing tools
        missing_tools_count=0

        # Loop through each tool in the list
        for tool in "${tools[@]}"; do
            # Use 'command -v' to check if the tool is in the system's PATH
            if command -v "$tool" &> /dev/null; then
                echo "✅ $tool is installed."
            else
                echo "❌ $tool is NOT installed."
                # Increment the counter for missing tools
                ((missing_tools_count++))
            fi
        done

        echo "" # Add a newline for better readability

        # Provide a summary of the results
        if [ "$missing_tools_count" -eq 0 ]; then
            echo "🎉 All specified tools are installed. Your environment is ready!"
        else
            echo "⚠️  $missing_tools_count tool(s) are missing. Please install them to proceed."
        fi
        """,
        _fakes("prefetch", "fasterq-dump", "pigz"),
        _fakes("prefetch", "pigz"),
        _fakes("prefetch", "fasterq-dump", "pigz"),
        p="🎉 All specified tools are installed. Your environment is ready!",
        f="⚠️  1 tool(s) are missing. Please install them to proceed.",
        note="the SRA tools and pigz are scripts in $W/bin (first on PATH)",
    ),
    m(
        "dot-health-ok-bang-bang-function",
        "enjoythecode/dot:health/dot.health.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        # Parameters
        # $1 is the name of the command that should exist
        function check_command_exists() {
        	if command -v $1 &> /dev/null
        	then
        		echo "[OK] $1 exists in your system"
        	else
        		echo "[!!] $1 was not found as an executable"
        		echo "[AC] Visit ~/dot/README.md; install $1"
        	fi
        }

        check_command_exists grep
        check_command_exists fzf
        check_command_exists nvim
        check_command_exists git
        check_command_exists python3
        check_command_exists dot  # graphviz: https://graphviz.org/download/
        check_command_exists pre-commit
        """,
        _fakes("fzf", "nvim", "dot", "pre-commit"),
        _fakes("fzf", "dot", "pre-commit"),
        _fakes("fzf", "nvim", "dot", "pre-commit"),
        p="[OK] nvim exists in your system",
        f="[!!] nvim was not found as an executable",
        note="fzf, nvim, dot and pre-commit are scripts in $W/bin (first on PATH)",
    ),
    m(
        "setup-health-or-echo-missing-then-check-anyway",
        "kspeer825/portfolio:projects/my_ide/setup_health.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        # Health Checks


        # Homebrew
        command -v brew >/dev/null 2>&1 || echo "❌ Homebrew is missing. "
        echo "✅ $(brew --version | head -1)"

        # Emacs
        command -v emacs >/dev/null 2>&1 || echo "❌ Emacs is missing. "
        echo "✅ $(emacs --version | head -1)"

        # tmux
        command -v tmux >/dev/null 2>&1 || echo "❌ tmux is missing. "
        echo "✅ $(tmux -V)"

        echo "All Checks Passed."
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "Homebrew 4.2.0"\n' > "$W/bin/brew"
        printf '#!/bin/sh\necho "GNU Emacs 29.1"\n' > "$W/bin/emacs"
        printf '#!/bin/sh\necho "tmux 3.4"\n' > "$W/bin/tmux"
        chmod +x "$W/bin/brew" "$W/bin/emacs" "$W/bin/tmux"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "GNU Emacs 29.1"\n' > "$W/bin/emacs"
        printf '#!/bin/sh\necho "tmux 3.4"\n' > "$W/bin/tmux"
        chmod +x "$W/bin/emacs" "$W/bin/tmux"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "Homebrew 4.2.0"\n' > "$W/bin/brew"
        printf '#!/bin/sh\necho "GNU Emacs 29.1"\n' > "$W/bin/emacs"
        printf '#!/bin/sh\necho "tmux 3.4"\n' > "$W/bin/tmux"
        chmod +x "$W/bin/brew" "$W/bin/emacs" "$W/bin/tmux"
        """,
        p="✅ Homebrew 4.2.0",
        f="❌ Homebrew is missing.",
        note="brew, emacs and tmux are scripts in $W/bin (first on PATH)",
    ),
    m(
        "shellcheck-loop-error-counter-exit",
        "lavank179/automation-scripts:tests/linux-shellcheck.sh",
        "exit",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        # set +e

        cd $W/linux-unix/
        FILES=(*)
        errs=0
        for FILE in "${FILES[@]}"; do
          echo "Checking $FILE ..."
          shellcheck $FILE
          er=$?
          if [[ $er -ne 0 ]]; then
            errs=$(($errs+1))
          fi
          echo "-----------------------------------------------------------------------------------------------------------------------"
        done
        if [[ $errs -gt 0 ]]; then
          echo "FAILED: $errs Erros in shell script files. Kindly check above"
          exit 1
        else
          echo "🎉 Woot! No lint or syntax errors."
        fi
        """,
        r"""
        mkdir -p "$W/bin" "$W/linux-unix"
        printf '#!/bin/sh\ngrep -q "^#!" "$1" || { echo "$1:1:1: error: Tips depend on target shell and yours is unknown. Add a shebang. [SC2148]"; exit 1; }\n' > "$W/bin/shellcheck"
        chmod +x "$W/bin/shellcheck"
        printf '#!/bin/sh\ntar czf /tmp/b.tgz /etc\n' > "$W/linux-unix/backup.sh"
        printf '#!/bin/sh\nfind /tmp -mtime +7 -delete\n' > "$W/linux-unix/rotate.sh"
        """,
        r"""
        mkdir -p "$W/bin" "$W/linux-unix"
        printf '#!/bin/sh\ngrep -q "^#!" "$1" || { echo "$1:1:1: error: Tips depend on target shell and yours is unknown. Add a shebang. [SC2148]"; exit 1; }\n' > "$W/bin/shellcheck"
        chmod +x "$W/bin/shellcheck"
        printf '#!/bin/sh\ntar czf /tmp/b.tgz /etc\n' > "$W/linux-unix/backup.sh"
        printf 'find /tmp -mtime +7 -delete\n' > "$W/linux-unix/rotate.sh"
        """,
        r"""
        mkdir -p "$W/bin" "$W/linux-unix"
        printf '#!/bin/sh\ngrep -q "^#!" "$1" || { echo "$1:1:1: error: Tips depend on target shell and yours is unknown. Add a shebang. [SC2148]"; exit 1; }\n' > "$W/bin/shellcheck"
        chmod +x "$W/bin/shellcheck"
        printf '#!/bin/sh\ntar czf /tmp/b.tgz /etc\n' > "$W/linux-unix/backup.sh"
        printf '#!/bin/sh\nfind /tmp -mtime +7 -delete\n' > "$W/linux-unix/rotate.sh"
        """,
        p="🎉 Woot! No lint or syntax errors.",
        f="FAILED: 1 Erros in shell script files. Kindly check above",
        note="shellcheck is a script in $W/bin that only flags a missing shebang; the scripts live in $W/linux-unix",
    ),
    m(
        "errcheck-ls-glob-count-had-errors",
        "stmansour/rentroll:errcheck.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        ERRORS=$(ls test/*/err.txt 2>/dev/null)
        ERRCOUNT=$(ls test/*/err.txt 2>/dev/null | wc -l)
        if (( ERRCOUNT > 0 )); then
        	echo "TESTS HAD ERRORS"
        	echo "${ERRORS}"
        	exit 1
        else
        	echo "ALL TESTS PASSED"
        fi
        """,
        r"""mkdir -p "$W/test/ws"; echo pass > "$W/test/ws/out.txt" """,
        r"""mkdir -p "$W/test/ws"; echo pass > "$W/test/ws/out.txt"; echo 'diff at line 3' > "$W/test/ws/err.txt" """,
        r"""rm -f "$W"/test/*/err.txt""",
        p="ALL TESTS PASSED",
        f="TESTS HAD ERRORS",
        note="run from $W (cd)",
    ),
    m(
        "process-zapushchen-russian-pgrep",
        "StarAlexander/bmstu_labs:ИНФ/ИНФ-2/check-process.sh",
        "message",
        "ru",
        r"""
        set -- myapp
        PATH="$W/bin:$PATH"
        if [ $# -ne 1 ]; then
            echo "Использование: $0 <имя_процесса>"
            exit 1
        fi

        process_name="$1"

        if pgrep "$process_name" > /dev/null; then
            echo "Процесс запущен"
        else
            echo "Процесс не найден"
        fi
        """,
        r"""
        mkdir -p "$W/bin" "$W/run"; echo 4242 > "$W/run/myapp.pid"
        printf '#!/bin/sh\ncat "%s/run/$1.pid" 2>/dev/null\n' "$W" > "$W/bin/pgrep"; chmod +x "$W/bin/pgrep"
        """,
        r"""
        mkdir -p "$W/bin" "$W/run"
        printf '#!/bin/sh\ncat "%s/run/$1.pid" 2>/dev/null\n' "$W" > "$W/bin/pgrep"; chmod +x "$W/bin/pgrep"
        """,
        r"""
        mkdir -p "$W/bin" "$W/run"; echo 4242 > "$W/run/myapp.pid"
        printf '#!/bin/sh\ncat "%s/run/$1.pid" 2>/dev/null\n' "$W" > "$W/bin/pgrep"; chmod +x "$W/bin/pgrep"
        """,
        p="Процесс запущен",
        f="Процесс не найден",
        note="$1 set to myapp; pgrep is a script in $W/bin reading $W/run/<name>.pid",
    ),
    m(
        "ip-forward-sysctl-n-failure-branch",
        "Khanh1916/technical-cybersec-checklist:suse/253.sh",
        "failure-branch",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        if [ "$(sysctl -n net.ipv4.ip_forward)" != "0" ]; then
          echo "IPv4 IP forwarding is enabled."
          exit 1
        fi

        echo "IP forwarding is disabled."
        exit 0
        """,
        _SYSCTL + r"""echo 0 > "$W/proc/ip_forward" """,
        _SYSCTL + r"""echo 1 > "$W/proc/ip_forward" """,
        _SYSCTL + r"""echo 0 > "$W/proc/ip_forward" """,
        p="IP forwarding is disabled.",
        f="IPv4 IP forwarding is enabled.",
        note="sysctl is a script in $W/bin reading $W/proc/ip_forward",
    ),
    m(
        "ip-forward-function-echoes-value-or-advice",
        "cc891018/AlmaLinux:108-1_check.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        ipv4_ip_forward_check(){
                if [ "$(sysctl net.ipv4.ip_forward)" == "net.ipv4.ip_forward = 0" ]
                then
                        echo "$(sysctl net.ipv4.ip_forward)"
                else
                        echo "Please set up net.ipv4.ip_forward to 0"
                fi
        }
        ipv4_ip_forward_check
        """,
        _SYSCTL + r"""echo 0 > "$W/proc/ip_forward" """,
        _SYSCTL + r"""echo 1 > "$W/proc/ip_forward" """,
        _SYSCTL + r"""echo 0 > "$W/proc/ip_forward" """,
        p="net.ipv4.ip_forward = 0",
        f="Please set up net.ipv4.ip_forward to 0",
        note="sysctl is a script in $W/bin reading $W/proc/ip_forward",
    ),
    m(
        "service-running-is-active-quiet-if-else",
        "nadarmurugan/Bash-Scripting:service_running.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        service="ssh"

        if systemctl is-active --quiet $service
        then
            echo "$service is running"
        else
            echo "$service is NOT running"
        fi
        """,
        r"""
        mkdir -p "$W/bin" "$W/units"; echo active > "$W/units/ssh"
        printf '#!/bin/sh\n[ "$(cat "%s/units/$3" 2>/dev/null)" = active ]\n' "$W" > "$W/bin/systemctl"; chmod +x "$W/bin/systemctl"
        """,
        r"""
        mkdir -p "$W/bin" "$W/units"; echo failed > "$W/units/ssh"
        printf '#!/bin/sh\n[ "$(cat "%s/units/$3" 2>/dev/null)" = active ]\n' "$W" > "$W/bin/systemctl"; chmod +x "$W/bin/systemctl"
        """,
        r"""
        mkdir -p "$W/bin" "$W/units"; echo active > "$W/units/ssh"
        printf '#!/bin/sh\n[ "$(cat "%s/units/$3" 2>/dev/null)" = active ]\n' "$W" > "$W/bin/systemctl"; chmod +x "$W/bin/systemctl"
        """,
        p="ssh is running",
        f="ssh is NOT running",
        note="systemctl is a script in $W/bin reading $W/units/<name>",
    ),
)
