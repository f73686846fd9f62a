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
        "makefile-smoke-printf-and-curl-without-fail",
        "whyNat/hello-world-printer-app2:Makefile",
        "message",
        "en",
        r"""
        printf "1:" && curl "http://127.0.0.1:$HTTP_PORT/hello";
        printf "\n2:" && curl "http://127.0.0.1:$HTTP_PORT/greetings?name=W";
        """,
        r"""printf 'Hello World!' > "$W/hello" && printf 'Greetings, W!' > "$W/greetings" """,
        r"""printf 'Greetings, W!' > "$W/greetings" """,
        r"""printf 'Hello World!' > "$W/hello" && printf 'Greetings, W!' > "$W/greetings" """,
        p="1:Hello World!",
        f="1:<!DOCTYPE HTML>",
        server=True,
        tools=("curl",),
        note="a make recipe (its `@` prefixes dropped); curl without -f prints the 404 page and exits 0",
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
)

validate(IDIOMS)
