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
)

validate(IDIOMS)
