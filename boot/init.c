/* ingot-init: /init of the initramfs in an ingot Unified Kernel Image.
 * Linked statically (it runs before any library is reachable).
 *
 * It trusts only the kernel command line, which firmware and systemd-stub
 * measured (PCR 11, and PCRs 9/12 when something else passed one):
 *   ingot.image=NAME ingot.root=HEX ingot.salt=HEX ingot.blocks=N [ingot.test=SERIAL]
 *   [ingot.overlay=tmpfs]
 * Steps: load /lib/modules/NN-*.ko in name order; find the image and hash
 * disks by their virtio serial (ingot-image, ingot-hash); open them with
 * dm-verity and that root hash through the device-mapper ioctls; mount the
 * squashfs read-only; extend PCR 15 of every bank with
 *   H_bank("ingot:boot:v1 image=NAME verity=ROOT")   (attest/bootpredict.h)
 * and only then run anything from the image: switch to it and exec
 * /sbin/init, or with ingot.test=SERIAL run the image's ingot (verify,
 * quote) and write the evidence as a tar onto the disk with that serial.
 * Any failure powers the machine off without running the image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <openssl/evp.h>
#include <stdarg.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attest/boot-contract.h"

#define ROOT_DEV "/dev/ingot-root"
#define NEWROOT "/sysroot"
#define DISK_WAIT_S 60

struct params {
	char image[256], root[65], salt[129], blocks[21], test[21], overlay[16];
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vsay(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "ingot-init: %s", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

/* Report an error; returns -1 for `return fail(...)`. */
static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

static void poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
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
		{ "ingot.test=", offsetof(struct params, test), sizeof(p->test) },
		{ BOOT_KEY_OVERLAY, offsetof(struct params, overlay), sizeof(p->overlay) },
	};
	char buf[4096];
	memset(p, 0, sizeof(*p));
	if (read_small("/proc/cmdline", buf, sizeof(buf)) < 0)
		return fail("/proc/cmdline: %s", strerror(errno));
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i].key);
			if (strncmp(tok, keys[i].key, k))
				continue;
			if (strlen(tok + k) >= keys[i].size)
				return fail("kernel command line: %s: value too long", keys[i].key);
			strcpy((char *)p + keys[i].off, tok + k);
		}
	if (!p->image[0] || !hex_ok(p->root, 64, 64) || !hex_ok(p->salt, 0, 128) || !p->blocks[0] ||
	    strspn(p->blocks, "0123456789") != strlen(p->blocks))
		return fail("kernel command line: expected ingot.image, ingot.root (64 hex), ingot.salt, ingot.blocks");
	if (p->overlay[0] && strcmp(p->overlay, "tmpfs"))
		return fail("kernel command line: " BOOT_KEY_OVERLAY ": expected tmpfs, got %s", p->overlay);
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
			rc = fail("%s: cannot load: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(v[i]);
	}
	free(v);
	return n < 0 ? fail("/lib/modules: %s", strerror(errno)) : rc;
}

/* /sys/block/vdX whose serial is want: its "MAJ:MIN" into dev. */
static int find_disk(const char *want, char *dev, size_t size)
{
	for (int tries = 0; tries < DISK_WAIT_S * 10; tries++) {
		DIR *d = opendir("/sys/block");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[300], serial[64];
			snprintf(path, sizeof(path), "/sys/block/%s/serial", de->d_name);
			if (read_small(path, serial, sizeof(serial)) < 0 || strcmp(serial, want))
				continue;
			snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
			closedir(d);
			return read_small(path, dev, size);
		}
		if (d)
			closedir(d);
		usleep(100000);
	}
	return fail("no disk with serial %s after %d s", want, DISK_WAIT_S);
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
 * set it up for ingot's hash file: superblock at 0, tree from block 1. */
static int open_verity(const struct params *p, const char *data, const char *hash)
{
	union { struct dm_ioctl io; char raw[16384]; } b;
	struct dm_target_spec *t = (struct dm_target_spec *)(b.raw + sizeof(struct dm_ioctl));
	unsigned long long blocks = strtoull(p->blocks, NULL, 10);
	unsigned maj, min;
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return fail("/dev/mapper/control: %s", strerror(errno));
	dm_init(&b.io, sizeof(b), "ingot-root");
	if (ioctl(fd, DM_DEV_CREATE, &b.io) < 0) {
		fail("DM_DEV_CREATE: %s", strerror(errno));
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
		 "1 %s %s 4096 4096 %llu 1 sha256 %s %s", data, hash, blocks, p->root, p->salt[0] ? p->salt : "-");
	if (ioctl(fd, DM_TABLE_LOAD, &b.io) < 0) {
		fail("DM_TABLE_LOAD verity: %s", strerror(errno));
		goto out;
	}
	dm_init(&b.io, sizeof(b), "ingot-root");
	if (ioctl(fd, DM_DEV_SUSPEND, &b.io) < 0) {   /* no DM_SUSPEND_FLAG: resume */
		fail("DM_DEV_SUSPEND (resume): %s", strerror(errno));
		goto out;
	}
	if (mknod(ROOT_DEV, S_IFBLK | 0600, makedev(maj, min)) < 0 && errno != EEXIST) {
		fail(ROOT_DEV ": %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static void put_be(uint8_t *p, uint32_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* TPM2_PCR_Extend(pcr, {sha1, sha256, sha384, sha512: H(data)}) with an
 * empty password session, written raw to the TPM character device. */
static int pcr_extend(int pcr, const void *data, size_t len)
{
	static const struct { uint16_t alg; const char *name; } banks[] = {
		{ 0x0004, "SHA1" }, { 0x000b, "SHA256" }, { 0x000c, "SHA384" }, { 0x000d, "SHA512" },
	};
	uint8_t cmd[512], rsp[64];
	size_t n = 10;
	ssize_t got;
	int fd;

	put_be(cmd + n, (uint32_t)pcr, 4), n += 4;
	put_be(cmd + n, 9, 4), n += 4;                    /* authorizationSize */
	put_be(cmd + n, 0x40000009, 4), n += 4;           /* TPM_RS_PW */
	put_be(cmd + n, 0, 2), n += 2;                    /* nonce */
	cmd[n++] = 0;                                     /* session attributes */
	put_be(cmd + n, 0, 2), n += 2;                    /* hmac */
	put_be(cmd + n, 4, 4), n += 4;                    /* TPML_DIGEST_VALUES.count */
	for (size_t i = 0; i < 4; i++) {
		unsigned dlen = 0;
		put_be(cmd + n, banks[i].alg, 2), n += 2;
		if (!EVP_Digest(data, len, cmd + n, &dlen, EVP_get_digestbyname(banks[i].name), NULL))
			return fail("%s: cannot hash the event", banks[i].name);
		n += dlen;
	}
	put_be(cmd, 0x8002, 2);                           /* TPM_ST_SESSIONS */
	put_be(cmd + 2, (uint32_t)n, 4);
	put_be(cmd + 6, 0x00000182, 4);                   /* TPM_CC_PCR_Extend */
	if ((fd = open("/dev/tpm0", O_RDWR | O_CLOEXEC)) < 0)
		return fail("/dev/tpm0: %s", strerror(errno));
	if (write(fd, cmd, n) != (ssize_t)n || (got = read(fd, rsp, sizeof(rsp))) < 10) {
		close(fd);
		return fail("/dev/tpm0: PCR_Extend: %s", strerror(errno));
	}
	close(fd);
	if (rsp[6] | rsp[7] | rsp[8] | rsp[9])
		return fail("/dev/tpm0: PCR_Extend: TPM response code 0x%02x%02x%02x%02x", rsp[6], rsp[7], rsp[8], rsp[9]);
	return 0;
}

static int measure_image(const struct params *p)
{
	char ev[512];
	int n = snprintf(ev, sizeof(ev), BOOT_EVENT_PREFIX "image=%s verity=%s", p->image, p->root);
	if (pcr_extend(BOOT_PCR_IMAGE, ev, (size_t)n) < 0)
		return -1;
	say("measured into PCR %d: %s", BOOT_PCR_IMAGE, ev);
	return 0;
}

/* Run argv chrooted into the image; its exit status, or -1. */
static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		if (chroot(NEWROOT) < 0 || chdir("/") < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return fail("%s: cannot run: %s", argv[0], strerror(errno));
	if (!WIFEXITED(status))
		return fail("%s %s: killed by signal %d", argv[0], argv[1], WTERMSIG(status));
	say("%s %s %s: exit status %d", argv[0], argv[1], argv[2], WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out, rc = 0;
	if (in < 0)
		return fail("%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* securityfs reports the log's size as 0: read to the end. */
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (out < 0 || rc < 0)
		rc = fail("%s: %s", to, strerror(errno));
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* One ustar member (mode 0644, owner 0, mtime 0) of a file under dir. */
static int tar_add(int fd, const char *dir, const char *name)
{
	char path[256], hdr[512] = { 0 }, buf[65536];
	struct stat st;
	unsigned sum = 0;
	ssize_t n;
	int in;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(in, &st) < 0)
		return in >= 0 ? close(in), -1 : 0;   /* a missing file is left out */
	snprintf(hdr, 100, "%s", name);
	memcpy(hdr + 100, "0000644", 8);
	memcpy(hdr + 108, "0000000", 8);
	memcpy(hdr + 116, "0000000", 8);
	snprintf(hdr + 124, 12, "%011llo", (unsigned long long)st.st_size);
	memcpy(hdr + 136, "00000000000", 12);
	memset(hdr + 148, ' ', 8);
	hdr[156] = '0';
	memcpy(hdr + 257, "ustar\0" "00", 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)hdr[i];
	snprintf(hdr + 148, 8, "%06o", sum);
	if (write(fd, hdr, 512) != 512)
		return close(in), -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return close(in), -1;
	close(in);
	memset(buf, 0, 512);
	return write(fd, buf, (512 - st.st_size % 512) % 512) < 0 ? -1 : 0;
}

/* The host's input: a ustar at the start of the evidence disk holding
 * nonce, manifest.dsse.json, keyring.json and optionally action; each
 * lands in dir.  Names are plain (no '/'), sizes bounded. */
static int read_input(int fd, const char *dir)
{
	char hdr[512], path[640], *buf;
	unsigned long long size;
	int files = 0;

	for (;;) {
		if (read(fd, hdr, 512) != 512)
			return fail("evidence disk: truncated input");
		if (!hdr[0])
			return files;
		hdr[99] = '\0';
		size = strtoull(hdr + 124, NULL, 8);
		if (strchr(hdr, '/') || hdr[0] == '.' || size > (1u << 20))
			return fail("evidence disk: input member '%s': expected a plain name under 1 MiB", hdr);
		if (!(buf = malloc((size + 511) / 512 * 512 + 1)))
			return fail("out of memory");
		if (read(fd, buf, (size + 511) / 512 * 512) != (ssize_t)((size + 511) / 512 * 512)) {
			free(buf);
			return fail("evidence disk: truncated member %s", hdr);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, hdr);
		int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0 || write(out, buf, size) != (ssize_t)size) {
			free(buf);
			if (out >= 0)
				close(out);
			return fail("%s: %s", path, strerror(errno));
		}
		close(out);
		free(buf);
		files++;
	}
}

static void write_status(const char *status)
{
	int sf = open(NEWROOT "/tmp/status", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (sf >= 0) {
		if (write(sf, status, strlen(status)) < 0)
			fail("status: %s", strerror(errno));
		close(sf);
	}
}

/* The test image's evidence.  The image's own ingot makes an AK, runs
 * `ingot verify` (the TPM check quotes PCRs 4,7,9,11,12,15 with the
 * host's nonce and judges the firmware log) and a plain quote of PCRs
 * 0-15; report, quote, AK and firmware log go back on the same disk as a
 * ustar.  Action "extend15" first extends PCR 15 once more, as a process
 * on a tampered node would. */
static int evidence(const struct params *p, int measured)
{
	char dev[32], nonce[130] = "", action[32] = "";
	static const char disk[] = "/dev/ingot-evidence";
	char *ak[] = { "/usr/bin/ingot", "attest", "ak", "create", "-o", "/tmp/ak", "--tcti", "device:/dev/tpmrm0", NULL };
	char *quote[] = { "/usr/bin/ingot", "attest", "quote", "--nonce", nonce, "--pcrs", "sha256:0-15",
			  "--ak", "/tmp/ak", "--tcti", "device:/dev/tpmrm0", "-o", "/tmp/quote.json", NULL };
	char *verify[] = { "/usr/bin/ingot", "verify", "--manifest", "/tmp/in/manifest.dsse.json",
			   "--keyring", "/tmp/in/keyring.json", "--no-files", "--tcti", "device:/dev/tpmrm0",
			   "--ak", "/tmp/ak", "--eventlog", "/sys/kernel/security/tpm0/binary_bios_measurements",
			   "--nonce", nonce, "--node-id", "boot-test", "--report", "/tmp/report.json",
			   "--nfd", "/tmp/nfd", "--brief", NULL };
	static const char *const files[] = { "status", "report.json", "quote.json", "eventlog.bin", "ak.pub.pem" };
	char zero[1024] = { 0 };
	int fd, rc = 0, st;

	if (find_disk(p->test, dev, sizeof(dev)) < 0)
		return -1;
	if (mknod(disk, S_IFBLK | 0600, makedev(atoi(dev), atoi(strchr(dev, ':') + 1))) < 0 && errno != EEXIST)
		return fail("%s: %s", disk, strerror(errno));
	if (mount("tmpfs", NEWROOT "/tmp", "tmpfs", 0, "mode=0755") < 0 || mkdir(NEWROOT "/tmp/in", 0755) < 0)
		return fail(NEWROOT "/tmp: %s", strerror(errno));
	if ((fd = open(disk, O_RDWR | O_CLOEXEC)) < 0 || read_input(fd, NEWROOT "/tmp/in") < 0)
		return fail("%s: no input", disk);
	read_small(NEWROOT "/tmp/in/nonce", nonce, sizeof(nonce));
	read_small(NEWROOT "/tmp/in/action", action, sizeof(action));
	if (measured && !strcmp(action, "extend15") && pcr_extend(BOOT_PCR_IMAGE, "tampered", 8) < 0)
		rc = -1;
	if (measured && rc == 0) {
		/* verify refuses this node for its tuple (QEMU has no GPU): its
		 * status is in the report; only a missing report is an error. */
		if (run(ak) != 0 || ((st = run(verify)) < 0 || (st != 0 && st < 10)) || run(quote) != 0)
			rc = -1;
	}
	if (copy_file("/sys/kernel/security/tpm0/binary_bios_measurements", NEWROOT "/tmp/eventlog.bin") < 0)
		rc = -1;
	if (measured)
		copy_file(NEWROOT "/tmp/ak/ak.pub.pem", NEWROOT "/tmp/ak.pub.pem");
	write_status(!measured ? "refused: the image did not open\n" : rc ? "error\n" : "ok\n");
	lseek(fd, 0, SEEK_SET);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (tar_add(fd, NEWROOT "/tmp", files[i]) < 0)
			rc = fail("%s: cannot write the evidence", disk);
	if (write(fd, zero, sizeof(zero)) != sizeof(zero) || fsync(fd) < 0)
		rc = fail("%s: %s", disk, strerror(errno));
	close(fd);
	say("evidence written (%s)", !measured ? "image refused" : rc ? "error" : "ok");
	return rc;
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
		return fail("overlay root: %s", strerror(errno));
	/* The image stays visible, read-only, for `ingot verify --root`. */
	if (mkdir(NEWROOT "/run", 0755) < 0 && errno != EEXIST)
		return fail(NEWROOT "/run: %s", strerror(errno));
	if (mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	    mkdir(NEWROOT "/run/ingot", 0755) < 0 || mkdir(NEWROOT "/run/ingot/image", 0755) < 0 ||
	    mount(lower, NEWROOT "/run/ingot/image", NULL, MS_MOVE, NULL) < 0)
		return fail("overlay root: /run/ingot/image: %s", strerror(errno));
	say("root: overlay, tmpfs upper over the verity image (/run/ingot/image)");
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
		fail("switch to the image: %s", strerror(errno));
		return;
	}
	execv(argv[0], argv);
	fail("/sbin/init: %s", strerror(errno));
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
		/* dm-verity answers EIO for a block that does not hash to the root. */
		fail("mount %s (dm-verity root %s): %s", ROOT_DEV, p.root, strerror(errno));
	} else if (measure_image(&p) == 0) {
		opened = 1;
	}
	if (p.test[0]) {
		if (opened) {
			static const char *const api[] = { "/dev", "/proc", "/sys" };
			for (size_t i = 0; i < 3; i++) {
				char to[64];
				snprintf(to, sizeof(to), NEWROOT "%s", api[i]);
				mount(api[i], to, NULL, MS_BIND | MS_REC, NULL);
			}
		} else {
			mount("tmpfs", NEWROOT, "tmpfs", 0, "mode=0755");
			mkdir(NEWROOT "/tmp", 0755);
		}
		evidence(&p, opened);
		goto stop;
	}
	if (opened && (!p.overlay[0] || overlay_root() == 0))
		switch_root();
stop:
	say("powering off");
	poweroff();
	return 1;
}
