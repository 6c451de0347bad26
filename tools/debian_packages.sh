# tools/debian_packages.sh - sourced by the setup scripts: install_missing NAME PACKAGES...
# installs with apt-get the Debian packages not yet installed (as root; otherwise it names
# them and exits 1), or says they all are. NAME prefixes its messages.

install_missing() {
    name=$1
    shift
    missing=""
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $package"
        fi
    done
    if [ -z "$missing" ]; then
        echo "$name: Debian packages already installed"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "$name: missing Debian packages:$missing; run as root" >&2
        exit 1
    fi
    echo "$name: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    apt-get install -y -qq $missing
}
