"""Mined verify idioms, first half: Dockerfile HEALTHCHECKs, CI smoke tests (see `mined.py` for the format).

This half draws on container health checks (Dockerfile `HEALTHCHECK` commands and the `healthcheck.sh` /
`docker-healthcheck` scripts they call), Kubernetes exec-probe scripts, CI smoke tests (workflow `run:`
steps, Makefile targets, `scripts/smoke*.sh`) and the `check_*.sh` / `verify*.sh` / `status.sh` scripts
people keep beside them, in several languages.

What a check probes is moved into the world `$W` as `mined.py` says. Where it asked a system tool
(`systemctl`, `redis-cli`, `pgrep`, `docker`, `nginx -t`, `service`), the world writes a tiny stand-in for
that tool into `$W/bin` (the `_FAKE_*` snippets below): it answers from state files in `$W` the way the
real tool answers (its output and its exit status), and it never changes that state, so a check that
"restarts" a service in its failure branch stays a check. Each idiom's `note` says what else was adapted.
"""

from __future__ import annotations

from tests.verify_corpus.mined import Mined, m, sh, validate

# ---------------------------------------------------------------- stand-ins for system tools
# `systemctl` over $W/units/<unit> (its state: active, inactive, failed…) and $W/units/<unit>.sub (SubState);
# start/restart are refused as they would be without root.
_FAKE_SYSTEMCTL = sh(
    r"""
    mkdir -p "$W/bin" "$W/units"
    cat > "$W/bin/systemctl" <<'EOF'
    #!/bin/bash
    units="$(dirname "$0")/../units"
    cmd=$1; shift
    [ "$1" = --quiet ] && { quiet=1; shift; }
    [ "$cmd" = show ] && shift 2
    unit=${1%.service}
    state=$(cat "$units/$unit" 2>/dev/null || echo inactive)
    case $cmd in
      is-active) [ -n "$quiet" ] || echo "$state"; [ "$state" = active ] ;;
      status) echo "* $unit.service"; echo "     Active: $state"; [ "$state" = active ] || exit 3 ;;
      show) echo "SubState=$(cat "$units/$unit.sub" 2>/dev/null || echo dead)" ;;
      *) echo "Failed to $cmd $unit.service: Access denied" >&2; exit 1 ;;
    esac
    EOF
    chmod +x "$W/bin/systemctl"
    """
)

# `redis-cli … ping`: the server's reply is $W/redis.reply; no file, no server.
_FAKE_REDIS_CLI = sh(
    r"""
    mkdir -p "$W/bin"
    cat > "$W/bin/redis-cli" <<'EOF'
    #!/bin/sh
    r="$(dirname "$0")/../redis.reply"
    [ -f "$r" ] || { echo "Could not connect to Redis at 127.0.0.1:6379: Connection refused" >&2; exit 1; }
    cat "$r"
    EOF
    chmod +x "$W/bin/redis-cli"
    """
)

# `pgrep [-x] NAME` over the process table $W/procs ("pid name" lines).
_FAKE_PGREP = sh(
    r"""
    mkdir -p "$W/bin"
    touch "$W/procs"
    cat > "$W/bin/pgrep" <<'EOF'
    #!/bin/sh
    [ "$1" = -x ] && { x=1; shift; }
    awk -v n="$1" -v x="$x" '(x && $2 == n) || (!x && index($2, n)) {print $1; f=1} END {exit !f}' \
      "$(dirname "$0")/../procs"
    EOF
    chmod +x "$W/bin/pgrep"
    """
)

# `service NAME status` / `chkconfig --list NAME` over $W/units and $W/init.d; restarts are refused.
_FAKE_SERVICE = sh(
    r"""
    mkdir -p "$W/bin" "$W/units" "$W/init.d"
    cat > "$W/bin/service" <<'EOF'
    #!/bin/sh
    [ "$2" = status ] && [ "$(cat "$(dirname "$0")/../units/$1" 2>/dev/null)" = active ]
    EOF
    cat > "$W/bin/chkconfig" <<'EOF'
    #!/bin/sh
    [ -e "$(dirname "$0")/../init.d/$2" ]
    EOF
    chmod +x "$W/bin/service" "$W/bin/chkconfig"
    """
)

# A tiny `$W/bin/<tool>` printing a version: _tool("node", "v20.11.1").
def _tool(name: str, version: str) -> str:
    return f"mkdir -p \"$W/bin\"\nprintf '#!/bin/sh\\necho {version}\\n' > \"$W/bin/{name}\"\nchmod +x \"$W/bin/{name}\""


# A git work tree $W/repo with one committed file, clean (what the act restores), then `change` applied to it.
def _git_world(path: str, text: str, change: str = ":") -> str:
    return sh(
        rf"""
        mkdir -p "$W/repo" && cd "$W/repo"
        if git rev-parse -q --verify HEAD >/dev/null 2>&1; then git checkout -q -- . && git clean -qfd
        else git init -q . && echo '{text}' > {path} && git add {path}
          git -c user.name=w -c user.email=w@example.invalid commit -qm init; fi
        {change}
        """
    )


# `docker ps -a --filter "name=^N$" --format …` (N's status), `docker ps --format …` (the names), `docker inspect
# --format … N` (N's health) and `docker restart N`, over $W/containers/N.status and N.health.
_FAKE_DOCKER = sh(
    r"""
    mkdir -p "$W/bin" "$W/containers"
    cat > "$W/bin/docker" <<'EOF'
    #!/bin/sh
    d="$(dirname "$0")/../containers"
    case "$1" in
      ps) if [ "$3" = --filter ]; then n=${4#name=^}; cat "$d/${n%\$}.status" 2>/dev/null
          else ls "$d" | sed -n 's/\.status$//p'; fi ;;
      inspect) for n; do :; done
          cat "$d/$n.health" 2>/dev/null || { echo "Error: No such object: $n" >&2; exit 1; } ;;
      restart) echo "$2" ;;
    esac
    EOF
    chmod +x "$W/bin/docker"
    """
)

# A `verify.py` that audits $W/audit.json (the world says yes or no in it).
_VERIFY_PY = sh(
    r"""
    cat > "$W/verify.py" <<'EOF'
    import json, os, sys
    audit = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "audit.json")))
    sys.exit(0 if audit["ssh_root_login"] == "no" else 1)
    EOF
    """
)

# An executable `healthcheck.py` that checks the flag $W/flag.txt.
_HEALTHCHECK_PY = sh(
    r"""
    cat > "$W/healthcheck.py" <<'EOF'
    #!/usr/bin/env python3
    import os, sys
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(0 if open(os.path.join(here, "flag.txt")).read().startswith("cr3{") else 1)
    EOF
    chmod +x "$W/healthcheck.py"
    """
)

# `mysqladmin … ping`: the server's state is $W/mysqld.state (up or not).
_FAKE_MYSQLADMIN = sh(
    r"""
    mkdir -p "$W/bin"
    cat > "$W/bin/mysqladmin" <<'EOF'
    #!/bin/sh
    if [ "$(cat "$(dirname "$0")/../mysqld.state" 2>/dev/null)" = up ]; then echo "mysqld is alive"; exit 0; fi
    echo "mysqladmin: connect to server at 'localhost' failed" >&2
    exit 1
    EOF
    chmod +x "$W/bin/mysqladmin"
    """
)

# `telegram.sh CHAT TEXT`, the notifier a smoke test calls: it only prints the text it would send.
_TELEGRAM_SH = r"""printf '#!/bin/sh\necho "$2"\n' > "$W/telegram.sh" && chmod +x "$W/telegram.sh" """


_CYRIL_STATUS = r"""
    service=nginx
    echo "Contrôle du service : $service"
    STATUS="$("$W/bin/systemctl" is-active $service)"
    RUNNING="$("$W/bin/systemctl" show -p SubState $service | cut -d'=' -f2)"
    if [ "${STATUS}" = "active" ]; then
    echo "$service : Le service est actif"
    if [ "${RUNNING}" = "running" ]; then
    echo "$service : Le service est en fontion"
    else
    echo "$service : Le service n'est pas en fontion"
    fi
    else
    echo "$service : Le service n'est pas actif "
    exit 1
    fi
"""


IDIOMS: tuple[Mined, ...] = (
    # ================================================================ container health checks
    m(
        "ctf-healthcheck-echo-result-then-compare",
        "baiyecha404/CTFWEBchallenge:mctf2020/chat/server/healthcheck.sh",
        "exit",
        "en",
        r"""
        result=$(curl --request GET -sL --url "http://127.0.0.1:$HTTP_PORT/healthcheck")
        echo "$result"
        if [ "$result" = "ok" ]; then
            exit 0
        else
            exit 1
        fi
        """,
        r"""printf ok > "$W/healthcheck" """,
        r"""printf degraded > "$W/healthcheck" """,
        r"""printf ok > "$W/healthcheck" """,
        p="ok",
        f="degraded",
        server=True,
        tools=("curl",),
        note="the only pass line is the body the check echoes before it compares it",
    ),
    m(
        "docker-library-style-curl-fail-or-exit-under-pipefail",
        "bastman/spring-kotlin-exposed:rest-api/docker/app/check-health.sh",
        "exit",
        "en",
        r"""
        set -eo pipefail

        host="127.0.0.1:$HTTP_PORT"
        curl --fail "http://$host/health" || exit 1
        """,
        r"""echo UP > "$W/health" """,
        r""":""",
        r"""echo UP > "$W/health" """,
        p="UP",
        server=True,
        tools=("curl",),
        note="`host=$(hostname -i || echo 127.0.0.1)` became the loopback server's address",
    ),
    m(
        "verdaccio-healthcheck-function-exits-from-inside",
        "slergberg/docker-web-dev-svc-verdaccio:docker-healthcheck.sh",
        "exit",
        "en",
        r"""
        set -x

        healthcheck_server() {
          curl --fail "http://127.0.0.1:$HTTP_PORT/-/ping" \
            || exit 1
        }

        healthcheck_server
        """,
        r"""mkdir -p "$W/-" && echo '{}' > "$W/-/ping" """,
        r""":""",
        r"""mkdir -p "$W/-" && echo '{}' > "$W/-/ping" """,
        p="{}",
        server=True,
        tools=("curl",),
        note="the server root became verdaccio's ping endpoint (the loopback server lists a bare directory)",
    ),
    m(
        "dockerfile-healthcheck-curl-f-or-exit-1",
        "Raaaz01/sample-python-flask:Dockerfile",
        "exit",
        "en",
        r"""curl -f "http://127.0.0.1:$HTTP_PORT/health" || exit 1""",
        r"""echo healthy > "$W/health" """,
        r""":""",
        r"""echo healthy > "$W/health" """,
        p="healthy",
        server=True,
        tools=("curl",),
        note="the HEALTHCHECK CMD line, run as the block",
    ),
    m(
        "service-starter-echo-unquoted-result-then-or-chain",
        "wu-jingtao/service-starter:docker/health_check.sh",
        "exit",
        "en",
        r"""
        result=$(curl -s --no-buffer -XGET "http://127.0.0.1:$HTTP_PORT/health")
        echo $result

        if [ "$result" = "stopped" -o "$result" = "running" -o "$result" = "starting" -o "$result" = "stopping" ]; then
            exit 0
        else
            exit 1
        fi
        """,
        r"""echo running > "$W/health" """,
        r"""echo crashed > "$W/health" """,
        r"""echo running > "$W/health" """,
        p="running",
        f="crashed",
        server=True,
        tools=("curl",),
        note="curl --unix-socket became the loopback server",
    ),
    m(
        "flask-healthcheck-code-then-success-or-error",
        "mbarrerop/flask_app:healthcheck.sh",
        "exit",
        "en",
        r"""
        code=$(curl -o /dev/null -s -w "%{http_code}\n" "http://127.0.0.1:$HTTP_PORT/state/healthcheck")
        echo "response code: $code"

        if [ "$code" == "200" ]
        then
          echo "success";
          exit 0;
        else
          echo "error";
          exit 1;
        fi
        """,
        r"""mkdir -p "$W/state" && echo up > "$W/state/healthcheck" """,
        r"""mkdir -p "$W/state" """,
        r"""mkdir -p "$W/state" && echo up > "$W/state/healthcheck" """,
        p="success",
        f="error",
        server=True,
        tools=("curl",),
    ),
    m(
        "nginx-healthcheck-wget-headers-grep-status-line",
        "grikdotnet/docker-patterns:nginx-acme-php-mysql/etc/nginx/healthcheck.sh",
        "exit",
        "en",
        r"""
        response=$(wget -S -q -O /dev/null "http://127.0.0.1:$HTTP_PORT/health-check" 2>&1)

        if echo $response | grep -q "HTTP/1.0 200 OK" ; then
            echo "HTTP/1.0 200 OK"
            exit 0
        else
            echo $response
            exit 1
        fi
        """,
        r"""echo ok > "$W/health-check" """,
        r""":""",
        r"""echo ok > "$W/health-check" """,
        p="HTTP/1.0 200 OK",
        server=True,
        tools=("wget",),
        note="`HTTP/1.1 200 OK` became `HTTP/1.0 200 OK`: the loopback server speaks HTTP/1.0",
    ),
    m(
        "userhub-healthcheck-latches-a-healthy-marker",
        "PnX-SI/UsersHub:docker_healthcheck.sh",
        "exit",
        "en",
        r"""
        url_test="http://127.0.0.1:$HTTP_PORT/login"
        if [ ! -f "$W/container_healthy" ]; then
            curl --noproxy localhost -f "${url_test}" || exit 1
            touch "$W/container_healthy"
        fi
        """,
        r"""echo "UsersHub login" > "$W/login" """,
        r""":""",
        r"""echo "UsersHub login" > "$W/login" """,
        p="UsersHub login",
        server=True,
        tools=("curl",),
        note="/tmp/container_healthy became $W/container_healthy: once it passes, the check is silent and passes",
    ),
    m(
        "ddev-router-config-test-then-subshell-exit-2",
        "ddev/ddev:containers/ddev-router/healthcheck.sh",
        "exit",
        "en",
        r"""
        set -eu
        set -o pipefail

        # Check nginx config
        "$W/bin/nginx" -t || exit 1
        # Check our healthcheck endpoint
        curl -s --fail "http://127.0.0.1:$HTTP_PORT/healthcheck" >/dev/null || (echo "healthcheck endpoint not responding" && exit 2)
        """,
        sh(
            r"""
            mkdir -p "$W/bin"
            printf '#!/bin/sh\ntest -s "$(dirname "$0")/../nginx.conf" && echo "nginx: configuration file test is successful" >&2\n' > "$W/bin/nginx"
            chmod +x "$W/bin/nginx"
            echo 'events {}' > "$W/nginx.conf"
            echo ok > "$W/healthcheck"
            """
        ),
        sh(
            r"""
            mkdir -p "$W/bin"
            printf '#!/bin/sh\ntest -s "$(dirname "$0")/../nginx.conf" && echo "nginx: configuration file test is successful" >&2\n' > "$W/bin/nginx"
            chmod +x "$W/bin/nginx"
            echo 'events {}' > "$W/nginx.conf"
            """
        ),
        sh(
            r"""
            mkdir -p "$W/bin"
            printf '#!/bin/sh\ntest -s "$(dirname "$0")/../nginx.conf" && echo "nginx: configuration file test is successful" >&2\n' > "$W/bin/nginx"
            chmod +x "$W/bin/nginx"
            echo 'events {}' > "$W/nginx.conf"
            echo ok > "$W/healthcheck"
            """
        ),
        f="healthcheck endpoint not responding",
        server=True,
        tools=("curl",),
        note="`nginx -t` is a stand-in in $W/bin that tests $W/nginx.conf; the subshell's `exit 2` ends the block under set -e",
    ),
    m(
        "bot-healthcheck-pid-in-proc-sh-e",
        "efpi-bot/ytpmvbot:healthcheck.sh",
        "exit",
        "en",
        r"""
        set -e

        PID=$(cat "$W/bot/bot.pid")

        if [ -n "$PID" ] && [ -e "$W/proc/$PID" ]; then
            echo "Bot is running on PID $PID"
            exit 0
        else
            echo "Bot not running" >&2
            exit 1
        fi
        """,
        r"""mkdir -p "$W/bot" "$W/proc/4242" && echo 4242 > "$W/bot/bot.pid" """,
        r"""mkdir -p "$W/bot" "$W/proc" && echo 4242 > "$W/bot/bot.pid" """,
        r"""mkdir -p "$W/bot" "$W/proc/4242" && echo 4242 > "$W/bot/bot.pid" """,
        p="Bot is running on PID 4242",
        note="`#!/bin/sh -e` became `set -e`; /proc became $W/proc (no real process in a world)",
    ),
    m(
        "environs-status-subshell-chain-kill-0-not-defunct",
        "andrii-suse/environs:.product/ng/system2/status.sh",
        "exit",
        "en",
        r"""
        set -e
        [ -f "$W/.pid" ] || ( >&2 echo Pid file not found "$W/.pid"; exit 1 )

        ( [ -d "$W/proc/$(cat "$W/.pid")" ] && ! cat "$W/proc/$(cat "$W/.pid")/status" | grep -q defunc && echo nginx seems running ) || ( >&2 echo nginx seems be down; exit 1 )
        """,
        r"""mkdir -p "$W/proc/4242" && echo 4242 > "$W/.pid" && echo "S (sleeping)" > "$W/proc/4242/status" """,
        r"""mkdir -p "$W/proc/4242" && echo 4242 > "$W/.pid" && echo "Z (zombie) <defunct>" > "$W/proc/4242/status" """,
        r"""mkdir -p "$W/proc/4242" && echo 4242 > "$W/.pid" && echo "S (sleeping)" > "$W/proc/4242/status" """,
        p="nginx seems running",
        note="`kill -0 PID` became `[ -d $W/proc/PID ]` and `ps -p PID | grep -q defunc` a grep of its status file",
    ),
    m(
        "redis-ping-local-failure-branch-echoes-reply",
        "EthVM/EthVM:terraform/cluster/3-deployment/services/redis/ping_local.sh",
        "failure-branch",
        "en",
        r"""
        REDIS_PORT=6379
        response=$("$W/bin/redis-cli" -h localhost -p $REDIS_PORT ping)

        if [ "$response" != "PONG" ]; then
          echo "$response"
          exit 1
        fi
        """,
        _FAKE_REDIS_CLI + "\necho PONG > \"$W/redis.reply\"",
        _FAKE_REDIS_CLI + "\necho 'LOADING Redis is loading the dataset in memory' > \"$W/redis.reply\"",
        _FAKE_REDIS_CLI + "\necho PONG > \"$W/redis.reply\"",
        f="LOADING Redis is loading the dataset in memory",
        note="redis-cli is a stand-in answering $W/redis.reply; silent when the check holds",
    ),
    m(
        "redis-liveness-two-accepted-replies",
        "ergon/airlock-microgateway-tutorials:.templates/redis/config/ping_liveness_master.sh",
        "failure-branch",
        "en",
        r"""
        REDIS_MASTER_HOST=localhost
        REDIS_MASTER_PORT_NUMBER=6379
        response=$(
          timeout -s 3 5 \
          "$W/bin/redis-cli" \
            -h $REDIS_MASTER_HOST \
            -p $REDIS_MASTER_PORT_NUMBER \
            ping
        )
        if [ "$response" != "PONG" ] && [ "$response" != "LOADING Redis is loading the dataset in memory" ]; then
          echo "$response"
          exit 1
        fi
        """,
        _FAKE_REDIS_CLI + "\necho 'LOADING Redis is loading the dataset in memory' > \"$W/redis.reply\"",
        _FAKE_REDIS_CLI + "\necho 'MASTERDOWN Link with MASTER is down' > \"$W/redis.reply\"",
        _FAKE_REDIS_CLI + "\necho PONG > \"$W/redis.reply\"",
        f="MASTERDOWN Link with MASTER is down",
        note="the held world answers LOADING (the second accepted reply); the timeout argument $1 became 5",
    ),
    m(
        "efak-healthcheck-zh-404-branch",
        "seawenc/efak:docker/healthcheck.sh",
        "failure-branch",
        "zh",
        r"""
        STATUS=`curl -i --connect-timeout 3 "http://127.0.0.1:$HTTP_PORT/ke"`
        _RET=$?
        if [ $_RET != 0 ]; then
          echo '' > "$W/logs/log.log"
          exit 1
        fi
        STATUS=`echo $STATUS | head -1 | awk '{print $2'}`
        if [ "$STATUS" == '404' ]; then
          echo '当前状态为404，不正常'
          echo '' > "$W/logs/log.log"
          exit 1
        fi
        echo "正常"
        echo "status=$STATUS"
        exit 0
        """,
        r"""mkdir -p "$W/logs" && echo efak > "$W/ke" """,
        r"""mkdir -p "$W/logs" """,
        r"""mkdir -p "$W/logs" && echo efak > "$W/ke" """,
        p="正常",
        f="当前状态为404，不正常",
        server=True,
        tools=("curl",),
        note="the author's `ps -ef | grep tail | … | xargs kill -9` (restart the container) was dropped from both branches",
    ),
    m(
        "existiert-datei-exit-0-else-exit-1-de",
        "dozent2018/IFA_LINUX_DEV:existiert_datei.sh",
        "exit",
        "de",
        r"""
        cd "$W"
        set -- app.conf
        if [ -e $1 ]
        then
            echo $1 existiert
            exit 0
        fi
        echo $1 existiert nicht
        exit 1
        """,
        r"""echo port=80 > "$W/app.conf" """,
        r""":""",
        r"""echo port=80 > "$W/app.conf" """,
        p="app.conf existiert",
        f="app.conf existiert nicht",
        note="the argument became `set -- app.conf` after `cd $W`, so the message names a relative path",
    ),
    # ================================================================ CI smoke tests
    m(
        "roakit-smoke-two-dollar-question-branches-printf-colours",
        "Didlybom/roakit-remix:scripts/smoke-test.sh",
        "failure-branch",
        "en",
        r"""
        GREEN='\033[0;32m'
        RED='\033[0;31m'
        RESET='\033[0m'
        info_page=$(curl --fail-with-body -sS "http://127.0.0.1:$HTTP_PORT/info")
        if [ $? -ne 0 ]; then
            printf "${RED}⚠  smoke test:${RESET} ERROR (curl)\n"
            exit 1
        fi
        echo $info_page | grep '© Roakit' > /dev/null
        if [ $? -ne 0 ]; then
            printf "${RED}⚠  smoke test:${RESET} ERROR (unexpected response)\n"
            exit 1
        fi
        printf "${GREEN}✔  smoke test:${RESET} OK\n"
        """,
        r"""echo '<footer>© Roakit 2024</footer>' > "$W/info" """,
        r"""echo '<footer>maintenance</footer>' > "$W/info" """,
        r"""echo '<footer>© Roakit 2024</footer>' > "$W/info" """,
        p="\x1b[0;32m✔  smoke test:\x1b[0m OK",
        f="\x1b[0;31m⚠  smoke test:\x1b[0m ERROR (unexpected response)",
        server=True,
        tools=("curl",),
    ),
    m(
        "cryptobeam-smoke-set-e-two-curls-then-ok",
        "REDDNoC/cryptobeam-exchange:scripts/smoke.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        curl -fsS "http://127.0.0.1:$HTTP_PORT/health" >/dev/null
        curl -fsS "http://127.0.0.1:$HTTP_PORT/ready"  >/dev/null
        echo "smoke: ok"
        """,
        r"""echo ok > "$W/health" && echo ok > "$W/ready" """,
        r"""echo ok > "$W/health" """,
        r"""echo ok > "$W/health" && echo ok > "$W/ready" """,
        p="smoke: ok",
        server=True,
        tools=("curl",),
        note="only set -e turns the second curl's failure into the block's",
    ),
    m(
        "devops-verify-set-e-test-or-subshell-exit",
        "SYimleang/DevOps-Portfolio:scripts/verify.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail

        echo "===> Verifying build output..."

        test -f "$W/dist/html/index.html" || (echo "Error: index.html not found!" && exit 1)

        echo "Verification passed!"
        """,
        r"""mkdir -p "$W/dist/html" && echo '<html></html>' > "$W/dist/html/index.html" """,
        r"""mkdir -p "$W/dist/html" """,
        r"""mkdir -p "$W/dist/html" && echo '<html></html>' > "$W/dist/html/index.html" """,
        p="Verification passed!",
        f="Error: index.html not found!",
        note="the subshell's `exit 1` ends the block only because of set -e",
    ),
    m(
        "verify-build-two-failure-branches-then-ls",
        "RaneemAbdulazez/North-Star2026:northstar-dashboard/verify_build.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        DIST_DIR="dist"
        if [ ! -d "$DIST_DIR" ]; then
          echo "❌ Error: '$DIST_DIR' directory not found after build."
          exit 1
        fi
        if [ ! -f "$DIST_DIR/index.html" ]; then
          echo "❌ Error: 'index.html' not found in '$DIST_DIR'."
          exit 1
        else
          echo "✅ Success: 'index.html' found in '$DIST_DIR'."
        fi
        echo "📂 Contents of '$DIST_DIR':"
        ls -F "$DIST_DIR"
        """,
        r"""mkdir -p "$W/dist/assets" && echo '<html></html>' > "$W/dist/index.html" """,
        r""":""",
        r"""mkdir -p "$W/dist/assets" && echo '<html></html>' > "$W/dist/index.html" """,
        p="✅ Success: 'index.html' found in 'dist'.",
        f="❌ Error: 'dist' directory not found after build.",
        note="`cd $W` first, so the messages name the relative dist/ as the author's did",
    ),
    m(
        "check-build-silent-failure-branch",
        "City-of-Helsinki/bestpractice:check_build.sh",
        "failure-branch",
        "en",
        r"""
        set -eo pipefail

        if [ ! -f "$W/public/index.html" ]; then
            echo "Site root not found!"
            exit 1
        fi
        """,
        r"""mkdir -p "$W/public" && echo '<html></html>' > "$W/public/index.html" """,
        r"""mkdir -p "$W/public" """,
        r"""mkdir -p "$W/public" && echo '<html></html>' > "$W/public/index.html" """,
        f="Site root not found!",
    ),
    m(
        "reachability-status-code-regex-failure-branches",
        "farm-service/backend:tests/reachability_test.sh",
        "failure-branch",
        "en",
        r"""
        URL="http://127.0.0.1:$HTTP_PORT/api/v1/test"
        STATUS_CODE=$(curl -o /dev/null -s -w "%{http_code}\n" "$URL")
        if [ $? -ne 0 ]; then
          echo "Error: Failed to reach $URL"
          exit 1
        fi
        if [[ ! $STATUS_CODE =~ ^2 ]]; then
          echo "Error: Received HTTP status code $STATUS_CODE"
          exit 1
        fi
        echo "Success: Received HTTP status code $STATUS_CODE"
        """,
        r"""mkdir -p "$W/api/v1" && echo ok > "$W/api/v1/test" """,
        r"""mkdir -p "$W/api/v1" """,
        r"""mkdir -p "$W/api/v1" && echo ok > "$W/api/v1/test" """,
        p="Success: Received HTTP status code 200",
        f="Error: Received HTTP status code 404",
        server=True,
        tools=("curl",),
        note="the lines went to $GITHUB_STEP_SUMMARY; here they go to stdout",
    ),
    m(
        "strapi-smoke-fail-branch-then-pass",
        "gabrielrufino/docker-compose.yml:tests/smoke/strapi.sh",
        "failure-branch",
        "en",
        r"""
        echo "[Smoke] - Strapi\n"

        HTTP_STATUS=$(curl -o /dev/null -s -w "%{http_code}\n" "http://127.0.0.1:$HTTP_PORT/admin")
        if [ $HTTP_STATUS -ne 200  ];
          then
            echo "[Fail]"
            exit 1
        fi

        echo "[Pass]"
        """,
        r"""echo strapi > "$W/admin" """,
        r""":""",
        r"""echo strapi > "$W/admin" """,
        p="[Pass]",
        f="[Fail]",
        server=True,
        tools=("curl",),
        note="`docker-compose up -d`, `sleep 30` and the two `docker-compose down` were dropped",
    ),
    m(
        "tiup-detect-error-log-count-failure-branch",
        "pingcap/tiup:tests/tiup-cluster/script/detect_error.sh",
        "failure-branch",
        "en",
        r"""
        set -eu

        err_num=$(find "$W/logs" -name "*.log" -exec grep "\[ERROR\]" {} \; | wc -l)
        if [ ${err_num} != "0" ]; then
          echo ${err_num}
          exit 1
        fi

        echo "no error log found"
        """,
        r"""mkdir -p "$W/logs" && echo '[INFO] started' > "$W/logs/tidb.log" """,
        r"""mkdir -p "$W/logs" && printf '[INFO] started\n[ERROR] region unavailable\n' > "$W/logs/tidb.log" """,
        r"""mkdir -p "$W/logs" && sed -i '/\[ERROR\]/d' "$W/logs/tidb.log" 2>/dev/null || echo '[INFO] started' > "$W/logs/tidb.log" """,
        p="no error log found",
        f="1",
        note="./ became $W/logs; the failure line is the bare count",
    ),
    m(
        "concord-err-logs-message-only",
        "vmware/concord-bft:.github/success_action_if_err_logs_exist.sh",
        "message",
        "en",
        r"""
        set -e

        file_name=err_logs
        file_count=$(find "$W/replicas" -name $file_name | wc -l)

        if [[ $file_count -gt 0 ]]; then
            echo -e "\033[31mERROR/FATAL logs found in below paths. Please check artifacts\033[m"
            echo -e "$(find "$W/replicas" -type f -name err_logs)"
        else
            echo "File not found"
        fi
        """,
        r"""mkdir -p "$W/replicas/r1" """,
        r"""mkdir -p "$W/replicas/r1" && echo 'FATAL: view change' > "$W/replicas/r1/err_logs" """,
        r"""mkdir -p "$W/replicas" && find "$W/replicas" -name err_logs -delete""",
        p="File not found",
        f="\x1b[31mERROR/FATAL logs found in below paths. Please check artifacts\x1b[m",
        note="${1} and the second find's `.` became $W/replicas; the pass line reads 'File not found'",
    ),
    m(
        "stellar-gogenerate-git-diff-exit-code-or-subshell",
        "stellar/go:gogenerate.sh",
        "exit",
        "en",
        r"""
        set -e
        cd "$W/repo"

        printf "Checking for no diff...\n"
        git diff --exit-code || (echo "Files changed after running go generate. Run go generate ./... locally and update generated files." && exit 1)
        """,
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'package gen' > gen.go && git add gen.go
            git -c user.name=w -c user.email=w@example.invalid commit -qm gen
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'package gen' > gen.go && git add gen.go
            git -c user.name=w -c user.email=w@example.invalid commit -qm gen
            echo '// regenerated' >> gen.go
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            if [ -d .git ]; then git checkout -q -- . 2>/dev/null || true; fi
            if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then
              git init -q . && echo 'package gen' > gen.go && git add gen.go
              git -c user.name=w -c user.email=w@example.invalid commit -qm gen
            fi
            """
        ),
        f="Files changed after running go generate. Run go generate ./... locally and update generated files.",
        tools=("git",),
        note="`go generate ./...` dropped: the world's working tree is what it left behind",
    ),
    m(
        "numaresources-verify-generated-porcelain-failure-branch",
        "openshift-kni/numaresources-operator:hack/verify-generated.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W/repo"
        if [[ -n "$(git status --untracked-files=no --porcelain .)" ]]; then
                echo "uncommitted generated files. run 'make generate' and commit results."
                echo "$(git status --untracked-files=no --porcelain .)"
                exit 1
        fi
        """,
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'kind: CRD' > crd.yaml && git add crd.yaml
            git -c user.name=w -c user.email=w@example.invalid commit -qm crd
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'kind: CRD' > crd.yaml && git add crd.yaml
            git -c user.name=w -c user.email=w@example.invalid commit -qm crd
            echo 'version: v2' >> crd.yaml
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            if [ -d .git ]; then git checkout -q -- . 2>/dev/null || true; fi
            if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then
              git init -q . && echo 'kind: CRD' > crd.yaml && git add crd.yaml
              git -c user.name=w -c user.email=w@example.invalid commit -qm crd
            fi
            """
        ),
        f="uncommitted generated files. run 'make generate' and commit results.",
        tools=("git",),
    ),
    m(
        "edgehog-check-diff-if-not-capture-failure-branch",
        "rgallor/edgehog-device-forwarder-proto:scripts/check_diff.sh",
        "failure-branch",
        "en",
        r"""
        set -exEuo pipefail
        cd "$W/repo"

        if ! DIFF=$(git diff --exit-code)
        then
            echo "differences between the generated files" >&2
            echo "$DIFF"
            exit 1
        fi
        """,
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'syntax = "proto3";' > msg.pb && git add msg.pb
            git -c user.name=w -c user.email=w@example.invalid commit -qm proto
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'syntax = "proto3";' > msg.pb && git add msg.pb
            git -c user.name=w -c user.email=w@example.invalid commit -qm proto
            echo 'message Ping {}' >> msg.pb
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            if [ -d .git ]; then git checkout -q -- . 2>/dev/null || true; fi
            if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then
              git init -q . && echo 'syntax = "proto3";' > msg.pb && git add msg.pb
              git -c user.name=w -c user.email=w@example.invalid commit -qm proto
            fi
            """
        ),
        f="+message Ping {}",
        tools=("git",),
        note="the failure branch's line is the diff itself",
    ),
    m(
        "aepc-verify-goldens-if-git-diff-quiet",
        "aep-dev/aepc:scripts/verify-goldens.sh",
        "exit",
        "en",
        r"""
        cd "$W/repo"
        if git diff --quiet --exit-code; then
            echo "No differences found."
        else
            echo "Differences found.";
            exit 1;
        fi
        """,
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'openapi: 3.1.0' > golden.yaml && git add golden.yaml
            git -c user.name=w -c user.email=w@example.invalid commit -qm golden
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            git init -q . && echo 'openapi: 3.1.0' > golden.yaml && git add golden.yaml
            git -c user.name=w -c user.email=w@example.invalid commit -qm golden
            echo 'paths: {}' >> golden.yaml
            """
        ),
        sh(
            r"""
            mkdir -p "$W/repo" && cd "$W/repo"
            if [ -d .git ]; then git checkout -q -- . 2>/dev/null || true; fi
            if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then
              git init -q . && echo 'openapi: 3.1.0' > golden.yaml && git add golden.yaml
              git -c user.name=w -c user.email=w@example.invalid commit -qm golden
            fi
            """
        ),
        p="No differences found.",
        f="Differences found.",
        tools=("git",),
        note="`./scripts/regenerate_all.sh` dropped: the world's working tree is what it left behind",
    ),
    # ================================================================ status scripts that speak only through messages
    m(
        "process-count-if-eq-0-not-running-else-running",
        "bergmann-max/simple-bash-scripting-examples:is_something_running.sh",
        "message",
        "en",
        r"""
        PROCESS="example_script.sh"

        RESULT=$(grep --ignore-case "$PROCESS" "$W/processes" | grep --count --invert-match "grep" )
        if [ "$RESULT" -eq 0 ] ; then
                echo "${PROCESS} is not running"
        else
                echo "${PROCESS} is running"
        fi
        """,
        r"""echo "4242 bash example_script.sh" > "$W/processes" """,
        r"""echo "1 /sbin/init" > "$W/processes" """,
        r"""echo "4242 bash example_script.sh" > "$W/processes" """,
        p="example_script.sh is running",
        f="example_script.sh is not running",
        note="`pgrep --ignore-case` became a grep over the process list $W/processes",
    ),
    m(
        "ps-grep-result-nonempty-running-else-not-running",
        "Gaxpert/dotfiles:scripts/checkRunningProcess.sh",
        "message",
        "en",
        r"""
        set -o nounset
        SVC=nginx
        ps_out=`cat "$W/ps-ef" | grep $SVC | grep -v 'grep'`
        result=$(echo $ps_out | grep "$SVC")
        if [[ "$result" != "" ]];then
            echo "Running"
        else
            echo "Not Running"
        fi
        """,
        r"""echo "root 4242 1 0 09:00 ? 00:00:00 nginx: master process" > "$W/ps-ef" """,
        r"""echo "root 1 0 0 09:00 ? 00:00:01 /sbin/init" > "$W/ps-ef" """,
        r"""echo "root 4242 1 0 09:00 ? 00:00:00 nginx: master process" > "$W/ps-ef" """,
        p="Running",
        f="Not Running",
        note="`ps -ef` became $W/ps-ef; `$1` became SVC; `grep -v $0` dropped (under Director $0 is the shell)",
    ),
    m(
        "sed-n-match-default-null-not-running",
        "egaoneko/til:Server/bash-script-to-check-running-process.md",
        "message",
        "en",
        r"""
        SERVICE="nginx"
        RESULT=`cat "$W/ps-a" | sed -n /${SERVICE}/p`

        if [ "${RESULT:-null}" = null ]; then
            echo "not running"
        else
            echo "running"
        fi
        """,
        r"""echo " 4242 pts/0    00:00:00 nginx" > "$W/ps-a" """,
        r"""echo " 4300 pts/0    00:00:00 bash" > "$W/ps-a" """,
        r"""echo " 4242 pts/0    00:00:00 nginx" > "$W/ps-a" """,
        p="running",
        f="not running",
        note="`ps -a` became $W/ps-a; `$1` became SERVICE",
    ),
    m(
        "if-pgrep-process-start-else-not-start",
        "tima297/Works_BMSTU:Labworks/Bash/check_process.sh",
        "message",
        "en",
        r"""
        process_name=nginx
        if "$W/bin/pgrep" "$process_name";
        then
        echo "Process start"
        else
        echo "Process is not start"
        fi
        """,
        _FAKE_PGREP + '\necho "4242 nginx" > "$W/procs"',
        _FAKE_PGREP + '\necho "1 init" > "$W/procs"',
        _FAKE_PGREP + '\necho "4242 nginx" > "$W/procs"',
        p="Process start",
        f="Process is not start",
        note="pgrep is a stand-in over $W/procs; the usage guard on $# dropped",
    ),
    m(
        "python-verify-then-dollar-question-message",
        "binpash/benchmarks:vps-audit/verify.sh",
        "message",
        "en",
        r"""
        # run the Python script
        python3 "$W/verify.py"

        # check if the script ran successfully
        if [ $? -eq 0 ]; then
          echo "verify.py ran successfully."
        else
          echo "verify.py encountered an error."
        fi
        """,
        _VERIFY_PY + """\necho '{"ssh_root_login": "no"}' > "$W/audit.json\"""",
        _VERIFY_PY + """\necho '{"ssh_root_login": "yes"}' > "$W/audit.json\"""",
        _VERIFY_PY + """\necho '{"ssh_root_login": "no"}' > "$W/audit.json\"""",
        p="verify.py ran successfully.",
        f="verify.py encountered an error.",
        tools=("python3",),
        note="verify.py is written by the world and audits $W/audit.json",
    ),
    m(
        "roboshop-head-stat-functions-echo-n-literal-escapes",
        "Nandi1989/DEVOPS:Roboshop/components/Common.sh",
        "message",
        "en",
        r"""
        HEAD() { echo -n "\e[32m $1 \e[0m \t\t"; }
        STAT() {
          if [ $? -eq 0 ];  then
            echo -e "\e[31m done \e[0m"
          else
            echo -e "\e[31m fail \e[0m"
          fi
        }
        HEAD "nginx config"
        grep -q '^ *listen 80;' "$W/nginx.conf"
        STAT $?
        HEAD "html root"
        test -f "$W/html/index.html"
        STAT $?
        """,
        r"""mkdir -p "$W/html" && printf 'server {\n  listen 80;\n}\n' > "$W/nginx.conf" && echo hi > "$W/html/index.html" """,
        r"""printf 'server {\n  listen 8080;\n}\n' > "$W/nginx.conf" """,
        r"""mkdir -p "$W/html" && printf 'server {\n  listen 80;\n}\n' > "$W/nginx.conf" && echo hi > "$W/html/index.html" """,
        p="\\e[32m nginx config \\e[0m \\t\\t\x1b[31m done \x1b[0m",
        f="\\e[32m nginx config \\e[0m \\t\\t\x1b[31m fail \x1b[0m",
        note="the author's steps were `yum install`, `unzip`…; here each HEAD/STAT pair wraps a probe. "
        "`echo -n` prints its `\\e` literally; STAT reads $? and never exits",
    ),
    m(
        "ready-check-command-only-last-return-counts",
        "utisam/ready:lib/ready/output.sh",
        "message",
        "en",
        r"""
        out_title () { echo -n "$* ... "; }
        out_ok () { echo -e "\033[32mOK\033[00m"; }
        out_ng () { echo -e "\033[41mNG\033[00m"; READY_RESULT=1; }
        check_command() {
            out_title "Command: $1"
            if command -v "$W/bin/$1" > /dev/null; then
                out_ok
                return 0
            else
                out_ng
                return 1
            fi
        }
        check_command hugo
        check_command git
        """,
        _tool("hugo", "hugo v0.121.0") + "\n" + _tool("git", "git version 2.43.0"),
        _tool("git", "git version 2.43.0"),
        _tool("hugo", "hugo v0.121.0") + "\n" + _tool("git", "git version 2.43.0"),
        p="Command: hugo ... \x1b[32mOK\x1b[00m",
        f="Command: hugo ... \x1b[41mNG\x1b[00m",
        note="out_* from lib/ready/output.sh, check_command from lib/ready/check_command.sh (its function bodies "
        "folded on one line); only the last call's return reaches the block's status",
    ),
    m(
        "sha256-ternary-ok-or-fail",
        "Rayen-JN/holbertonschool-cyber_security:cybersecurity_basics/0x00_introduction_cybersecurity/2-sha256_validator.sh",
        "message",
        "en",
        r"""
        cd "$W"
        set -- release.tar.gz "$(cat release.sha256)"
        [ "$(sha256sum $1 | awk '{print $1}')" == "$2" ] && echo "$1: OK" || echo "$1: FAIL"
        """,
        r"""cd "$W" && printf v1 > release.tar.gz && sha256sum release.tar.gz | awk '{print $1}' > release.sha256""",
        r"""cd "$W" && printf v1 > release.tar.gz && sha256sum release.tar.gz | awk '{print $1}' > release.sha256 && printf v2 > release.tar.gz""",
        r"""cd "$W" && printf v1 > release.tar.gz && sha256sum release.tar.gz | awk '{print $1}' > release.sha256""",
        p="release.tar.gz: OK",
        f="release.tar.gz: FAIL",
        note="the arguments $1 $2 became `set -- file \"$(cat its .sha256)\"` in $W",
    ),
    m(
        "check-service-zh-if-elif-restart-message",
        "TheSmurfs/shellscripts:check_service.sh",
        "message",
        "zh",
        r"""
        check_service() {
        for i in $@; do
            if "$W/bin/service" $i status &>/dev/null
            then
                echo "$i状态正常"
            elif "$W/bin/chkconfig" --list $i &> /dev/null
            then
                "$W/bin/service" $i restart &>/dev/null
                (($?==0)) && echo "$i重启后已经ok" || echo "$i服务有问题"
            else
                echo "$i服务不存在"
            fi
        done
        }
        check_service nginx
        """,
        _FAKE_SERVICE + '\necho active > "$W/units/nginx" && touch "$W/init.d/nginx"',
        _FAKE_SERVICE + '\necho failed > "$W/units/nginx" && touch "$W/init.d/nginx"',
        _FAKE_SERVICE + '\necho active > "$W/units/nginx" && touch "$W/init.d/nginx"',
        p="nginx状态正常",
        f="nginx服务有问题",
        note="service/chkconfig are stand-ins over $W/units and $W/init.d; the restart is refused (no root)",
    ),
    m(
        "dingdong-check-zh-ps-grep-awk-pid",
        "gordonyellow/dingdong:server/shell/check.sh",
        "message",
        "zh",
        r"""
        pid=`cat "$W/ps-ef" | grep -v grep | grep "python3" | grep "dingdong.py" | awk '{print $2}'`
        if [ "$pid" = "" ]; then
            echo "服务未启动"
            sh "$W/start.sh"
        else
          echo "服务已启动...,pid=${pid}"
        fi
        """,
        r"""echo 'echo starting dingdong' > "$W/start.sh" && echo "root 4242 1 0 09:00 ? 00:00:03 python3 /opt/dingdong/dingdong.py" > "$W/ps-ef" """,
        r"""echo 'echo starting dingdong' > "$W/start.sh" && echo "root 1 0 0 09:00 ? 00:00:01 /sbin/init" > "$W/ps-ef" """,
        r"""echo 'echo starting dingdong' > "$W/start.sh" && echo "root 4242 1 0 09:00 ? 00:00:03 python3 /opt/dingdong/dingdong.py" > "$W/ps-ef" """,
        p="服务已启动...,pid=4242",
        f="服务未启动",
        note="`ps -ef` became $W/ps-ef; the author's start.sh is the world's (it only says it starts)",
    ),
    m(
        "systemctl-is-active-es-alerta-then-log",
        "ErnestoJuarez2708/Practica-BASH---Primer-Parcial-Dev-Ops:level_1/check_service.sh",
        "message",
        "es",
        r"""
        SERVICE=nginx
        STATUS=$("$W/bin/systemctl" is-active $SERVICE)

        if [ "$STATUS" == "active" ]; then
            echo "El servicio $SERVICE está activo."
            RESULT="activo"
        else
            echo "ALERTA: El servicio $SERVICE no está activo!"
            RESULT="inactivo"
        fi

        # Guardar en log
        echo "$SERVICE: $RESULT" >> "$W/service_status.log"
        """,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho failed > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        p="El servicio nginx está activo.",
        f="ALERTA: El servicio nginx no está activo!",
        note="systemctl is a stand-in over $W/units; `$1` became SERVICE",
    ),
    m(
        "systemctl-status-hr-nije-pokrenut",
        "nnizic/OS_Vjezbe:Vjezba_5/Zadatak_5/start_service.sh",
        "message",
        "hr",
        r"""
        set -- nginx
        "$W/bin/systemctl" status $1
        if [ $? -ne 0 ]; then
          echo "Servis $1 nije pokrenut."
        else
          echo "Servis $1 je pokrenut."
        fi
        """,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho inactive > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        p="Servis nginx je pokrenut.",
        f="Servis nginx nije pokrenut.",
        note="systemctl is a stand-in over $W/units; the argument became `set -- nginx`",
    ),
    m(
        "head-status-line-substring-success-deploy",
        "vadim8kiselev/isodenv:scripts/lib/health_check.sh",
        "message",
        "en",
        r"""
        HEALTHCHECK_URL="http://127.0.0.1:$HTTP_PORT/health"

        success=$(curl -Is $HEALTHCHECK_URL | head -n 1)

        if [ "$success" != "" ]
        then
          success=${success: -3:-1}
        fi

        if [ "$success" = "OK" ]
        then
            echo "Success deploy."
        else
            echo "Failed deploy."
        fi
        """,
        r"""echo up > "$W/health" """,
        r""":""",
        r"""echo up > "$W/health" """,
        p="Success deploy.",
        f="Failed deploy.",
        server=True,
        tools=("curl",),
        note="`${success: -3:-1}` cuts 'OK' out of 'HTTP/1.0 200 OK\\r'",
    ),
    m(
        "service-status-fr-active-exits-1",
        "Cyril29M/linux-scripts:status.sh",
        "exit",
        "fr",
        _CYRIL_STATUS,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx" && echo running > "$W/units/nginx.sub"',
        _FAKE_SYSTEMCTL + '\necho inactive > "$W/units/nginx" && echo dead > "$W/units/nginx.sub"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx" && echo running > "$W/units/nginx.sub"',
        p="nginx : Le service est en fontion",
        f="nginx : Le service n'est pas actif",
        note="systemctl is a stand-in over $W/units; `$1` became service=nginx",
    ),
    m(
        "service-status-fr-inner-substate-only-speaks",
        "Cyril29M/linux-scripts:status.sh",
        "message",
        "fr",
        _CYRIL_STATUS,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx" && echo running > "$W/units/nginx.sub"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx" && echo exited > "$W/units/nginx.sub"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx" && echo running > "$W/units/nginx.sub"',
        p="nginx : Le service est en fontion",
        f="nginx : Le service n'est pas en fontion",
        note="the same block as service-status-fr-active-exits-1: its inner if on SubState never exits",
    ),
    m(
        "lab-check-return-outside-function-or-true",
        "avinash-ingle-sre/docker_demo_avi:check_service.sh",
        "message",
        "en",
        r"""
        echo "🔍 Service Status Check"
        echo "======================"

        service_name="web-api"
        echo "Checking $service_name..."

        if [ "$(cat "$W/web-api.status" 2>/dev/null)" != "up" ]; then
            echo "❌ $service_name: DOWN"
            # In lab environment, don't exit - just return error
            return 1 2>/dev/null || true
        else
            echo "✅ $service_name: UP"
            return 0 2>/dev/null || true
        fi
        """,
        r"""echo up > "$W/web-api.status" """,
        r"""echo down > "$W/web-api.status" """,
        r"""echo up > "$W/web-api.status" """,
        p="✅ web-api: UP",
        f="❌ web-api: DOWN",
        note="`$((RANDOM % 3)) -eq 0` (a simulated check) became a status file; `return` outside a function fails "
        "and `|| true` makes the block exit 0",
    ),
    m(
        "launchctl-loop-three-marks",
        "buddhacoder/med-translate:status.sh",
        "message",
        "en",
        r"""
        for svc in backend frontend tunnel; do
          STATUS=$(cat "$W/launchctl-list" | grep "medtranslate-${svc}" | awk '{print $1}')
          if [ -n "$STATUS" ]; then
            if [ "$STATUS" = "-" ] || [ "$STATUS" = "0" ]; then
              echo "  ✅ ${svc}: running"
            else
              echo "  ❌ ${svc}: error (code: $STATUS)"
            fi
          else
            echo "  ⚫ ${svc}: not loaded"
          fi
        done
        """,
        sh(
            r"""
            printf '%s\t%s\t%s\n' - 0 com.user.medtranslate-backend - 0 com.user.medtranslate-frontend \
              - 0 com.user.medtranslate-tunnel > "$W/launchctl-list"
            """
        ),
        sh(
            r"""
            printf '%s\t%s\t%s\n' - 0 com.user.medtranslate-backend - 0 com.user.medtranslate-frontend \
              78 1 com.user.medtranslate-tunnel > "$W/launchctl-list"
            """
        ),
        sh(
            r"""
            printf '%s\t%s\t%s\n' - 0 com.user.medtranslate-backend - 0 com.user.medtranslate-frontend \
              - 0 com.user.medtranslate-tunnel > "$W/launchctl-list"
            """
        ),
        p="✅ tunnel: running",
        f="❌ tunnel: error (code: 78)",
        note="`launchctl list` became $W/launchctl-list",
    ),
    m(
        "zimbra-status-awk-nr1-last-field",
        "kzltp/grafana_zimbra:checkzimbrastatus.sh",
        "message",
        "en",
        r"""
        set -- mailbox
        status=$(cat "$W/status.tmp" | grep $1| grep -v Host | awk 'NR==1{print $NF}')

        if [[ $status == Running ]];
        then
          echo "Running"
        else
         echo "Stopped"
        fi
        """,
        r"""printf 'Host mail.example.org\n\tmailbox                 Running\n\tmta                     Running\n' > "$W/status.tmp" """,
        r"""printf 'Host mail.example.org\n\tmailbox                 Stopped\n\tmta                     Running\n' > "$W/status.tmp" """,
        r"""printf 'Host mail.example.org\n\tmailbox                 Running\n\tmta                     Running\n' > "$W/status.tmp" """,
        p="Running",
        f="Stopped",
        note="/tmp/status.tmp (a saved `zmcontrol status`) became $W/status.tmp; the argument became `set -- mailbox`",
    ),
    m(
        "disk-usage-lt-threshold-message",
        "devopsdelivery/yoda:shell/students/helena-pereira/lab4.sh",
        "message",
        "en",
        r"""
        USAGE=$(cat "$W/df.out" | grep / | awk '{ print $5 }' | sed 's/%//')
        THRESHOLD=80

        if [ "$USAGE" -lt "$THRESHOLD" ]; then
            echo "Disk usage ok. Current usage: $USAGE"
        else
            echo "Warning: Disk usage is above $THRESHOLD. Current usage: $USAGE"
        fi
        """,
        r"""printf 'Filesystem 1K-blocks Used Available Use%% Mounted on\n/dev/sda1 100 42 58 42%% /\n' > "$W/df.out" """,
        r"""printf 'Filesystem 1K-blocks Used Available Use%% Mounted on\n/dev/sda1 100 91 9 91%% /\n' > "$W/df.out" """,
        r"""printf 'Filesystem 1K-blocks Used Available Use%% Mounted on\n/dev/sda1 100 42 58 42%% /\n' > "$W/df.out" """,
        p="Disk usage ok. Current usage: 42",
        f="Warning: Disk usage is above 80. Current usage: 91",
        note="`df /` became the saved output $W/df.out",
    ),
    m(
        "disk-capacity-gt-threshold-message-cut",
        "Ehsan-ES/DevOps:system-monitor/disk_check.sh",
        "message",
        "en",
        r"""
        THRESHOLD=80

        USAGE=$(cat "$W/df-h.out" | grep -v Filesystem | awk '{print $5}' | cut -d'%' -f1)

        if [ $USAGE -gt $THRESHOLD ];then
            echo "WARNING: DISK CAPACITY IS $USAGE% !!"
        else
            echo "DISK CAPACITY HAS NOT PROBLEM : $USAGE%"
        fi
        """,
        r"""printf 'Filesystem Size Used Avail Use%% Mounted on\n/dev/sda1 20G 8.4G 12G 42%% /\n' > "$W/df-h.out" """,
        r"""printf 'Filesystem Size Used Avail Use%% Mounted on\n/dev/sda1 20G 18G 2G 91%% /\n' > "$W/df-h.out" """,
        r"""printf 'Filesystem Size Used Avail Use%% Mounted on\n/dev/sda1 20G 8.4G 12G 42%% /\n' > "$W/df-h.out" """,
        p="DISK CAPACITY HAS NOT PROBLEM : 42%",
        f="WARNING: DISK CAPACITY IS 91% !!",
        note="`df -h /` became the saved output $W/df-h.out",
    ),
    m(
        "backup-compare-find-mmin-du-function",
        "GihFernandes/verify-backup-sh:verify_backup-daily.sh",
        "message",
        "en",
        r"""
        cd "$W/backup-daily/"
        new_backup_name=$(find . -mmin -480 -name "*.tar.gz" | sort -nr | sed '1!d' | awk {'print $1'} | sed 's|^./||')
        old_backup_name=$(find . -mmin -480 -name "*.tar.gz" | sort -nr | sed '2!d' | awk {'print $1'} | sed 's|^./||')
        new_backup_size=$(find . -name $new_backup_name -exec du {} + | awk {'print $1'})
        old_backup_size=$(find . -name $old_backup_name -exec du {} + | awk {'print $1'})
        function backup_compare(){
            if [ $new_backup_size -gt $old_backup_size ]
            then
                   echo "sucess"
            else
                    echo "error"
            fi
        }
        backup_compare
        """,
        r"""mkdir -p "$W/backup-daily" && head -c 20000 /dev/urandom > "$W/backup-daily/backup-01.tar.gz" && head -c 60000 /dev/urandom > "$W/backup-daily/backup-02.tar.gz" """,
        r"""mkdir -p "$W/backup-daily" && head -c 20000 /dev/urandom > "$W/backup-daily/backup-01.tar.gz" && head -c 4000 /dev/urandom > "$W/backup-daily/backup-02.tar.gz" """,
        r"""mkdir -p "$W/backup-daily" && head -c 20000 /dev/urandom > "$W/backup-daily/backup-01.tar.gz" && head -c 60000 /dev/urandom > "$W/backup-daily/backup-02.tar.gz" """,
        p="sucess",
        f="error",
        note="/home/backup-daily became $W/backup-daily: the newest backup must be bigger than the one before it",
    ),
    m(
        "ps-ax-grep-service-running-everything-fine",
        "cybernet/linux:sh/nginx.sh",
        "message",
        "en",
        r"""
        SERVICE=nginx
        if cat "$W/ps-ax" | grep -v grep | grep $SERVICE > /dev/null
        then
            echo "$SERVICE service running, everything is fine"
        else
            echo "$SERVICE is not running"
        fi
        """,
        r"""echo " 4242 ?        Ss     0:00 nginx: master process /usr/sbin/nginx" > "$W/ps-ax" """,
        r"""echo "    1 ?        Ss     0:01 /sbin/init" > "$W/ps-ax" """,
        r"""echo " 4242 ?        Ss     0:00 nginx: master process /usr/sbin/nginx" > "$W/ps-ax" """,
        p="nginx service running, everything is fine",
        f="nginx is not running",
        note="`ps ax` became $W/ps-ax; `grep -v $0` dropped (under Director $0 is the shell)",
    ),
    m(
        "ports-loop-pt-aberta-fechada",
        "PhilipeeX/shell_script:door_check.sh",
        "message",
        "pt",
        r"""
        host="127.0.0.1"
        portas=("80" "22" "443")

        for porta in "${portas[@]}"; do
                grep -qx "$porta" "$W/listening" > /dev/null 2>&1
                if [ $? -eq 0 ]; then
                        echo "porta $porta esta aberta em $host"
                else
                        echo "porta $porta está fechada em $host"
                fi
        done
        """,
        r"""printf '22\n80\n443\n' > "$W/listening" """,
        r"""printf '22\n80\n' > "$W/listening" """,
        r"""printf '22\n80\n443\n' > "$W/listening" """,
        p="porta 443 esta aberta em 127.0.0.1",
        f="porta 443 está fechada em 127.0.0.1",
        note="`nc -zv $host $porta` became a lookup in the world's list of listening ports $W/listening",
    ),
    m(
        "verify-install-ternaries-with-version-substitution",
        "madhusudan1026/data-extraction-tool:verify-install.sh",
        "message",
        "en",
        r"""
        echo "🔍 Verifying installations..."

        command -v "$W/bin/node" >/dev/null 2>&1 && echo "✅ Node.js: $("$W/bin/node" --version)" || echo "❌ Node.js not found"
        command -v "$W/bin/npm" >/dev/null 2>&1 && echo "✅ npm: $("$W/bin/npm" --version)" || echo "❌ npm not found"
        command -v "$W/bin/git" >/dev/null 2>&1 && echo "✅ Git: $("$W/bin/git" --version)" || echo "❌ Git not found"

        echo ""
        echo "🎯 All required tools installed!"
        """,
        "\n".join((_tool("node", "v20.11.1"), _tool("npm", "10.2.4"), _tool("git", "git version 2.43.0"))),
        "\n".join((_tool("node", "v20.11.1"), _tool("git", "git version 2.43.0"))),
        "\n".join((_tool("node", "v20.11.1"), _tool("npm", "10.2.4"), _tool("git", "git version 2.43.0"))),
        p="✅ npm: 10.2.4",
        f="❌ npm not found",
        note="each tool is a stand-in in $W/bin; the docker/code/brew lines dropped",
    ),
    m(
        "copy-check-de-errors-counter",
        "kindkains/skripte:Spielwiese/fehlerkontrolle_bei_kopierbefehl.sh",
        "message",
        "de",
        r"""
        errors=0
        fehler="ERROR: Es gab einen Fehler während des Kopiervorgangs!"
        erfolg="Kopiervorgang war erfolgreich!"

        cp "$W"/tmp/*.jpg "$W"/tmp/foobar/ || { echo "" && echo "${fehler}"; \
        ((errors++)); }

        echo ""

        if [ $errors -eq 0 ]
        then
        echo "${erfolg}"
        echo ""
        fi
        """,
        r"""mkdir -p "$W/tmp/foobar" && echo jpeg > "$W/tmp/a.jpg" """,
        r"""mkdir -p "$W/tmp" && echo jpeg > "$W/tmp/a.jpg" """,
        r"""mkdir -p "$W/tmp/foobar" && echo jpeg > "$W/tmp/a.jpg" """,
        p="Kopiervorgang war erfolgreich!",
        f="ERROR: Es gab einen Fehler während des Kopiervorgangs!",
        note="~/tmp became $W/tmp; the tput colour variables were dropped (they depend on $TERM)",
    ),
    m(
        "findstring-ok-fail-brackets",
        "cjh3579/ShellProgramming:scripts/findstring.sh",
        "message",
        "symbols",
        r"""
        PATTERN="^listen 443 ssl"
        FILENAME="$W/nginx.conf"

        if grep "$PATTERN" "$FILENAME" >/dev/null 2>&1 ; then
             echo "[ OK ]"
        else
             echo "[ FAIL ]"
        fi
        """,
        r"""echo 'listen 443 ssl;' > "$W/nginx.conf" """,
        r"""echo 'listen 80;' > "$W/nginx.conf" """,
        r"""echo 'listen 443 ssl;' > "$W/nginx.conf" """,
        p="[ OK ]",
        f="[ FAIL ]",
        note="the arguments became PATTERN/FILENAME; the usage guard on $# dropped",
    ),
    m(
        "minimon-services-marks-accumulated-literal-backslash-n",
        "Alexandre-Kerello/MiniMon:modules/services.sh",
        "message",
        "symbols",
        r"""
        set -euo pipefail
        SERVICES=(nginx)
        check_services() {
         local ouput=""
         for service in "${SERVICES[@]}"; do
          if "$W/bin/systemctl" is-active --quiet "$service"; then
           output+="  ▶ $service ✅\n"
          else
           output+="  ▶ $service ❌\n"
          fi
         done
         echo "$output"
        }
        check_services
        """,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho failed > "$W/units/nginx"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/nginx"',
        p="▶ nginx ✅\\n",
        f="▶ nginx ❌\\n",
        note="systemctl is a stand-in over $W/units; SERVICES came from the tool's config. The author's `local ouput` "
        "typo and `echo` without -e are kept (the line ends in a literal \\n)",
    ),
    m(
        "statuser-containers-green-red-accumulated",
        "zefixed/statuser:usr/local/bin/check_containers_status.sh",
        "message",
        "symbols",
        r"""
        CONTAINERS=("web" "db")
        message=""
        for container in "${CONTAINERS[@]}"
        do
            container_status=$("$W/bin/docker" ps -a --filter "name=^$container\$" --format "{{.Status}}")
            if echo "$container_status" | grep -i "up" >/dev/null 2>&1; then
            message+="🟢 $container    $container_status\n"
            else
            message+="🔴 $container    $container_status\n"
            fi
        done
        if (( ${#message} != 0)); then
            echo -e "${message::-2}"
        fi
        """,
        _FAKE_DOCKER + '\necho "Up 2 hours" > "$W/containers/web.status" && echo "Up 2 hours" > "$W/containers/db.status"',
        _FAKE_DOCKER + '\necho "Up 2 hours" > "$W/containers/web.status" && echo "Exited (1) 3 minutes ago" > "$W/containers/db.status"',
        _FAKE_DOCKER + '\necho "Up 2 hours" > "$W/containers/web.status" && echo "Up 2 hours" > "$W/containers/db.status"',
        p="🟢 db    Up 2 hours",
        f="🔴 db    Exited (1) 3 minutes ago",
        note="docker is a stand-in over $W/containers",
    ),
    m(
        "docker-health-ko-restart-in-failure-arm",
        "junghyun13/order-payment-pipeline:infra/monitoring/docker-health-check.sh",
        "message",
        "ko",
        r"""
        echo "====== Docker Container Health Check ======"

        containers=$("$W/bin/docker" ps --format "{{.Names}}")

        for container in $containers; do
            status=$("$W/bin/docker" inspect --format='{{.State.Health.Status}}' $container 2>/dev/null)

            if [[ "$status" == "healthy" ]]; then
                echo "🟢 $container : HEALTHY"
            elif [[ "$status" == "unhealthy" ]]; then
                echo "🔴 $container : UNHEALTHY — 재시작"
                "$W/bin/docker" restart $container
            else
                echo "🟡 $container : No Healthcheck"
            fi
        done
        """,
        _FAKE_DOCKER + '\necho Up > "$W/containers/orders.status" && echo healthy > "$W/containers/orders.health"',
        _FAKE_DOCKER + '\necho Up > "$W/containers/orders.status" && echo unhealthy > "$W/containers/orders.health"',
        _FAKE_DOCKER + '\necho Up > "$W/containers/orders.status" && echo healthy > "$W/containers/orders.health"',
        p="🟢 orders : HEALTHY",
        f="🔴 orders : UNHEALTHY — 재시작",
        note="docker is a stand-in over $W/containers (its restart only prints the name, as docker does)",
    ),
    m(
        "services-array-loop-running-marks",
        "Daarwin5/devops:sys.sh",
        "message",
        "en",
        r"""
        services=(postgres ssh cron)

        for svc in "${services[@]}"; do
            if "$W/bin/systemctl" is-active --quiet  "$svc"; then
            echo "$svc is running ✅"
          else
            echo "$svc is NOT running ❌"
          fi
        done
        """,
        _FAKE_SYSTEMCTL + '\nfor u in postgres ssh cron; do echo active > "$W/units/$u"; done',
        _FAKE_SYSTEMCTL + '\nfor u in postgres ssh; do echo active > "$W/units/$u"; done; echo failed > "$W/units/cron"',
        _FAKE_SYSTEMCTL + '\nfor u in postgres ssh cron; do echo active > "$W/units/$u"; done',
        p="cron is running ✅",
        f="cron is NOT running ❌",
        note="systemctl is a stand-in over $W/units",
    ),
    m(
        "files-loop-test-f-ternary",
        "MxNxPx/zarf-skeleton-test:scripts-example/scripts/test.sh",
        "message",
        "en",
        r"""
        cd "$W"
        files=( test1.txt test2.txt test3.txt )
        for file in "${files[@]}"; do
          test -f $file && echo "$file exists" || echo "$file doesn't exist"
        done
        """,
        r"""cd "$W" && touch test1.txt test2.txt test3.txt""",
        r"""cd "$W" && touch test1.txt test2.txt""",
        r"""cd "$W" && touch test1.txt test2.txt test3.txt""",
        p="test3.txt exists",
        f="test3.txt doesn't exist",
        note="`cd $W` first: the author's paths are relative",
    ),
    m(
        "file-exists-pt-checking-done",
        "ruimachado23/SO:p3/ex03a.sh",
        "message",
        "pt",
        r"""
        cd "$W"
        set -- dados.csv
        [[ $# = 1 ]] || { echo "Erro: Indique ficheiro" >&2; exit 1; }
            echo "Checking..."
        if [[ -f $1 ]] ; then
            echo "$1 existe."
        else
            echo "$1 não existe"
        fi

        echo "...done."
        """,
        r"""echo "id;valor" > "$W/dados.csv" """,
        r""":""",
        r"""echo "id;valor" > "$W/dados.csv" """,
        p="dados.csv existe.",
        f="dados.csv não existe",
        note="the argument became `set -- dados.csv` after `cd $W`",
    ),
    m(
        "file-exists-success-fail-and-inverse",
        "Aleks-Ya/yaal_examples:Bash+/files/isFileExists.sh",
        "message",
        "en",
        r"""
        cd "$W"
        file="hosts"
        if [ -f "$file" ]
        then
            echo "SUCCESS: $file found."
        else
            echo "FAIL: $file not found."
        fi
        file="not-exists-file"
        if [ -f "$file" ]
        then
            echo "FAIL:  $file found."
        else
            echo "SUCCESS: $file not found."
        fi
        """,
        r"""echo "127.0.0.1 localhost" > "$W/hosts" """,
        r""":""",
        r"""echo "127.0.0.1 localhost" > "$W/hosts" """,
        p="SUCCESS: hosts found.",
        f="FAIL: hosts not found.",
        note="/etc/hosts became $W/hosts; the second check (a file that must not exist) passes in both worlds",
    ),
    m(
        "ctf-healthcheck-loop-body-ok-err-tee",
        "cr3mov/cr3ctf-2024:challenges/web/pp-size/healthcheck/healthcheck_loop.sh",
        "message",
        "en",
        r"""
        set -Eeuo pipefail

        TIMEOUT=20

        if timeout "${TIMEOUT}" "$W/healthcheck.py"; then
          echo 'ok' | tee "$W/healthz"
        else
          echo -n "$? "
          echo 'err' | tee "$W/healthz"
        fi
        """,
        _HEALTHCHECK_PY + '\necho "cr3{flag}" > "$W/flag.txt"',
        _HEALTHCHECK_PY + '\necho "maintenance" > "$W/flag.txt"',
        _HEALTHCHECK_PY + '\necho "cr3{flag}" > "$W/flag.txt"',
        p="ok",
        f="1 err",
        tools=("python3",),
        note="one round of the author's `while true; … sleep ${PERIOD}; done`, without its `[$(date)]` prefix; "
        "/tmp/healthz became $W/healthz",
    ),
    m(
        "grep-rl-ru-function-echoes-status",
        "dvsp-itransition/devops:1.Linux/1.12/README.md",
        "message",
        "ru",
        r"""
        set -euo pipefail
        function check {
            grep -Rl "error" "$W/log/" > /dev/null
            echo $?
        }
        RETVAL=$(check)
        if [ "$RETVAL" != 0 ]
        then
            echo "Файла не существует"
        else
            count=$(grep -Rl "error" "$W/log/" | wc -l)
            echo "Найдено $count файлов"
        fi
        """,
        r"""mkdir -p "$W/log" && echo "kernel: error on sda" > "$W/log/syslog" """,
        r"""mkdir -p "$W/log" && echo "kernel: all good" > "$W/log/syslog" """,
        r"""mkdir -p "$W/log" && echo "kernel: error on sda" > "$W/log/syslog" """,
        p="Найдено 1 файлов",
        f="Файла не существует",
        note="/var/log became $W/log. Under set -e the function runs in a command substitution, where errexit "
        "is off: it echoes grep's status",
    ),
    # ================================================================ more health checks, smoke tests and probes
    m(
        "healthcheck-de-for-loop-exit-0-inside",
        "leoaigner7/automotive-deploy:ops/scripts/healthcheck.sh",
        "exit",
        "de",
        r"""
        set -e
        SERVICE=backend
        URL="http://127.0.0.1:$HTTP_PORT/health"
        echo "🔍 Healthcheck für $SERVICE auf $URL..."
        for i in {1..10}; do
          if curl -fsS "$URL" > /dev/null 2>&1; then
            echo "✅ $SERVICE ist gesund"
            exit 0
          else
            echo "⏳ Versuch $i/10..."
            sleep 0.1
          fi
        done
        echo "❌ $SERVICE ist NICHT gesund!"
        exit 1
        """,
        r"""echo ok > "$W/health" """,
        r""":""",
        r"""echo ok > "$W/health" """,
        p="✅ backend ist gesund",
        f="❌ backend ist NICHT gesund!",
        server=True,
        tools=("curl",),
        note="`$1 $2` became SERVICE/URL; `sleep 1` became `sleep 0.1`",
    ),
    m(
        "service-es-running-else-start-or-exit",
        "dablara/bashscripting:Ejercicios/servicios.sh",
        "exit",
        "es",
        r"""
        servicio="nginx"

        # Verifica si el servicio está en ejecución
        if "$W/bin/pgrep" -x "$servicio" > /dev/null; then
            echo "El servicio $servicio ya está en ejecución."
        else
            # Intenta iniciar el servicio
            if "$W/bin/systemctl" start "$servicio"; then
                echo "El servicio $servicio se ha iniciado correctamente."
            else
                echo "Error al intentar iniciar el servicio $servicio."
                exit 1
            fi
        fi
        """,
        _FAKE_PGREP + "\n" + _FAKE_SYSTEMCTL + '\necho "4242 nginx" > "$W/procs"',
        _FAKE_PGREP + "\n" + _FAKE_SYSTEMCTL + '\necho "1 init" > "$W/procs"',
        _FAKE_PGREP + "\n" + _FAKE_SYSTEMCTL + '\necho "4242 nginx" > "$W/procs"',
        p="El servicio nginx ya está en ejecución.",
        f="Error al intentar iniciar el servicio nginx.",
        note="pgrep and systemctl are stand-ins ($W/procs, $W/units); the start is refused as without root",
    ),
    m(
        "http-code-ru-telegram-notify-both-branches",
        "BroccoliPower/ci_skill-project:check_code.sh",
        "exit",
        "ru",
        r"""
        response=$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$HTTP_PORT/index.html")
        if [ "$response" == "200" ]; then
        echo "Код ответа: $response"
        "$W/telegram.sh" 163689317  "Тест пройден"
        exit 0
        else
        echo "Код ответа: $response"
        "$W/telegram.sh" 163689317  "Тест не пройден"
        exit 1
        fi
        """,
        _TELEGRAM_SH + '\necho "<h1>ci</h1>" > "$W/index.html"',
        _TELEGRAM_SH,
        _TELEGRAM_SH + '\necho "<h1>ci</h1>" > "$W/index.html"',
        p="Тест пройден",
        f="Тест не пройден",
        server=True,
        tools=("curl",),
        note="telegram.sh is the world's stand-in: it prints the text it would send",
    ),
    m(
        "deploy-retry-ko-break-or-exit-on-last",
        "joung45387/EveryAuction_RENEW:delay.sh",
        "exit",
        "ko",
        r"""
        for retry_count in {1..10};
        do
          response=$(curl -s "http://127.0.0.1:$HTTP_PORT/actuator/health")
          up_count=$(echo $response | grep 'UP' | wc -l)
          if [ $up_count -ge 1 ]; then
            echo "> 서버 health 체크 성공"
            break
          fi
          if [ $retry_count -eq 10 ]; then
            echo "> 서버 health 체크 실패"
            exit 1
          fi
          echo "> 실패 10초후 재시도"
          sleep 0.1
        done
        """,
        r"""mkdir -p "$W/actuator" && echo '{"status":"UP"}' > "$W/actuator/health" """,
        r"""mkdir -p "$W/actuator" && echo '{"status":"DOWN"}' > "$W/actuator/health" """,
        r"""mkdir -p "$W/actuator" && echo '{"status":"UP"}' > "$W/actuator/health" """,
        p="> 서버 health 체크 성공",
        f="> 서버 health 체크 실패",
        server=True,
        tools=("curl",),
        note="`sudo curl` became curl, `sleep 10` became `sleep 0.1`; the per-try echo of the response dropped",
    ),
    m(
        "smoke-fr-status-eq-200",
        "Tutez64/IPSSI-JurassicParc:api-parc2/tests/smoke.sh",
        "exit",
        "fr",
        r"""
        URL="http://127.0.0.1:$HTTP_PORT/health"

        echo " Test health check: $URL"
        STATUS=$(curl -s -o /dev/null -w "%{http_code}" $URL)

        if [ "$STATUS" -eq 200 ]; then
          echo " API en ligne (status $STATUS)"
          exit 0
        else
          echo " Échec du test (status $STATUS)"
          exit 1
        fi
        """,
        r"""echo '{"status":"ok"}' > "$W/health" """,
        r""":""",
        r"""echo '{"status":"ok"}' > "$W/health" """,
        p="API en ligne (status 200)",
        f="Échec du test (status 404)",
        server=True,
        tools=("curl",),
    ),
    m(
        "flask-docker-head-awk-status-unquoted",
        "nevosmic/Flask-Docker:test.sh",
        "exit",
        "en",
        r"""
        URL="127.0.0.1:$HTTP_PORT/index.html"
        RESULT=`curl -s -I ${URL} | grep HTTP/1 | awk {'print $2'}`
        echo $RESULT
        if [ $RESULT -eq 200 ]
        then
            echo " OK !"
        else
            echo "TEST NOT PASS !"
            exit 1
        fi
        """,
        r"""echo '<h1>flask</h1>' > "$W/index.html" """,
        r""":""",
        r"""echo '<h1>flask</h1>' > "$W/index.html" """,
        p="OK !",
        f="TEST NOT PASS !",
        server=True,
        tools=("curl",),
        note="`grep HTTP` became `grep HTTP/1`: the loopback server's `Server: SimpleHTTP/0.6` header matches HTTP too",
    ),
    m(
        "redis-app-pt-wget-elif-substring",
        "Bareaa/redis-app:teste-app.sh",
        "exit",
        "pt",
        r"""
        RESULT=$(wget -qO- "http://127.0.0.1:$HTTP_PORT/visits")

        if [ $? -eq 0 ]; then
            echo 'ok - serviço no ar!'
        elif [[ $RESULT == *"Number"* ]]; then
            echo 'ok - number of visits'
            echo $RESULT
        else
            echo 'not ok - number of visits'
            echo "Resposta do servidor: $RESULT"
            exit 1
        fi
        """,
        r"""echo "Number of visits: 7" > "$W/visits" """,
        r""":""",
        r"""echo "Number of visits: 7" > "$W/visits" """,
        p="ok - serviço no ar!",
        f="not ok - number of visits",
        server=True,
        tools=("wget",),
        note="the app's root became /visits (the loopback server lists a bare directory)",
    ),
    m(
        "snapshot-age-find-cmin-egrep-then-dollar-question",
        "enonic/docker-xp:bin/backup.sh",
        "exit",
        "en",
        r"""
        XP_HOME="$W/xp"
        AGE=1440

        echo "Searching for snapshots with max age of $AGE hours ..."
        find $XP_HOME/snapshots/ -maxdepth 1 -cmin -${AGE} -iname 'snap*' -type f | egrep '.*'

        if [ "$?" == "0" ]; then
            echo "Success!"
        else
            echo "Failure! No snapshots with max age of $AGE hours found!"
            exit 1
        fi
        """,
        r"""mkdir -p "$W/xp/snapshots" && echo data > "$W/xp/snapshots/snapshot-2024-05-01" """,
        r"""mkdir -p "$W/xp/snapshots" """,
        r"""mkdir -p "$W/xp/snapshots" && echo data > "$W/xp/snapshots/snapshot-2024-05-01" """,
        p="Success!",
        f="Failure! No snapshots with max age of 1440 hours found!",
        tools=("egrep",),
        note="AGE=${1:-${XP_SNAPSHOT_MAX_AGE:-1440}} became its default",
    ),
    m(
        "db-health-sqlite-result-code-failure-branch",
        "nadeemlab/SPT:spatialprofilingtoolbox/db/module_tests/test_basic_health_of_database.sh",
        "failure-branch",
        "en",
        r"""
        sqlite3 "$W/spt.db" 'SELECT count(*) FROM study' >/dev/null 2>&1
        result_code="$?"
        if [ $result_code -gt 0 ];
        then
            echo "Basic health check of database failed."
            exit 1
        else
            exit 0
        fi
        """,
        r"""sqlite3 "$W/spt.db" 'CREATE TABLE IF NOT EXISTS study (name TEXT)'""",
        r"""sqlite3 "$W/spt.db" 'CREATE TABLE IF NOT EXISTS cells (id INTEGER)'""",
        r"""sqlite3 "$W/spt.db" 'CREATE TABLE IF NOT EXISTS study (name TEXT)'""",
        f="Basic health check of database failed.",
        tools=("sqlite3",),
        note="`spt db status --database-config-file …` became a query on an sqlite3 file",
    ),
    m(
        "entrypoint-fr-config-missing-then-empty",
        "f4hlv/direwolf-docker:build/entrypoint.sh",
        "failure-branch",
        "fr",
        r"""
        set -eu
        cd "$W"
        CONFIG="direwolf.conf"
        if [ ! -f "$CONFIG" ]; then
          echo "[entrypoint] ERREUR: fichier de configuration introuvable: $CONFIG" >&2
          exit 1
        fi
        if [ ! -s "$CONFIG" ]; then
          echo "[entrypoint] ERREUR: fichier de configuration vide: $CONFIG" >&2
          exit 1
        fi
        echo "[entrypoint] OK: config trouvée: $CONFIG"
        """,
        r"""echo "MYCALL N0CALL" > "$W/direwolf.conf" """,
        r""": > "$W/direwolf.conf" """,
        r"""echo "MYCALL N0CALL" > "$W/direwolf.conf" """,
        p="[entrypoint] OK: config trouvée: direwolf.conf",
        note="CONFIG=${DW_CONFIG:-/etc/direwolf/direwolf.conf} became a file in $W; `exec \"$@\"` dropped. "
        "The failure lines go to stderr",
    ),
    m(
        "entrypoint-config-mounted-or-exit-then-copy",
        "nfe-w/aio-dynamic-push:entrypoint.sh",
        "failure-branch",
        "en",
        r"""
        set -e

        if [ ! -f "$W/mnt/config.yml" ]; then
          echo 'Error: /mnt/config.yml file not found. Please mount the /mnt/config.yml file and try again.'
          exit 1
        fi

        cp -f "$W/mnt/config.yml" "$W/app/config.yml"
        """,
        r"""mkdir -p "$W/mnt" "$W/app" && echo "push: {}" > "$W/mnt/config.yml" """,
        r"""mkdir -p "$W/mnt" "$W/app" """,
        r"""mkdir -p "$W/mnt" "$W/app" && echo "push: {}" > "$W/mnt/config.yml" """,
        f="Error: /mnt/config.yml file not found. Please mount the /mnt/config.yml file and try again.",
        note="/mnt and /app became $W/mnt and $W/app; `exec … main.py` dropped",
    ),
    m(
        "entrypoint-binary-and-config-basename-messages",
        "babylonlabs-io/cli-tools:contrib/images/staking-api-service/entrypoint.sh",
        "failure-branch",
        "en",
        r"""
        set -euo pipefail
        set -x
        BINARY="$W/bin/cli-tools"
        CONFIG="$W/home/cli-tools/config.toml"
        if ! [ -f "${BINARY}" ]; then
            echo "The binary $(basename "${BINARY}") cannot be found."
            exit 1
        fi
        if ! [ -f "${CONFIG}" ]; then
            echo "The configuration file $(basename "${CONFIG}") cannot be found. Please add the configuration file to the shared folder. Use the CONFIG environment variable if the name of the configuration file is not 'config.yml'"
            exit 1
        fi
        $BINARY --config "$CONFIG" 2>&1
        """,
        sh(
            r"""
            mkdir -p "$W/bin" "$W/home/cli-tools"
            printf '#!/bin/sh\necho "cli-tools: loaded $2"\n' > "$W/bin/cli-tools" && chmod +x "$W/bin/cli-tools"
            echo 'network = "signet"' > "$W/home/cli-tools/config.toml"
            """
        ),
        sh(
            r"""
            mkdir -p "$W/bin" "$W/home/cli-tools"
            printf '#!/bin/sh\necho "cli-tools: loaded $2"\n' > "$W/bin/cli-tools" && chmod +x "$W/bin/cli-tools"
            """
        ),
        sh(
            r"""
            mkdir -p "$W/bin" "$W/home/cli-tools"
            printf '#!/bin/sh\necho "cli-tools: loaded $2"\n' > "$W/bin/cli-tools" && chmod +x "$W/bin/cli-tools"
            echo 'network = "signet"' > "$W/home/cli-tools/config.toml"
            """
        ),
        f="The configuration file config.toml cannot be found. Please add the configuration file to the shared folder. "
        "Use the CONFIG environment variable if the name of the configuration file is not 'config.yml'",
        note="BINARY/CONFIG defaults became paths in $W; the binary is a stand-in that says it loaded its config",
    ),
    m(
        "verify-config-exists-json-tool-or-cat",
        "ameyavetri/ameya-aws-genai-chatbot:verifyconfiguration.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        echo "📋 Verifying configuration..."

        # Check config.json exists
        if [ ! -f "config.json" ]; then
            echo "❌ config.json not found!"
            echo "Copy from backup or create new one"
            exit 1
        fi

        echo "Current configuration:"
        cat config.json | python3 -m json.tool 2>/dev/null || cat config.json

        echo "✅ Configuration verified"
        """,
        r"""echo '{"model": "claude", "region": "us-east-1"}' > "$W/config.json" """,
        r""":""",
        r"""echo '{"model": "claude", "region": "us-east-1"}' > "$W/config.json" """,
        p="✅ Configuration verified",
        f="❌ config.json not found!",
        tools=("python3",),
        note="`cd $W` first (the author's path is relative); an invalid config.json still passes",
    ),
    m(
        "nagios-template-exit-0-or-2",
        "jjasghar/nagios-check-template:check_service_template.sh",
        "exit",
        "en",
        r"""
        SERVICE=nginx
        if cat "$W/ps-ax" | grep -v grep | grep $SERVICE > /dev/null
        then
            echo "OK, $SERVICE service is running"
                exit 0
        else
            echo "CRITICAL , $SERVICE service is not running"
                exit 2
        fi
        """,
        r"""echo " 4242 ?        Ss     0:00 nginx: master process /usr/sbin/nginx" > "$W/ps-ax" """,
        r"""echo "    1 ?        Ss     0:01 /sbin/init" > "$W/ps-ax" """,
        r"""echo " 4242 ?        Ss     0:00 nginx: master process /usr/sbin/nginx" > "$W/ps-ax" """,
        p="OK, nginx service is running",
        f="CRITICAL , nginx service is not running",
        note="`ps ax` became $W/ps-ax; the grep's `$1` became $SERVICE (the author's messages read an unset $SERVICE)",
    ),
    m(
        "devcontainer-verify-if-command-v-else-exit",
        "veggerby/container-superposition:.devcontainer/scripts/verify-nodejs.sh",
        "exit",
        "en",
        r"""
        set -e
        if command -v "$W/bin/node" &> /dev/null; then
            "$W/bin/node" --version
            echo "   ✅ Node.js found"
        else
            echo "   ❌ Node.js not found"
            exit 1
        fi
        if command -v "$W/bin/npm" &> /dev/null; then
            "$W/bin/npm" --version
            echo "   ✅ npm found"
        else
            echo "   ❌ npm not found"
            exit 1
        fi
        """,
        _tool("node", "v20.11.1") + "\n" + _tool("npm", "10.2.4"),
        _tool("node", "v20.11.1"),
        _tool("node", "v20.11.1") + "\n" + _tool("npm", "10.2.4"),
        p="✅ npm found",
        f="❌ npm not found",
        note="node/npm are stand-ins in $W/bin; the numbered 'Checking …' headers and the closing line dropped",
    ),
    m(
        "archive-verify-shasum-c-under-set-e",
        "Markatw/idsideAI:verify.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        cd "$W"
        shasum -a 256 -c SHA256SUMS.txt
        echo "✅ archive verified"
        """,
        r"""cd "$W" && printf 'release 1\n' > idside.tar.gz && shasum -a 256 idside.tar.gz > SHA256SUMS.txt""",
        r"""cd "$W" && printf 'release 1\n' > idside.tar.gz && shasum -a 256 idside.tar.gz > SHA256SUMS.txt && printf 'tampered\n' > idside.tar.gz""",
        r"""cd "$W" && printf 'release 1\n' > idside.tar.gz && shasum -a 256 idside.tar.gz > SHA256SUMS.txt""",
        p="✅ archive verified",
        f="idside.tar.gz: FAILED",
        tools=("shasum",),
        note="`cd $W` first: the author's SHA256SUMS.txt sits beside the archive",
    ),
    m(
        "mount-wait-guard-bare-exit-then-exit-minus-1",
        "MikeJMcGuire/MediaContainerMount:run.sh",
        "failure-branch",
        "en",
        r"""
        DATA_MOUNT="$W/media"
        if [ -z "$DATA_MOUNT" ]; then
          echo "No mount specified."
          exit
        fi

        if [ -z "$(ls -A $DATA_MOUNT)" ]; then
          echo "Waiting for mount..."
          sleep 0.2
          exit -1
        fi
        """,
        r"""mkdir -p "$W/media" && echo film > "$W/media/film.mkv" """,
        r"""mkdir -p "$W/media" """,
        r"""mkdir -p "$W/media" && echo film > "$W/media/film.mkv" """,
        f="Waiting for mount...",
        note="$DATA_MOUNT (from the environment) became $W/media; `sleep 5` became `sleep 0.2`; `/init` after it dropped",
    ),
    m(
        "mount-healthcheck-echo-n-compound-test",
        "HIP-infrastructure/app-in-browser:services/scripts/ls-healthcheck.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        set -- mnt/docker-fs
        if [[ -d $1 && -n "$(ls -A $1)" ]]; then
          echo -n "docker-fs mounted properly in $1. "
          exit 0
        else
          echo -n "docker-fs not mounted properly in $1. "
          exit 1
        fi
        """,
        r"""mkdir -p "$W/mnt/docker-fs" && echo x > "$W/mnt/docker-fs/data" """,
        r"""mkdir -p "$W/mnt/docker-fs" """,
        r"""mkdir -p "$W/mnt/docker-fs" && echo x > "$W/mnt/docker-fs/data" """,
        p="docker-fs mounted properly in mnt/docker-fs.",
        f="docker-fs not mounted properly in mnt/docker-fs.",
        note="the argument became `set -- mnt/docker-fs` after `cd $W`",
    ),
    m(
        "entrypoint-wait-ls-a-nonempty",
        "blakesisu/twitexa:docker-entrypoint.sh",
        "exit",
        "en",
        r"""
        set -e

        if [ -n "$(ls -A "$W/data/dist" 2>/dev/null)" ]
        then
          echo "contains files (or is a file)"
          exit 0
        else
          echo "empty (or does not exist)"
          exit 1
        fi
        """,
        r"""mkdir -p "$W/data/dist" && echo '<html></html>' > "$W/data/dist/index.html" """,
        r"""mkdir -p "$W/data" """,
        r"""mkdir -p "$W/data/dist" && echo '<html></html>' > "$W/data/dist/index.html" """,
        p="contains files (or is a file)",
        f="empty (or does not exist)",
        note="/data/dist became $W/data/dist; the commented-out `aws s3 sync` lines dropped",
    ),
    m(
        "pokedex-health-regex-substring-match",
        "smartlyio/full-stack-open-pokedex:health_check.sh",
        "exit",
        "en",
        r"""
        var="$(curl "127.0.0.1:$HTTP_PORT/health")"
        echo $var

        if [[ $var =~ "ok" ]]; then
            exit 0
        else
            exit 1
        fi
        """,
        r"""echo ok > "$W/health" """,
        r"""echo degraded > "$W/health" """,
        r"""echo ok > "$W/health" """,
        p="ok",
        f="degraded",
        server=True,
        tools=("curl",),
        note="a quoted right side of =~ is a substring test: a body 'not ok' would pass too",
    ),
    m(
        "if-then-exit-then-cat-the-file",
        "PacktPublishing/Learn-Linux-Shell-Scripting-Fundamentals-of-Bash-4.4:Chapter09/if-then-exit.sh",
        "failure-branch",
        "en",
        r"""
        FILE="$W/random_file.txt"

        # Check if the file exists.
        if [[ ! -f ${FILE} ]]; then
          echo "File does not exist, stopping the script!"
          exit 1
        fi

        # Print the file content.
        cat ${FILE}
        """,
        r"""echo "random content" > "$W/random_file.txt" """,
        r""":""",
        r"""echo "random content" > "$W/random_file.txt" """,
        p="random content",
        f="File does not exist, stopping the script!",
    ),
    m(
        "validate-function-on-dollar-question-twice",
        "vishakhahanshith/shell-script:09-functions.sh",
        "exit",
        "en",
        r"""
        VALIDATE(){
            #$1 -- It will receive the argument1
            if [ $1 -ne 0 ]
        then
           echo "Installation ... FAILURE"
           exit 1
        else
           echo "Installation ... SUCCESS"
        fi
        }
        test -x "$W/usr/bin/mysql"
        VALIDATE $?
        test -x "$W/usr/sbin/postfix"
        VALIDATE $?
        """,
        sh(
            r"""
            mkdir -p "$W/usr/bin" "$W/usr/sbin"
            printf '#!/bin/sh\n' > "$W/usr/bin/mysql" && printf '#!/bin/sh\n' > "$W/usr/sbin/postfix"
            chmod +x "$W/usr/bin/mysql" "$W/usr/sbin/postfix"
            """
        ),
        r"""mkdir -p "$W/usr/bin" "$W/usr/sbin" """,
        sh(
            r"""
            mkdir -p "$W/usr/bin" "$W/usr/sbin"
            printf '#!/bin/sh\n' > "$W/usr/bin/mysql" && printf '#!/bin/sh\n' > "$W/usr/sbin/postfix"
            chmod +x "$W/usr/bin/mysql" "$W/usr/sbin/postfix"
            """
        ),
        p="Installation ... SUCCESS",
        f="Installation ... FAILURE",
        note="each `yum install … -y` became a probe of the installed binary in $W",
    ),
    m(
        "until-command-substitution-curl-max-attempts",
        "lawrencegripper/MutatingAdmissionsController:scripts/health.sh",
        "exit",
        "en",
        r"""
        attempt_counter=0
        max_attempts=10

        until $(curl --output /dev/null --silent --fail "http://127.0.0.1:$HTTP_PORT/healthz"); do
            if [ ${attempt_counter} -eq ${max_attempts} ];then
              echo "Max attempts reached"
              exit 1
            fi

            printf '.'
            attempt_counter=$(($attempt_counter+1))
            sleep 0.1
        done
        """,
        r"""echo ok > "$W/healthz" """,
        r""":""",
        r"""echo ok > "$W/healthz" """,
        f="..........Max attempts reached",
        server=True,
        tools=("curl",),
        note="`sleep 5` became `sleep 0.1`; `until $(curl …)` runs curl's empty output as the test, i.e. curl's status",
    ),
    m(
        "live-check-heredoc-python-assert",
        "reyn1920/monkey-paw-production-v4:artifacts/import/all_sources/monkey_paw_productions_v4_pack/monkey-paw-productions-v4/scripts/live_check.zsh",
        "exit",
        "en",
        r"""
        set -e
        python3 - <<'PY'
        import json, os, urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%s/api/health" % os.environ["HTTP_PORT"], timeout=5) as r:
            data = json.loads(r.read().decode())
        assert data.get("ok") is True
        print("✅ Live health ok:", data)
        PY
        """,
        r"""mkdir -p "$W/api" && echo '{"ok": true}' > "$W/api/health" """,
        r"""mkdir -p "$W/api" && echo '{"ok": false}' > "$W/api/health" """,
        r"""mkdir -p "$W/api" && echo '{"ok": true}' > "$W/api/health" """,
        p="✅ Live health ok: {'ok': True}",
        server=True,
        tools=("python3",),
        note="a zsh script run by bash; the URL's port comes from $HTTP_PORT in the environment (the heredoc is quoted)",
    ),
    m(
        "smoke-required-positional-then-curl",
        "BrianCLong/summit:scripts/smoke.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        set -- "http://127.0.0.1:$HTTP_PORT"
        URL=${1:?usage: $0 <base-url>}

        curl -fsS "$URL/health" >/dev/null

        echo "smoke ok"
        """,
        r"""echo ok > "$W/health" """,
        r""":""",
        r"""echo ok > "$W/health" """,
        p="smoke ok",
        server=True,
        tools=("curl",),
        note="the base URL argument became `set -- …`",
    ),
    m(
        "entrypoint-es-database-url-undefined",
        "FranMeneses/cmp-back:docker-entrypoint.sh",
        "failure-branch",
        "es",
        r"""
        set -e
        DATABASE_URL=$(cat "$W/database_url" 2>/dev/null || true)

        if [ -z "$DATABASE_URL" ]; then
          echo "Error: DATABASE_URL no está definida"
          exit 1
        fi
        """,
        r"""echo "postgresql://app@db:5432/cmp" > "$W/database_url" """,
        r""":""",
        r"""echo "postgresql://app@db:5432/cmp" > "$W/database_url" """,
        f="Error: DATABASE_URL no está definida",
        note="DATABASE_URL came from the container's environment; here from a file in $W. `exec \"$@\"` dropped",
    ),
    m(
        "finder-if-elif-exit-then-count",
        "cu-ecen-aeld/assignments-3-and-later-vido2373:finder-app/finder.sh",
        "failure-branch",
        "en",
        r"""
        set -- "$W/writer-out" AELD
        if [ $# -ne 2 ]
        then
            echo Incorrect number of arguments: 2 required
            exit 1
        elif [ ! -d $1 ]
        then
            echo $1 is not a directory
            exit 1
        fi

        x=$(ls $1 | wc -l)

        echo "The number of files are $x"
        """,
        r"""mkdir -p "$W/writer-out" && echo AELD > "$W/writer-out/a" && echo AELD > "$W/writer-out/b" """,
        r""":""",
        r"""mkdir -p "$W/writer-out" && echo AELD > "$W/writer-out/a" && echo AELD > "$W/writer-out/b" """,
        p="The number of files are 2",
        note="the arguments became `set -- …` (the second, the search string, is not read by these lines)",
    ),
    m(
        "log-monitor-grep-c-threshold-message",
        "moazadrian/log_monitoring_bash:log_monitor.sh",
        "message",
        "en",
        r"""
        LOG_FILE="$W/app.log"   # Path to the log file
        ERROR_THRESHOLD=2     # Set the error limit for alerts

        # Count the number of error messages in the log file
        ERROR_COUNT=$(grep -c "ERROR" "$LOG_FILE")

        if [ "$ERROR_COUNT" -ge "$ERROR_THRESHOLD" ]; then
            echo "🚨 Alert! $ERROR_COUNT errors found in the log file!"
        else
            echo "✅ All good! No critical errors detected."
        fi
        """,
        r"""printf 'INFO up\nERROR one retry\nINFO done\n' > "$W/app.log" """,
        r"""printf 'ERROR a\nERROR b\nERROR c\n' > "$W/app.log" """,
        r"""printf 'INFO up\nERROR one retry\nINFO done\n' > "$W/app.log" """,
        p="✅ All good! No critical errors detected.",
        f="🚨 Alert! 3 errors found in the log file!",
    ),
    m(
        "dbworker-is-active-up-down",
        "jasmrutt/IT490:database/.check_dbworker.sh",
        "exit",
        "en",
        r"""
        if "$W/bin/systemctl" is-active dbworker.service >/dev/null 2>&1; then
            echo "up"
            exit 0
        else
            echo "down"
            exit 1
        fi
        """,
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/dbworker"',
        _FAKE_SYSTEMCTL + '\necho failed > "$W/units/dbworker"',
        _FAKE_SYSTEMCTL + '\necho active > "$W/units/dbworker"',
        p="up",
        f="down",
        note="systemctl is a stand-in over $W/units",
    ),
    m(
        "health-status-marker-file",
        "UKHSA-Internal/coronavirus-dashboard-generic-apis:health_status.sh",
        "exit",
        "en",
        r"""
        if [ -f "$W/opt/healthcheck/healthy.txt" ]; then
          echo "Service healthy"
          exit 0
        else
          echo "Service unhealthy"
          exit 1
        fi;
        """,
        r"""mkdir -p "$W/opt/healthcheck" && touch "$W/opt/healthcheck/healthy.txt" """,
        r"""mkdir -p "$W/opt/healthcheck" """,
        r"""mkdir -p "$W/opt/healthcheck" && touch "$W/opt/healthcheck/healthy.txt" """,
        p="Service healthy",
        f="Service unhealthy",
    ),
    m(
        "healthcheck-file-content-0-1-missing-passes",
        "Sammeeeeeeee/Healthchecks-ping:healthcheck.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        if [ -f "healthcheck.txt" ]; then
            content=$(cat healthcheck.txt)
            content=$(echo "$content" | tr -d '\n')

            if [ "$content" = "0" ]; then
                echo "HEALTHCHECK: Healthy"
                exit 0
            elif [ "$content" = "1" ]; then
                echo "HEALTHCHECK: Unhealthy"
                exit 1
            fi
        else
            echo "Healthcheck file does not exist. It will be created on first curl"
        fi
        """,
        r"""echo 0 > "$W/healthcheck.txt" """,
        r"""echo 1 > "$W/healthcheck.txt" """,
        r"""echo 0 > "$W/healthcheck.txt" """,
        p="HEALTHCHECK: Healthy",
        f="HEALTHCHECK: Unhealthy",
        note="`cd $W` first; the 'invalid content' arm dropped. A missing file passes (exit 0, its own message)",
    ),
    m(
        "checkmk-local-pt-backup-count-three-exits",
        "fabianoflorentino/shellscript-nagios_monitoring:config/sensors/check_list_backup_red_sistema.sh",
        "exit",
        "pt",
        r"""
        DIR_BACKUP_RED="$W/mnt/backup_check"
        BACKUP=$(find ${DIR_BACKUP_RED} -maxdepth 1 -name "s*.tar.z" -mtime -3 | wc -l)
        if [ $BACKUP -ge 2 ]
        then
            echo "0 List_Backup_Red_Sistema result=0;1;2;0;2 OK - Encontrados = $BACKUP"
            exit 0
        elif [  $BACKUP -eq 1 ]
        then
            echo "1 List_Backup_Red_Sistema result=1;1;2;0;2 WARN - Qde Backup Insuficiente = $BACKUP"
            exit 1
        elif [ $BACKUP -lt 1 ]
        then
            echo "2 List_Backup_Red_Sistema result=2;1;2;0;2 CRITICAL - Nenhum Backup Encontrado."
            exit 2
        fi
        """,
        r"""mkdir -p "$W/mnt/backup_check" && touch "$W/mnt/backup_check/sistema-01.tar.z" "$W/mnt/backup_check/sistema-02.tar.z" """,
        r"""mkdir -p "$W/mnt/backup_check" """,
        r"""mkdir -p "$W/mnt/backup_check" && touch "$W/mnt/backup_check/sistema-01.tar.z" "$W/mnt/backup_check/sistema-02.tar.z" """,
        p="0 List_Backup_Red_Sistema result=0;1;2;0;2 OK - Encontrados = 2",
        f="2 List_Backup_Red_Sistema result=2;1;2;0;2 CRITICAL - Nenhum Backup Encontrado.",
        note="/mnt/backup_check became $W/mnt/backup_check; the file-list tail of each line ($LISTAR) and the UNKNOWN "
        "arm dropped",
    ),
    m(
        "mysql-check-ping-grep-alive-or-exit",
        "shefeg/docker_swarm_wp:consul/mysql_check.sh",
        "exit",
        "en",
        r"""
        "$W/bin/mysqladmin" ping -h db 2>&1 | grep -i "alive" || exit 1
        """,
        _FAKE_MYSQLADMIN + '\necho up > "$W/mysqld.state"',
        _FAKE_MYSQLADMIN + '\necho down > "$W/mysqld.state"',
        _FAKE_MYSQLADMIN + '\necho up > "$W/mysqld.state"',
        p="mysqld is alive",
        note="mysqladmin is a stand-in over $W/mysqld.state; the user/password read from secret files dropped",
    ),
    m(
        "mysql-healthcheck-init-marker-then-ping",
        "v-kalinichenko/mysql-docker-5.7:healthcheck.sh",
        "exit",
        "en",
        r"""
        if [ -f "$W/mysql-init-complete" ]; # The entrypoint script touches this file
        then # Ping server to see if it is ready
          "$W/bin/mysqladmin" --defaults-extra-file="$W/healthcheck.cnf" ping
        else # Initialization still in progress
          exit 1
        fi
        """,
        _FAKE_MYSQLADMIN + '\ntouch "$W/mysql-init-complete" && echo up > "$W/mysqld.state"',
        _FAKE_MYSQLADMIN + '\ntouch "$W/mysql-init-complete" && echo down > "$W/mysqld.state"',
        _FAKE_MYSQLADMIN + '\ntouch "$W/mysql-init-complete" && echo up > "$W/mysqld.state"',
        p="mysqld is alive",
        note="mysqladmin is a stand-in over $W/mysqld.state; its failure goes to stderr",
    ),
    m(
        "build-git-status-porcelain-backticks-exit-42",
        "mrseanryan/cornsnake:build.sh",
        "failure-branch",
        "en",
        r"""
        set -e
        cd "$W/repo"

        if [[ `git status --porcelain` ]]; then
          # Changes
          echo "ERROR: git has uncommitted changes"
          exit 42
        else
          # No changes
          echo "git status OK"
        fi
        """,
        _git_world("setup.py", "from setuptools import setup"),
        _git_world("setup.py", "from setuptools import setup", "echo 'print(1)' > scratch.py"),
        _git_world("setup.py", "from setuptools import setup"),
        p="git status OK",
        f="ERROR: git has uncommitted changes",
        tools=("git",),
        note="the build steps after the check (rm dist, test, build, twine) dropped; an untracked file counts",
    ),
    m(
        "wheel-and-tarball-count-after-deploy-guard",
        "alkaline-ml/pmdarima:build_tools/travis/after_wheel_build.sh",
        "exit",
        "en",
        r"""
        DEPLOY=true
        if [[ "${DEPLOY}" != true ]]; then
            # Not a release
            exit 0
        fi

        # Check for presence of wheel and tarball post-build
        WHEEL=$(find "$W/dist/" -name '*.whl' | wc -l)
        TAR=$(find "$W/dist/" -name '*.tar.gz' | wc -l)
        if [[ ${WHEEL} -gt 0 && ${TAR} -gt 0 ]]; then
            echo "Build artifacts created successfully"
        else
            echo "Build artifacts were not created. Skipping deployment..."
            exit 1
        fi
        """,
        r"""mkdir -p "$W/dist" && touch "$W/dist/pmdarima-2.0-cp311-linux_x86_64.whl" "$W/dist/pmdarima-2.0.tar.gz" """,
        r"""mkdir -p "$W/dist" && touch "$W/dist/pmdarima-2.0-cp311-linux_x86_64.whl" """,
        r"""mkdir -p "$W/dist" && touch "$W/dist/pmdarima-2.0-cp311-linux_x86_64.whl" "$W/dist/pmdarima-2.0.tar.gz" """,
        p="Build artifacts created successfully",
        f="Build artifacts were not created. Skipping deployment...",
        note="DEPLOY came from the CI environment (true on a release); dist/ became $W/dist",
    ),
    m(
        "required-var-if-z-exit-else-value",
        "MicinLovers78/uasmjs:script/uasmjs.sh",
        "failure-branch",
        "en",
        r"""
        echo "--- Script Start --"
        REQUIRED_VAR=$(cat "$W/required_var" 2>/dev/null)

        if [ -z "$REQUIRED_VAR" ]; then
            echo "Error: REQUIRED_VAR is no set. Exiting."
            exit 1
        else
            echo "REQUIRED_VAR is set. Value: $REQUIRED_VAR"
        fi

        echo "---Script End ---"
        """,
        r"""echo blue > "$W/required_var" """,
        r""":""",
        r"""echo blue > "$W/required_var" """,
        p="REQUIRED_VAR is set. Value: blue",
        f="Error: REQUIRED_VAR is no set. Exiting.",
        note="REQUIRED_VAR came from the environment; here from a file in $W",
    ),
    m(
        "orb-check-package-json-lists-dir-on-failure",
        "ExtensionEngine/pipeline-core-orb:src/scripts/check-pkg-json.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W/app"
        if [ ! -f "package.json" ]; then
          echo "File package.json not found inside current directory: $(pwd)"
          echo "Content of current directory:"
          ls -al
          exit 1
        fi
        """,
        r"""mkdir -p "$W/app" && echo '{"name": "app"}' > "$W/app/package.json" """,
        r"""mkdir -p "$W/app" && echo 'console.log(1)' > "$W/app/index.js" """,
        r"""mkdir -p "$W/app" && echo '{"name": "app"}' > "$W/app/package.json" """,
        f="Content of current directory:",
        note="the CI job's working directory became $W/app; silent when the check holds",
    ),
)

validate(IDIOMS)
