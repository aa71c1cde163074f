#!/usr/bin/env bash
# Proves the README's two commands on a clean Debian 12: debootstraps a minimal bookworm root
# (Debian's own packages; no host package, cache or build output leaks in), copies the checkout
# into it (git ls-files: tracked files as they are in the work tree, no build dir), and runs
#   1. scripts/install-deps.sh && scripts/build.sh && build/netspec train mlp --epochs 1
#   2. scripts/install-deps.sh && scripts/test.sh
# inside it (unshare + chroot, with /proc, /dev, /sys mounted), printing each part's wall time.
# Run as root on a developer's machine whenever a change touches dependencies; not in CI (it
# takes long: packages, a cold build and the whole suite). Record the result in docs/status.md.
#   scripts/fresh-check.sh [ROOT]        (default /var/tmp/netspec-fresh-root; wiped first)
# Env: FRESH_MIRROR (default http://deb.debian.org/debian); FRESH_BASE=DIR copies an earlier
# pristine debootstrap (made by this script, never entered) instead of downloading one;
# FRESH_ONLY=first runs only the first command.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/var/tmp/netspec-fresh-root}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
die() { echo "fresh-check: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "run as root (debootstrap, chroot and mounts need it)"
case $root in "$repo" | "$repo"/*) die "ROOT must be outside the repository (got $root)" ;; esac
command -v unshare >/dev/null && command -v chroot >/dev/null || die "needs unshare and chroot (util-linux, coreutils)"

now() { date +%s.%N; }
# CPU seconds (user + sys) used so far by this shell's finished children, e.g. the chroot's
# compilers: a load-independent measure next to the wall time on a shared machine.
# Sets $cpu_now (`times` must run in this shell, not in a $(...) subshell).
cpu_file=$(mktemp)
child_cpu() {
  times >"$cpu_file"
  cpu_now=$(tail -1 "$cpu_file" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

if ! command -v debootstrap >/dev/null; then
  echo "== installing debootstrap (Debian's package)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends debootstrap >/dev/null
fi

commit=$(git -C "$repo" rev-parse --short HEAD)
dirty=$(git -C "$repo" status --porcelain --untracked-files=no | wc -l)
echo "== fresh-check $(date -u '+%Y-%m-%d %H:%M UTC') commit $commit ($dirty tracked files modified)" \
  "on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

rm -rf "$root"
t0=$(now)
if [[ -n ${FRESH_BASE:-} ]]; then
  [[ -x $FRESH_BASE/bin/bash && -f $FRESH_BASE/etc/debian_version ]] || die "FRESH_BASE=$FRESH_BASE is not a root"
  echo "== copying the pristine root $FRESH_BASE"
  cp -a "$FRESH_BASE" "$root"
else
  echo "== debootstrap bookworm (minbase + git) into $root"
  debootstrap --variant=minbase --include=git bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log"; die "debootstrap failed (log: $root.debootstrap.log)"; }
fi
grep -q '^VERSION_ID="12"' "$root/etc/os-release" || die "the root is not Debian 12"
echo "   root ready in $(mmss "$(secs "$t0" "$(now)")")"

# The checkout: tracked files only (no build dir, no venv, no untracked files).
mkdir -p "$root/root/netspec"
(cd "$repo" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
  tar -C "$root/root/netspec" -xf -
# The host's network set-up, nothing else: its resolver and, where the host reaches the internet
# through a TLS-intercepting proxy (it names a CA bundle in PIP_CERT, REQUESTS_CA_BUNDLE or
# SSL_CERT_FILE), that bundle for pip in the root; a plain machine needs neither.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
pip_cert=()
for ca in "${PIP_CERT:-}" "${REQUESTS_CA_BUNDLE:-}" "${SSL_CERT_FILE:-}"; do
  if [[ -n $ca && -f $ca ]]; then
    cp -L "$ca" "$root/etc/fresh-check-host-ca.crt"
    pip_cert=(PIP_CERT=/etc/fresh-check-host-ca.crt)
    echo "   pip in the root trusts the host's CA bundle $ca (PIP_CERT)"
    break
  fi
done

# Runs a command line inside the root as root, in a private mount namespace (its mounts vanish
# with it), with a clean environment.
in_root() {
  unshare --mount --propagation private -- /bin/bash -c '
    set -e
    r=$1 env=$2; shift 2
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    mount --rbind /sys "$r/sys"
    exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb $env \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/bash -c "cd /root/netspec && $*"' fresh "$root" "${pip_cert[*]}" "$@"
}

# Times one part; appends "name seconds status" to the results.
results=()
part() {
  local name=$1
  shift
  echo "== [$name] $*"
  local a c status=0
  child_cpu
  a=$(now) c=$cpu_now
  in_root "$@" || status=$?
  child_cpu
  local s cpu=$((cpu_now - c))
  s=$(secs "$a" "$(now)")
  echo "   [$name] $(mmss "$s") wall, $(mmss "$cpu") cpu (exit $status)"
  results+=("$name $s $cpu $status")
  return "$status"
}

first_ok=0
t1=$(now)
part "1a install-deps" scripts/install-deps.sh &&
  part "1b build" scripts/build.sh &&
  part "1c train" build/netspec train mlp --epochs 1 || first_ok=$?
first_s=$(secs "$t1" "$(now)")
second_ok=skipped second_s=0
if [[ ${FRESH_ONLY:-} != first && $first_ok -eq 0 ]]; then
  t2=$(now)
  second_ok=0
  part "2a install-deps" scripts/install-deps.sh && part "2b test" scripts/test.sh || second_ok=$?
  second_s=$(secs "$t2" "$(now)")
fi

echo "== fresh-check summary: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores"
for r in "${results[@]}"; do
  read -r n1 n2 s cpu st <<<"$r"
  printf '   %-18s %8s wall %8s cpu  exit %s\n' "$n1 $n2" "$(mmss "$s")" "$(mmss "$cpu")" "$st"
done
printf '   first command  %8s  %s\n' "$(mmss "$first_s")" "$([[ $first_ok == 0 ]] && echo pass || echo FAIL)"
if [[ $second_ok == skipped ]]; then
  echo "   second command  (not run)"
else
  printf '   second command %8s  %s\n' "$(mmss "$second_s")" "$([[ $second_ok == 0 ]] && echo pass || echo FAIL)"
fi
[[ $first_ok == 0 && ($second_ok == 0 || $second_ok == skipped) ]]
