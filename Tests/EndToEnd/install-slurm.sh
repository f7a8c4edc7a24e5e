#!/bin/sh
# Installs Slurm and munge for the cohort test's one-node cluster, only when missing and only
# where no Slurm is configured: a machine with a Slurm of its own is left untouched (the test
# then skips its Slurm part). No daemon is started by the install: where no policy-rc.d exists,
# one that refuses every start is put in place for the install and removed after it.
set -eu
PACKAGES="slurmctld slurmd slurm-client munge"
if [ -e /etc/slurm/slurm.conf ] || [ -n "${SLURM_CONF:-}" ]; then
  echo "Slurm is configured on this machine: the cohort test leaves it alone and skips its Slurm part"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "Not root: the cohort test skips its Slurm part (slurmd must run as root)"
  exit 0
fi
missing=""
for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
echo "Installing Debian packages for the cohort test's Slurm cluster:$missing"
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# temporary: written by HealthETL install-slurm.sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT INT TERM
fi
for attempt in 1 2 3 4 5; do
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; then
    exit 0
  fi
  echo "apt-get failed (another install running?); retrying in 10 s"
  sleep 10
done
exit 1
