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

_SYSTEMCTL = sh(r"""
    mkdir -p "$W/bin" "$W/units"
    cat > "$W/bin/systemctl" <<'EOF'
    #!/bin/sh
    U="$(dirname "$0")/../units"
    cmd=$1; shift
    [ "$1" = --quiet ] && { quiet=1; shift; }
    case $cmd in
      show) n=${3%.service}; echo "SubState=$(sed -n 2p "$U/$n" 2>/dev/null)" ;;
      is-active) n=${1%.service}; s=$(sed -n 1p "$U/$n" 2>/dev/null); s=${s:-inactive}
        [ -n "$quiet" ] || echo "$s"; [ "$s" = active ] ;;
      status) n=${1%.service}; s=$(sed -n 1p "$U/$n" 2>/dev/null); s=${s:-inactive}
        echo "* $n.service"; echo "     Active: $s ($(sed -n 2p "$U/$n" 2>/dev/null)) since Mon 2024-05-06 09:00:00 UTC"
        [ "$s" = active ] || exit 3 ;;
    esac
    EOF
    chmod +x "$W/bin/systemctl"
""") + "\n"

_NGINX = sh(r"""
    mkdir -p "$W/bin"
    cat > "$W/bin/nginx" <<EOF
    #!/bin/sh
    c=$W/etc/nginx/nginx.conf; p=
    while [ \$# -gt 0 ]; do case \$1 in -c) c=\$2; shift;; -p) p=\$2/; shift;; esac; shift; done
    case \$c in /*) f=\$c;; *) f=\$p\$c;; esac
    grep -q '^events' "\$f" 2>/dev/null || { echo "nginx: [emerg] unexpected end of file in \$f" >&2; exit 1; }
    echo "nginx: the configuration file \$f syntax is ok" >&2
    EOF
    chmod +x "$W/bin/nginx"
""") + "\n"

_GIT_REPO = sh(r"""
    mkdir -p "$W/repo"; git -C "$W/repo" init -q; echo '# app' > "$W/repo/README.md"
    git -C "$W/repo" add -A; git -C "$W/repo" -c user.name=ci -c user.email=ci@example.org commit -qm init
""") + "\n"

_GIT_CLEAN = sh(r"""
    [ -d "$W/repo/.git" ] || { mkdir -p "$W/repo"; git -C "$W/repo" init -q; echo '# app' > "$W/repo/README.md"; }
    git -C "$W/repo" add -A
    git -C "$W/repo" diff --cached --quiet || git -C "$W/repo" -c user.name=ci -c user.email=ci@example.org commit -qm wip
""")

_DOCKER = sh(r"""
    mkdir -p "$W/bin"
    printf '#!/bin/sh\necho " ✔ Container app-web-1  Started"\n' > "$W/bin/docker"
    printf '#!/bin/sh\necho "Creating app_web_1 ... done"\n' > "$W/bin/docker-compose"
    chmod +x "$W/bin/docker" "$W/bin/docker-compose"
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
                if [ ! -x /proc/${PID} ]; then return 1
                else return 0
                fi
            else return 1
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
    # ---------------------------------------------------------------- services through systemctl (a world tool)
    m(
        "systemctl-status-grep-awk-prints-1-or-0",
        "Emerson89/scripts:state_service.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        SERVICE=cron
        STATE=`systemctl status $SERVICE | grep active | awk '{print $2}'`
        if [ $STATE == "active" ]
           then
              echo "1"
        elif [ $STATE == "inactive" ]
           then
              echo "0"
        fi
        """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/cron" """,
        _SYSTEMCTL + r"""printf 'inactive\ndead\n' > "$W/units/cron" """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/cron" """,
        p="1",
        f="0",
        note="systemctl is a world tool first on PATH, reading unit states from $W/units; $1 is cron",
    ),
    m(
        "systemctl-is-active-quiet-loop-per-service",
        "GorleJansi/shell-Scripts:devops-scripts/service.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        services=("apache2" "mysql" "ssh")
        for service in "${services[@]}"
        do
            if systemctl is-active --quiet "$service";
            then
                echo "Service $service is running"
            else
                echo "Service $service is not running"
                # Restart service or send alert here
            fi
        done
        """,
        _SYSTEMCTL + r"""for u in apache2 mysql ssh; do printf 'active\nrunning\n' > "$W/units/$u"; done""",
        _SYSTEMCTL
        + r"""for u in apache2 ssh; do printf 'active\nrunning\n' > "$W/units/$u"; done; printf 'failed\nfailed\n' > "$W/units/mysql" """,
        _SYSTEMCTL + r"""for u in apache2 mysql ssh; do printf 'active\nrunning\n' > "$W/units/$u"; done""",
        p="Service mysql is running",
        f="Service mysql is not running",
        note="systemctl is a world tool first on PATH, reading unit states from $W/units",
    ),
    m(
        "systemctl-active-then-substate-nested-if",
        "tripeshdhoriya/Important-Tips-and-Tools:Shell-Scripts/servicestatus.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        service=nginx
        echo "Checking $service status"
        STATUS="$(systemctl is-active $service)"
        RUNNING="$(systemctl show -p SubState $service | cut -d'=' -f2)"
        if [ "${STATUS}" = "active" ]; then
        echo "$service Service is Active"
        if [ "${RUNNING}" = "running" ]; then
        echo "$service Service is Running"
        else
        echo "$service Service Not Running"
        fi
        else
        echo "$service Service not Active "
        exit 1
        fi
        """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/nginx" """,
        _SYSTEMCTL + r"""printf 'active\nexited\n' > "$W/units/nginx" """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/nginx" """,
        p="nginx Service is Running",
        f="nginx Service Not Running",
        note="systemctl is a world tool first on PATH; $1 is nginx. Active but not running takes the inner "
        "else, which does not exit: only `not Active` exits 1",
    ),
    m(
        "systemctl-status-awk-inactive-or-my-status",
        "reason2/Hello-world2:test_status.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        status=$(systemctl status sshd | grep Active | awk '{print $2}')
        inactive="inactive"

        if [ $status == $inactive ]; then
            echo "Nooooo it is turned off"
        else
            echo "My status is $status"
        fi
        """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/sshd" """,
        _SYSTEMCTL + r"""printf 'inactive\ndead\n' > "$W/units/sshd" """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/sshd" """,
        p="My status is active",
        f="Nooooo it is turned off",
        note="systemctl is a world tool first on PATH; $1 is sshd (the usage check on it is left out)",
    ),
    m(
        "systemctl-status-glob-ok-ko-no-newline",
        "BGeometrics/BCubium-web:scripts/rtl_status.sh",
        "message",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        SERVICE=rtl

        STATUS=$(systemctl status $SERVICE | grep Active)

        if [[ $STATUS == *" active"* ]]; then
          echo -n "OK. $STATUS"
        else
          echo -n "KO. $STATUS"
        fi
        """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/rtl" """,
        _SYSTEMCTL + r"""printf 'inactive\ndead\n' > "$W/units/rtl" """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/rtl" """,
        p="OK.      Active: active (running) since Mon 2024-05-06 09:00:00 UTC",
        f="KO.      Active: inactive (dead) since Mon 2024-05-06 09:00:00 UTC",
        note="systemctl is a world tool first on PATH",
    ),
    m(
        "systemctl-is-active-green-red-circle",
        "miguelfranca/Automations:Linux_Baterry_Monitor/argos/battery_monitor_icon.5m+.sh",
        "message",
        "symbols",
        r"""
        PATH="$W/bin:$PATH"
        SERVICE_NAME="battery_monitor.service"

        if systemctl is-active --quiet $SERVICE_NAME; then
            echo "🟢"
        else
            echo "🔴"
        fi

        echo "---"
        echo "Restart Service | bash='systemctl restart $SERVICE_NAME' terminal=false"
        """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/battery_monitor" """,
        _SYSTEMCTL + r"""printf 'failed\nfailed\n' > "$W/units/battery_monitor" """,
        _SYSTEMCTL + r"""printf 'active\nrunning\n' > "$W/units/battery_monitor" """,
        p="🟢",
        f="🔴",
        note="systemctl is a world tool first on PATH; one of the two menu lines is kept",
    ),
    m(
        "ps-ax-grep-v-grep-nagios-exits",
        "jjasghar/nagios-check-template:check_service_template.sh",
        "exit",
        "en",
        r"""
        SERVICE=postgres
        if cat "$W/ps-ax.txt" | grep -v grep | grep $SERVICE > /dev/null
        then
            echo "OK, $SERVICE service is running"
                exit 0
        else
            echo "CRITICAL , $SERVICE service is not running"
                exit 2
        fi
        """,
        r"""printf '    1 ?        Ss     0:01 /sbin/init\n  812 ?        Ss     0:00 postgres -D /var/lib/postgresql\n' > "$W/ps-ax.txt" """,
        r"""printf '    1 ?        Ss     0:01 /sbin/init\n  901 pts/0    S+     0:00 grep postgres\n' > "$W/ps-ax.txt" """,
        r"""printf '    1 ?        Ss     0:01 /sbin/init\n  812 ?        Ss     0:00 postgres -D /var/lib/postgresql\n' > "$W/ps-ax.txt" """,
        p="OK, postgres service is running",
        f="CRITICAL , postgres service is not running",
        note="`ps ax` became the process table the world writes (broken: only the grep itself matches); "
        "the author greps for $1 but prints $SERVICE, set here to the same name",
    ),
    # ---------------------------------------------------------------- nginx config tests (nginx is a world tool)
    m(
        "nginx-t-under-set-e-then-negated-test",
        "lancachenet/monolithic:overlay/hooks/supervisord-pre.d/99_config_check.sh",
        "exit",
        "en",
        r"""
        set -e
        echo "Checking nginx config"
        "$W/bin/nginx" -t

         [ $? -ne 0 ] || echo "Config check successful"
        """,
        _NGINX + r"""mkdir -p "$W/etc/nginx"; printf 'events {}\nhttp {}\n' > "$W/etc/nginx/nginx.conf" """,
        _NGINX + r"""mkdir -p "$W/etc/nginx"; printf 'http {\n' > "$W/etc/nginx/nginx.conf" """,
        _NGINX + r"""mkdir -p "$W/etc/nginx"; printf 'events {}\nhttp {}\n' > "$W/etc/nginx/nginx.conf" """,
        p="Config check successful",
        note="nginx is a world tool that accepts a config with an events block; the getconfig dump is left out",
    ),
    m(
        "package-versions-vs-github-ref-two-ifs",
        "douglasnaphas/aws-github-oidc:GitHubOIDCRoleStack/pre-release.sh",
        "failure-branch",
        "en",
        r"""
        GITHUB_REF=refs/tags/v1.4.0
        PACKAGE_JSON_VERSION=refs/tags/v$(cat "$W/package.json" | jq --raw-output '.version')
        if [[ "${PACKAGE_JSON_VERSION}" != "${GITHUB_REF}" ]]
        then
          echo -n "error: PACKAGE_JSON_VERSION ${PACKAGE_JSON_VERSION} mismatches "
          echo    "GITHUB_REF ${GITHUB_REF}"
          exit 1
        fi
        PACKAGE_LOCK_JSON_VERSION=refs/tags/v$(cat "$W/package-lock.json" | jq --raw-output '.version')
        if [[ "${PACKAGE_LOCK_JSON_VERSION}" != "${GITHUB_REF}" ]]
        then
          echo -n "error: PACKAGE_LOCK_JSON_VERSION ${PACKAGE_LOCK_JSON_VERSION} mismatches "
          echo    "GITHUB_REF ${GITHUB_REF}"
          exit 1
        fi
        """,
        r"""echo '{"name": "oidc", "version": "1.4.0"}' > "$W/package.json"; echo '{"name": "oidc", "version": "1.4.0"}' > "$W/package-lock.json" """,
        r"""echo '{"name": "oidc", "version": "1.4.0"}' > "$W/package.json"; echo '{"name": "oidc", "version": "1.3.9"}' > "$W/package-lock.json" """,
        r"""echo '{"name": "oidc", "version": "1.4.0"}' > "$W/package.json"; echo '{"name": "oidc", "version": "1.4.0"}' > "$W/package-lock.json" """,
        f="error: PACKAGE_LOCK_JSON_VERSION refs/tags/v1.3.9 mismatches GITHUB_REF refs/tags/v1.4.0",
        tools=("jq",),
        note="GITHUB_REF (set by the CI runner) is set by the block",
    ),
    m(
        "node-p-require-versions-if-elif-exit",
        "nationalarchives/tna-frontend:tasks/validate-version.sh",
        "failure-branch",
        "en",
        r"""
        set -e
        set -- 1.4.0
        cd "$W"
        CURRENT_VERSION=$(node -p "require('./package.json').version")
        PACKAGE_LOCK_VERSION=$(node -p "require('./package-lock.json').version")
        if [ "$CURRENT_VERSION" != "$PACKAGE_LOCK_VERSION" ]; then
          echo "Version $CURRENT_VERSION in package.json doesn't match version $PACKAGE_LOCK_VERSION in package-lock.json."
          exit 1
        elif [ "$CURRENT_VERSION" != "$1" ]; then
          echo "The git tag $1 doesn't match the version in package.json."
          exit 1
        fi
        """,
        r"""echo '{"version": "1.4.0"}' > "$W/package.json"; echo '{"version": "1.4.0"}' > "$W/package-lock.json" """,
        r"""echo '{"version": "1.4.0"}' > "$W/package.json"; echo '{"version": "1.3.9"}' > "$W/package-lock.json" """,
        r"""echo '{"version": "1.4.0"}' > "$W/package.json"; echo '{"version": "1.4.0"}' > "$W/package-lock.json" """,
        f="Version 1.4.0 in package.json doesn't match version 1.3.9 in package-lock.json.",
        tools=("node",),
        note="the git tag (the script's $1) is set with `set --`; the files are read from $W",
    ),
    m(
        "drush-config-status-grep-q-exit-0-or-1",
        "unb-libraries/docker-drupal:build/scripts/check_config_diff.sh",
        "exit",
        "en",
        r"""
        DRUSH="$W/bin/drush"
        DIFF_OUTPUT=$($DRUSH config:status)
        if echo "$DIFF_OUTPUT" | grep -q "No differences"; then
          echo "No differences between DB and sync directory"
          exit 0
        else
          echo "$DIFF_OUTPUT"
          exit 1
        fi
        """,
        r"""
        mkdir -p "$W/bin" "$W/config/active" "$W/config/sync"
        echo 'name: Library' | tee "$W/config/active/system.site.yml" > "$W/config/sync/system.site.yml"
        cat > "$W/bin/drush" <<EOF
        #!/bin/sh
        if diff -rq "$W/config/active" "$W/config/sync" >/dev/null 2>&1; then
          echo " [notice] No differences between DB and sync directory."
        else
          echo "  Name             State"; echo "  system.site      Different"
        fi
        EOF
        chmod +x "$W/bin/drush"
        """,
        r"""
        mkdir -p "$W/bin" "$W/config/active" "$W/config/sync"
        echo 'name: Library' > "$W/config/active/system.site.yml"; echo 'name: Libraries' > "$W/config/sync/system.site.yml"
        cat > "$W/bin/drush" <<EOF
        #!/bin/sh
        if diff -rq "$W/config/active" "$W/config/sync" >/dev/null 2>&1; then
          echo " [notice] No differences between DB and sync directory."
        else
          echo "  Name             State"; echo "  system.site      Different"
        fi
        EOF
        chmod +x "$W/bin/drush"
        """,
        r"""
        mkdir -p "$W/bin" "$W/config/active" "$W/config/sync"
        echo 'name: Library' | tee "$W/config/active/system.site.yml" > "$W/config/sync/system.site.yml"
        cat > "$W/bin/drush" <<EOF
        #!/bin/sh
        if diff -rq "$W/config/active" "$W/config/sync" >/dev/null 2>&1; then
          echo " [notice] No differences between DB and sync directory."
        else
          echo "  Name             State"; echo "  system.site      Different"
        fi
        EOF
        chmod +x "$W/bin/drush"
        """,
        p="No differences between DB and sync directory",
        f="system.site      Different",
        note="drush is a world tool comparing $W/config/active (the DB) with $W/config/sync",
    ),
    m(
        "diff-r-node-vs-local-error-var",
        "sesam-io/sesam-config-sync-tools:sesam-status",
        "exit",
        "en",
        r"""
        diff -r "$W/node" "$W/local"
        error=$?
        if [ $error -eq 0 ]
        then
           echo "Node config is up-to-date with local config."
        else
           echo "Node config is NOT in sync with local config."
           exit 1
        fi
        """,
        r"""mkdir -p "$W/node" "$W/local"; echo '{"_id": "orders"}' | tee "$W/node/orders.conf.json" > "$W/local/orders.conf.json" """,
        r"""mkdir -p "$W/node" "$W/local"; echo '{"_id": "orders"}' > "$W/node/orders.conf.json"; echo '{"_id": "orders2"}' > "$W/local/orders.conf.json" """,
        r"""mkdir -p "$W/node" "$W/local"; echo '{"_id": "orders"}' | tee "$W/node/orders.conf.json" > "$W/local/orders.conf.json" """,
        p="Node config is up-to-date with local config.",
        f="Node config is NOT in sync with local config.",
        note="the node's config (curl of its zip, unzipped) is the directory $W/node; the zip/unzip/rm steps "
        "are left out",
    ),
    m(
        "health-not-ok-with-exit-commented-out",
        "rostskadat/AWSSAPC01:CodeDeploy/DeployToASG/scripts/ValidateService.sh",
        "message",
        "en",
        r"""
        echo "Running $0 ..."
        curl "http://127.0.0.1:$HTTP_PORT/health"
        health=$(curl -qs "http://127.0.0.1:$HTTP_PORT/health")
        if [ "${health}" != "OK" ]; then
            echo "Health is not OK. Failing deployment"
            # exit 1
        fi
        echo "$0 OK"
        """,
        r"""echo OK > "$W/health" """,
        r"""echo DEGRADED > "$W/health" """,
        r"""echo OK > "$W/health" """,
        p="OK",
        f="Health is not OK. Failing deployment",
        server=True,
        tools=("curl",),
        note="localhost:80 became the loopback server; the author commented the exit out",
    ),
    m(
        "smoke-two-curls-under-pipefail",
        "REDDNoC/cryptobeam-exchange:scripts/smoke.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        curl -fsS "http://127.0.0.1:$HTTP_PORT/health" >/dev/null
        curl -fsS "http://127.0.0.1:$HTTP_PORT/ready"  >/dev/null
        echo "smoke: ok"
        """,
        r"""echo ok > "$W/health"; echo ok > "$W/ready" """,
        r"""echo ok > "$W/health" """,
        r"""echo ok > "$W/health"; echo ok > "$W/ready" """,
        p="smoke: ok",
        server=True,
        tools=("curl",),
    ),
    m(
        "colon-parameter-guard-then-curl-check-mark",
        "t1l4n0/timedify:scripts/post-deploy-smoke.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail
        APP_URL="http://127.0.0.1:$HTTP_PORT"
        : "${APP_URL:?Set APP_URL}"
        curl -fsSL "$APP_URL/health" >/dev/null
        echo "✓ Post-deploy smoke tests passed"
        """,
        r"""echo ok > "$W/health" """,
        r""":""",
        r"""echo ok > "$W/health" """,
        p="✓ Post-deploy smoke tests passed",
        server=True,
        tools=("curl",),
        note="APP_URL (set by the deploy environment) is set by the block",
    ),
    m(
        "for-five-attempts-fail-only-on-the-last",
        "woowacourse-teams/2024-devel-up:backend/scripts/healthcheck.sh",
        "exit",
        "en",
        r"""
        for i in {1..5}; do
        response=$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$HTTP_PORT/health")
        echo "Attempt $i: Response Code $response"

        if [ "$i" -eq 5 ] && [ "$response" -ne 200 ]; then
        echo "Health check failed after 10 attempts."
        exit 1
        fi

        sleep 0.2
        done
        echo "Health check passed."
        """,
        r"""echo UP > "$W/health" """,
        r""":""",
        r"""echo UP > "$W/health" """,
        p="Health check passed.",
        f="Health check failed after 10 attempts.",
        server=True,
        tools=("curl",),
        note="localhost/health became the loopback server; sleep 5 became 0.2. The loop never breaks: only the "
        "fifth answer counts",
    ),
    m(
        "for-ten-attempts-exit-0-on-200",
        "KTB-7/PinPung:scripts/health_check.sh",
        "exit",
        "en",
        r"""
        HEALTH_CHECK_URL="http://127.0.0.1:$HTTP_PORT/health"

        for i in {1..10}; do
            RESPONSE=$(curl -s -o /dev/null -w "%{http_code}" ${HEALTH_CHECK_URL})
            if [ "$RESPONSE" == "200" ]; then
                echo "Health check successful"
                exit 0
            fi
            echo "Health check failed. Retrying in 10 seconds..."
            sleep 0.1
        done

        echo "Health check failed after multiple attempts"
        exit 1
        """,
        r"""echo UP > "$W/health" """,
        r""":""",
        r"""echo UP > "$W/health" """,
        p="Health check successful",
        f="Health check failed after multiple attempts",
        server=True,
        tools=("curl",),
        note="localhost:8080 became the loopback server; sleep 10 became 0.1 (the message still says 10 seconds)",
    ),
    m(
        "until-command-substitution-of-curl-max-attempts",
        "mendix/widgets-resources:scripts/test/projectup.sh",
        "exit",
        "en",
        r"""
        URL="http://127.0.0.1:$HTTP_PORT/index.html"
        attempt_counter=0
        max_attempts=5

        echo "Booting up" $URL
        until $(curl --output /dev/null --silent --head --fail $URL); do
            if [ ${attempt_counter} -eq ${max_attempts} ];then
              echo "Max attempts reached"
              exit 1
            fi

            printf '.'
            attempt_counter=$(($attempt_counter+1))
            sleep 0.2
        done
        echo $URL " is up"
        """,
        r"""echo '<html>app</html>' > "$W/index.html" """,
        r""":""",
        r"""echo '<html>app</html>' > "$W/index.html" """,
        f=".....Max attempts reached",
        server=True,
        tools=("curl",),
        note="$URL (the environment's) is set to the loopback server; sleep 5 became 0.2",
    ),
    m(
        "wait-loop-breaks-but-never-fails",
        "kumahq/kuma-demo:vagrant/control-plane/kuma/check_kuma-cp.sh",
        "message",
        "en",
        r"""
        set -e

        # Wait for service to start
        for i in `seq 1 3`; do
            echo "try #$i: "
            if curl --silent --show-error --fail "http://127.0.0.1:$HTTP_PORT/status" ; then
                break
            fi
            sleep 0.2
        done
        """,
        r"""echo 'kuma-cp: ready' > "$W/status" """,
        r""":""",
        r"""echo 'kuma-cp: ready' > "$W/status" """,
        p="kuma-cp: ready",
        f="try #3:",
        server=True,
        tools=("curl",),
        note="localhost:5681 became the loopback server's /status; 60 tries of 1 s became 3 of 0.2 s. After the "
        "last try the loop just ends: the block exits 0 either way",
    ),
    # ---------------------------------------------------------------- files: identical? users present?
    m(
        "cmp-s-mirror-if-else-exit",
        "tianhaoz95/mirror-action:entrypoint.sh",
        "exit",
        "en",
        r"""
        set -o pipefail
        cd "$W"
        ORIGINAL_FILE=README.md
        MIRROR_FILE=docs/README.md

        if cmp -s "$ORIGINAL_FILE" "$MIRROR_FILE"
        then
          echo "Content in $ORIGINAL_FILE and $MIRROR_FILE are the same. Done."
        else
          echo "ERROR: content in $ORIGINAL_FILE and $MIRROR_FILE are different."
          exit 1
        fi
        """,
        r"""mkdir -p "$W/docs"; echo '# Project' | tee "$W/README.md" > "$W/docs/README.md" """,
        r"""mkdir -p "$W/docs"; echo '# Project' > "$W/README.md"; echo '# Project (old)' > "$W/docs/README.md" """,
        r"""mkdir -p "$W/docs"; cp "$W/README.md" "$W/docs/README.md" 2>/dev/null || echo '# Project' | tee "$W/README.md" > "$W/docs/README.md" """,
        p="Content in README.md and docs/README.md are the same. Done.",
        f="ERROR: content in README.md and docs/README.md are different.",
        note="the two files (the action's $1 $2) are paths relative to $W",
    ),
    m(
        "cmp-s-then-dollar-question-eq-1",
        "cirosantilli/linux-cheat:cmp.md",
        "message",
        "en",
        r"""
        F="$W/app.conf"
        G="$W/app.conf.deployed"
        cmp -s "$F" "$G"
        if [ $? -eq 1 ]; then
          echo neq
        else
          echo eq
        fi
        """,
        r"""echo 'workers 4' | tee "$W/app.conf" > "$W/app.conf.deployed" """,
        r"""echo 'workers 4' > "$W/app.conf"; echo 'workers 2' > "$W/app.conf.deployed" """,
        r"""echo 'workers 4' > "$W/app.conf"; cp "$W/app.conf" "$W/app.conf.deployed" """,
        p="eq",
        f="neq",
    ),
    m(
        "cmp-in-function-exit-from-function",
        "storj/gateway-st:testsuite/integration/require.sh",
        "exit",
        "en",
        r"""
        require_equal_files_content () {
            name=$(basename $2)
            if cmp "$1" "$2"
            then
                echo "$name matches uploaded file"
            else
                echo "$name does not match uploaded file"
                exit 1
            fi
        }
        require_equal_files_content "$W/upload/report.bin" "$W/download/report.bin"
        """,
        r"""mkdir -p "$W/upload" "$W/download"; printf 'Q1 numbers\n' | tee "$W/upload/report.bin" > "$W/download/report.bin" """,
        r"""mkdir -p "$W/upload" "$W/download"; printf 'Q1 numbers\n' > "$W/upload/report.bin"; printf 'Q1 numb\n' > "$W/download/report.bin" """,
        r"""mkdir -p "$W/upload" "$W/download"; printf 'Q1 numbers\n' | tee "$W/upload/report.bin" > "$W/download/report.bin" """,
        p="report.bin matches uploaded file",
        f="report.bin does not match uploaded file",
        note="the function is called once, on an uploaded file and its download",
    ),
    m(
        "awk-passwd-user-exists-function",
        "eagleblade/alpine_functions:users.sh",
        "message",
        "en",
        r"""
        check_user() {
          local USER=$(awk -v val=$1 -F ":" '$1==val{print $1}' "$W/etc/passwd")
            if [ "$USER" = "$1" ]; then
              echo "user: $USER exist"; else
              echo "user: $1 does not exist"
            fi
        }
        check_user deploy
        """,
        r"""mkdir -p "$W/etc"; printf 'root:x:0:0:root:/root:/bin/sh\ndeploy:x:1000:1000::/home/deploy:/bin/sh\n' > "$W/etc/passwd" """,
        r"""mkdir -p "$W/etc"; printf 'root:x:0:0:root:/root:/bin/sh\n' > "$W/etc/passwd" """,
        r"""
        mkdir -p "$W/etc"; touch "$W/etc/passwd"
        grep -q '^deploy:' "$W/etc/passwd" || echo 'deploy:x:1000:1000::/home/deploy:/bin/sh' >> "$W/etc/passwd"
        """,
        p="user: deploy exist",
        f="user: deploy does not exist",
        note="/etc/passwd became $W/etc/passwd",
    ),
    m(
        "passwd-grep-wc-awk-count",
        "laxmansinghrathore1/demo_script:check_if_user_exists.sh",
        "message",
        "en",
        r"""
        username=deploy

        count=$(cat "$W/etc/passwd" |grep $username | wc | awk '{print $1}')

        if [ $count == 0 ];
        then
            echo "user does not exist"
        else
            echo "user exists"
        fi
        """,
        r"""mkdir -p "$W/etc"; printf 'root:x:0:0:root:/root:/bin/sh\ndeploy:x:1000:1000::/home/deploy:/bin/sh\n' > "$W/etc/passwd" """,
        r"""mkdir -p "$W/etc"; printf 'root:x:0:0:root:/root:/bin/sh\n' > "$W/etc/passwd" """,
        r"""
        mkdir -p "$W/etc"; touch "$W/etc/passwd"
        grep -q '^deploy:' "$W/etc/passwd" || echo 'deploy:x:1000:1000::/home/deploy:/bin/sh' >> "$W/etc/passwd"
        """,
        p="user exists",
        f="user does not exist",
        note="`read -p` for the name became an assignment; /etc/passwd became $W/etc/passwd",
    ),
    # ---------------------------------------------------------------- release gates on a git work tree
    m(
        "git-porcelain-nonempty-printf-exit",
        "AnteWall/action-git:action-git/entrypoint.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W/repo"
        if [[ -n $(git status --porcelain) ]]; then
          printf "Release: Working tree is not clean (git status)\n"
          exit 1
        fi
        """,
        _GIT_REPO,
        _GIT_REPO + r"""echo 'TODO' > "$W/repo/notes.txt" """,
        _GIT_CLEAN,
        f="Release: Working tree is not clean (git status)",
        tools=("git",),
        note="the repository is $W/repo",
    ),
    m(
        "git-porcelain-wc-l-negated-eq",
        "runtimeverification/haskell-backend:scripts/git-assert-clean.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W/repo"
        if [ ! $(git status --porcelain | wc -l) -eq 0 ]; then
            echo "Found dirty files:"
            git status --porcelain
            exit 1
        fi
        """,
        _GIT_REPO,
        _GIT_REPO + r"""echo '# app, edited' > "$W/repo/README.md" """,
        _GIT_CLEAN,
        f="Found dirty files:",
        tools=("git",),
        note="the repository is $W/repo",
    ),
    m(
        "git-status-var-clean-or-dirty-diff",
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
        _GIT_REPO + r"""echo '# app, edited' > "$W/repo/README.md" """,
        _GIT_CLEAN,
        p="tree is clean",
        f="tree is dirty, please commit all changes",
        tools=("git",),
        note="the repository is $W/repo",
    ),
    # ---------------------------------------------------------------- deploy scripts: guards before compose
    m(
        "dotenv-guard-if-exit-then-compose-up",
        "climate-ethos/ethos-server:prod_start_server.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        # Check if .env file exists
        if [ ! -f .env ]; then
          echo ".env file not found! Please create a .env file in the root directory."
          exit 1
        fi

        "$W/bin/docker" compose up --build -d --restart unless-stopped
        """,
        _DOCKER + r"""echo 'APP_ENV=production' > "$W/.env" """,
        _DOCKER,
        _DOCKER + r"""[ -f "$W/.env" ] || echo 'APP_ENV=production' > "$W/.env" """,
        p="✔ Container app-web-1  Started",
        f=".env file not found! Please create a .env file in the root directory.",
        note="docker is a world tool that reports the container started",
    ),
    m(
        "dotenv-guard-source-then-compose",
        "theic/dobby:scripts/run-local.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        # Check if .env file exists
        if [ ! -f .env ]; then
            echo "Error: .env file not found!"
            exit 1
        fi

        # Load environment variables
        source .env

        # Build and run using docker-compose
        "$W/bin/docker-compose" up --build
        """,
        _DOCKER + r"""echo 'COMPOSE_PROJECT_NAME=dobby' > "$W/.env" """,
        _DOCKER,
        _DOCKER + r"""[ -f "$W/.env" ] || echo 'COMPOSE_PROJECT_NAME=dobby' > "$W/.env" """,
        p="Creating app_web_1 ... done",
        f="Error: .env file not found!",
        note="docker-compose is a world tool",
    ),
    m(
        "env-file-set-a-source-or-does-not-exist",
        "HannuKarstu/pose_estimation_full_stack_project_2:prod_build_and_start_services.sh",
        "message",
        "en",
        r"""
        cd "$W"
        FILE=my_env.env

        if [ -f "$FILE" ]; then
            set -a
            source $FILE
            "$W/bin/docker-compose" -f docker-compose.prod.yml up --build
        else
            echo "$FILE does not exist. Create the file and add REPOSITORY=<REPOSITORY=<your Docker Hub repository> to it."
        fi
        """,
        _DOCKER + r"""echo 'REPOSITORY=hannu/pose' > "$W/my_env.env" """,
        _DOCKER,
        _DOCKER + r"""[ -f "$W/my_env.env" ] || echo 'REPOSITORY=hannu/pose' > "$W/my_env.env" """,
        p="Creating app_web_1 ... done",
        f="my_env.env does not exist. Create the file and add REPOSITORY=<REPOSITORY=<your Docker Hub repository> to "
        "it.",
        note="docker-compose is a world tool",
    ),
    m(
        "sql-dump-exists-then-import",
        "pratirupm/WPDocker:import.sh",
        "message",
        "en",
        r"""
        cd "$W"
        FILE=./content/backup.sql
        if [ -f "$FILE" ]; then
            echo "$FILE exists."
            "$W/bin/docker-compose" run --rm wpcli db import $FILE
        else
            echo "$FILE does not exist."
        fi
        """,
        _DOCKER + r"""mkdir -p "$W/content"; echo 'CREATE TABLE wp_posts (id int);' > "$W/content/backup.sql" """,
        _DOCKER,
        _DOCKER + r"""mkdir -p "$W/content"; [ -f "$W/content/backup.sql" ] || echo 'CREATE TABLE wp_posts (id int);' > "$W/content/backup.sql" """,
        p="./content/backup.sql exists.",
        f="./content/backup.sql does not exist.",
        note="docker-compose (wp-cli in a container) is a world tool",
    ),
    m(
        "restore-sql-nested-if-portuguese",
        "BetoPS93/aulas_de_shell:restore_amazon.sh",
        "message",
        "pt",
        r"""
        set -- mutillidae
        CAMINHO_RESTORE="$W/restore"

        cd $CAMINHO_RESTORE
        if [ -f $1.sql ]
        then
            sqlite3 "$W/mutillidae.db" < $1.sql
            if [ $? -eq 0 ]
            then
                echo "O restore foi realizado com sucesso"
            fi
        else
            echo "O arquivo não existe!"
        fi
        """,
        r"""
        mkdir -p "$W/restore"
        echo "create table if not exists accounts(cid integer primary key, username text); insert or replace into accounts values (1, 'admin');" > "$W/restore/mutillidae.sql"
        """,
        r"""mkdir -p "$W/restore" """,
        r"""
        mkdir -p "$W/restore"
        echo "create table if not exists accounts(cid integer primary key, username text); insert or replace into accounts values (1, 'admin');" > "$W/restore/mutillidae.sql"
        """,
        p="O restore foi realizado com sucesso",
        f="O arquivo não existe!",
        tools=("sqlite3",),
        note="`aws s3 sync` (the download) is the world; mysql became sqlite3; the dump's name ($1) is set "
        "with `set --`",
    ),
    m(
        "backup-source-dir-if-not-exit-then-tar",
        "medsuet/Xcelerium-IC-Design-Training:Masooma/lab3/backup.sh",
        "failure-branch",
        "en",
        r"""
        cd "$W"
        backup_dir="masoom"
        dest_dir="dest"
        # Check if backup directory exists
        if [ ! -d "$backup_dir" ]; then #This line checks if $backup_dir does not exist
            echo "Error: Directory $backup_dir does not exist or is not accessible."
            exit 1
        fi
        backup_file="backup_$(date +'%Y-%m-%d').tar.gz"
        tar -czf "$dest_dir/$backup_file" -C "$backup_dir" .
        """,
        r"""mkdir -p "$W/masoom" "$W/dest"; echo 'notes' > "$W/masoom/notes.txt" """,
        r"""mkdir -p "$W/dest" """,
        r"""mkdir -p "$W/masoom" "$W/dest"; [ -f "$W/masoom/notes.txt" ] || echo 'notes' > "$W/masoom/notes.txt" """,
        f="Error: Directory masoom does not exist or is not accessible.",
        note="the home directories became relative paths under $W",
    ),
    m(
        "find-size-exec-du-if-nonempty-exit",
        "phytec/doc-bsp-yocto:scripts/check_filesize.sh",
        "failure-branch",
        "en",
        r"""
        MAX_SIZE=300k
        DIR="$W/source"

        large_files=$(find $DIR -type f -size +"$MAX_SIZE" -exec du -h {} \;)

        if [ -n "$large_files" ]; then
          echo -e "Error: Large files were found: \n$large_files"
          exit 1
        fi
        """,
        r"""mkdir -p "$W/source"; echo 'Welcome' > "$W/source/index.rst" """,
        r"""mkdir -p "$W/source"; echo 'Welcome' > "$W/source/index.rst"; head -c 400000 /dev/zero > "$W/source/board.png" """,
        r"""mkdir -p "$W/source"; find "$W/source" -type f -size +300k -delete; echo 'Welcome' > "$W/source/index.rst" """,
        f="Error: Large files were found:",
        note="the documentation tree is $W/source",
    ),
    # ---------------------------------------------------------------- install scripts: docker and guards
    m(
        "needed-commands-loop-if-not-exit-silent",
        "sharkzeeh/crypto:healthcheck.sh",
        "failure-branch",
        "en",
        r"""
        NEEDED_COMMANDS="docker"

        for cmd in ${NEEDED_COMMANDS} ; do
            if ! command -v "$W/bin/${cmd}" &> /dev/null
            then
                echo "Please install ${cmd}!"
                exit 1
            fi
        done
        """,
        _DOCKER,
        r""":""",
        _DOCKER,
        f="Please install docker!",
        note="the commands are probed by path in $W/bin",
    ),
    m(
        "which-then-version-grep-nested-else-to-stderr",
        "ShyamKodali/My_First_Repo:Shell_Scripting_POC/POC/learn-shell-script/print_docker_version.sh",
        "message",
        "en",
        r"""
        which "$W/bin/docker"

        if [ $? -eq 0 ]
        then
            "$W/bin/docker" --version | grep "Docker version"
            if [ $? -eq 0 ]
            then
                echo "docker existing"
            else
                echo "install docker"
            fi
        else
            echo "install docker" >&2
        fi
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\necho "Docker version 24.0.7, build afdd53b"\n' > "$W/bin/docker"; chmod +x "$W/bin/docker" """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\necho "podman version 4.9.3"\n' > "$W/bin/docker"; chmod +x "$W/bin/docker" """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\necho "Docker version 24.0.7, build afdd53b"\n' > "$W/bin/docker"; chmod +x "$W/bin/docker" """,
        p="docker existing",
        f="install docker",
        note="docker is the world's $W/bin/docker (broken: podman's docker alias); when it is missing "
        "altogether the message goes to stderr",
    ),
    m(
        "command-v-exit-0-early-else-exit-1",
        "CloudGod93/Pop_Setup:scripts/check_docker.sh",
        "exit",
        "en",
        r"""
        set -euo pipefail

        if command -v "$W/bin/docker" >/dev/null 2>&1; then
          echo "Docker already installed"
          exit 0
        fi

        echo "Docker not found"
        exit 1
        """,
        _DOCKER,
        r""":""",
        _DOCKER,
        p="Docker already installed",
        f="Docker not found",
        note="docker is probed by path in $W/bin",
    ),
    m(
        "guard-function-abort-confirm-or-exit",
        "basecamp/omarchy:install/preflight/guard.sh",
        "failure-branch",
        "en",
        r"""
        PATH="$W/bin:$PATH"
        abort() {
          echo -e "\e[31mOmarchy install requires: $1\e[0m"
          echo
          gum confirm "Proceed anyway on your own accord and without assistance?" || exit 1
        }

        # Must be an Arch distro
        if [[ ! -f "$W/etc/arch-release" ]]; then
          abort "Vanilla Arch"
        fi

        # Must have limine installed
        command -v "$W/bin/limine" &>/dev/null || abort "Limine bootloader"

        # Cleared all guards
        echo "Guards: OK"
        """,
        r"""
        mkdir -p "$W/bin" "$W/etc"; touch "$W/etc/arch-release"
        printf '#!/bin/sh\nexit 1\n' > "$W/bin/gum"; printf '#!/bin/sh\n' > "$W/bin/limine"; chmod +x "$W/bin/gum" "$W/bin/limine"
        """,
        r"""
        mkdir -p "$W/bin" "$W/etc"
        printf '#!/bin/sh\nexit 1\n' > "$W/bin/gum"; printf '#!/bin/sh\n' > "$W/bin/limine"; chmod +x "$W/bin/gum" "$W/bin/limine"
        """,
        r"""
        mkdir -p "$W/bin" "$W/etc"; touch "$W/etc/arch-release"
        printf '#!/bin/sh\nexit 1\n' > "$W/bin/gum"; printf '#!/bin/sh\n' > "$W/bin/limine"; chmod +x "$W/bin/gum" "$W/bin/limine"
        """,
        p="Guards: OK",
        f="\x1b[31mOmarchy install requires: Vanilla Arch\x1b[0m",
        note="gum (an interactive confirm) is a world tool that declines, as it does with no terminal; /etc and "
        "limine moved into $W; four of the guards are left out",
    ),
    m(
        "node-installed-command-substitution-in-echo",
        "Lecoeurdelest/dotfiles:lang/node/install.sh",
        "message",
        "en",
        r"""
        set -e

        echo "📦 Setting up Node.js..."

        # Check if node is installed
        if command -v "$W/bin/node" &> /dev/null; then
            echo "Node.js is installed: $("$W/bin/node" --version)"
            echo "NPM version: $("$W/bin/npm" --version)"
        else
            echo "Node.js not found"
            echo "Install Node.js with:"
        fi

        echo "Node.js setup complete"
        """,
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v22.3.0\n' > "$W/bin/node"; printf '#!/bin/sh\necho 10.8.1\n' > "$W/bin/npm"
        chmod +x "$W/bin/node" "$W/bin/npm"
        """,
        r""":""",
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v22.3.0\n' > "$W/bin/node"; printf '#!/bin/sh\necho 10.8.1\n' > "$W/bin/npm"
        chmod +x "$W/bin/node" "$W/bin/npm"
        """,
        p="Node.js is installed: v22.3.0",
        f="Node.js not found",
        note="node and npm are world tools probed by path; the install hints are cut to one line and the yarn "
        "check is left out",
    ),
    m(
        "node-npm-if-not-exit-then-npm-install-status",
        "prodbyichigo/PerfectRed:install.sh",
        "failure-branch",
        "en",
        r"""
        if ! command -v "$W/bin/node" >/dev/null 2>&1; then
          echo "!Node.js is not installed! Please install it first:"
          echo "👉 https://nodejs.org/"
          exit 1
        fi

        if ! command -v "$W/bin/npm" >/dev/null 2>&1; then
          echo "❌ !npm is not installed. Please install Node.js (npm comes with it)!"
          exit 1
        fi

        echo "Node.js and npm are installed."
        """,
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v22.3.0\n' > "$W/bin/node"; printf '#!/bin/sh\necho 10.8.1\n' > "$W/bin/npm"
        chmod +x "$W/bin/node" "$W/bin/npm"
        """,
        r"""mkdir -p "$W/bin"; printf '#!/bin/sh\necho v22.3.0\n' > "$W/bin/node"; chmod +x "$W/bin/node" """,
        r"""
        mkdir -p "$W/bin"; printf '#!/bin/sh\necho v22.3.0\n' > "$W/bin/node"; printf '#!/bin/sh\necho 10.8.1\n' > "$W/bin/npm"
        chmod +x "$W/bin/node" "$W/bin/npm"
        """,
        p="Node.js and npm are installed.",
        f="❌ !npm is not installed. Please install Node.js (npm comes with it)!",
        note="node and npm are world tools probed by path; the npm install that follows is left out",
    ),
)

validate(IDIOMS)
