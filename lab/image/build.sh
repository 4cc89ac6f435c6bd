#!/usr/bin/env bash
# Build the lab's node image: a minimal Debian with systemd and sshd, imported into podman.
# Usage: build.sh <suite> <image-tag>
# Nothing InfiniBand-specific is baked in: the simulator is bind-mounted from the checkout when
# a node starts (lab/labctl.py), so changing it never needs a rebuild.
set -euo pipefail

suite=${1:?suite (bookworm|trixie)}
tag=${2:?image tag}
mirror=${FABRIC_LAB_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d /var/tmp/fabric-lab-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# What a freshly installed server has, plus what the simulator needs to run (python3, fuse for
# the sysfs overlay, the umad2sim preload library to reach the simulated fabric) and the real
# infiniband-diags (its ibstat reads sysfs, so it runs unchanged over the simulated one).
packages=python3,python3-apt,systemd,systemd-sysv,dbus,openssh-server,iproute2,kmod,sudo,ca-certificates
packages+=,fuse3,python3-fusepy,ibsim-utils,infiniband-diags
# Debian's Slurm (22.05 on bookworm) and munge, for the scheduler's side of the lab (`labctl slurm up`
# writes the key and slurm.conf and starts the daemons; until then they stay off, see below).
packages+=,munge,slurmctld,slurmd,slurm-client

debootstrap --variant=minbase --include="$packages" "$suite" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}

root=$work/root
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/cache/apt/archives/*.deb
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +
: >"$root/etc/machine-id"
rm -f "$root/etc/resolv.conf" "$root"/etc/ssh/ssh_host_*
# A freshly imported image must not look like a fresh apt cache (apt's cache_valid_time).
touch -d @0 "$root/var/lib/apt/lists"
# Host keys are made on first boot; root logs in with a key only.
mkdir -p "$root/etc/systemd/system/ssh.service.d" "$root/root/.ssh"
chmod 700 "$root/root/.ssh"
cat >"$root/etc/systemd/system/ssh.service.d/10-hostkeys.conf" <<'EOF'
[Service]
ExecStartPre=
ExecStartPre=/usr/bin/ssh-keygen -A
ExecStartPre=/usr/sbin/sshd -t
EOF
printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n' >"$root/etc/ssh/sshd_config.d/10-lab.conf"
# The simulated adapters: started before anything that could look at them. The code comes from
# the checkout, bind-mounted at /usr/lib/fabricsim/fabricsim by lab/labctl.py or molecule.
cat >"$root/etc/systemd/system/fabricsim.service" <<'EOF'
[Unit]
Description=Simulated ConnectX adapters and sysfs (fabric.infiniband lab)
ConditionPathExists=/usr/lib/fabricsim/fabricsim/node.py
ConditionPathExists=/var/lib/fabricsim/state.json
DefaultDependencies=no
After=local-fs.target systemd-tmpfiles-setup.service
Before=sysinit.target ssh.service multi-user.target

[Service]
Type=notify
NotifyAccess=all
Environment=PYTHONPATH=/usr/lib/fabricsim
ExecStart=/usr/bin/python3 -m fabricsim.node serve
ExecStopPost=/usr/bin/python3 -m fabricsim.node stop
TimeoutStartSec=60

[Install]
WantedBy=sysinit.target
EOF
mkdir -p "$root/etc/systemd/system/sysinit.target.wants"
ln -sf ../fabricsim.service "$root/etc/systemd/system/sysinit.target.wants/fabricsim.service"
# Slurm and munge start only where `labctl slurm up` enables them, with the lab's key: no node of the
# image shares a key made at build time, and molecule's nodes do not run them.
rm -f "$root"/etc/systemd/system/multi-user.target.wants/{munge,slurmd,slurmctld}.service "$root/etc/munge/munge.key"
# Units that have nothing to do in a container and only slow the boot down.
for unit in systemd-udevd.service systemd-udev-trigger.service systemd-udevd-control.socket \
  systemd-udevd-kernel.socket apt-daily.timer apt-daily-upgrade.timer e2scrub_reap.service \
  systemd-networkd-wait-online.service getty@tty1.service console-getty.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

tar -C "$root" --numeric-owner -c . | podman import \
  --change 'CMD ["/sbin/init"]' \
  --change 'ENV container=podman' \
  --change 'STOPSIGNAL SIGRTMIN+3' \
  - "$tag" >/dev/null
echo "built $tag"
