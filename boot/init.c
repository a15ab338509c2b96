/* ingot-init: /init of the initramfs in an ingot Unified Kernel Image.
 * Linked statically (it runs before any library is reachable).
 *
 * It trusts only the kernel command line, which firmware and systemd-stub
 * measured (PCR 11, and PCRs 9/12 when something else passed one):
 *   ingot.image=NAME ingot.root=HEX ingot.salt=HEX ingot.blocks=N
 *   [ingot.overlay=tmpfs]
 * Steps: load /lib/modules/NN-*.ko in name order; find the image and hash
 * disks by their virtio serial (ingot-image, ingot-hash); open them with
 * dm-verity and that root hash through the device-mapper ioctls, with
 * panic_on_corruption: a block that does not hash to the root, read at
 * any time later, stops the kernel; mount the squashfs read-only; extend
 * PCR 15 of every bank the TPM has allocated with
 *   H_bank("ingot:boot:v1 image=NAME verity=ROOT")   (attest/bootpredict.h)
 * and only then run anything from the image: switch to it and exec its
 * /sbin/init.  There is no other mode: what a test needs in the guest
 * comes from the image it boots.  Any failure powers the machine off
 * without running the image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/boot-contract.h"
#include "boot/bootlib.h"

#define ROOT_DEV "/dev/ingot-root"
#define NEWROOT "/sysroot"
#define DISK_WAIT_S 60

struct params {
	char image[256], root[65], salt[129], blocks[21], overlay[16];
};

static void poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static int hex_ok(const char *s, size_t min, size_t max)
{
	size_t n = strspn(s, "0123456789abcdef");
	return !s[n] && n >= min && n <= max && n % 2 == 0;
}

static int parse_cmdline(struct params *p)
{
	static const struct { const char *key; size_t off, size; } keys[] = {
		{ BOOT_KEY_IMAGE, offsetof(struct params, image), sizeof(p->image) },
		{ BOOT_KEY_ROOT, offsetof(struct params, root), sizeof(p->root) },
		{ BOOT_KEY_SALT, offsetof(struct params, salt), sizeof(p->salt) },
		{ BOOT_KEY_BLOCKS, offsetof(struct params, blocks), sizeof(p->blocks) },
		{ BOOT_KEY_OVERLAY, offsetof(struct params, overlay), sizeof(p->overlay) },
	};
	char buf[4096];
	memset(p, 0, sizeof(*p));
	if (boot_read_small("/proc/cmdline", buf, sizeof(buf)) < 0)
		return boot_fail("/proc/cmdline: %s", strerror(errno));
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i].key);
			if (strncmp(tok, keys[i].key, k))
				continue;
			if (strlen(tok + k) >= keys[i].size)
				return boot_fail("kernel command line: %s: value too long", keys[i].key);
			strcpy((char *)p + keys[i].off, tok + k);
		}
	if (!p->image[0] || !hex_ok(p->root, 64, 64) || !hex_ok(p->salt, 0, 128) || !p->blocks[0] ||
	    strspn(p->blocks, "0123456789") != strlen(p->blocks))
		return boot_fail("kernel command line: expected ingot.image, ingot.root (64 hex), ingot.salt, ingot.blocks");
	if (p->overlay[0] && strcmp(p->overlay, "tmpfs"))
		return boot_fail("kernel command line: " BOOT_KEY_OVERLAY ": expected tmpfs, got %s", p->overlay);
	return 0;
}

static int ko_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 3 && !strcmp(d->d_name + n - 3, ".ko");
}

static int load_modules(void)
{
	struct dirent **v;
	int n = scandir("/lib/modules", &v, ko_filter, alphasort), rc = 0;
	for (int i = 0; i < n; i++) {
		char path[512];
		int fd;
		snprintf(path, sizeof(path), "/lib/modules/%s", v[i]->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (rc == 0 && (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)))
			rc = boot_fail("%s: cannot load: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(v[i]);
	}
	free(v);
	return n < 0 ? boot_fail("/lib/modules: %s", strerror(errno)) : rc;
}

static int find_disk(const char *want, char *dev, size_t size)
{
	return boot_find_disk(want, DISK_WAIT_S, dev, size);
}

static void dm_init(struct dm_ioctl *io, size_t size, const char *name)
{
	memset(io, 0, size);
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = (uint32_t)size;
	io->data_start = sizeof(*io);
	snprintf(io->name, sizeof(io->name), "%s", name);
}

/* dm-verity over the image (data) and hash disks, as veritysetup would
 * set it up for ingot's hash file: superblock at 0, tree from block 1.
 * panic_on_corruption rather than the default EIO: with EIO a block
 * changed on disk fails only the read that meets it, and whatever the
 * image runs goes on with a node whose PCR 15 says "the good image" (a
 * late read could even be retried or ignored).  A panic stops the node at
 * the first such read, before any more of the image runs; the kernel's
 * panic= parameter decides whether it then halts or reboots (into the
 * same firmware checks).  restart_on_corruption was the alternative; it
 * runs the kernel's orderly restart path, a panic runs nothing more. */
static int open_verity(const struct params *p, const char *data, const char *hash)
{
	union { struct dm_ioctl io; char raw[16384]; } b;
	struct dm_target_spec *t = (struct dm_target_spec *)(b.raw + sizeof(struct dm_ioctl));
	unsigned long long blocks = strtoull(p->blocks, NULL, 10);
	unsigned maj, min;
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return boot_fail("/dev/mapper/control: %s", strerror(errno));
	dm_init(&b.io, sizeof(b), "ingot-root");
	if (ioctl(fd, DM_DEV_CREATE, &b.io) < 0) {
		boot_fail("DM_DEV_CREATE: %s", strerror(errno));
		goto out;
	}
	maj = major(b.io.dev);
	min = minor(b.io.dev);
	dm_init(&b.io, sizeof(b), "ingot-root");
	b.io.flags = DM_READONLY_FLAG;
	b.io.target_count = 1;
	t->sector_start = 0;
	t->length = blocks * 8;   /* 4096-byte blocks in 512-byte sectors */
	snprintf(t->target_type, sizeof(t->target_type), "verity");
	snprintf((char *)(t + 1), sizeof(b) - sizeof(struct dm_ioctl) - sizeof(*t),
		 "1 %s %s 4096 4096 %llu 1 sha256 %s %s 1 panic_on_corruption", data, hash, blocks, p->root,
		 p->salt[0] ? p->salt : "-");
	if (ioctl(fd, DM_TABLE_LOAD, &b.io) < 0) {
		boot_fail("DM_TABLE_LOAD verity: %s", strerror(errno));
		goto out;
	}
	dm_init(&b.io, sizeof(b), "ingot-root");
	if (ioctl(fd, DM_DEV_SUSPEND, &b.io) < 0) {   /* no DM_SUSPEND_FLAG: resume */
		boot_fail("DM_DEV_SUSPEND (resume): %s", strerror(errno));
		goto out;
	}
	if (mknod(ROOT_DEV, S_IFBLK | 0600, makedev(maj, min)) < 0 && errno != EEXIST) {
		boot_fail(ROOT_DEV ": %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int measure_image(const struct params *p)
{
	char ev[512], banks[64];
	int n = snprintf(ev, sizeof(ev), BOOT_EVENT_PREFIX "image=%s verity=%s", p->image, p->root);
	if (boot_pcr_extend(BOOT_PCR_IMAGE, ev, (size_t)n, banks, sizeof(banks)) < 0)
		return -1;
	boot_say("measured into PCR %d (%s): %s", BOOT_PCR_IMAGE, banks, ev);
	return 0;
}

/* ingot.overlay=tmpfs: a writable root for a general-purpose OS (systemd
 * writes /etc, /var, /run state) without touching the measured image:
 * the verity squashfs moves to /run/ingot/image inside the new root's
 * view and becomes the overlay's lower layer; the upper layer is a tmpfs,
 * so every change is gone at power-off.  Called after the image was
 * measured; a failure stops the boot (the image would run half set up). */
static int overlay_root(void)
{
	static const char lower[] = "/ingot-lower", rw[] = "/ingot-rw";
	if (mkdir(lower, 0755) < 0 || mkdir(rw, 0755) < 0 ||
	    mount(NEWROOT, lower, NULL, MS_MOVE, NULL) < 0 ||
	    mount("tmpfs", rw, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	    mkdir("/ingot-rw/upper", 0755) < 0 || mkdir("/ingot-rw/work", 0755) < 0 ||
	    mount("overlay", NEWROOT, "overlay", 0,
		  "lowerdir=/ingot-lower,upperdir=/ingot-rw/upper,workdir=/ingot-rw/work") < 0)
		return boot_fail("overlay root: %s", strerror(errno));
	/* The image stays visible, read-only, for `ingot verify --root`. */
	if (mkdir(NEWROOT "/run", 0755) < 0 && errno != EEXIST)
		return boot_fail(NEWROOT "/run: %s", strerror(errno));
	if (mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	    mkdir(NEWROOT "/run/ingot", 0755) < 0 || mkdir(NEWROOT "/run/ingot/image", 0755) < 0 ||
	    mount(lower, NEWROOT "/run/ingot/image", NULL, MS_MOVE, NULL) < 0)
		return boot_fail("overlay root: /run/ingot/image: %s", strerror(errno));
	boot_say("root: overlay, tmpfs upper over the verity image (/run/ingot/image)");
	return 0;
}

static void switch_root(void)
{
	static const char *const mnt[] = { "/dev", "/proc", "/sys" };
	char *argv[] = { "/sbin/init", NULL };
	for (size_t i = 0; i < 3; i++) {
		char to[64];
		snprintf(to, sizeof(to), NEWROOT "%s", mnt[i]);
		if (mount(mnt[i], to, NULL, MS_MOVE, NULL) < 0)
			umount2(mnt[i], MNT_DETACH);
	}
	if (chdir(NEWROOT) < 0 || mount(NEWROOT, "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0) {
		boot_fail("switch to the image: %s", strerror(errno));
		return;
	}
	execv(argv[0], argv);
	boot_fail("/sbin/init: %s", strerror(errno));
}

static void mount_api(void)
{
	mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount("securityfs", "/sys/kernel/security", "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

int main(void)
{
	struct params p;
	char data[32], hash[32];
	int con, opened = 0;

	mount_api();
	if ((con = open("/dev/console", O_RDWR)) >= 0) {
		dup2(con, 0), dup2(con, 1), dup2(con, 2);
		if (con > 2)
			close(con);
	}
	if (parse_cmdline(&p) < 0 || load_modules() < 0 || find_disk("ingot-image", data, sizeof(data)) < 0 ||
	    find_disk("ingot-hash", hash, sizeof(hash)) < 0 || open_verity(&p, data, hash) < 0)
		goto stop;
	if (mount(ROOT_DEV, NEWROOT, "squashfs", MS_RDONLY | MS_NODEV, NULL) < 0) {
		/* A block that does not hash to the root panicked in the read;
		 * this is any other reason (not a squashfs, ...). */
		boot_fail("mount %s (dm-verity root %s): %s", ROOT_DEV, p.root, strerror(errno));
	} else if (measure_image(&p) == 0) {
		opened = 1;
	}
	if (opened && (!p.overlay[0] || overlay_root() == 0))
		switch_root();
stop:
	boot_say("powering off");
	poweroff();
	return 1;
}
