"""Mined verify idioms, second half: install/deploy scripts and runbooks (see `mined.py` for the format).

Install scripts and post-install verification, deploy scripts, runbooks and ops scripts (backups, cron, databases,
logs, disks, certificates, service status) and dotfiles/bootstrap scripts, in the languages their authors wrote.
Each was adapted only as far as a world needs: a package manager, a daemon or a remote host became a file, a
directory, a tiny tool in `$W/bin` or the loopback HTTP server; a `note` says so when more than paths changed.
"""

from __future__ import annotations

from tests.verify_corpus.mined import Mined, m, sh, validate

# Fake tools the worlds write, shared by several idioms (each is a few lines of sh; `W` is baked in).
_APT = sh(r"""
    mkdir -p "$W/bin"
    cat > "$W/bin/apt-get" <<EOF
    #!/bin/sh
    [ -s "$W/sources.list" ] || { echo "E: The list of sources could not be read." >&2; exit 100; }
    echo "Reading package lists... Done"
    EOF
    chmod +x "$W/bin/apt-get"
""") + "\n"

_EC_CERT = (
    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=example.org "
    "-keyout /dev/null"
)

IDIOMS: tuple[Mined, ...] = (
    # ---------------------------------------------------------------- install scripts: is the tool there?
    m(
        "dotfiles-helpers-emoji-checked-missing",
        "bdryanovski/dotfiles:helpers.sh",
        "message",
        "symbols",
        r"""
        function commandExist() {
          if ! test -x "$(command -v $1)"; then
            return 1
          fi
          return 0
        }
        function checked() {
          echo "✅ $1"
        }
        function missing() {
          echo "❌ $1"
        }
        PATH="$W/bin:$PATH"
        if commandExist tmux-sessionizer; then checked "tmux-sessionizer"; else missing "tmux-sessionizer"; fi
        if commandExist dotbot-lite; then checked "dotbot-lite"; else missing "dotbot-lite"; fi
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\n' > "$W/bin/tmux-sessionizer"; printf '#!/bin/sh\n' > "$W/bin/dotbot-lite"
        chmod +x "$W/bin/tmux-sessionizer" "$W/bin/dotbot-lite"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\n' > "$W/bin/dotbot-lite"; chmod +x "$W/bin/dotbot-lite"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\n' > "$W/bin/tmux-sessionizer"; printf '#!/bin/sh\n' > "$W/bin/dotbot-lite"
        chmod +x "$W/bin/tmux-sessionizer" "$W/bin/dotbot-lite"
        """,
        p="✅ tmux-sessionizer",
        f="❌ tmux-sessionizer",
        note="the helpers are called for two tools the world installs in $W/bin (put first on PATH)",
    ),
    m(
        "command-check-prints-true-or-false",
        "noir-lang/noir:.github/scripts/command-check.sh",
        "message",
        "en",
        r"""
        set -eu
        PATH="$W/bin:$PATH"
        command -v nargo-lite >/dev/null 2>&1 && echo "true" || { echo >&2 "nargo-lite is not installed" && echo "false"; }
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/nargo-lite"; chmod +x "$W/bin/nargo-lite" """,
        r""":""",
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/nargo-lite"; chmod +x "$W/bin/nargo-lite" """,
        p="true",
        f="false",
        note="$1 became a tool name the world installs in $W/bin",
    ),
    m(
        "checkinstall-case-chain-error-exit-mid-block",
        "seven6306/ubuntu_nginx_server:lib/CheckInstall.sh",
        "failure-branch",
        "en",
        r"""
        pkgName=nginx
        action=--install
        x=0
        for f in "$W/etc/nginx/nginx.conf"; do [ -f $f ] && x=$(($x+1)); done
        for d in "$W/etc/nginx"; do [ -d $d ] && x=$(($x+1)); done
        case $action in
            --install) [ $x -ne 0 ] && printf "\033[0;31mERROR: $pkgName is already installed.\033[0m\n" && exit 1;;
            --remove)  [ $x -ne 0 ] && printf "\033[0;31mERROR: $pkgName is not installed.\033[0m\n" && exit 1;;
        esac
        printf "%s\t%31s\033[0;32m %s \033[0m]\n" " * Check if $pkgName is installed      " "[" "OK"
        """,
        r""":""",
        r"""mkdir -p "$W/etc/nginx"; echo 'events {}' > "$W/etc/nginx/nginx.conf" """,
        r"""rm -rf "$W/etc/nginx" """,
        p="* Check if nginx is installed      \t                              [\x1b[0;32m OK \x1b[0m]",
        f="\x1b[0;31mERROR: nginx is already installed.\x1b[0m",
        note="the function's body with its arguments set (--install: the check holds when nginx is absent)",
    ),
    m(
        "ffmpeg-installed-german-escaped-quotes",
        "l5n0/MpBot:Scripts/Linux.sh",
        "exit",
        "de",
        r"""
        set -e
        if command -v "$W/bin/ffmpeg" &> /dev/null
        then
            echo \"ffmpeg wurde erfolgreich installiert.\"
        else
            echo \"Fehler: ffmpeg konnte nicht installiert werden.\"
            exit 1
        fi
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/ffmpeg"; chmod +x "$W/bin/ffmpeg" """,
        r""":""",
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/ffmpeg"; chmod +x "$W/bin/ffmpeg" """,
        p='"ffmpeg wurde erfolgreich installiert."',
        f='"Fehler: ffmpeg konnte nicht installiert werden."',
        note='the author\'s \\" quotes print literal quotes; `command -v ffmpeg` probes $W/bin/ffmpeg by path',
    ),
    m(
        "copy-then-done-or-failure-bare-exit-chinese",
        "yunjiao20/PyCh:install.sh",
        "message",
        "zh",
        r"""
        a(){
            if [ $1 -eq 0 ]
            then
                echo done完成
            else
                echo Failure失败
                echo -e $2
                exit
            fi
        }
        echo -n "复制当前目录PyCh至/bin ......"
        cp "$W/PyCh" "$W/bin/"
        a $? "\033[31m!!!文件复制失败!!!\033[0m\n请检查是否权限不足、此磁盘是否存在/bin目录、当前目录是否存在PyCh文件"
        echo 程序运行成功
        """,
        r"""mkdir -p "$W/bin"; echo 'print("PyCh")' > "$W/PyCh" """,
        r"""mkdir -p "$W/bin" """,
        r"""mkdir -p "$W/bin"; echo 'print("PyCh")' > "$W/PyCh" """,
        p="复制当前目录PyCh至/bin ......done完成",
        f="复制当前目录PyCh至/bin ......Failure失败",
        note="sudo cp into /bin became cp into $W/bin; the later `rm -rf *` step is left out",
    ),
    m(
        "rpm-grep-dollar-question-chinese",
        "shine9527/cloud1907:shell/09.if_condition.sh",
        "message",
        "zh",
        r"""
        software=nginx
        cat "$W/rpm-qa.txt" | grep $software
        if [ $? == 0 ];then
          echo "系统中已经安装了$software"
        else
          echo "请使用yum进行安装"
          echo "如果直接安装不上, 可以使用yum provides $software"
        fi
        """,
        r"""printf 'bash-4.2.46-34.el7.x86_64\nnginx-1.20.1-10.el7.x86_64\n' > "$W/rpm-qa.txt" """,
        r"""printf 'bash-4.2.46-34.el7.x86_64\n' > "$W/rpm-qa.txt" """,
        r"""
        grep -q '^nginx-' "$W/rpm-qa.txt" 2>/dev/null || echo 'nginx-1.20.1-10.el7.x86_64' >> "$W/rpm-qa.txt"
        """,
        p="系统中已经安装了nginx",
        f="请使用yum进行安装",
        note="`rpm -qa` became the package list the world writes; $1 became nginx",
    ),
    m(
        "install-prereqs-chinese-if-not-exit",
        "isxcode/pytorch-yun:install.sh",
        "failure-branch",
        "zh",
        r"""
        echo "开始安装"
        if ! command -v "$W/bin/java" &>/dev/null; then
          echo "【安装结果】：未检测到java命令，请安装java"
          exit 1
        fi
        if ! command -v "$W/bin/node" &>/dev/null; then
          echo "【安装结果】：未检测到node命令，请安装nodejs"
          exit 1
        fi
        echo "【安装结果】：安装成功"
        """,
        r"""
        mkdir -p "$W/bin"
        for t in java node; do printf '#!/bin/sh\n' > "$W/bin/$t"; chmod +x "$W/bin/$t"; done
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/java"; chmod +x "$W/bin/java" """,
        r"""
        mkdir -p "$W/bin"
        for t in java node; do printf '#!/bin/sh\n' > "$W/bin/$t"; chmod +x "$W/bin/$t"; done
        """,
        p="【安装结果】：安装成功",
        f="【安装结果】：未检测到node命令，请安装nodejs",
        note="the tools are probed by their path in $W/bin",
    ),
    m(
        "german-nested-if-install-script-messages",
        "PsydoV2/LGS-ITEC:install.sh",
        "message",
        "de",
        r"""
        if [ -f "$W/src/main.sh" ]; then
            cp "$W/src/main.sh" "$W/bin/testping"
            rm "$W/src" 2>/dev/null
            if [ -f "$W/bin/testping" ]; then
                chmod +x "$W/bin/testping"
                echo "Skript unter 'testping' verfügbar."
            else
                echo "Fehler beim Installieren des Skripts."
            fi
        else
            echo "Fehler beim Installieren des Skripts (Datei fehlt)."
        fi
        """,
        r"""mkdir -p "$W/src" "$W/bin"; printf '#!/bin/sh\nping -c1 "$1"\n' > "$W/src/main.sh" """,
        r"""mkdir -p "$W/bin" """,
        r"""mkdir -p "$W/src" "$W/bin"; printf '#!/bin/sh\nping -c1 "$1"\n' > "$W/src/main.sh" """,
        p="Skript unter 'testping' verfügbar.",
        f="Fehler beim Installieren des Skripts (Datei fehlt).",
        note="/usr/local/bin became $W/bin; the author's `rm src` (a directory: it fails) is kept, quieted",
    ),
    m(
        "which-git-dollar-question-string-eq-german",
        "WissUIFZ625/www:isGitHere.sh",
        "message",
        "de",
        r"""
        which "$W/bin/git"
        if [ "$?" -eq "0" ]; then
        echo "GIT ist installiert.";
        else
        echo "GIT ist nicht installiert.";
        fi
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/git"; chmod +x "$W/bin/git" """,
        r""":""",
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/git"; chmod +x "$W/bin/git" """,
        p="GIT ist installiert.",
        f="GIT ist nicht installiert.",
        note="`which git` asks for the world's $W/bin/git by path",
    ),
    m(
        "node-installed-version-in-message",
        "VTom21/Fragstore-Webshop:check.sh",
        "message",
        "en",
        r"""
        set -e
        if command -v "$W/bin/node" &> /dev/null; then
            NODE_VERSION=$("$W/bin/node" -v)
            echo "Node.js is installed: $NODE_VERSION"
        else
            echo "Node.js is NOT installed."
        fi
        """,
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v20.11.1\n' > "$W/bin/node"; chmod +x "$W/bin/node"
        """,
        r""":""",
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v20.11.1\n' > "$W/bin/node"; chmod +x "$W/bin/node"
        """,
        p="Node.js is installed: v20.11.1",
        f="Node.js is NOT installed.",
        note="node is the world's $W/bin/node, probed by path",
    ),
    m(
        "result-echo-function-of-dollar-question",
        "Wacky515/dotfiles:function/result_echo.sh",
        "message",
        "en",
        r"""
        result_echo(){
            if [ "$1" -eq 0 ]
            then
                echo ">> Success install $2"
            else
                echo ">> Fail install $2"
            fi
            echo ""
        }
        PROCESS="ripgrep"
        test -x "$W/bin/rg"
        result_echo $? "${PROCESS}"
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/rg"; chmod +x "$W/bin/rg" """,
        r""":""",
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\n' > "$W/bin/rg"; chmod +x "$W/bin/rg" """,
        p=">> Success install ripgrep",
        f=">> Fail install ripgrep",
        note="ym_echo/rb_echo (colour echo) became echo; the install step became `test -x` of its binary; "
        "`readonly PROCESS` lost its readonly (a re-run in one shell would fail on it)",
    ),
    m(
        "misc-utils-check-function-french-loop",
        "tibo43/debian_simple_conf:scripts/misc_utils.sh",
        "message",
        "fr",
        r"""
        LIST='nmap terminator'
        check() {
          if [ $? = 0 ] ; then
            echo "\nInstallation OK."
          else
              echo "\nErreur lors de l'installation."
          fi
        }
        for item in $LIST; do
          echo "\n[INFO] Installation de $item ..."
          grep -qx "$item" "$W/installed.list" 1> /dev/null
          check
        done
        exit 0
        """,
        r"""printf 'nmap\nterminator\n' > "$W/installed.list" """,
        r""": > "$W/installed.list" """,
        r"""printf 'nmap\nterminator\n' > "$W/installed.list" """,
        p="\\nInstallation OK.",
        f="\\nErreur lors de l'installation.",
        note="`sudo apt-get install -y $item` became a look-up in the installed list; echo prints \\n literally",
    ),
    m(
        "apt-update-or-exit-and-install-if-else-spanish",
        "RodraxTB/install_gh_on_ec2_ubuntu:installgh.sh",
        "exit",
        "es",
        r"""
        "$W/bin/apt-get" update || { echo "Fallo al actualizar los paquetes"; exit 1; }
        if "$W/bin/apt-get" install -y git; then
            echo "Git instalado correctamente"
        else
            echo "Fallo en la instalación del Git"
            exit 1
        fi
        """,
        _APT + r"""echo 'deb http://archive.ubuntu.com/ubuntu jammy main' > "$W/sources.list" """,
        _APT + r""": > "$W/sources.list" """,
        _APT + r"""echo 'deb http://archive.ubuntu.com/ubuntu jammy main' > "$W/sources.list" """,
        p="Git instalado correctamente",
        f="Fallo al actualizar los paquetes",
        note="apt-get is a world tool that succeeds when $W/sources.list is not empty",
    ),
    m(
        "if-not-command-failed-spanish",
        "manuelledezma687/resources:ubuntu/bash_course/execution.sh",
        "failure-branch",
        "es",
        r"""
        if ! "$W/bin/healthcheck"
        then
            echo "El comando ha fallado"
            exit 1
        fi
        echo "El comando se ha ejecutado correctamente"
        """,
        r"""
        mkdir -p "$W/bin" "$W/app"; touch "$W/app/ready"
        printf '#!/bin/sh\ntest -f "%s/app/ready"\n' "$W" > "$W/bin/healthcheck"; chmod +x "$W/bin/healthcheck"
        """,
        r"""
        mkdir -p "$W/bin" "$W/app"
        printf '#!/bin/sh\ntest -f "%s/app/ready"\n' "$W" > "$W/bin/healthcheck"; chmod +x "$W/bin/healthcheck"
        """,
        r"""
        mkdir -p "$W/bin" "$W/app"; touch "$W/app/ready"
        printf '#!/bin/sh\ntest -f "%s/app/ready"\n' "$W" > "$W/bin/healthcheck"; chmod +x "$W/bin/healthcheck"
        """,
        p="El comando se ha ejecutado correctamente",
        f="El comando ha fallado",
        note="the author's placeholder `command` became a world tool that checks $W/app/ready",
    ),
    m(
        "if-not-apt-update-exit-portuguese",
        "Ricardobruno06/Automation-Scripts:Instalapacotes.sh",
        "failure-branch",
        "pt",
        r"""
        echo Atualizando repositórios..
        if ! "$W/bin/apt-get" update
        then
            echo "Não foi possível atualizar os repositórios. Verifique seu arquivo /etc/apt/sources.list"
            exit 1
        fi
        echo "Atualização feita com sucesso"
        """,
        _APT + r"""echo 'deb http://deb.debian.org/debian bookworm main' > "$W/sources.list" """,
        _APT,
        _APT + r"""echo 'deb http://deb.debian.org/debian bookworm main' > "$W/sources.list" """,
        p="Atualização feita com sucesso",
        f="Não foi possível atualizar os repositórios. Verifique seu arquivo /etc/apt/sources.list",
        note="apt-get is a world tool that succeeds when $W/sources.list is not empty",
    ),
    m(
        "assignment-prefix-runs-the-file-portuguese",
        "JelielBraz/programacao_Scripts:lista5/8.sh",
        "exit",
        "pt",
        r"""
        bla=cat "$W/etc/shadow"

        if [ $? -eq "0" ]
            then
                echo "Comando executado com êxito"
                exit 0
        else
            echo "Comando falhou"
            exit 1
        fi
        """,
        r"""mkdir -p "$W/etc"; printf '#!/bin/sh\n' > "$W/etc/shadow"; chmod 755 "$W/etc/shadow" """,
        r"""mkdir -p "$W/etc"; printf 'root:*:19000:0:99999:7:::\n' > "$W/etc/shadow"; chmod 640 "$W/etc/shadow" """,
        r"""mkdir -p "$W/etc"; printf '#!/bin/sh\n' > "$W/etc/shadow"; chmod 755 "$W/etc/shadow" """,
        p="Comando executado com êxito",
        f="Comando falhou",
        note="as written, `bla=cat FILE` runs FILE with bla=cat in its environment: the check is whether the "
        "file can be executed",
    ),
    m(
        "failure-function-case-exit-zero-portuguese",
        "faggiano/CAI2017:dialogaralho/install.sh",
        "message",
        "pt",
        r"""
        falhou(){
            case $1 in
            instalacao)
                echo "O programa falhou durante a instalacao"
                exit 0 ;;
            copia)
                echo "O programa falhou durante a cópia"
                exit 0 ;;
            *)
                echo "O programa falhou. Erro desconhecido"
            esac
        }
        "$W/bin/apt-get" update && "$W/bin/apt-get" install dialog -y || falhou instalacao
        cp -R "$W/src/dialogaralho" "$W/share/" || falhou copia
        ln -sf "$W/share/dialogaralho/dialogaralho" "$W/bin/dialogaralho" || falhou
        """,
        _APT
        + r"""
        echo 'deb http://deb.debian.org/debian bookworm main' > "$W/sources.list"
        mkdir -p "$W/src/dialogaralho" "$W/share"; printf '#!/bin/sh\n' > "$W/src/dialogaralho/dialogaralho"
        """,
        _APT + r"""mkdir -p "$W/src/dialogaralho" "$W/share" """,
        _APT
        + r"""
        echo 'deb http://deb.debian.org/debian bookworm main' > "$W/sources.list"
        mkdir -p "$W/src/dialogaralho" "$W/share"; printf '#!/bin/sh\n' > "$W/src/dialogaralho/dialogaralho"
        """,
        p="Reading package lists... Done",
        f="O programa falhou durante a instalacao",
        note="apt-get is a world tool (succeeds when $W/sources.list is not empty); /usr/share and /usr/bin "
        "became $W/share and $W/bin; `ln -s` became `ln -sf` so a second run prints the same",
    ),
    m(
        "update-then-install-russian-ansi-message",
        "alexandr-elefteriadi/install-app-bash:htop-install.sh",
        "message",
        "ru",
        r"""
        htop_output=$("$W/bin/apt" install htop 2>&1)
        echo -e "\n\033[34m ==>\033[37m [HTOP INSTALL]"
        "$W/bin/apt" install htop
        if [ $? -eq 0 ]; then
            echo -e "\n\033[34m ==>\033[32m [УСТАНОВКА HTOP УСПЕШНО ЗАВЕРШИЛАСЬ]"
        else
            echo -e "\n\033[34m ==>\033[31m [УСТАНОВКА HTOP ЗАВЕРШИЛОСЬ ОШИБКОЙ, ЛОГ:]"
            echo "$htop_output"
        fi
        """,
        r"""
        mkdir -p "$W/bin" "$W/pool"; touch "$W/pool/htop_3.2.2_amd64.deb"
        printf '#!/bin/sh\nls "%s/pool/$2"_*.deb >/dev/null 2>&1 || { echo "E: Unable to locate package $2"; exit 100; }\n' \
          "$W" > "$W/bin/apt"; chmod +x "$W/bin/apt"
        """,
        r"""
        mkdir -p "$W/bin" "$W/pool"
        printf '#!/bin/sh\nls "%s/pool/$2"_*.deb >/dev/null 2>&1 || { echo "E: Unable to locate package $2"; exit 100; }\n' \
          "$W" > "$W/bin/apt"; chmod +x "$W/bin/apt"
        """,
        r"""
        mkdir -p "$W/bin" "$W/pool"; touch "$W/pool/htop_3.2.2_amd64.deb"
        printf '#!/bin/sh\nls "%s/pool/$2"_*.deb >/dev/null 2>&1 || { echo "E: Unable to locate package $2"; exit 100; }\n' \
          "$W" > "$W/bin/apt"; chmod +x "$W/bin/apt"
        """,
        p="\x1b[34m ==>\x1b[32m [УСТАНОВКА HTOP УСПЕШНО ЗАВЕРШИЛАСЬ]",
        f="\x1b[34m ==>\x1b[31m [УСТАНОВКА HTOP ЗАВЕРШИЛОСЬ ОШИБКОЙ, ЛОГ:]",
        note="sudo apt is a world tool that finds packages in $W/pool; the author echoes $nginx_output (never "
        "set there) as the log: the log variable the block sets is echoed instead",
    ),
    m(
        "script-test-if-dollar-question-russian",
        "Rubsun/Search_practice_bash:test3.sh",
        "exit",
        "ru",
        r"""
        chmod +x "$W/search_word.sh"
        echo "Запушен тест на проверку корректную работу"

        "$W/search_word.sh" "$W/input" "$W/output"

        if [[ $? -eq 0 ]]
        then
            echo "Тест выполнен успешно, скрипт работает исправно"
        else
            echo "Тест провален, скрипт работает некорректно"
            exit 1
        fi
        """,
        r"""
        printf '#!/bin/sh\ngrep -w deploy "$1" > "$2"\n' > "$W/search_word.sh"
        printf 'build\ndeploy\n' > "$W/input"
        """,
        r"""
        printf '#!/bin/sh\ngrep -w deploy "$1" > "$2"\n' > "$W/search_word.sh"
        printf 'build\ntest\n' > "$W/input"
        """,
        r"""
        printf '#!/bin/sh\ngrep -w deploy "$1" > "$2"\n' > "$W/search_word.sh"
        grep -qw deploy "$W/input" 2>/dev/null || echo deploy >> "$W/input"
        """,
        p="Тест выполнен успешно, скрипт работает исправно",
        f="Тест провален, скрипт работает некорректно",
        note="the script under test is a one-line grep the world writes",
    ),
    m(
        "utils-loop-or-exit-russian",
        "Saime-0/tg-bot-contest:scripts/check-utils.sh",
        "exit",
        "ru",
        r"""
        HOST=staging
        for util in podman sqlite3 rsync; do
          command -v "$W/bin/$util" &>/dev/null || { echo "Ошибка: Утилита '$util' не найдена."; exit 1; }
        done

        echo "Все требуемые утилиты установлены на хосте $HOST"
        exit 0
        """,
        r"""
        mkdir -p "$W/bin"
        for t in podman sqlite3 rsync; do printf '#!/bin/sh\n' > "$W/bin/$t"; chmod +x "$W/bin/$t"; done
        """,
        r"""
        mkdir -p "$W/bin"
        for t in podman sqlite3; do printf '#!/bin/sh\n' > "$W/bin/$t"; chmod +x "$W/bin/$t"; done
        """,
        r"""
        mkdir -p "$W/bin"
        for t in podman sqlite3 rsync; do printf '#!/bin/sh\n' > "$W/bin/$t"; chmod +x "$W/bin/$t"; done
        """,
        p="Все требуемые утилиты установлены на хосте staging",
        f="Ошибка: Утилита 'rsync' не найдена.",
        note="the tools are probed by path in $W/bin; $HOST (the author's environment) is set by the block",
    ),
    m(
        "dpkg-loop-tee-polish",
        "robss9419/lenovo:program.c",
        "message",
        "pl",
        r"""
        currentDate=$(date +"%F")
        BLUE="\e[0;34m"
        NC="\e[0m"
        for install in mc zip unzip
        do
              grep -qx "$install" "$W/dpkg-status" &> /dev/null
                    if [ $? -eq 0 ]; then
                          echo -e "${BLUE}MESSAGE: Nasz pakiet $install jest juz zainstalowany !$NC"  | tee -a "$W/log_$currentDate.log"
                    else
                          echo -e "Pakiet $install nie jest zainstalowany, nastąpi jego instalacja!"  | tee -a "$W/log_$currentDate.log"
                    fi
        done
        """,
        r"""printf 'mc\nzip\nunzip\n' > "$W/dpkg-status" """,
        r"""printf 'mc\nzip\n' > "$W/dpkg-status" """,
        r"""printf 'mc\nzip\nunzip\n' > "$W/dpkg-status" """,
        p="\x1b[0;34mMESSAGE: Nasz pakiet unzip jest juz zainstalowany !\x1b[0m",
        f="Pakiet unzip nie jest zainstalowany, nastąpi jego instalacja!",
        note="`dpkg -s` became a look-up in the world's package list; the apt-get install in the else arm is "
        "left out; the log goes to $W",
    ),
    m(
        "apt-list-grep-installed",
        "Subhashini492/shell:package_check.sh",
        "message",
        "en",
        r"""
        cat "$W/apt-installed.txt" | grep nginx
        if [ $? -eq 0 ];
        then
            echo "nginx installed"
        else
            echo "nginx not installed"
        fi
        """,
        r"""printf 'curl/jammy,now 7.81.0 amd64 [installed]\nnginx/jammy,now 1.18.0 amd64 [installed]\n' > "$W/apt-installed.txt" """,
        r"""printf 'curl/jammy,now 7.81.0 amd64 [installed]\n' > "$W/apt-installed.txt" """,
        r"""
        grep -q '^nginx/' "$W/apt-installed.txt" 2>/dev/null \
          || echo 'nginx/jammy,now 1.18.0 amd64 [installed]' >> "$W/apt-installed.txt"
        """,
        p="nginx installed",
        f="nginx not installed",
        note="`sudo apt list --installed` became the list the world writes; $1 became nginx",
    ),
    m(
        "docker-install-script-present-dutch",
        "jessekatuin42/examen-linux:install.sh",
        "message",
        "nl",
        r"""
        cd "$W"
        if [[ -f "docker-install.sh" && -x "docker-install.sh" ]]; then
            echo "Docker wordt geïnstalleerd..."
            ./docker-install.sh
        else
            echo "Fout: Het bestand docker-install.sh bestaat niet of is niet uitvoerbaar."
        fi
        """,
        r"""printf '#!/bin/sh\necho "docker: ok"\n' > "$W/docker-install.sh"; chmod +x "$W/docker-install.sh" """,
        r"""printf '#!/bin/sh\necho "docker: ok"\n' > "$W/docker-install.sh"; chmod -x "$W/docker-install.sh" """,
        r"""printf '#!/bin/sh\necho "docker: ok"\n' > "$W/docker-install.sh"; chmod +x "$W/docker-install.sh" """,
        p="Docker wordt geïnstalleerd...",
        f="Fout: Het bestand docker-install.sh bestaat niet of is niet uitvoerbaar.",
        note="the question it asks first (read -p, answered Y) is left out",
    ),
    m(
        "gpg-subshell-exit-does-not-end-the-script",
        "idodeclare/GPGTools_Core:scripts/macgpg2-test.sh",
        "message",
        "en",
        r"""
        _log="$W/macgpg2-test.log"

        echo -n "[Files installed] "
        [ -d "$W/MacGPG2" ] && echo "OK" || (echo "ERR"; exit 1)

        echo -n "[Executable] "
        "$W/bin/gpg" --version > "${_log}" 2>&1 && echo "OK" || (echo "ERR. See ${_log}"; exit 1)
        """,
        r"""
        mkdir -p "$W/MacGPG2" "$W/bin"
        printf '#!/bin/sh\necho "gpg (GnuPG) 2.4.5"\n' > "$W/bin/gpg"; chmod +x "$W/bin/gpg"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "gpg (GnuPG) 2.4.5"\n' > "$W/bin/gpg"; chmod +x "$W/bin/gpg"
        """,
        r"""
        mkdir -p "$W/MacGPG2" "$W/bin"
        printf '#!/bin/sh\necho "gpg (GnuPG) 2.4.5"\n' > "$W/bin/gpg"; chmod +x "$W/bin/gpg"
        """,
        p="[Files installed] OK",
        f="[Files installed] ERR",
        note="`(echo ERR; exit 1)` leaves only its subshell: a failed first check does not end the block, "
        "whose status is the last check's; /usr/local/MacGPG2 and gpg moved into $W",
    ),
    m(
        "package-binaries-loop-if-not-grep-exit",
        "algorand/go-algorand:scripts/release/mule/test/tests/verify_package_binaries.sh",
        "failure-branch",
        "en",
        r"""
        set -ex
        echo "[$0] Verifying installed binaries."
        RPMTMP="$W/pkg"
        ALGORAND_BINS=(
            /usr/bin/algod
            /usr/bin/goal
            /usr/bin/kmd
        )
        for bin in "${ALGORAND_BINS[@]}"; do
            if ! grep "$bin" "$RPMTMP/algorand.install"
            then
                echo "[$0] The binary $bin is not contained in the algorand package."
                exit 1
            fi
        done
        """,
        r"""mkdir -p "$W/pkg"; printf '/usr/bin/algod\n/usr/bin/goal\n/usr/bin/kmd\n' > "$W/pkg/algorand.install" """,
        r"""mkdir -p "$W/pkg"; printf '/usr/bin/algod\n/usr/bin/goal\n' > "$W/pkg/algorand.install" """,
        r"""mkdir -p "$W/pkg"; printf '/usr/bin/algod\n/usr/bin/goal\n/usr/bin/kmd\n' > "$W/pkg/algorand.install" """,
        p="/usr/bin/kmd",
        note="`dpkg -L algorand` became the file list the world writes; the binary list is shortened",
    ),
    m(
        "required-tools-exit-127-then-version",
        "wistaria/MateriAppsInstaller:tools/git/test/test.sh",
        "failure-branch",
        "en",
        r"""
        set -u
        PREFIX="$W/opt"
        for exe in git; do
          if [ ! -e ${PREFIX}/bin/${exe} ]; then
            echo "Error: ${PREFIX}/bin/${exe} does not exist"
            exit 127
          fi
        done

        ${PREFIX}/bin/git --version
        """,
        r"""
        mkdir -p "$W/opt/bin"; printf '#!/bin/sh\necho "git version 2.43.0"\n' > "$W/opt/bin/git"
        chmod +x "$W/opt/bin/git"
        """,
        r"""mkdir -p "$W/opt/bin" """,
        r"""
        mkdir -p "$W/opt/bin"; printf '#!/bin/sh\necho "git version 2.43.0"\n' > "$W/opt/bin/git"
        chmod +x "$W/opt/bin/git"
        """,
        p="git version 2.43.0",
        note="PREFIX (the installer's) is set to $W/opt",
    ),
    # ---------------------------------------------------------------- backups: made, fresh, intact
    m(
        "tar-then-dollar-question-backup-message",
        "iam-ganpati/shell_scripting:backup_script.sh",
        "message",
        "en",
        r"""
        cd "$W"
        SOURCE_DIR="source"
        BACKUP_DIR="backup"
        BACKUP_FILE="$BACKUP_DIR/backup.tar.gz"

        tar -czf $BACKUP_FILE $SOURCE_DIR

        if [ $? -eq 0 ]; then
            echo "Backup successful: $BACKUP_FILE"
        else
            echo "Backup failed"
        fi
        """,
        r"""mkdir -p "$W/source" "$W/backup"; echo 'row 1' > "$W/source/data.csv" """,
        r"""mkdir -p "$W/backup" """,
        r"""mkdir -p "$W/source" "$W/backup"; [ -f "$W/source/data.csv" ] || echo 'row 1' > "$W/source/data.csv" """,
        p="Backup successful: backup/backup.tar.gz",
        f="Backup failed",
        note="paths relative to $W (cd) and no timestamp in the archive name, so the printed line is stable",
    ),
    m(
        "find-mtime-print-to-a-file-named-null",
        "mahesh2121/Shell-Scirpting:backup.sh",
        "message",
        "en",
        r"""
        cd "$W"
        find backup.tar.gz -mtime -1 -type f -print &> null


        if [ $? -eq 0 ]


        then


        echo ====================Backup was created====================================
        else


        echo Backup failed


        fi
        """,
        r"""tar -czf "$W/backup.tar.gz" -T /dev/null""",
        r""":""",
        r"""[ -f "$W/backup.tar.gz" ] || tar -czf "$W/backup.tar.gz" -T /dev/null""",
        p="====================Backup was created====================================",
        f="Backup failed",
        note="the tar/gzip that make the backup are the act; `&> null` writes a file named null (in $W); "
        "find exits 0 for an old file too, so only a missing archive shows",
    ),
    m(
        "tar-tf-latest-archive-variable-named-export",
        "patrickap/docker-restic:scripts/dump/check.sh",
        "exit",
        "en",
        r"""
        export="$W/export"
        echo "Searching for latest backup archive at '${export}' ..."
        backup=$(ls -t ${export}/backup_* | head -1)
        if [ -n "${backup}" ]; then
          echo "Checking integrity of latest backup archive '${backup}' ..."
          echo ${backup} | xargs -r tar -tf > /dev/null
          if [ $? -ne 0 ]; then
            echo "The backup archive may be corrupt."
            exit 1
          else
            echo "The backup archive seems fine."
          fi
        else
          echo "No archive found. Folder may be empty."
        fi
        """,
        r"""
        mkdir -p "$W/export" "$W/data"; echo 'snapshot' > "$W/data/snap.txt"
        tar -cf "$W/export/backup_2024-05-01.tar" -C "$W/data" .
        """,
        r"""mkdir -p "$W/export"; head -c 4096 /dev/zero | tr '\0' 'x' > "$W/export/backup_2024-05-01.tar" """,
        r"""
        mkdir -p "$W/export" "$W/data"; echo 'snapshot' > "$W/data/snap.txt"
        tar -cf "$W/export/backup_2024-05-01.tar" -C "$W/data" .
        """,
        p="The backup archive seems fine.",
        f="The backup archive may be corrupt.",
        note="the author's `log -i/-w/-e` became echo (one line each)",
    ),
    m(
        "find-ctime-egrep-any-line-then-dollar-question",
        "enonic/docker-xp:bin/backup.sh",
        "exit",
        "en",
        r"""
        AGE=1440

        echo "Searching for snapshots with max age of $AGE hours ..."
        find "$W/snapshots/" -maxdepth 1 -cmin -${AGE} -iname 'snap*' -type f | egrep '.*'

        if [ "$?" == "0" ]; then
            echo "Success!"
        else
            echo "Failure! No snapshots with max age of $AGE hours found!"
            exit 1
        fi
        """,
        r"""mkdir -p "$W/snapshots"; echo '{}' > "$W/snapshots/snapshot-2024-05-01.json" """,
        r"""mkdir -p "$W/snapshots"; echo 'see docs' > "$W/snapshots/README" """,
        r"""mkdir -p "$W/snapshots"; echo '{}' > "$W/snapshots/snapshot-2024-05-01.json" """,
        p="Success!",
        f="Failure! No snapshots with max age of 1440 hours found!",
        note="$XP_HOME is $W; AGE is the default (the author reads it from $1 or an env var)",
    ),
    m(
        "find-dir-in-double-brackets-mail-fallback",
        "germain-italic/stuff:docker/check-if-backup-exists.sh",
        "message",
        "en",
        r"""
        cd "$W"
        DURATION_DAYS=1
        CHECK_BKP="find backups/ -ctime -$DURATION_DAYS"

        if [[ $($CHECK_BKP) ]]; then
            echo "There are files: $CHECK_BKP"
        else
            echo "No files found"
            MESSAGE="Il n'y a pas eu de backup GitLab depuis $DURATION_DAYS jour !\n"
            MESSAGE="${MESSAGE}Vérifiez que le container s'appelle bien 'gitlab', qu'il tourne.\n"
            echo -e "Subject:!!! ALERTE BACKUP GITLAB MANQUANT !!!\n$MESSAGE" | cat
        fi
        """,
        r"""mkdir -p "$W/backups"; echo dump > "$W/backups/1714521600_gitlab_backup.tar" """,
        r""":""",
        r"""mkdir -p "$W/backups"; echo dump > "$W/backups/1714521600_gitlab_backup.tar" """,
        p="There are files: find backups/ -ctime -1",
        f="No files found",
        note="sendmail became cat (the mail is printed); the path is relative to $W. find lists the directory "
        "itself, so only a missing directory fails it",
    ),
    m(
        "sqlite-backup-log-count-declare-i",
        "bcgov/cas-cif:database_backup_test/check_for_recent_timestamp.sh",
        "exit",
        "en",
        r"""
        set -xeuo pipefail

        declare -i VALUE
        VALUE=$(sqlite3 "$W/cif.db" "select count(*) from full_backup_log where full_backup_timestamp > datetime('now', '-1 day')")

        if [[ $VALUE -lt 1 ]] ; then
          echo 'no timestamp found'
          exit 1
        else
          echo 'timestamp found, backup ok'
          exit 0
        fi;
        """,
        r"""
        sqlite3 "$W/cif.db" "create table full_backup_log(full_backup_timestamp text);
          insert into full_backup_log values (datetime('now', '-2 hours'));"
        """,
        r"""
        sqlite3 "$W/cif.db" "create table full_backup_log(full_backup_timestamp text);
          insert into full_backup_log values (datetime('now', '-3 days'));"
        """,
        r"""
        sqlite3 "$W/cif.db" "create table if not exists full_backup_log(full_backup_timestamp text);
          insert into full_backup_log values (datetime('now'));"
        """,
        p="timestamp found, backup ok",
        f="no timestamp found",
        tools=("sqlite3",),
        note="psql against PostgreSQL became sqlite3 on a file (now() - interval '1 day' became datetime())",
    ),
    m(
        "sqlite-integrity-check-unquoted-test-spanish",
        "nipegun/p-scripts:PVE-CopSegBD.sh",
        "message",
        "es",
        r"""
        EstadoDeLaBaseDeDatosDePVE=$(sqlite3 "$W/config.db" "PRAGMA integrity_check;")
        if [ $EstadoDeLaBaseDeDatosDePVE == "ok" ]; then
          echo ""
          echo "  El estado de la base de datos es consistente. Procediendo con la copia de seguridad..."
          echo ""
          rm -f "$W/config.db.bak" 2> /dev/null
          sqlite3 "$W/config.db" ".dump" | sqlite3 "$W/config.db.bak"
        else
          echo ""
          echo "  El estado de la base de datos no es consistente. Intentando exportar lo que se pueda..."
          echo ""
        fi
        """,
        r"""sqlite3 "$W/config.db" "create table tree(inode integer primary key, name text); insert into tree values (1, 'corosync.conf');" """,
        r"""printf 'this file is not an SQLite database but garbage long enough to have a header, a page and more\n' > "$W/config.db" """,
        r"""
        [ "$(sqlite3 "$W/config.db" 'PRAGMA integrity_check;' 2>/dev/null)" = ok ] || {
          rm -f "$W/config.db"
          sqlite3 "$W/config.db" "create table tree(inode integer primary key, name text); insert into tree values (1, 'corosync.conf');"
        }
        """,
        p="El estado de la base de datos es consistente. Procediendo con la copia de seguridad...",
        f="El estado de la base de datos no es consistente. Intentando exportar lo que se pueda...",
        tools=("sqlite3",),
        note="/var/lib/pve-cluster became $W; the later sqlformat/sed steps and the .recover export are left out",
    ),
    m(
        "lss-backup-source-dir-find-read-bare-exits",
        "korshakov/lss-backup-legacy-stable-cli:functions/smb-nfs-source-folder-checks.sh",
        "message",
        "en",
        r"""
        SDIR="$W/share"
        WORKDIR="$W"
        BKID=job1
        echo "SMB/NFS source folder should contain some files..."
        if find "$SDIR" -mindepth 1 -maxdepth 1 | read; then
           echo "Directory contains folders/files."
           /bin/bash "$WORKDIR"/"$BKID"-destination-type-checks.sh
           exit
        else
           echo "Warning SMB/NFS source directory is empty! There is nothing to backup! Sending failed ping and exitting backup process."
                export STATUS=13
                    /bin/bash "$WORKDIR"/"$BKID"-notify.sh
           exit
        fi
        """,
        r"""
        mkdir -p "$W/share"; echo 'q1 report' > "$W/share/report.odt"
        echo 'echo "destination: local"' > "$W/job1-destination-type-checks.sh"
        echo 'echo "notified: status $STATUS"' > "$W/job1-notify.sh"
        """,
        r"""
        mkdir -p "$W/share"
        echo 'echo "destination: local"' > "$W/job1-destination-type-checks.sh"
        echo 'echo "notified: status $STATUS"' > "$W/job1-notify.sh"
        """,
        r"""
        mkdir -p "$W/share"; echo 'q1 report' > "$W/share/report.odt"
        echo 'echo "destination: local"' > "$W/job1-destination-type-checks.sh"
        echo 'echo "notified: status $STATUS"' > "$W/job1-notify.sh"
        """,
        p="Directory contains folders/files.",
        f="Warning SMB/NFS source directory is empty! There is nothing to backup! Sending failed ping and "
        "exitting backup process.",
        note="the next step and the notifier are one-line scripts the world writes; both arms end in a bare "
        "exit (status of the script they ran: 0)",
    ),
    m(
        "dir-empty-ls-a-in-double-brackets",
        "stevleibelt/examples:bash/filesystem/directory/isEmpty.sh",
        "message",
        "en",
        r"""
        LOCAL_PATH_TO_THE_DIRECTORY="$W/uploads"

        echo ":: using path ${LOCAL_PATH_TO_THE_DIRECTORY}"

        if [[ ! "$(ls -A ${LOCAL_PATH_TO_THE_DIRECTORY})" ]]
        then
            echo ":: directory is empty"
        else
            echo ":: directory is not empty"
        fi
        """,
        r"""mkdir -p "$W/uploads"; echo img > "$W/uploads/logo.png" """,
        r"""mkdir -p "$W/uploads" """,
        r"""mkdir -p "$W/uploads"; [ -n "$(ls -A "$W/uploads")" ] || echo img > "$W/uploads/logo.png" """,
        p=":: directory is not empty",
        f=":: directory is empty",
        note="the path (the author's $1, default .) is set to the restored uploads directory",
    ),
    # ---------------------------------------------------------------- certificates
    m(
        "openssl-parse-fail-bare-exit-then-checkend",
        "dmitriy-myz/scripts:domain-checker/check_ssl.sh",
        "message",
        "en",
        r"""
        site=example.org:443
        openssl x509 -noout -in "$W/site.crt" > /dev/null 2>&1

        if [ $? -ne 0 ]; then
            echo "$site bad ssl"
            exit
        fi

        openssl x509 -noout -checkend 864000 -in "$W/site.crt" # -dates

        if [ $? -eq 1 ]; then
           echo  "$site ssl expired";
        fi;
        """,
        _EC_CERT + r""" -out "$W/site.crt" -days 365 2>/dev/null""",
        r""":""",
        r"""
        openssl x509 -noout -checkend 864000 -in "$W/site.crt" >/dev/null 2>&1 \
        """ + "  || " + _EC_CERT + r""" -out "$W/site.crt" -days 365 2>/dev/null""",
        p="Certificate will not expire",
        f="example.org:443 bad ssl",
        tools=("openssl",),
        note="`echo | openssl s_client -connect $1` became the certificate file it would fetch; $1 is a name",
    ),
    m(
        "checkend-loop-good-for-another-days",
        "andimeier/monitor_certs:check_certs.sh",
        "message",
        "en",
        r"""
        DAYS=20
        cd "$W/ssl"
        for i in *.crt ; do
                if openssl x509 -checkend $(( 86400 * $DAYS )) -noout -in $i ; then
                        echo "Certificate $i is good for another $DAYS days"
                else
                        echo "Certificate $i has expired or will do so within the next $DAYS days!"
                        echo "  (or is invalid/not found)"
                fi
        done
        """,
        r"""mkdir -p "$W/ssl"; """ + _EC_CERT + r""" -out "$W/ssl/www.crt" -days 365 2>/dev/null""",
        r"""mkdir -p "$W/ssl"; """ + _EC_CERT + r""" -out "$W/ssl/www.crt" -days 7 2>/dev/null""",
        r"""
        mkdir -p "$W/ssl"
        openssl x509 -checkend 1728000 -noout -in "$W/ssl/www.crt" >/dev/null 2>&1 \
        """ + "  || " + _EC_CERT + r""" -out "$W/ssl/www.crt" -days 365 2>/dev/null""",
        p="Certificate www.crt is good for another 20 days",
        f="Certificate www.crt has expired or will do so within the next 20 days!",
        tools=("openssl",),
        note="the certificates given as arguments became the *.crt of $W/ssl (cd there)",
    ),
    # ---------------------------------------------------------------- checksums
    m(
        "sha256-and-pipe-into-echo-prints-failed-on-success",
        "akifshixlarov/holbertonschool-cyber_security:"
        "cybersecurity_basics/0x00_introduction_cybersecurity/2-sha256_validator.sh",
        "exit",
        "en",
        r"""
        [ "$(sha256sum "$W/release.tar.gz" | cut -d' ' -f1)" = "$(cat "$W/release.tar.gz.sha256")" ] && echo "Integrity OK" | echo "Integrity FAILED"
        """,
        r"""
        printf 'release 1.2.0\n' > "$W/release.tar.gz"
        sha256sum "$W/release.tar.gz" | cut -d' ' -f1 > "$W/release.tar.gz.sha256"
        """,
        r"""
        printf 'release 1.2.0\n' | sha256sum | cut -d' ' -f1 > "$W/release.tar.gz.sha256"
        printf 'release 1.2.0 (tampered)\n' > "$W/release.tar.gz"
        """,
        r"""
        printf 'release 1.2.0\n' > "$W/release.tar.gz"
        sha256sum "$W/release.tar.gz" | cut -d' ' -f1 > "$W/release.tar.gz.sha256"
        """,
        p="Integrity FAILED",
        note="`A && echo OK | echo FAILED` prints FAILED when the hashes match and nothing when they do not; "
        "$1/$2 became the artifact and its published hash",
    ),
    m(
        "shasum-c-or-subshell-exit-then-chmod",
        "pkgdeps/verify-checksum-cheatsheet:README.md",
        "message",
        "en",
        r"""
        cd "$W"
        grep -E "jq-linux64$" jq.sha256sum | shasum -a 256 -c - || (echo "Error: Not match jq SHA256." && exit 1)
        chmod 755 jq-linux64 && ln -sfnv "$(pwd)/jq-linux64" "$(pwd)/jq"
        """,
        r"""
        printf 'jq 1.6 binary\n' > "$W/jq-linux64"; printf 'jq 1.6 for mac\n' > "$W/jq-osx-amd64"
        (cd "$W" && sha256sum jq-linux64 jq-osx-amd64 > jq.sha256sum)
        """,
        r"""
        printf 'jq 1.6 binary\n' > "$W/jq-linux64"; printf 'jq 1.6 for mac\n' > "$W/jq-osx-amd64"
        (cd "$W" && sha256sum jq-linux64 jq-osx-amd64 > jq.sha256sum)
        printf 'jq 1.6 binary, tampered\n' > "$W/jq-linux64"
        """,
        r"""
        printf 'jq 1.6 binary\n' > "$W/jq-linux64"; printf 'jq 1.6 for mac\n' > "$W/jq-osx-amd64"
        (cd "$W" && sha256sum jq-linux64 jq-osx-amd64 > jq.sha256sum)
        """,
        p="jq-linux64: OK",
        f="Error: Not match jq SHA256.",
        tools=("shasum",),
        note="the two curl downloads are the world; `(… && exit 1)` ends only its subshell, so the chmod/ln "
        "after it run and the block exits 0",
    ),
    # ---------------------------------------------------------------- service status
    m(
        "ps-sed-default-null-running",
        "egaoneko/til:Server/bash-script-to-check-running-process.md",
        "message",
        "en",
        r"""
        SERVICE="nginx"
        RESULT=`cat "$W/ps-a.txt" | sed -n /${SERVICE}/p`

        if [ "${RESULT:-null}" = null ]; then
            echo "not running"
        else
            echo "running"
        fi
        """,
        r"""printf '  PID TTY          TIME CMD\n   41 ?        00:00:00 nginx\n   57 pts/0    00:00:00 bash\n' > "$W/ps-a.txt" """,
        r"""printf '  PID TTY          TIME CMD\n   57 pts/0    00:00:00 bash\n' > "$W/ps-a.txt" """,
        r"""
        grep -q nginx "$W/ps-a.txt" 2>/dev/null || printf '   41 ?        00:00:00 nginx\n' >> "$W/ps-a.txt"
        """,
        p="running",
        f="not running",
        note="`ps -a` became the process table the world writes; $1 is nginx",
    ),
    m(
        "status-function-proc-pid-retval",
        "wangxiaoxiang5599/SpringBootGirl:scripts/status.sh",
        "message",
        "en",
        r"""
        PROG=girl
        PIDFILE="$W/$PROG.pid"
        status() {
            if [ -f $PIDFILE ]; then
                PID=$(cat $PIDFILE)
                if [ ! -x /proc/${PID} ]; then
                    return 1
                else
                    return 0
                fi
            else
                return 1
            fi
        }

        status
        RETVAL=$?
        if [ $RETVAL -eq 0 ]; then
            echo "$PROG is running , PID:$PID"
        else
            echo "$PROG is not running "
        fi
        """,
        r"""echo 1 > "$W/girl.pid" """,
        r"""echo 4194305 > "$W/girl.pid" """,
        r"""echo 1 > "$W/girl.pid" """,
        p="girl is running , PID:1",
        f="girl is not running",
        note="/tmp/girl.pid became $W/girl.pid; held names pid 1 (always alive), broken a stale pid above any "
        "pid_max",
    ),
    m(
        "pid-file-warn-exit-then-ps-fatal-exit",
        "aggresss/playground-shell:sh/utilities/service/service_check.sh",
        "failure-branch",
        "en",
        r"""
        service=worker
        pid_dir="$W/.pid"
        pid=$pid_dir/$service.pid
        if [ ! -f $pid ]; then
            echo "WARN: $service is not running."
            exit 1
        fi

        tail -n 1 $pid | xargs -I{} ps -f {} > /dev/null 2>&1
        if [ $? != 0 ]; then
            echo "FATAL: $service is not running."
            rm $pid
            exit 1
        fi

        value=`tail -n 1 $pid`
        echo "OK: $service is running. pid:[$value]"
        """,
        r"""mkdir -p "$W/.pid"; echo 1 > "$W/.pid/worker.pid" """,
        r"""mkdir -p "$W/.pid" """,
        r"""mkdir -p "$W/.pid"; echo 1 > "$W/.pid/worker.pid" """,
        p="OK: worker is running. pid:[1]",
        f="WARN: worker is not running.",
        tools=("ps",),
        note="the work dir is $W; the pid file names pid 1 (always alive)",
    ),
    m(
        "df-awk-cut-threshold-message",
        "Ehsan-ES/DevOps:system-monitor/disk_check.sh",
        "message",
        "en",
        r"""
        THRESHOLD=80

        USAGE=$(cat "$W/df-h.txt" | grep -v Filesystem | awk '{print $5}' | cut -d'%' -f1)

        if [ $USAGE -gt $THRESHOLD ];then
            echo "WARNING: DISK CAPACITY IS $USAGE% !!"
        else
            echo "DISK CAPACITY HAS NOT PROBLEM : $USAGE%"
        fi
        """,
        r"""printf 'Filesystem      Size  Used Avail Use%% Mounted on\n/dev/sda1        50G   21G   29G  42%% /\n' > "$W/df-h.txt" """,
        r"""printf 'Filesystem      Size  Used Avail Use%% Mounted on\n/dev/sda1        50G   47G  3.5G  93%% /\n' > "$W/df-h.txt" """,
        r"""printf 'Filesystem      Size  Used Avail Use%% Mounted on\n/dev/sda1        50G   21G   29G  42%% /\n' > "$W/df-h.txt" """,
        p="DISK CAPACITY HAS NOT PROBLEM : 42%",
        f="WARNING: DISK CAPACITY IS 93% !!",
        note="`df -h /` became its output captured in a file (the act stands for freeing space)",
    ),
    m(
        "grep-error-count-emoji-alert",
        "m1chele11/script-review:bashScrpts/error_alert.sh",
        "message",
        "en",
        r"""
        LOG_FILE="$W/server.log"
        OUT_FILE="$W/error_logs2.txt"

        grep "ERROR" $LOG_FILE > $OUT_FILE
        ERROR_COUNT=$(cat $OUT_FILE | wc -l)

        if [ "$ERROR_COUNT" -gt 5 ]; then
            echo "🚨 Alert: High number of errors detected!"
        else
            echo "✅ Error count normal."
        fi
        """,
        r"""printf 'INFO up\nERROR db timeout\nINFO ok\nERROR db timeout\n' > "$W/server.log" """,
        r"""for i in 1 2 3 4 5 6 7; do echo "ERROR db timeout $i"; done > "$W/server.log" """,
        r"""printf 'INFO rotated\n' > "$W/server.log" """,
        p="✅ Error count normal.",
        f="🚨 Alert: High number of errors detected!",
        note="the act stands for rotating the log",
    ),
    # ---------------------------------------------------------------- deploy: health endpoints
    m(
        "ping-dollar-question-up-down",
        "Fl0wyn/tips-and-scripts:BASH.md",
        "message",
        "en",
        r"""
        curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/ping" >/dev/null 2>&1

        if [ $? -eq 0 ]; then
            echo "up"
        else
            echo "down"
        fi
        """,
        r"""echo pong > "$W/ping" """,
        r""":""",
        r"""echo pong > "$W/ping" """,
        p="up",
        f="down",
        server=True,
        tools=("curl",),
        note="`ping -q -c 2 cloudflare.com` became a request to the loopback server",
    ),
    m(
        "gateway-ping-korean",
        "pray92/study:system-programming/ping.sh",
        "message",
        "ko",
        r"""
        curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/gateway" 1> /dev/null
        if [ $? == 0 ] # &? : 가장 최근에 사용한 쉘 스크립트 결과 값
        then
            echo "게이트웨이 핑 성공!"
        else
            echo "게이트웨이 핑 실패!"
        fi
        """,
        r"""echo up > "$W/gateway" """,
        r""":""",
        r"""echo up > "$W/gateway" """,
        p="게이트웨이 핑 성공!",
        f="게이트웨이 핑 실패!",
        server=True,
        tools=("curl",),
        note="`ping -c 1 192.168.0.1` became a request to the loopback server",
    ),
    m(
        "curl-head-status-line-substring-ok",
        "vadim8kiselev/study:python/scripts/success_deploy.sh",
        "message",
        "en",
        r"""
        success=$(curl -Is "http://127.0.0.1:$HTTP_PORT/index.html" | head -n 1)

        if [ "$success" != "" ]
        then
             success=${success: -3:-1}
        fi

        if [ "$success" = "OK" ]
        then
             echo "Success deploy."
        else
             echo "Failed deploy"
        fi
        """,
        r"""echo '<h1>shop</h1>' > "$W/index.html" """,
        r""":""",
        r"""echo '<h1>shop</h1>' > "$W/index.html" """,
        p="Success deploy.",
        f="Failed deploy",
        server=True,
        tools=("curl",),
        note="localhost:8000 became the loopback server's /index.html",
    ),
    m(
        "python-heredoc-urlopen-assert-ok",
        "reyn1920/monkey-paw-production-v4:artifacts/import/all_sources/monkey_paw_productions_v4_pack/"
        "monkey-paw-productions-v4/scripts/live_check.zsh",
        "exit",
        "en",
        r"""
        set -e
        python3 - <<PY
        import json, urllib.request
        with urllib.request.urlopen("http://127.0.0.1:$HTTP_PORT/api/health", timeout=5) as r:
            data = json.loads(r.read().decode())
        assert data.get("ok") is True
        print("✅ Live health ok:", data)
        PY
        """,
        r"""mkdir -p "$W/api"; echo '{"ok": true}' > "$W/api/health" """,
        r"""mkdir -p "$W/api"; echo '{"ok": false}' > "$W/api/health" """,
        r"""mkdir -p "$W/api"; echo '{"ok": true}' > "$W/api/health" """,
        p="✅ Live health ok: {'ok': True}",
        server=True,
        note="a zsh script run by bash; the heredoc is unquoted so the port expands (the author's 'PY' held a "
        "fixed URL)",
    ),
    m(
        "pipefail-curl-into-jq-e",
        "KaiGrassnick/satisfactory-arm64-docker:healthcheck.sh",
        "exit",
        "en",
        r"""
        set -o pipefail

        curl -f -s -S "http://127.0.0.1:$HTTP_PORT/api/v1/health.json" \
        | jq -e '.data.health == "healthy"'
        """,
        r"""mkdir -p "$W/api/v1"; echo '{"data": {"health": "healthy"}}' > "$W/api/v1/health.json" """,
        r"""mkdir -p "$W/api/v1"; echo '{"data": {"health": "slow"}}' > "$W/api/v1/health.json" """,
        r"""mkdir -p "$W/api/v1"; echo '{"data": {"health": "healthy"}}' > "$W/api/v1/health.json" """,
        p="true",
        f="false",
        server=True,
        tools=("curl", "jq"),
        note="the POST of a JSON-RPC body (-X POST -d …, -k for TLS) became a GET of a JSON file",
    ),
    m(
        "config-json-if-not-exit-emoji-lines",
        "eidos-ai/dev-tools:skills/example-skill/scripts/deploy.sh",
        "failure-branch",
        "en",
        r"""
        set -e

        echo "🚀 Starting deployment..."

        if [ ! -f "$W/assets/config.json" ]; then
            echo "❌ Error: config.json not found"
            exit 1
        fi

        echo "✅ Configuration validated"
        """,
        r"""mkdir -p "$W/assets"; echo '{"env": "prod"}' > "$W/assets/config.json" """,
        r"""mkdir -p "$W/assets" """,
        r"""mkdir -p "$W/assets"; [ -f "$W/assets/config.json" ] || echo '{"env": "prod"}' > "$W/assets/config.json" """,
        p="✅ Configuration validated",
        f="❌ Error: config.json not found",
    ),
    m(
        "deploy-file-sourced-or-skipped-exit-0",
        "setmy-info/vue-start-project:bin/deploy.sh",
        "message",
        "en",
        r"""
        DEPLOY_FILE_NAME=.deploy

        if [ -f "$W/${DEPLOY_FILE_NAME}" ]; then
            . "$W/${DEPLOY_FILE_NAME}"
            "$W/bin/yarn" dodeploy
        else
            echo ".deploy file doesn't exist. Deployment is skipped!"
        fi

        exit 0
        """,
        r"""
        mkdir -p "$W/bin"; echo 'DEPLOY_HOST=static.example.org' > "$W/.deploy"
        printf '#!/bin/sh\necho "Done in 0.42s."\n' > "$W/bin/yarn"; chmod +x "$W/bin/yarn"
        """,
        r"""
        mkdir -p "$W/bin"
        printf '#!/bin/sh\necho "Done in 0.42s."\n' > "$W/bin/yarn"; chmod +x "$W/bin/yarn"
        """,
        r"""
        mkdir -p "$W/bin"; echo 'DEPLOY_HOST=static.example.org' > "$W/.deploy"
        printf '#!/bin/sh\necho "Done in 0.42s."\n' > "$W/bin/yarn"; chmod +x "$W/bin/yarn"
        """,
        p="Done in 0.42s.",
        f=".deploy file doesn't exist. Deployment is skipped!",
        note="yarn is a world tool; ./.deploy is $W/.deploy",
    ),
    # ---------------------------------------------------------------- configuration files
    m(
        "systemd-unit-head-or-not-installed-korean",
        "chjin/MapTest:if4.sh",
        "message",
        "ko",
        r"""
        fname="$W/lib/systemd/system/ssh.service"
        if [ -f $fname ]
        then
          head -5 $fname
        else
          echo "ssh 서버가 설치되지 않았습니다."
        fi
        exit 0
        """,
        r"""
        mkdir -p "$W/lib/systemd/system"
        printf '[Unit]\nDescription=OpenBSD Secure Shell server\n\n[Service]\nExecStart=/usr/sbin/sshd -D\n' \
          > "$W/lib/systemd/system/ssh.service"
        """,
        r""":""",
        r"""
        mkdir -p "$W/lib/systemd/system"
        printf '[Unit]\nDescription=OpenBSD Secure Shell server\n\n[Service]\nExecStart=/usr/sbin/sshd -D\n' \
          > "$W/lib/systemd/system/ssh.service"
        """,
        p="Description=OpenBSD Secure Shell server",
        f="ssh 서버가 설치되지 않았습니다.",
    ),
    m(
        "grep-q-pattern-ok-fial-korean",
        "leehongyoon/04.shellprogramming:shell/findstring.sh",
        "message",
        "ko",
        r"""
        PATTERN=PermitRootLogin
        FILE1="$W/sshd_config"

        grep -q $PATTERN $FILE1 >/dev/null 2>&1
        if [ $? -eq 0 ]; then
            echo "[ OK ] 패턴을 찾았다."
        else
            echo "[ FIAL ] 패턴을 찾지 못했다."
        fi
        """,
        r"""printf 'Port 22\nPermitRootLogin no\n' > "$W/sshd_config" """,
        r"""printf 'Port 22\n' > "$W/sshd_config" """,
        r"""grep -q PermitRootLogin "$W/sshd_config" 2>/dev/null || echo 'PermitRootLogin no' >> "$W/sshd_config" """,
        p="[ OK ] 패턴을 찾았다.",
        f="[ FIAL ] 패턴을 찾지 못했다.",
        note="the pattern and file (the author's $1 $2) are set; the usage check on $# is left out",
    ),
    m(
        "readable-directory-or-errore-italian",
        "saajann/PROGRAMMAZIONE-DI-SISTEMA:bash/lab3/es23.sh",
        "message",
        "it",
        r"""
        DIR="$W/data"
        if [ -d "$DIR" ] && [ -r "$DIR" ]; then
          echo "il file è una directory esistente e leggibile nel filesystem"
        else
          echo "errore"
        fi

        exit 0
        """,
        r"""mkdir -p "$W/data" """,
        r""":""",
        r"""mkdir -p "$W/data" """,
        p="il file è una directory esistente e leggibile nel filesystem",
        f="errore",
        note="$1 became the directory; the argument-count chain before it ($# -ne 1 … exit 1) is left out",
    ),
    m(
        "readlink-grep-symlink-check-marks",
        "darkwater/dotfiles:check-symlinks.sh",
        "message",
        "symbols",
        r"""
        set -e
        cd "$W/home"

        is_linked() {
            path="$(readlink "$1")"
            echo "$path" | grep -q "dotfiles"
        }

        check() {
            if is_linked "$1"; then
                echo -e "\e[32;1m✔ \e[0;32m$1\e[0m"
            else
                echo -e "\e[31;1m✗ \e[0;31m$1\e[0m"
            fi
        }

        check .gitconfig
        check .zshrc
        """,
        r"""
        mkdir -p "$W/dotfiles" "$W/home"; echo '[user]' > "$W/dotfiles/gitconfig"; echo 'bindkey -v' > "$W/dotfiles/zshrc"
        ln -s ../dotfiles/gitconfig "$W/home/.gitconfig"; ln -s ../dotfiles/zshrc "$W/home/.zshrc"
        """,
        r"""
        mkdir -p "$W/dotfiles" "$W/home"; echo '[user]' > "$W/dotfiles/gitconfig"; echo 'bindkey -v' > "$W/dotfiles/zshrc"
        ln -s ../dotfiles/gitconfig "$W/home/.gitconfig"; echo 'bindkey -e' > "$W/home/.zshrc"
        """,
        r"""
        mkdir -p "$W/dotfiles" "$W/home"; echo '[user]' > "$W/dotfiles/gitconfig"; echo 'bindkey -v' > "$W/dotfiles/zshrc"
        ln -sfn ../dotfiles/gitconfig "$W/home/.gitconfig"; ln -sfn ../dotfiles/zshrc "$W/home/.zshrc"
        """,
        p="\x1b[32;1m✔ \x1b[0;32m.zshrc\x1b[0m",
        f="\x1b[31;1m✗ \x1b[0;31m.zshrc\x1b[0m",
        note="~ became $W/home (cd there, so the printed names are relative); three of the five links are left out",
    ),
)

validate(IDIOMS)
