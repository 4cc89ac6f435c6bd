#!/usr/bin/env bash
# Build the VM lab's base disk image: Debian booting its own kernel from its own disk through
# GRUB, so that what a role does to /boot (update-initramfs, dracut) takes effect at the next
# real reboot, as on a server. Run as root; lab/vm/vmctl.py calls it when the image it wants
# (keyed by a hash of this file, the suite and the lab's SSH key) is not in .cache/lab/vm/.
# Usage: build.sh <suite> <output.qcow2> <authorized_keys file>
#
# The disk: one MBR partition (ext4, from 1 MiB). The loop driver of these build machines makes
# no partition devices (`losetup -P` shows none), so the file system is reached through a loop
# device at the partition's offset, and grub-install, which wants the partition of a disk, is
# replaced by what it does: modules to /boot/grub, boot.img to the MBR, a core.img made by
# grub-mkimage to the gap before the partition. The chroot gets a /dev of its own in which that
# loop device is the root file system's, with its /dev/disk/by-uuid link, so that update-grub
# and update-initramfs (MODULES=dep) find the root device as on a real disk. update-grub skips
# /dev/loop0-9 (grub.d/10_linux: "loop-mounted from files"), hence a loop device numbered from 16.
# In the guest the disk is /dev/vda; grub-install and update-grub work there as usual.
#
# Nothing InfiniBand-specific is set up beyond Debian's own packages, with one exception that is
# the point of the lab: ib_core is listed in /etc/initramfs-tools/modules, so it loads from the
# initramfs as on hosts where mlx5_core or nvme-rdma pull it in early. A modprobe.d option for
# ib_core then takes effect only once the initramfs has been regenerated.
set -euo pipefail

suite=${1:?suite (bookworm)}
out=${2:?output image (qcow2)}
pubkey=${3:?authorized_keys file (the lab key .pub)}
mirror=${FABRIC_LAB_MIRROR:-http://deb.debian.org/debian}
size=${FABRIC_LAB_VM_DISK_SIZE:-4G}

for tool in debootstrap sfdisk losetup mkfs.ext4 qemu-img; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing (apt-get install debootstrap fdisk mount e2fsprogs qemu-utils)" >&2; exit 1; }
done

work=$(mktemp -d /var/tmp/fabric-lab-vm.XXXXXX)
root=$work/root
disk=$work/disk.raw
part=
unmount_all() {
  for mnt in dev/pts dev proc sys ""; do
    if mountpoint -q "$root/$mnt"; then umount "$root/$mnt" || return 1; fi
  done
}
# Processes still running in the chroot (apt or a maintainer script, when the build is interrupted).
chroot_pids() {
  local link pid
  for link in /proc/[0-9]*/root; do
    pid=${link#/proc/}; pid=${pid%/root}
    [ "$(readlink "$link" 2>/dev/null)" = "$root" ] && echo "$pid"
  done
}
cleanup() {
  set +e
  trap - INT TERM HUP
  local pids tries=0
  pids=$(chroot_pids)
  # shellcheck disable=SC2086  # one PID per word
  [ -n "$pids" ] && kill $pids 2>/dev/null
  until unmount_all 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -ge 20 ]; then
      echo "build.sh: $root stays mounted; left in place (umount it, losetup -d $part, then remove $work)" >&2
      return
    fi
    pids=$(chroot_pids)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    sleep 0.5
  done
  [ -n "$part" ] && losetup -d "$part" 2>/dev/null
  # Never remove the work directory while anything is still mounted below it.
  grep -q " $work/" /proc/mounts || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

step() { printf 'build.sh: %s (%ds)\n' "$1" "$SECONDS"; }
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

step "disk: $size, one ext4 partition from 1 MiB"
truncate -s "$size" "$disk"
printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q "$disk"
for n in $(seq 16 63); do
  [ -e "/sys/block/loop$n/loop/backing_file" ] && continue
  if losetup -o $((2048 * 512)) "/dev/loop$n" "$disk" 2>/dev/null; then part=/dev/loop$n; break; fi
done
[ -n "$part" ] || { echo "build.sh: no free loop device among loop16-loop63" >&2; exit 1; }
uuid=$(cat /proc/sys/kernel/random/uuid)
mkfs.ext4 -q -L root -U "$uuid" "$part"
mkdir "$root"
mount "$part" "$root"

# What a small server has, with Debian's RDMA user space (rdma-core, the rxe verbs provider, the
# `rdma` tool of iproute2, perftest for the verify role's traffic step, as rdma_stack installs it on a
# node) and what Ansible needs (python3, python3-apt, sudo). The kernel and GRUB
# come afterwards, once the initramfs and GRUB configuration below are in place, so that the
# initramfs is generated once, the way the image keeps it.
packages=systemd,systemd-sysv,udev,dbus,kmod,initramfs-tools,zstd,e2fsprogs,procps,iproute2,iputils-ping
packages+=,openssh-server,openssh-sftp-server,python3,python3-apt,sudo,ca-certificates,less
packages+=,rdma-core,ibverbs-providers,ibverbs-utils,perftest
step "debootstrap $suite from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
# The chroot's own /dev: the basic character devices and the root file system's device.
mount -t tmpfs -o mode=0755,nosuid,size=16m lab-dev "$root/dev"
(
  cd "$root/dev"
  mknod -m 0666 null c 1 3; mknod -m 0666 zero c 1 5; mknod -m 0666 full c 1 7
  mknod -m 0666 random c 1 8; mknod -m 0666 urandom c 1 9; mknod -m 0666 tty c 5 0
  ln -s /proc/self/fd fd; ln -s fd/0 stdin; ln -s fd/1 stdout; ln -s fd/2 stderr
  mkdir -m 1777 shm; mkdir pts; ln -s pts/ptmx ptmx
  IFS=: read -r major minor <"/sys/block/${part#/dev/}/dev"
  mknod -m 0660 "${part#/dev/}" b "$major" "$minor"
  mkdir -p disk/by-uuid; ln -s "../../${part#/dev/}" "disk/by-uuid/$uuid"
)
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"

step "configuration"
# Written at the end: the build installs from debootstrap's list (the suite's point release).
cat >"$work/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://security.debian.org/debian-security $suite-security main
EOF
printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$uuid" >"$root/etc/fstab"
echo vm01 >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvm01\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# QEMU user networking: DHCP on the one NIC (10.0.2.15), DNS at 10.0.2.3.
cat >"$root/etc/systemd/network/10-lab.network" <<'EOF'
[Match]
Name=en* eth*

[Network]
DHCP=ipv4
EOF
# The build resolves names like the build machine; the guest uses QEMU's DNS (set at the end).
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
in_root systemctl enable systemd-networkd.service >/dev/null 2>&1
# root logs in with the lab's key only.
printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n' >"$root/etc/ssh/sshd_config.d/10-lab.conf"
install -d -m 0700 "$root/root/.ssh"
install -m 0600 "$pubkey" "$root/root/.ssh/authorized_keys"
# Timers that would only compete for the emulated CPU during a test.
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
[ -s "$root/etc/machine-id" ] || in_root systemd-machine-id-setup >/dev/null

# initramfs: MODULES=dep (only what this machine needs: regenerating takes about 1.5 min under
# emulation, against 13 min with Debian's default MODULES=most). The two virtio drivers are listed
# because dep, run here, sees a loop device instead of the guest's disk; in the guest dep finds
# them itself.
sed -i 's/^MODULES=.*/MODULES=dep/' "$root/etc/initramfs-tools/initramfs.conf"
cat >>"$root/etc/initramfs-tools/modules" <<'EOF'
# fabric.infiniband VM lab: the guest's disk (needed while the image is built, see lab/vm/build.sh).
virtio_pci
virtio_blk
# fabric.infiniband VM lab: the RDMA core from the initramfs, as on hosts where mlx5_core or
# nvme-rdma load it early. An `options ib_core ...` line in /etc/modprobe.d takes effect only
# after update-initramfs.
ib_core
EOF

# GRUB: no menu, output on the serial console too (vmctl writes it to console.log).
mkdir -p "$root/etc/default/grub.d"
cat >"$root/etc/default/grub.d/10-lab.cfg" <<'EOF'
GRUB_TIMEOUT=0
GRUB_TIMEOUT_STYLE=hidden
GRUB_CMDLINE_LINUX_DEFAULT="console=tty0 console=ttyS0,115200n8"
GRUB_TERMINAL="console serial"
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
EOF

step "kernel, GRUB and the initramfs (MODULES=dep)"
in_root apt-get install -y -q --no-install-recommends linux-image-amd64 grub-pc >"$work/apt.log" 2>&1 || {
  tail -n 30 "$work/apt.log" >&2
  exit 1
}
kernel=$(in_root linux-version list | tail -n 1)
[ -s "$root/boot/initrd.img-$kernel" ] || in_root update-initramfs -c -k "$kernel"
listing=$(in_root lsinitramfs "/boot/initrd.img-$kernel")
for module in ib_core virtio_blk ext4; do
  grep -q "/$module\.ko" <<<"$listing" || { echo "build.sh: $module is not in the initramfs" >&2; exit 1; }
done

in_root update-grub >"$work/grub.log" 2>&1 || { cat "$work/grub.log" >&2; exit 1; }
grep -q "root=UUID=$uuid " "$root/boot/grub/grub.cfg" || { echo "build.sh: grub.cfg does not boot root=UUID=$uuid" >&2; exit 1; }
# What grub-install would do on /dev/vda: modules in /boot/grub, boot.img in the MBR (its first
# 440 bytes: the partition table stays), core.img from sector 1. boot.img loads sector 1 and
# core.img's first sector the rest from sector 2 by default, so neither needs patching.
mkdir -p "$root/boot/grub/i386-pc"
cp "$root"/usr/lib/grub/i386-pc/*.mod "$root"/usr/lib/grub/i386-pc/*.lst "$root/boot/grub/i386-pc/"
in_root grub-mkimage -O i386-pc -p '(hd0,msdos1)/boot/grub' -o /boot/grub/i386-pc/core.img biosdisk part_msdos ext2
core_bytes=$(stat -c %s "$root/boot/grub/i386-pc/core.img")
[ "$core_bytes" -lt $((2047 * 512)) ] || { echo "build.sh: core.img ($core_bytes bytes) does not fit before the partition" >&2; exit 1; }
dd if="$root/usr/lib/grub/i386-pc/boot.img" of="$disk" bs=440 count=1 conv=notrunc status=none
dd if="$root/boot/grub/i386-pc/core.img" of="$disk" bs=512 seek=1 conv=notrunc status=none
# A later grub-pc upgrade in the guest installs to its disk.
echo 'grub-pc grub-pc/install_devices multiselect /dev/vda' | in_root debconf-set-selections

step "clean up and convert"
in_root apt-get clean
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
cp "$work/sources.list" "$root/etc/apt/sources.list"
echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf"
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +
fstrim "$root" >/dev/null 2>&1 || true
unmount_all
losetup -d "$part"
part=
qemu-img convert -O qcow2 "$disk" "$out.part"
mv "$out.part" "$out"
printf 'build.sh: built %s (kernel %s, %s) in %ds\n' "$out" "$kernel" "$(du -h "$out" | cut -f1)" "$SECONDS"
