# lib.sh — shared helpers of the install/build scripts (sourced, not run): one progress line per phase,
# one sentence when something fails, and apt installs that report progress instead of going silent.
# MESHFIT_QUIET_APT=0 shows apt's own output.

# phase "what is happening (how long)": one line, prefixed, with the seconds since the first script
# of this command started (MESHFIT_START is passed down to the scripts it calls).
: "${MESHFIT_START:=$(date +%s)}"
export MESHFIT_START
phase() { printf 'meshfit [%4ss] %s\n' "$(( $(date +%s) - MESHFIT_START ))" "$*"; }
# fail "what failed and what to do": one sentence on stderr, exit 1.
fail() { printf 'meshfit: error: %s\n' "$*" >&2; exit 1; }

# Last resort for a command that fails without its own message: name it, never a bare exit code.
set -E
trap 'status=$?; printf "meshfit: error: \"%s\" failed with exit status %s (%s, line %s); the lines above say why.\n" \
        "$BASH_COMMAND" "$status" "${BASH_SOURCE[0]##*/}" "$LINENO" >&2; exit "$status"' ERR

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else fail "installing Debian packages needs root: run this as root or install sudo (missing: ${missing_packages[*]})."
  fi
}

# apt_install WHAT PACKAGE...: installs the packages that are not installed yet, printing a line per
# ~10% of apt's own progress (APT::Status-Fd) so a long install is never a silent minute.
apt_install() {
  local what=$1; shift
  missing_packages=()
  local package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing_packages+=("$package")
  done
  [ ${#missing_packages[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: meshfit's scripts expect Debian 12; install ${missing_packages[*]} by hand."
  phase "installing $what from Debian's archive: ${missing_packages[*]}"
  local log
  log=$(mktemp /tmp/meshfit-apt.XXXXXX)
  as_root apt-get update -qq >"$log" 2>&1 ||
    { tail -5 "$log" >&2; fail "apt-get update failed (log: $log): check the network and /etc/apt/sources.list*."; }
  # Status lines look like "pmstatus:pkg:42.5:Unpacking pkg"; print one line per 10% step.
  if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends \
         -o APT::Status-Fd=3 "${missing_packages[@]}" 3>&1 >>"$log" 2>&1 |
       awk -F: '
         /^(dlstatus|pmstatus):/ {
           kind = ($1 == "dlstatus") ? "downloading" : "unpacking and setting up"
           step = int($3 / 10)
           if (kind != last_kind || step > last_step) {
             printf "meshfit         %s: %d%%\n", kind, step * 10; fflush()
             last_kind = kind; last_step = step
           }
         }'; then
    tail -5 "$log" >&2
    fail "apt-get install ${missing_packages[*]} failed (log: $log): check the network and that this is Debian 12."
  fi
  # The pipeline's status is awk's; check apt's result by the packages themselves.
  for package in "${missing_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      { tail -5 "$log" >&2; fail "$package did not install (log: $log)."; }
  done
  rm -f "$log"
  phase "installed $what"
}
