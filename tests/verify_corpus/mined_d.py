# ruff: noqa: E101  (the authors indented some checks with tabs; the blocks keep them)
"""Mined verify idioms, a fourth part: 50 checks mined for issue 34, out of sample (see `mined.py` for the format),
and one mined later for the way it turns tracing off (the last of `EXIT`).

Every check here comes from a repository none of `mined_a`/`mined_b`/`mined_c` drew on (checked against their
`source` fields before mining). They were run through their whole life with the real CLI once, before any fix
for issue 34 was written; the score of that first run is in `docs/verify-semantics.md` ("Out of sample").

Adapted only as far as a world needs: a daemon, a package manager, a kernel table or a tool we lack became a
file in `$W` or a small script in `$W/bin` (put first on PATH; a fake reads its state from `$W`, exported to
it); a script's arguments became a `set --` line and a prompt (`read -p`) an assignment; a path the author
probed moved into `$W` (with `cd "$W"` when the author's messages name it relatively); a `note` says so when
more than paths changed.

Two checks mined in the same search were left out after their first run: toddwint/ztp's
`build/app/debug/services_status.sh` prints its verdict inside `bash -c '…'`, the same lines and statuses in
both worlds (only the words differ: out of reach by design, docs/verify-semantics.md), and
uw-pluverse/perses's `loging_level_should_be_configurable.sh` declares `readonly FILE`, which the life plan
(the same check three times in one session) cannot run twice under plain bash either.
"""

from __future__ import annotations

import re

from tests.verify_corpus.mined import Mined, m, sh


def _bin(name: str, body: str) -> str:
    """Bash that writes `$W/bin/<name>`, a `#!/bin/sh` script with `body` (it may read `$W` when it runs)."""
    return (
        f'mkdir -p "$W/bin"\ncat > "$W/bin/{name}" <<\'FAKE\'\n#!/bin/sh\n{sh(body)}\nFAKE\nchmod +x "$W/bin/{name}"\n'
    )


# Hyperledger Fabric's peer CLI, as far as a chaincode query needs it: the chaincode's metadata when it is
# committed on the channel (a file in $W/chaincodes/<channel>), otherwise the error and exit 1 the real one gives.
_PEER = _bin(
    "peer",
    r"""
    while [ $# -gt 0 ]; do
      case $1 in -C) ch=$2; shift ;; -n) cc=$2; shift ;; esac
      shift
    done
    if [ -f "$W/chaincodes/$ch/$cc" ]; then cat "$W/chaincodes/$ch/$cc"; exit 0; fi
    echo "Error: endorsement failure during query. response: status:500 message:\"make sure the chaincode $cc has been successfully defined on channel $ch and try again: chaincode $cc not found\""
    exit 1
    """,
)

def _abs(script: str) -> str:
    """World bash whose tools are named by absolute path (it may run where PATH is `$W/bin` alone)."""
    for tool in ("mkdir", "cat", "chmod"):
        script = re.sub(rf"(?m)(^|[;&|]\s*){tool} ", rf"\1/bin/{tool} ", script)
    return script


def _w(*parts: str) -> str:
    """World bash from pieces (fakes and state), each dedented on its own."""
    return "\n".join(sh(p) for p in parts)


_SYSTEMCTL = _bin(
    "systemctl",
    r"""
    u=${2%.service}
    s=$(cat "$W/units/$u" 2>/dev/null || echo inactive)
    case $1 in
      status)
        echo "● $u.service - $u"
        if [ "$s" = active ]; then echo "   Active: active (running)"; exit 0; fi
        echo "   Active: inactive (dead)"; exit 3 ;;
      is-active) echo "$s"; [ "$s" = active ] ;;
    esac
    """,
)

_PS = _bin(
    "ps",
    r"""
    echo "UID          PID    PPID  C STIME TTY          TIME CMD"
    cat "$W/procs" 2>/dev/null
    exit 0
    """,
)

_PING = _bin(
    "ping",
    r"""
    for a; do h=$a; done
    if [ -e "$W/net/up" ]; then echo "64 bytes from $h: icmp_seq=1 ttl=64 time=0.04 ms"; exit 0; fi
    echo "From $h icmp_seq=1 Destination Host Unreachable"; exit 1
    """,
)

_DF = _bin(
    "df",
    r"""
    u=$(cat "$W/usage" 2>/dev/null || echo 0)
    for a; do case $a in --output=pcent) echo "Use%"; echo " ${u}%"; exit 0 ;; esac; done
    echo "Filesystem     1K-blocks    Used Available Use% Mounted on"
    echo "/dev/sda1        1000000 $((u * 10000)) $((1000000 - u * 10000))  ${u}% /"
    """,
)

_FREE = _bin(
    "free",
    r"""
    f=$(cat "$W/freemem" 2>/dev/null || echo 0)
    echo "               total        used        free      shared  buff/cache   available"
    echo "Mem:            7900        $((7900 - f))        $f          10           0        $f"
    echo "Swap:              0           0           0"
    case "$1" in *t*) echo "Total:          7900        $((7900 - f))        $f" ;; esac
    """,
)

_ID = _bin(
    "id",
    r"""
    if grep -q "^$1:" "$W/passwd" 2>/dev/null; then echo "uid=1001($1) gid=1001($1) groups=1001($1)"; exit 0; fi
    echo "id: '$1': no such user" >&2; exit 1
    """,
)

_PASSWD_HELD = """printf 'root:x:0:0:root:/root:/bin/bash\\ndeploy:x:1001:1001::/home/deploy:/bin/bash\\n' > "$W/passwd\""""
_PASSWD_BROKEN = """printf 'root:x:0:0:root:/root:/bin/bash\\n' > "$W/passwd\""""

_CERT = sh(r"""
    mkdir -p "$W/certs/app1.dev.local"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -subj /CN=app1.dev.local \
      -keyout "$W/certs/app1.dev.local/app1.dev.local.key" -out "$W/certs/app1.dev.local/app1.dev.local.crt" 2>/dev/null
""")

_GIT_REPO = sh(r"""
    git init -q "$W/repo"
    echo 'export default {}' > "$W/repo/index.js"
    git -C "$W/repo" add index.js
    git -C "$W/repo" -c user.email=ci@example.org -c user.name=ci commit -qm init
""")


MESSAGE: tuple[Mined, ...] = (
    m(
        "disk-usage-alert-df-tail-awk-sed",
        "Sachinn-9700/Devops-journey-Sachin:10-projects/linux/disk_usage_alert/disk_usage_alert.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        THRESHOLD=80
        USAGE=$(df / | tail -1 | awk '{print $5}' | sed 's/%//')

        if [ $USAGE -gt $THRESHOLD ]; then
          echo "ALERT: Disk usage is above $THRESHOLD% (Current: $USAGE%)"
        else
          echo "OK: Disk usage is under control (Current: $USAGE%)"
        fi
        """,
        _w(_DF, 'echo 42 > "$W/usage"'),
        _w(_DF, 'echo 93 > "$W/usage"'),
        _w(_DF, 'echo 42 > "$W/usage"'),
        p="OK: Disk usage is under control (Current: 42%)",
        f="ALERT: Disk usage is above 80% (Current: 93%)",
        note="df is a script in $W/bin reading the use% from $W/usage",
    ),
    m(
        "damon-summary-grep-ok-not-ok-pass-fail",
        "awslabs/damon-tests:correctness/_summary_results.sh",
        "message",
        "en",
        r"""
        LOG=$W/log

        echo -e "\e[32m"
        grep -e '^ok' $LOG
        echo -e "\e[33m"
        grep -e '^not ok' $LOG
        failed=$?

        if [ $failed -eq 0 ]
        then
        	echo
        	echo -e "\e[91mFAIL\e[39m"
        else
        	echo -e "\e[92mPASS\e[39m"
        fi
        """,
        r"""printf 'ok 1 selftests: damon: debugfs_attrs.sh\nok 2 selftests: damon: sysfs.sh\n' > "$W/log" """,
        r"""printf 'ok 1 selftests: damon: debugfs_attrs.sh\nnot ok 2 selftests: damon: sysfs.sh\n' > "$W/log" """,
        r"""printf 'ok 1 selftests: damon: debugfs_attrs.sh\nok 2 selftests: damon: sysfs.sh\n' > "$W/log" """,
        p="\x1b[92mPASS\x1b[39m",
        f="\x1b[91mFAIL\x1b[39m",
    ),
    m(
        "certificat-valide-openssl-text-then-checkend",
        "ThierryTouin/liferay-oauth-test:poc1-reactjs-liferay-keycloak/runtime/scripts/certificate-check.sh",
        "message",
        "fr",
        r"""
        openssl x509 -in $W/certs/app1.dev.local/app1.dev.local.crt -noout -text

        if openssl x509 -in $W/certs/app1.dev.local/app1.dev.local.crt -noout -checkend 0 > /dev/null 2>&1; then
            echo "Le certificat est valide."
        else
            echo "Le certificat a expiré ou est invalide."
        fi
        """,
        _CERT,
        r"""mkdir -p "$W/certs/app1.dev.local"; echo 'not a certificate' > "$W/certs/app1.dev.local/app1.dev.local.crt" """,
        "openssl x509 -in \"$W/certs/app1.dev.local/app1.dev.local.crt\" -noout -checkend 0 >/dev/null 2>&1 || {\n"
        + _CERT
        + "\n}",
        p="Le certificat est valide.",
        f="Le certificat a expiré ou est invalide.",
        tools=("openssl",),
    ),
    m(
        "server-dostupen-russian-ping",
        "SanchrTV/new_repo:check_server.sh",
        "message",
        "ru",
        r"""
        PATH="$W/bin:$PATH"
        server=google.com
        ping -c 1 $server &> /dev/null
        if [ $? -eq 0 ]; then
          echo "Сервер $server доступен."
        else
          echo "Сервер $server недоступен."
        fi
        """,
        _w(_PING, 'mkdir -p "$W/net"; touch "$W/net/up"'),
        _PING,
        _w(_PING, 'mkdir -p "$W/net"; touch "$W/net/up"'),
        p="Сервер google.com доступен.",
        f="Сервер google.com недоступен.",
        note="the prompt `read -p … server` became an assignment; ping is a script in $W/bin",
    ),
    m(
        "tests-function-named-test-passed-failed",
        "coders-school/linux:.github/scripts/tests.sh",
        "message",
        "en",
        r"""
        cd "$W"

        function test()
        {
            ./check.sh "$1" #> /dev/null
            if [[ "$?" -eq 0 ]] ; then
                echo "$1... ✅ Passed"
            else
                echo "$1... ❌ Failed"
            fi
        }

        test test_data/1.txt
        test test_data/2.txt
        """,
        r"""
        mkdir -p "$W/test_data"; printf '#!/bin/sh\n[ "$(cat "$1")" = valid ]\n' > "$W/check.sh"; chmod +x "$W/check.sh"
        echo valid > "$W/test_data/1.txt"; echo valid > "$W/test_data/2.txt"
        """,
        r"""
        mkdir -p "$W/test_data"; printf '#!/bin/sh\n[ "$(cat "$1")" = valid ]\n' > "$W/check.sh"; chmod +x "$W/check.sh"
        echo valid > "$W/test_data/1.txt"; echo broken > "$W/test_data/2.txt"
        """,
        r"""
        mkdir -p "$W/test_data"; printf '#!/bin/sh\n[ "$(cat "$1")" = valid ]\n' > "$W/check.sh"; chmod +x "$W/check.sh"
        echo valid > "$W/test_data/1.txt"; echo valid > "$W/test_data/2.txt"
        """,
        p="test_data/2.txt... ✅ Passed",
        f="test_data/2.txt... ❌ Failed",
        note="the script under test (check.sh) is a script in $W that accepts a file saying `valid`; run from $W",
    ),
    m(
        "ipmatch-korean-case-ping-ok-ng",
        "seraekim/srkim-lang-sh:05_network/066_ipmatch/ipmatch.sh",
        "message",
        "ko",
        r"""
        PATH="$W/bin:$PATH"
        set -- 192.168.2.1
        # ip주소마다 다른 처리를 하도록 간단히 분기하고 싶을 때

        # 대상 IP 주소를 명령행 인수로 지정하지 않으면 에러 표시 후 종료
        if [ -z "$1" ]; then
          echo "IP 주소를 지정하세요." >&2
          exit 1
        fi

        # 대상 네트워크라면 ping 명령어 실행
        case "$1" in
          192.168.2.*|192.168.10.*)
            # -c 는 실행횟수, 종료 status 만 필요, 도중 출력 필요없음 /dev/null
            ping -c 1 "$1" > /dev/null 2>&1

            if [ $? -eq 0 ]; then
              echo "Ping to $1 : [OK]"
            else
              echo "Ping to $! : [NG]"
            fi
          ;;
          *) echo "$1 테스트 대상이 아닙니다." >&2 ; ㄷ턋 2 ;;
        esac
        """,
        _w(_PING, 'mkdir -p "$W/net"; touch "$W/net/up"'),
        _PING,
        _w(_PING, 'mkdir -p "$W/net"; touch "$W/net/up"'),
        p="Ping to 192.168.2.1 : [OK]",
        f="Ping to  : [NG]",
        note="$1 set to 192.168.2.1; ping is a script in $W/bin; the author's `$!` and `ㄷ턋 2` typos kept",
    ),
    m(
        "lightstar-json-tool-loop-success-incorrect",
        "danieldin95/lightstars:packaging/script/check.sh",
        "message",
        "en",
        r"""
        DIR="$W/lightstar"
        FILE=$(find ${DIR} -name "*.json")


        for i in ${FILE}; do
            echo "-- Checking ${i}"
            output=$(python -m json.tool $i 2>&1)
            if [ $? -ne 0 ]; then
                echo "-- ... incorrect and output errors:"
                echo "${output}"
            else
                echo "-- ... success"
            fi
            echo ""
        done
        """,
        r"""mkdir -p "$W/lightstar"; echo '{"listen": "0.0.0.0:10080"}' > "$W/lightstar/lightstar.json" """,
        r"""mkdir -p "$W/lightstar"; echo '{"listen": "0.0.0.0:10080",}' > "$W/lightstar/lightstar.json" """,
        r"""mkdir -p "$W/lightstar"; echo '{"listen": "0.0.0.0:10080"}' > "$W/lightstar/lightstar.json" """,
        p="-- ... success",
        f="-- ... incorrect and output errors:",
        tools=("python",),
    ),
    m(
        "compose-modules-printf-state-table",
        "alexxa/compose-tests:tests/parse_output.sh",
        "message",
        "en",
        r"""
        cd "$W"
        set -- modules.txt

        installed_modules='installed_modules.log'
        enabled_modules='enabled_modules.log'
        failed_modules='error.log'
        failed_modules_amount=$(cat $failed_modules | wc -l)

        sed '/Last metadata expiration/Q' installed_modules.log

        echo "----------------------------------------------------------------------"
        printf "\n%-25s =>  %-25s\n" "MODULE" "STATE"
        echo "----------------------------------------------------------------------"

        while IFS='' read -r line || [[ -n "$line" ]]; do
                if $(grep -q "$line" "$failed_modules"); then
                    printf "%-25s =>  %-25s\n" "$line" "Error: See logs [1, 2]"
        	elif $(grep -q "$line" "$installed_modules"); then
        	    printf "%-25s =>  %-25s\n" "$line" "installed"
        	    echo  "$item"
        	elif $(grep -q "$line" "$enabled_modules"); then
                    printf "%-25s =>  %-25s\n" "$line" "enabled"
        	else
                    printf  "%-25s =>  %-25s\n" "$line" "Error: something is wrong"
        	fi
        done < "$1"
        """,
        r"""
        echo nodejs > "$W/modules.txt"; : > "$W/error.log"; : > "$W/enabled_modules.log"
        printf 'nodejs:18 [i]\nLast metadata expiration check: 0:01:02 ago.\n' > "$W/installed_modules.log"
        """,
        r"""
        echo nodejs > "$W/modules.txt"; echo 'nodejs: conflicting requests' > "$W/error.log"
        : > "$W/enabled_modules.log"; printf 'Last metadata expiration check: 0:01:02 ago.\n' > "$W/installed_modules.log"
        """,
        r"""
        echo nodejs > "$W/modules.txt"; : > "$W/error.log"; : > "$W/enabled_modules.log"
        printf 'nodejs:18 [i]\nLast metadata expiration check: 0:01:02 ago.\n' > "$W/installed_modules.log"
        """,
        p="nodejs                    =>  installed",
        f="nodejs                    =>  Error: See logs [1, 2]",
        note="run from $W with $1 set to the module list; the logs are files in $W",
    ),
    m(
        "findmnt-mounted-not-mounted",
        "reshakk/Linux-sez:script/check_mnt.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        set -- /mnt/data
        # Usage: ./check_mnt /mnt/mount_point
        # findmnt -x can check fstab file for errors

        if findmnt -rno TARGET "$1" >/dev/null; then
            echo "$1 mounted."
        else
            echo "$1 not mounted."
        fi
        """,
        _w(_bin("findmnt", r"""for a; do t=$a; done; grep -qx "$t" "$W/mounts" && echo "$t" """), 'echo /mnt/data > "$W/mounts"'),
        _w(_bin("findmnt", r"""for a; do t=$a; done; grep -qx "$t" "$W/mounts" && echo "$t" """), 'echo /boot > "$W/mounts"'),
        _w(_bin("findmnt", r"""for a; do t=$a; done; grep -qx "$t" "$W/mounts" && echo "$t" """), 'echo /mnt/data > "$W/mounts"'),
        p="/mnt/data mounted.",
        f="/mnt/data not mounted.",
        note="findmnt is a script in $W/bin reading $W/mounts; $1 set to /mnt/data",
    ),
    m(
        "systemctl-status-grep-awk-noooo-off",
        "nic-instruction/hello-nti-300:test_status.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        set -- nginx

        if [ -z "$1" ] ; then
          echo "you didn't provide and argument"
          exit 0;
        fi

        status=$(systemctl status $1 | grep Active | awk '{print $2}')
        inactive="inactive"

        if [ $status == $inactive ]; then
           echo "noooooooooo it is off"
        else
           echo "My status is $status"
        fi
        """,
        _w(_SYSTEMCTL, 'mkdir -p "$W/units"; echo active > "$W/units/nginx"'),
        _w(_SYSTEMCTL, 'mkdir -p "$W/units"; echo inactive > "$W/units/nginx"'),
        _w(_SYSTEMCTL, 'mkdir -p "$W/units"; echo active > "$W/units/nginx"'),
        p="My status is active",
        f="noooooooooo it is off",
        note="systemctl is a script in $W/bin reading $W/units; $1 set to nginx",
    ),
    m(
        "monitoracao-curl-http-code-portuguese",
        "mnishimori/aluraShellScriptP1:monitoracao-servidor.sh",
        "message",
        "pt",
        r"""
        resposta_http=$(curl --write-out %{http_code} --silent --output /dev/null http://127.0.0.1:$HTTP_PORT/login)

        if [ $resposta_http -eq 200 ]
        then
            echo "Tudo está OK com o servidor!"
        else
            echo "Houve um problema no servidor. Reiniciando o servidor..."
            echo "Servidor reiniciado!"
        fi
        """,
        r"""echo '<form>login</form>' > "$W/login" """,
        r""":""",
        r"""echo '<form>login</form>' > "$W/login" """,
        p="Tudo está OK com o servidor!",
        f="Houve um problema no servidor. Reiniciando o servidor...",
        server=True,
    ),
    m(
        "zfile-status-chinese-ps-grep-n-awk",
        "zfile-dev/zfile:.package/script/status.sh",
        "message",
        "zh",
        r"""
        PATH="$W/bin:$PATH"

        echo "------------------ 检测状态 START --------------"
        pid=`ps -ef | grep -n zfile | grep -v grep | grep -v launch | grep -v .sh | awk '{print $2}'`
        if [ -z "${pid}" ]
        then
           echo "未运行, 无需停止!"
        else
           echo "运行pid：${pid}"
        fi

        echo "------------------ 检测状态  END  --------------"
        """,
        _w(_PS, r"""echo 'root        4242       1  0 10:00 ?        00:00:07 java -Dfile.encoding=utf-8 -jar zfile.jar' > "$W/procs" """),
        _w(_PS, r"""echo 'root         880       1  0 09:58 ?        00:00:00 /usr/sbin/cron -f' > "$W/procs" """),
        _w(_PS, r"""echo 'root        4242       1  0 10:00 ?        00:00:07 java -Dfile.encoding=utf-8 -jar zfile.jar' > "$W/procs" """),
        p="运行pid：4242",
        f="未运行, 无需停止!",
        note="ps is a script in $W/bin listing $W/procs",
    ),
    m(
        "network3-chinese-ps-aux-grep-m1",
        "jiangyaqiii/network3:look_status.sh",
        "message",
        "zh",
        r"""
        PATH="$W/bin:$PATH"

        pid=$(ps -aux | grep -v grep | grep -m 1 'node' | awk '{print $2}')

        if [ -n "$pid" ]; then
            echo "network3运行中，进程ID为 $pid"
        else
            echo "停止"
        fi
        """,
        _w(_PS, r"""echo 'root        5151     1  0 11:00 ?        00:00:03 node /opt/network3/index.js' > "$W/procs" """),
        _w(_PS, r"""echo 'root         880     1  0 09:58 ?        00:00:00 /usr/sbin/cron -f' > "$W/procs" """),
        _w(_PS, r"""echo 'root        5151     1  0 11:00 ?        00:00:03 node /opt/network3/index.js' > "$W/procs" """),
        p="network3运行中，进程ID为 5151",
        f="停止",
        note="ps is a script in $W/bin listing $W/procs",
    ),
    m(
        "passive-check-dig-ternary-exec-stderr",
        "DevilCoders/Yandex:admins/git-repo/packages/config-monitoring-corba-back/bin/dns_local.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"

        #check if bind is alive and ok

        res="PASSIVE-CHECK:dns_local;"

        exec 2> /dev/null;

        dig @localhost localhost > /dev/null && echo "${res}0;Ok" || echo "${res}2;DNS is down!"
        """,
        _w(
            _bin("dig", r"""[ -e "$W/named/up" ] && { echo "localhost. 604800 IN A 127.0.0.1"; exit 0; }; echo ";; connection timed out; no servers could be reached"; exit 9"""),
            'mkdir -p "$W/named"; touch "$W/named/up"',
        ),
        _bin("dig", r"""[ -e "$W/named/up" ] && { echo "localhost. 604800 IN A 127.0.0.1"; exit 0; }; echo ";; connection timed out; no servers could be reached"; exit 9"""),
        _w(
            _bin("dig", r"""[ -e "$W/named/up" ] && { echo "localhost. 604800 IN A 127.0.0.1"; exit 0; }; echo ";; connection timed out; no servers could be reached"; exit 9"""),
            'mkdir -p "$W/named"; touch "$W/named/up"',
        ),
        p="PASSIVE-CHECK:dns_local;0;Ok",
        f="PASSIVE-CHECK:dns_local;2;DNS is down!",
        note="dig (/usr/bin/dig in the original) is a script in $W/bin",
    ),
    m(
        "resolv-conf-nameserver-or-missing",
        "zanshin/neuepunkte:scripts/dns.sh",
        "message",
        "en",
        r"""
        # nameserver="$(cat $W/resolv.conf | grep nameserver | head -n 1 | awk '{print $2}')"
        nameserver="$(grep -E 'nameserver' $W/resolv.conf | head -n 1 | awk '{print $2}')"

        if [ ! -z "$nameserver" ]; then
            echo "DNS: $nameserver"
        else
            echo "DNS missing"
        fi
        """,
        r"""printf '# generated by NetworkManager\nsearch lan\nnameserver 10.0.0.53\n' > "$W/resolv.conf" """,
        r"""printf '# generated by NetworkManager\nsearch lan\n' > "$W/resolv.conf" """,
        r"""printf '# generated by NetworkManager\nsearch lan\nnameserver 10.0.0.53\n' > "$W/resolv.conf" """,
        p="DNS: 10.0.0.53",
        f="DNS missing",
    ),
    m(
        "id-user-exists-or-not",
        "Sariq03/linux-scripts:check_user.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        username=deploy

        if id "$username" &>/dev/null; then
          echo "User $username exists."
        else
          echo "User $username does not exist."
        fi
        """,
        _w(_ID, _PASSWD_HELD),
        _w(_ID, _PASSWD_BROKEN),
        _w(_ID, _PASSWD_HELD),
        p="User deploy exists.",
        f="User deploy does not exist.",
        note="the prompt became an assignment; id is a script in $W/bin reading $W/passwd",
    ),
    m(
        "passwd-grep-wc-awk-count-heredoc-comment",
        "vishwajeet937/shell-script:check_if_user_exists.sh",
        "message",
        "en",
        r"""
        <<info
        This shell script checks if user exists
        info

        username=deploy

        count=$(cat $W/passwd | grep $username | wc | awk '{print $1}')

        if [ $count == 0 ];
        then
                echo "user does not exist"
        else
                echo "user exists"
        fi
        """,
        _PASSWD_HELD,
        _PASSWD_BROKEN,
        _PASSWD_HELD,
        p="user exists",
        f="user does not exist",
        note="the prompt became an assignment; /etc/passwd is $W/passwd",
    ),
    m(
        "docker-ps-names-echo-1-or-0",
        "roberto23561/projetcyna_devops:scripts/check_docker.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        set -- web
        docker ps --format '{{.Names}}' | grep -q "$1"
        if [ $? -eq 0 ]; then
          echo 1
        else
          echo 0
        fi
        """,
        _w(_bin("docker", r"""[ "$1" = ps ] && cat "$W/containers" 2>/dev/null; exit 0"""), r"""printf 'db\nweb\n' > "$W/containers" """),
        _w(_bin("docker", r"""[ "$1" = ps ] && cat "$W/containers" 2>/dev/null; exit 0"""), r"""printf 'db\n' > "$W/containers" """),
        _w(_bin("docker", r"""[ "$1" = ps ] && cat "$W/containers" 2>/dev/null; exit 0"""), r"""printf 'db\nweb\n' > "$W/containers" """),
        p="1",
        f="0",
        note="docker is a script in $W/bin listing $W/containers; $1 set to web",
    ),
    m(
        "rancher-permissions-loop-continue-fail-bare-exit",
        "paraglade/rancher-security-scan:package/test_helpers/1.1.9.sh",
        "message",
        "en",
        r"""
        set -e
        cd "$W"
        set -- etc/kubernetes

        check_files=${1}

        for file in $(find ${check_files} -maxdepth 1 -type f ); do
        	file_permission=$(stat -c %a ${file})
          if [[ "${file_permission}" = "644" ]]; then
            continue
        	elif [[ "${file_permission}" = "640" ]]; then
            continue
          elif [[ "${file_permission}" = "600" ]]; then
            continue
          else
            echo "FAIL: ${file} ${file_permission}"
            exit
          fi
        done

        echo "pass"
        """,
        r"""mkdir -p "$W/etc/kubernetes"; echo 'apiVersion: v1' > "$W/etc/kubernetes/admin.conf"; chmod 600 "$W/etc/kubernetes/admin.conf" """,
        r"""mkdir -p "$W/etc/kubernetes"; echo 'apiVersion: v1' > "$W/etc/kubernetes/admin.conf"; chmod 666 "$W/etc/kubernetes/admin.conf" """,
        r"""mkdir -p "$W/etc/kubernetes"; echo 'apiVersion: v1' > "$W/etc/kubernetes/admin.conf"; chmod 600 "$W/etc/kubernetes/admin.conf" """,
        p="pass",
        f="FAIL: etc/kubernetes/admin.conf 666",
        note="`#!/bin/bash -e` became `set -e`; run from $W with $1 set to etc/kubernetes",
    ),
    m(
        "ram-status-free-mt-total-awk",
        "sushantkapare-dev/Shell_Scripting_Zero_To_Hero:Projects/ram_status.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"

        FREE_SPACE=$(free -mt | grep "Total" | awk '{print $4}')
        TH=500

        if [[ $FREE_SPACE -lt $TH ]]
        then
                    echo "WARNING RAM IS RUNING LOW"
        else
                    echo "RAM IS SUFFICIENT $FREE_SPACE M"
        fi
        """,
        _w(_FREE, 'echo 2048 > "$W/freemem"'),
        _w(_FREE, 'echo 300 > "$W/freemem"'),
        _w(_FREE, 'echo 2048 > "$W/freemem"'),
        p="RAM IS SUFFICIENT 2048 M",
        f="WARNING RAM IS RUNING LOW",
        note="free is a script in $W/bin reading the free megabytes from $W/freemem",
    ),
    m(
        "free-m-available-then-alert-only-when-low",
        "CloudLearningrameshbabum/Ramesh:Automation1.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        THRESHOLD=500 # in MB
        AVAILABLE=$(free -m | awk '/Mem/ {print $7}')
        echo "Memory available in MB's : $AVAILABLE MBS"
        if [ $AVAILABLE -lt $THRESHOLD ]; then
            echo "Low Memory Alert! Please have a glance !"
        fi
        """,
        _w(_FREE, 'echo 2048 > "$W/freemem"'),
        _w(_FREE, 'echo 300 > "$W/freemem"'),
        _w(_FREE, 'echo 2048 > "$W/freemem"'),
        p="Memory available in MB's : 2048 MBS",
        f="Low Memory Alert! Please have a glance !",
        note="free is a script in $W/bin reading the available megabytes from $W/freemem",
    ),
    m(
        "cat-then-dollar-question-yes-ng-japanese-comments",
        "iannek/katacoda_sample:シェルスクリプト演習/演習4/step2.md",
        "message",
        "en",
        r"""
        cd "$W"
        cat hoge.txt # hoge.txtの中身を表示

        # hoge.txtが存在する場合は"YES",存在しない場合は"NG"を出力
        if [ $? = 0 ]; then
          #echo "OK"
          echo "YES"
        else
          echo "NG"
        fi
        """,
        r"""echo hoge > "$W/hoge.txt" """,
        r""":""",
        r"""echo hoge > "$W/hoge.txt" """,
        p="YES",
        f="NG",
        note="run from $W",
    ),
    m(
        "estado-conexao-curl-code-or-restart-portuguese",
        "Rodrigodebarros17/aluraShellScript:aula02/monitoramento.sh",
        "message",
        "pt",
        r"""
        PATH="$W/bin:$PATH"
        estado_conexao=$(curl --silent --write-out %{http_code} --output /dev/null http://127.0.0.1:$HTTP_PORT/index.html)
        if [ $estado_conexao -eq 200 ]
        then
            echo "está tudo ok com o servidor"
        else
            echo "houve um problema com o servidor. tentando reinicializar"
            sudo systemctl start httpd
            echo "...servidor reinicializado"
        fi
        """,
        _w(_bin("sudo", "exit 0"), r"""echo '<h1>ok</h1>' > "$W/index.html" """),
        _bin("sudo", "exit 0"),
        _w(_bin("sudo", "exit 0"), r"""echo '<h1>ok</h1>' > "$W/index.html" """),
        p="está tudo ok com o servidor",
        f="houve um problema com o servidor. tentando reinicializar",
        server=True,
        note="http://localhost became the loopback server's /index.html; sudo is a script in $W/bin that does nothing",
    ),
    m(
        "eintrag-vorhanden-german-until-read-branch",
        "g16bogner/FIT5H_KuA:test.sh",
        "message",
        "de",
        r"""
        cd "$W"
        set -- notizen.txt
        if [[ $1 ]]; then
        	abfrage=$1
        else
        	#read -p "Ihre Eingabe: " abfrage
        	abfrage=''
        	#while [[ $abfrage != 'q' ]] && [[ ! -e $abfrage ]]
        	until [[ $abfrage = 'q' ]] || [[ -e $abfrage ]]
        	do
        		read -p "Ihre Eingabe: " abfrage
        		echo "Die Eingabe lautet: $abfrage"
        	done


        fi

        if [[ -e $abfrage ]]
        then
        	echo "Der Eintrag ist vorhanden: $abfrage"
        else
        	echo "Die Datei ist nicht vorhanden!"
        fi
        """,
        r"""echo Einkauf > "$W/notizen.txt" """,
        r""":""",
        r"""echo Einkauf > "$W/notizen.txt" """,
        p="Der Eintrag ist vorhanden: notizen.txt",
        f="Die Datei ist nicht vorhanden!",
        note="run from $W with $1 set to notizen.txt (the prompt loop is never reached)",
    ),
)


EXIT: tuple[Mined, ...] = (
    m(
        "pokedex-health-curl-grep-ok-failed-success",
        "kcmaxwell/full-stack-open-pokedex:health_check.sh",
        "exit",
        "en",
        r"""
        echo "Hello from shell script"

        RESULT=$(curl localhost:$HTTP_PORT/health | grep "ok")

        echo
        if [ "$RESULT" != "ok" ]; then
          echo "Failed"
          exit 1
        else
          echo "Success"
          exit 0
        fi
        """,
        r"""echo ok > "$W/health" """,
        r""":""",
        r"""echo ok > "$W/health" """,
        p="Success",
        f="Failed",
        server=True,
    ),
    m(
        "apt-list-installed-dollar-paren-grep-q-missing",
        "imochoa/jumpstart:index/checkinstall/status.sh",
        "exit",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        missing=0;


        if $(apt list --installed 'checkinstall' | grep -q "\[installed\]")
        then
           echo "[checkinstall] -> [installed!]";
        else
           echo "[checkinstall] -> [NOT installed!]";
           missing=1;
        fi


        if [ "$missing" -eq "0" ];
        then
            exit 0;
        else
            exit 1;
        fi
        """,
        _w(
            _bin("apt", r"""echo "Listing..."; [ -e "$W/dpkg/$3" ] && echo "$3/jammy,now 1.6.3-4 amd64 [installed]"; exit 0"""),
            'mkdir -p "$W/dpkg"; touch "$W/dpkg/checkinstall"',
        ),
        _bin("apt", r"""echo "Listing..."; [ -e "$W/dpkg/$3" ] && echo "$3/jammy,now 1.6.3-4 amd64 [installed]"; exit 0"""),
        _w(
            _bin("apt", r"""echo "Listing..."; [ -e "$W/dpkg/$3" ] && echo "$3/jammy,now 1.6.3-4 amd64 [installed]"; exit 0"""),
            'mkdir -p "$W/dpkg"; touch "$W/dpkg/checkinstall"',
        ),
        p="[checkinstall] -> [installed!]",
        f="[checkinstall] -> [NOT installed!]",
        note="apt is a script in $W/bin listing the packages named in $W/dpkg",
    ),
    m(
        "devcontainer-check-label-command-return-1-report",
        "fivetrans/FX-888D-Transformer-PCB-FX-888D-Transformer-PCB:test/test-utils/test-utils.sh",
        "exit",
        "symbols",
        r"""
        USERNAME=${1:-vscode}

        if [ -z $HOME ]; then
            HOME="/root"
        fi

        FAILED=()

        echoStderr()
        {
            echo "$@" 1>&2
        }

        check() {
            LABEL=$1
            shift
            echo -e "\n🧪 Testing $LABEL"
            if "$@"; then
                echo "✅  Passed!"
                return 0
            else
                echoStderr "❌ $LABEL check failed."
                FAILED+=("$LABEL")
                return 1
            fi
        }

        reportResults() {
            if [[ ${#FAILED[@]} -ne 0 ]]; then
                echoStderr -e "\n💥  Failed tests: " "${FAILED[@]}"
                exit 1
            else
                echo -e "\n💯  All passed!"
                exit 0
            fi
        }

        check "app config" test -f "$W/app.conf"
        check "data dir" test -d "$W/data"
        reportResults
        """,
        r"""echo port=8080 > "$W/app.conf"; mkdir -p "$W/data" """,
        r"""echo port=8080 > "$W/app.conf" """,
        r"""echo port=8080 > "$W/app.conf"; mkdir -p "$W/data" """,
        p="💯  All passed!",
        note="two `check LABEL cmd` calls and `reportResults` as the devcontainer test scripts sourcing this file "
        "make them (the stored copy of the file is cut before `reportResults`; its text is the same lineage's)",
    ),
    m(
        "root-partition-df-pcent-tail-awk-tr-variables",
        "eam-00/Util-scripts:check-disk-usage.sh",
        "exit",
        "en",
        r"""
        ## check-disk-usage.sh
        ## Checks a disk or partition and if the usage goes above the
        ## PERCENTAGE it prints a warning.
        ## Used to make checks via Monit

        DISK='/dev/mapper/t60p--vg-root'
        PERCENTAGE='56'
        MY_DF="$W/bin/df --output=pcent"
        MY_TAIL='/usr/bin/tail -1'
        MY_AWK='/usr/bin/awk'
        MY_TR='/usr/bin/tr -cd '0-9\n''

        if [ $($MY_DF $DISK | $MY_TAIL | $MY_AWK '{print $1}' | $MY_TR) -gt $PERCENTAGE ]; then
         echo "Root Partition: Check Available Disk Space"
         exit 1
        else
         echo "Root Partition: Available Disk Space Is Normal"
         exit 0
        fi
        """,
        _w(_DF, 'echo 42 > "$W/usage"'),
        _w(_DF, 'echo 71 > "$W/usage"'),
        _w(_DF, 'echo 42 > "$W/usage"'),
        p="Root Partition: Available Disk Space Is Normal",
        f="Root Partition: Check Available Disk Space",
        note="/bin/df is a script in $W/bin reading the use% from $W/usage",
    ),
    m(
        "contiki-grep-c-test-fail-printf-outcome",
        "contiki-ng/contiki-ng:tests/check-test.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        set -- 01-compile-base
        FAILS=`grep -c  'TEST FAIL' $1/summary`
        echo "======== Test outcome ======="
        if [ -f "$1/summary" ] && [ $FAILS == 0 ]; then
          printf "Test %s OK\n" "$1"
          exit 0
        else
          printf "Test %s FAIL\n" "$1"
          exit 1
        fi
        """,
        r"""mkdir -p "$W/01-compile-base"; printf 'hello-world/native TEST OK\nrpl-udp/z1 TEST OK\n' > "$W/01-compile-base/summary" """,
        r"""mkdir -p "$W/01-compile-base"; printf 'hello-world/native TEST OK\nrpl-udp/z1 TEST FAIL\n' > "$W/01-compile-base/summary" """,
        r"""mkdir -p "$W/01-compile-base"; printf 'hello-world/native TEST OK\nrpl-udp/z1 TEST OK\n' > "$W/01-compile-base/summary" """,
        p="Test 01-compile-base OK",
        f="Test 01-compile-base FAIL",
        note="run from $W with $1 set to a test directory",
    ),
    m(
        "redis-readiness-response-not-pong-exit",
        "Intellection/docker-redis:scripts/ping_readiness_local.sh",
        "exit",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        REDIS_PORT=6379

        response=$(
            redis-cli \
            -h localhost \
            -p "${REDIS_PORT}" \
            ping
        )

        if [ "$response" != "PONG" ]; then
            echo "$response"
            exit 1
        fi

        echo "$response"
        """,
        _w(
            _bin("redis-cli", r"""[ -e "$W/redis/up" ] && { echo PONG; exit 0; }; echo "Could not connect to Redis at localhost:6379: Connection refused" >&2; exit 1"""),
            'mkdir -p "$W/redis"; touch "$W/redis/up"',
        ),
        _bin("redis-cli", r"""[ -e "$W/redis/up" ] && { echo PONG; exit 0; }; echo "Could not connect to Redis at localhost:6379: Connection refused" >&2; exit 1"""),
        _w(
            _bin("redis-cli", r"""[ -e "$W/redis/up" ] && { echo PONG; exit 0; }; echo "Could not connect to Redis at localhost:6379: Connection refused" >&2; exit 1"""),
            'mkdir -p "$W/redis"; touch "$W/redis/up"',
        ),
        p="PONG",
        note="redis-cli is a script in $W/bin; REDIS_PORT (the container's environment) set in the block",
    ),
    m(
        "ufasta-expect-eq-success-fail-false-errexit",
        "gmarcais/ufasta:tests/common.sh",
        "exit",
        "en",
        r"""
        success() {
            echo "[ OK ] $1"
            true
        }

        fail() {
            echo "[FAIL] $1"
            false
        }

        EXPECT_EQ() {
            test "$1" = "$2" && success "$3" || fail "$3. Expected '$1' got '$2'"
        }

        EXPECT_SUCCESS() {
            test "$?" = "0" && success "$1" || fail "$1"
        }

        PATH=..:$PATH

        set +o | grep pipefail > /dev/null && set -o pipefail
        set -o errexit

        EXPECT_EQ "3" "$(grep -c '>' "$W/reads.fa")" "sequence count"
        """,
        r"""printf '>r1\nACGT\n>r2\nGGCA\n>r3\nTTAG\n' > "$W/reads.fa" """,
        r"""printf '>r1\nACGT\n>r2\nGGCA\n' > "$W/reads.fa" """,
        r"""printf '>r1\nACGT\n>r2\nGGCA\n>r3\nTTAG\n' > "$W/reads.fa" """,
        p="[ OK ] sequence count",
        f="[FAIL] sequence count. Expected '3' got '2'",
        note="one EXPECT_EQ call, as the test scripts sourcing this file make them",
    ),
    m(
        "mandb-expect-pass-label-eval-finish",
        "vecnathewhisperd0/mandb:src/tests/testlib.sh",
        "exit",
        "en",
        r"""
        failures=0

        expect_pass () {
        	ret=0
        	eval "$2" || ret=$?
        	if [ "$ret" = 0 ]; then
        		echo "  PASS: $1"
        	else
        		failures="$(($failures + 1))"
        		echo "  FAIL: $1"
        	fi
        }

        finish () {
        	case $failures in
        		0)
        			exit 0
        			;;
        		*)
        			exit 1
        			;;
        	esac
        }

        expect_pass 'index database built' 'test -s "$W/index.db"'
        finish
        """,
        r"""echo 'man(1)' > "$W/index.db" """,
        r"""touch "$W/index.db" """,
        r"""echo 'man(1)' > "$W/index.db" """,
        p="PASS: index database built",
        f="FAIL: index database built",
        note="one expect_pass call and finish, as the tests sourcing this library make them",
    ),
    m(
        "skull-test-function-pass-false-subshell-exit",
        "dosisod/skull:test/sh/main.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        pass=true

        test() {
        	echo -n "$1 "
        	./build/src/skull ./test/sh/$1.skull
        	if [ "$?" -ne "$2" ]; then
        		/bin/echo -e "\033[91mFAIL\033[0m\n"
        		pass=false
        	else
        		/bin/echo -e "\033[92mPASS\033[0m"
        	fi
        }

        echo "Running Skull unit tests"

        test "exit_code_0" 0
        test "exit_code_1" 1

        $pass || (echo "1 or more tests failed" && exit 1)
        """,
        r"""
        mkdir -p "$W/build/src" "$W/test/sh"; printf '#!/bin/sh\nexit $(cat "$1")\n' > "$W/build/src/skull"; chmod +x "$W/build/src/skull"
        echo 0 > "$W/test/sh/exit_code_0.skull"; echo 1 > "$W/test/sh/exit_code_1.skull"
        """,
        r"""
        mkdir -p "$W/build/src" "$W/test/sh"; printf '#!/bin/sh\nexit $(cat "$1")\n' > "$W/build/src/skull"; chmod +x "$W/build/src/skull"
        echo 0 > "$W/test/sh/exit_code_0.skull"; echo 0 > "$W/test/sh/exit_code_1.skull"
        """,
        r"""
        mkdir -p "$W/build/src" "$W/test/sh"; printf '#!/bin/sh\nexit $(cat "$1")\n' > "$W/build/src/skull"; chmod +x "$W/build/src/skull"
        echo 0 > "$W/test/sh/exit_code_0.skull"; echo 1 > "$W/test/sh/exit_code_1.skull"
        """,
        p="exit_code_1 \x1b[92mPASS\x1b[0m",
        f="1 or more tests failed",
        note="run from $W; the compiler under test is a script exiting with the number its program file holds",
    ),
    m(
        "false-sh-expects-exit-1-success-failure",
        "firedot/false_sh:test.sh",
        "exit",
        "en",
        r"""
        cd "$W"

        bash true.sh
        if [ $? -eq 1 ]; then
          echo SUCCESS: test pass
        else
          echo FAILURE: test fail
          exit 1
        fi
        """,
        r"""echo 'exit 1' > "$W/true.sh" """,
        r"""echo 'exit 0' > "$W/true.sh" """,
        r"""echo 'exit 1' > "$W/true.sh" """,
        p="SUCCESS: test pass",
        f="FAILURE: test fail",
        note="run from $W; the script under test is a file in $W",
    ),
    m(
        "tamper-check-ng-exit-ok-running",
        "UedaTakeyuki/sansi_examples:bash/application.sh",
        "exit",
        "en",
        r"""
        cd "$W"

        # If the file "a" does not exist, it is regarded as tampering, exited.
        if [ ! -f ./a  ] ; then
          echo "NG: exit"
          exit 1
        fi

        # If the return value of "a" is not 1, exited
        if [ `./a` -ne 1 ]; then
          echo "NG: exit"
          exit 1
        fi

        echo "OK:running"
        # The process you want continues below…
        """,
        r"""printf '#!/bin/sh\necho 1\n' > "$W/a"; chmod +x "$W/a" """,
        r""":""",
        r"""printf '#!/bin/sh\necho 1\n' > "$W/a"; chmod +x "$W/a" """,
        p="OK:running",
        f="NG: exit",
        note="run from $W",
    ),
    m(
        "results-grep-fail-unknown-array-count",
        "mattfel1/UnitTracker:status.sh",
        "exit",
        "en",
        r"""
        cd "$W"

        if [ ! -f results ]; then
          echo "FAIL: No results found"
          exit 1
        fi

        errors=(`cat results | grep -i "fail\|unknown" | wc -l`)
        if [[ $errors != 0 ]]; then
          cat results
          echo "FAIL: Errors found"
          exit 1
        else
          echo "Succes"
          exit 0
        fi
        """,
        r"""printf 'unit_a: pass\nunit_b: pass\n' > "$W/results" """,
        r"""printf 'unit_a: pass\nunit_b: fail\n' > "$W/results" """,
        r"""printf 'unit_a: pass\nunit_b: pass\n' > "$W/results" """,
        p="Succes",
        f="FAIL: Errors found",
        note="run from $W",
    ),
    m(
        "debian-iso-files-loop-or-exit-emoji",
        "calebc42/sovereignty-stack:steps/download-debian/verify.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        cd "$W"
        for f in debian-*.iso SHA512SUMS SHA512SUMS.sign; do
          [[ -f $f ]] || { echo "❌ $f missing"; exit 1; }
        done
        echo "✅ All files present"
        """,
        r"""touch "$W/debian-12.5.0-amd64-netinst.iso" "$W/SHA512SUMS" "$W/SHA512SUMS.sign" """,
        r"""touch "$W/debian-12.5.0-amd64-netinst.iso" "$W/SHA512SUMS" """,
        r"""touch "$W/debian-12.5.0-amd64-netinst.iso" "$W/SHA512SUMS" "$W/SHA512SUMS.sign" """,
        p="✅ All files present",
        f="❌ SHA512SUMS.sign missing",
        note="run from $W",
    ),
    m(
        "self-check-files-array-miss-flag-exit-miss",
        "IthaiS/unique:scripts/super_self_check.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        cd "$W"
        files=( backend/api.py backend/Dockerfile
                .github/workflows/backend_ci.yml )
        miss=0; for f in "${files[@]}"; do [ -f "$f" ] || { echo "::error::Missing
        $f"; miss=1; }; done
        [ $miss -eq 0 ] && echo "✅ All files present"
        exit $miss
        """,
        r"""mkdir -p "$W/backend" "$W/.github/workflows"; touch "$W/backend/api.py" "$W/backend/Dockerfile" "$W/.github/workflows/backend_ci.yml" """,
        r"""mkdir -p "$W/backend" "$W/.github/workflows"; touch "$W/backend/api.py" "$W/backend/Dockerfile" """,
        r"""mkdir -p "$W/backend" "$W/.github/workflows"; touch "$W/backend/api.py" "$W/backend/Dockerfile" "$W/.github/workflows/backend_ci.yml" """,
        p="✅ All files present",
        f="::error::Missing",
        note="run from $W; the list shortened to three of its 27 files",
    ),
    m(
        "python-yaml-safe-load-stdin-print-valid",
        "langenhagen/wealth:prototype/scripts/validate-yaml-file.sh",
        "exit",
        "en",
        r"""
        set -- "$W/wealth.yml"
        # Validate the given yaml file via python.
        # Requires Python and the Python package pyyaml to be available.

        python -c 'import sys, yaml; yaml.safe_load(sys.stdin); print("Yaml valid")' < "$1"
        """,
        r"""printf 'accounts:\n  - name: checking\n    currency: EUR\n' > "$W/wealth.yml" """,
        r"""printf 'accounts:\n  - name: [checking\n' > "$W/wealth.yml" """,
        r"""printf 'accounts:\n  - name: checking\n    currency: EUR\n' > "$W/wealth.yml" """,
        p="Yaml valid",
        tools=("python",),
        note="$1 set to the file; needs python with PyYAML",
    ),
    m(
        "circleci-config-yaml-load-and-echo-ok-bash-e",
        "facebookresearch/pytorch3d:.circleci/check.sh",
        "exit",
        "en",
        r"""
        set -e
        cd "$W"
        # Run this script before committing config.yml to verify it is valid yaml.

        python -c 'import yaml; yaml.safe_load(open("config.yml"))' && echo OK
        """,
        r"""printf 'version: 2.1\njobs:\n  build:\n    docker: [{image: cimg/python:3.11}]\n' > "$W/config.yml" """,
        r"""printf 'version: 2.1\njobs:\n  build:\n    docker: [{image: cimg/python:3.11}\n' > "$W/config.yml" """,
        r"""printf 'version: 2.1\njobs:\n  build:\n    docker: [{image: cimg/python:3.11}]\n' > "$W/config.yml" """,
        p="OK",
        tools=("python",),
        note="`#!/bin/bash -e` became `set -e`; run from $W; needs python with PyYAML",
    ),
    m(
        "blaze-test-function-ok-fail-exit-label",
        "samply/blaze:.github/scripts/util.sh",
        "exit",
        "en",
        r"""
        set -e

        test() {
          if [ "$2" = "$3" ]; then
            echo "OK: the $1 is $3"
          else
            echo "Fail: the $1 is $2, expected $3"
            exit 1
          fi
        }

        test "number of patients" "$(cat "$W/patient-count")" "120"
        """,
        r"""echo 120 > "$W/patient-count" """,
        r"""echo 118 > "$W/patient-count" """,
        r"""echo 120 > "$W/patient-count" """,
        p="OK: the number of patients is 120",
        f="Fail: the number of patients is 118, expected 120",
        note="`#!/bin/bash -e` became `set -e`; one call, as the CI scripts sourcing this file make them",
    ),
    m(
        "nagios-permissions-octal-exit-codes",
        "stemid/devops:nagios/check_permissions.sh",
        "exit",
        "en",
        r"""
        set -- "$W/id_rsa" 600

        EXIT_OK=0
        EXIT_WARNING=1
        EXIT_CRITICAL=2
        EXIT_UNKNOWN=3

        check_filename=$1
        check_permissions=$2

        if [[ -z "$check_filename" || -z "$check_permissions" ]]; then
          echo "Usage: ./$0 <filename> <permissions>" 2>&1
        fi

        if [ ! -f "$check_filename" ]; then
          echo "UNKNOWN: File is not readable or not found."
          exit $EXIT_UNKNOWN
        fi

        octal_permissions=$(stat -c '%a' "$check_filename")

        if [ "$octal_permissions" != "$check_permissions" ]; then
          echo "WARNING: Incorrect permissions."
          exit $EXIT_WARNING
        else
          echo "OK: Permissions are correct."
          exit $EXIT_OK
        fi
        """,
        r"""echo key > "$W/id_rsa"; chmod 600 "$W/id_rsa" """,
        r"""echo key > "$W/id_rsa"; chmod 644 "$W/id_rsa" """,
        r"""echo key > "$W/id_rsa"; chmod 600 "$W/id_rsa" """,
        p="OK: Permissions are correct.",
        f="WARNING: Incorrect permissions.",
        note="$1 and $2 set to a file in $W and 600",
    ),
    m(
        "verify-env-command-v-or-subshell-exit-set-e",
        "storesace-cv/barcode-datacenter:scripts/verify_env.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        PATH="$W/bin"
        command -v python3 >/dev/null || (echo "python3 missing" && exit 1)
        command -v git >/dev/null || (echo "git missing" && exit 1)
        echo "Env OK."
        """,
        _w(_bin("python3", "exit 0"), _bin("git", "exit 0")),
        _bin("git", "exit 0"),
        _abs(_w(_bin("python3", "exit 0"), _bin("git", "exit 0"))),
        p="Env OK.",
        f="python3 missing",
        note="PATH is $W/bin alone, where python3 and git are scripts (so that a world can lack python3); the "
        "act names its tools by absolute path: run after this check in one session (the life plan), it finds "
        "PATH narrowed, as plain bash would leave it",
    ),
    m(
        "grep-extended-found-or-missing-then-cat",
        "DbeltCol/curso-github-actions:.github/script/check-file.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        FILE=README.md
        SEARCH="^## Usage"
        # Make sure this file is executable
        # chmod a+x .github/script/check-file.sh

        # Make sure to escape your backslashes => \\ <= in YAML
        # So that its still a single \ in bash

        echo "Check that $FILE includes $SEARCH"
        if grep --extended-regexp "$SEARCH" -- "$FILE"
        then
          echo "Found $SEARCH in $FILE"
          exit 0  # Success exit code
        else
          echo "Missing $SEARCH in $FILE"
          echo "----------------"
          echo "$(cat "$FILE")"
          echo "----------------"
          echo "Error: Required text '$SEARCH' was not found in '$FILE'"
          exit 1  # Standard error exit code
        fi
        """,
        r"""printf '# Tool\n\n## Usage\n\nrun it\n' > "$W/README.md" """,
        r"""printf '# Tool\n\nrun it\n' > "$W/README.md" """,
        r"""printf '# Tool\n\n## Usage\n\nrun it\n' > "$W/README.md" """,
        p="Found ^## Usage in README.md",
        f="Missing ^## Usage in README.md",
        note="FILE and SEARCH (the workflow's environment) set in the block; run from $W",
    ),
    m(
        "git-diff-exit-code-clean-dirty",
        "clarketm/image-map:resources/publish.sh",
        "exit",
        "en",
        r"""
        cd "$W/repo"

        if git diff --exit-code; then
          echo 'Clean working tree'
        else
          echo 'Dirty working tree'
          exit 1
        fi
        """,
        _GIT_REPO,
        _GIT_REPO + '\necho "export default { dirty: true }" > "$W/repo/index.js"',
        r"""[ -d "$W/repo/.git" ] && git -C "$W/repo" checkout -q -- . || {""" + "\n" + _GIT_REPO + "\n}",
        p="Clean working tree",
        f="Dirty working tree",
        tools=("git",),
        note="run in a git repository in $W",
    ),
    m(
        "tree-status-porcelain-set-e-dirty-diff",
        "cri-o/cri-o:hack/tree_status.sh",
        "exit",
        "en",
        r"""
        set -e
        cd "$W/repo"

        STATUS=$(git status --porcelain)
        if [[ -z $STATUS ]]
        then
        	echo "tree is clean"
        else
        	echo "tree is dirty, please commit all changes"
        	echo ""
        	echo "$STATUS"
        	echo ""
        	git diff | cat
        	exit 1
        fi
        """,
        _GIT_REPO,
        _GIT_REPO + '\necho "export default { dirty: true }" > "$W/repo/index.js"',
        r"""[ -d "$W/repo/.git" ] && git -C "$W/repo" checkout -q -- . || {""" + "\n" + _GIT_REPO + "\n}",
        p="tree is clean",
        f="tree is dirty, please commit all changes",
        tools=("git",),
        note="run in a git repository in $W",
    ),
    m(
        "fichier-vide-french-inverted-exit-3",
        "Jean-BaptisteRoux/test:check-code.sh",
        "exit",
        "fr",
        r"""
        cd "$W"
        set -- code.txt

        # Vérifier que le fichier n'est pas vide
        if [ -s "$1" ]; then
            echo "Le fichier '$1' n'est pas vide."
            exit 3
        else
            echo "Erreur : le fichier '$1' est vide."
        fi
        """,
        r"""touch "$W/code.txt" """,
        r"""echo 'print(1)' > "$W/code.txt" """,
        r""": > "$W/code.txt" """,
        p="Erreur : le fichier 'code.txt' est vide.",
        f="Le fichier 'code.txt' n'est pas vide.",
        note="run from $W with $1 set to code.txt; the author's exit status says an empty file is the good world",
    ),
    # Mined after issue 34 (stop 50), for its tracing: the block turns xtrace on and off around the command it
    # runs, quietly (`{ set +x; } 2>/dev/null`), so a run under Director leaves no whole trace and its
    # verdict rests on what is left, the exit status (docs/verify-semantics.md, "whole traces").
    m(
        "fabric-chaincode-query-retry-xtrace-toggled-fatalln",
        "hyperledger/fabric-samples:test-network/scripts/ccutils.sh",
        "exit",
        "en",
        r"""
        cd "$W"
        PATH="$W/bin:$PATH"
        C_RESET='\033[0m'
        C_RED='\033[0;31m'
        C_GREEN='\033[0;32m'
        C_BLUE='\033[0;34m'

        # println echos string
        function println() {
          echo -e "$1"
        }

        # errorln echos i red color
        function errorln() {
          println "${C_RED}${1}${C_RESET}"
        }

        # successln echos in green color
        function successln() {
          println "${C_GREEN}${1}${C_RESET}"
        }

        # infoln echos in blue color
        function infoln() {
          println "${C_BLUE}${1}${C_RESET}"
        }

        # fatalln echos in red color and exits with fail status
        function fatalln() {
          errorln "$1"
          exit 1
        }

        setGlobals() {
          export CORE_PEER_LOCALMSPID="Org${1}MSP"
        }

        CHANNEL_NAME=mychannel
        CC_NAME=basic
        MAX_RETRY=3
        DELAY=0

        function chaincodeQuery() {
          ORG=$1
          setGlobals $ORG
          infoln "Querying on peer0.org${ORG} on channel '$CHANNEL_NAME'..."
          local rc=1
          local COUNTER=1
          # continue to poll
          # we either get a successful response, or reach MAX RETRY
          while [ $rc -ne 0 -a $COUNTER -lt $MAX_RETRY ]; do
            sleep ${DELAY:-$CLI_DELAY}
            infoln "Attempting to Query peer0.org${ORG}, Retry after ${DELAY:-$CLI_DELAY} seconds."
            set -x
            peer chaincode query -C $CHANNEL_NAME -n ${CC_NAME} -c '{"Args":["org.hyperledger.fabric:GetMetadata"]}' >&log.txt
            res=$?
            { set +x; } 2>/dev/null
            let rc=$res
            COUNTER=$(expr $COUNTER + 1)
          done
          cat log.txt
          if test $rc -eq 0; then
            successln "Query successful on peer0.org${ORG} on channel '$CHANNEL_NAME'"
          else
            fatalln "After $MAX_RETRY attempts, Query result on peer0.org${ORG} is INVALID!"
          fi
        }

        chaincodeQuery 1
        """,
        _w(_PEER, 'mkdir -p "$W/chaincodes/mychannel"; echo \'{"info":{"title":"basic"}}\' > "$W/chaincodes/mychannel/basic"'),
        _w(_PEER, 'mkdir -p "$W/chaincodes/mychannel"'),
        _w(_PEER, 'mkdir -p "$W/chaincodes/mychannel"; echo \'{"info":{"title":"basic"}}\' > "$W/chaincodes/mychannel/basic"'),
        p="\x1b[0;32mQuery successful on peer0.org1 on channel 'mychannel'\x1b[0m",
        f="\x1b[0;31mAfter 3 attempts, Query result on peer0.org1 is INVALID!\x1b[0m",
        note=(
            "the helpers it calls are copied from test-network/scripts/utils.sh; `setGlobals` (envVar.sh, which sets "
            "the peer's TLS and MSP variables) sets the MSP id only; `peer` is a script in $W/bin reading "
            "$W/chaincodes; MAX_RETRY and DELAY (network.config) set to 3 and 0; run from $W for its log.txt"
        ),
    ),
)


FAILURE_BRANCH: tuple[Mined, ...] = (
    m(
        "docs-need-array-missing-flag-silent",
        "barba-rossa/code-retreat:tools/check-docs.sh",
        "failure-branch",
        "en",
        r"""
        set -euo pipefail
        cd "$W"
        need=( "docs/learn.md" "docs/prompts.md" "docs/retro.md" "docs/20-ADRs/ADR-0001-initial-approach.md" )
        missing=0
        for f in "${need[@]}"; do
          if [ ! -e "$f" ]; then
            echo "❌ Missing $f"
            missing=1
          fi
        done
        exit $missing
        """,
        r"""mkdir -p "$W/docs/20-ADRs"; touch "$W/docs/learn.md" "$W/docs/prompts.md" "$W/docs/retro.md" "$W/docs/20-ADRs/ADR-0001-initial-approach.md" """,
        r"""mkdir -p "$W/docs/20-ADRs"; touch "$W/docs/learn.md" "$W/docs/prompts.md" "$W/docs/20-ADRs/ADR-0001-initial-approach.md" """,
        r"""mkdir -p "$W/docs/20-ADRs"; touch "$W/docs/learn.md" "$W/docs/prompts.md" "$W/docs/retro.md" "$W/docs/20-ADRs/ADR-0001-initial-approach.md" """,
        f="❌ Missing docs/retro.md",
        note="run from $W",
    ),
    m(
        "checkerrs-not-found-or-cat-nonempty",
        "philbudne/tmg:src/checkerrs.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        set -- tmgl.errs

        if [ ! -f $1 ]; then
            echo $1 not found
            exit 1
        fi

        if [ -s $1 ]; then
            cat $1
            exit 1
        fi

        exit 0
        """,
        r"""touch "$W/tmgl.errs" """,
        r"""echo 'line 12: syntax error' > "$W/tmgl.errs" """,
        r""": > "$W/tmgl.errs" """,
        f="line 12: syntax error",
        note="run from $W with $1 set to the compiler's error file",
    ),
    m(
        "blatted-zero-size-find-prune-egrep",
        "bcowgill/bsac-linux-cfg:bin/check-blatted-files.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        # check for zero size files which have been blatted somehow
        BLATTED=`find . \( -name node_modules -o -path ./dist \) -prune -o -size 0 | egrep -v '(/dist|node_modules|\.log$|\.timestamp$)'`
        if [ ! -z "$BLATTED" ]; then
        	echo WARNING some of your files are zero sized! have they been blatted?
        	echo $BLATTED
        	exit 1
        fi
        """,
        r"""mkdir -p "$W/src" "$W/node_modules"; echo 'export {}' > "$W/src/app.js"; touch "$W/node_modules/empty.js" "$W/build.log" """,
        r"""mkdir -p "$W/src" "$W/node_modules"; : > "$W/src/app.js"; touch "$W/node_modules/empty.js" "$W/build.log" """,
        r"""mkdir -p "$W/src" "$W/node_modules"; echo 'export {}' > "$W/src/app.js"; touch "$W/node_modules/empty.js" "$W/build.log" """,
        f="WARNING some of your files are zero sized! have they been blatted?",
        note="run from $W",
    ),
)

IDIOMS: tuple[Mined, ...] = (*MESSAGE, *EXIT, *FAILURE_BRANCH)
