/* /sbin/init of the boot test's image (scripts/boot-image.sh puts it in a
 * test-only artifact; production images carry their own init, and the
 * production /init, boot/init.c, has no test mode).  boot/init.c hands
 * over to it exactly as to any image's init, after dm-verity opened the
 * image and PCR 15 was extended.
 *
 * It reads the host's input, a ustar at the start of the disk with serial
 * ingot-evidence (nonce, manifest.dsse.json, keyring.json, an enrolled AK
 * made on this TPM's state before the boot: ak.json ak.pub ak.priv
 * ak.pub.pem and its enrolment.dsse.json, optionally
 * firmware-ref.dsse.json and action), reads every block of the image (as a files check would: a
 * block changed on disk panics the kernel here, under
 * panic_on_corruption), then runs the image's own ingot with that AK: `ingot
 * verify` (its TPM check quotes PCRs 4,7,9,11,12,15 with the host's
 * nonce and judges the firmware log) and a plain quote of PCRs 0-15.
 * Action "extend15" then extends PCR 15 once more, as a process on a
 * tampered node would, and verifies and quotes again (report-after.json,
 * quote-after.json).  When the input names a verifier (file "verifier":
 * its URL), the node also pushes its evidence to it after each quote
 * (`ingot attest push --via` the virtio-serial port ingot.0, which the
 * host relays to its `ingot serve` on loopback: no guest network): the
 * host's verifier, not this init, decides.  Everything goes back as a
 * ustar on the same disk; then the machine powers off. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/boot-contract.h"
#include "boot/bootlib.h"

#define DISK "/dev/ingot-evidence"
#define ROOT_DEV "/dev/ingot-root"   /* boot/init.c made it; /dev moved with the hand-over */
#define LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
#define TCTI "device:/dev/tpmrm0"
#define AK "/tmp/in"                  /* the host's input holds the enrolled AK's files */
#define PORT "/dev/ingot-port"        /* the virtio-serial port ingot.0 (no udev: made here) */

/* argv's exit status, or -1. */
static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return boot_fail("%s: cannot run: %s", argv[0], strerror(errno));
	if (!WIFEXITED(status))
		return boot_fail("%s %s: killed by signal %d", argv[0], argv[1], WTERMSIG(status));
	boot_say("%s %s %s: exit status %d", argv[0], argv[1], argv[2], WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out, rc = 0;
	if (in < 0)
		return boot_fail("%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* securityfs reports the log's size as 0: read to the end. */
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (out < 0 || rc < 0)
		rc = boot_fail("%s: %s", to, strerror(errno));
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* Every block of the image, through dm-verity. */
static int read_image(void)
{
	static char buf[1 << 20];
	unsigned long long total = 0;
	ssize_t n;
	int fd = open(ROOT_DEV, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return boot_fail(ROOT_DEV ": %s", strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (unsigned long long)n;
	close(fd);
	if (n < 0)
		return boot_fail(ROOT_DEV ": read at %llu: %s", total, strerror(errno));
	boot_say("read all %llu bytes of the image", total);
	return 0;
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

/* The host's input: plain names, sizes bounded, each into dir. */
static int read_input(int fd, const char *dir)
{
	char hdr[512], path[640], *buf;
	unsigned long long size;
	int files = 0;

	for (;;) {
		if (read(fd, hdr, 512) != 512)
			return boot_fail(DISK ": truncated input");
		if (!hdr[0])
			return files;
		hdr[99] = '\0';
		size = strtoull(hdr + 124, NULL, 8);
		if (strchr(hdr, '/') || hdr[0] == '.' || size > (1u << 20))
			return boot_fail(DISK ": input member '%s': expected a plain name under 1 MiB", hdr);
		if (!(buf = malloc((size + 511) / 512 * 512 + 1)))
			return boot_fail("out of memory");
		if (read(fd, buf, (size + 511) / 512 * 512) != (ssize_t)((size + 511) / 512 * 512)) {
			free(buf);
			return boot_fail(DISK ": truncated member %s", hdr);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, hdr);
		int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0 || write(out, buf, size) != (ssize_t)size) {
			free(buf);
			if (out >= 0)
				close(out);
			return boot_fail("%s: %s", path, strerror(errno));
		}
		close(out);
		free(buf);
		files++;
	}
}

/* verify (a report whatever its verdict: QEMU has no GPU, so the tuple
 * check fails; only a missing report is an error) and a plain quote. */
static int verify_and_quote(const char *ak, const char *nonce, const char *report, const char *quote_out)
{
	/* The enrolment record and the platform's firmware reference, when the
	 * host sent them; without a reference (the reference boot itself) the
	 * unknown firmware is accepted by name, and the report says so. */
	int fwref = access("/tmp/in/firmware-ref.dsse.json", R_OK) == 0;
	char *verify[] = { "/usr/bin/ingot", "verify", "--manifest", "/tmp/in/manifest.dsse.json",
			   "--keyring", "/tmp/in/keyring.json", "--no-files", "--tcti", TCTI,
			   "--ak", (char *)ak, "--eventlog", LOG, "--nonce", (char *)nonce, "--node-id", "boot-test",
			   "--report", (char *)report, "--nfd", "/tmp/nfd", "--brief",
			   "--enrolment", "/tmp/in/enrolment.dsse.json",
			   fwref ? "--firmware-ref" : "--accept-weak",
			   fwref ? "/tmp/in/firmware-ref.dsse.json" : "unknown-firmware", NULL };
	char *quote[] = { "/usr/bin/ingot", "attest", "quote", "--nonce", (char *)nonce, "--pcrs", "sha256:0-15",
			  "--ak", (char *)ak, "--tcti", TCTI, "-o", (char *)quote_out, NULL };
	int st = run(verify);
	if (st < 0 || (st != 0 && st < 10))
		return -1;
	return run(quote) == 0 ? 0 : -1;
}

/* The virtio-serial port named want, as PORT (udev would make
 * /dev/virtio-ports/NAME), waiting up to wait_s seconds for it. */
static int find_port(const char *want, int wait_s)
{
	for (int tries = 0; tries < wait_s * 10; tries++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[300], name[64], dev[32];
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
			if (boot_read_small(path, name, sizeof(name)) < 0 || strcmp(name, want))
				continue;
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/dev", de->d_name);
			closedir(d);
			if (boot_read_small(path, dev, sizeof(dev)) < 0 || !strchr(dev, ':'))
				return boot_fail("%s: no device number", path);
			if (mknod(PORT, S_IFCHR | 0600, makedev(atoi(dev), atoi(strchr(dev, ':') + 1))) < 0 &&
			    errno != EEXIST)
				return boot_fail(PORT ": %s", strerror(errno));
			return 0;
		}
		if (d)
			closedir(d);
		usleep(100000);
	}
	return boot_fail("no virtio-serial port %s after %d s", want, wait_s);
}

/* The evidence to the host's verifier, which judges and stores it; its
 * verdict line is on the console, its exit status only reported here. */
static void push(const char *url)
{
	char *argv[] = { "/usr/bin/ingot", "attest", "push", "--verifier", (char *)url, "--via", PORT,
			 "--node", "boot-test", "--ak", AK, "--tcti", TCTI, "--eventlog", LOG, NULL };
	if (url[0] && (access(PORT, F_OK) == 0 || find_port("ingot.0", 30) == 0))
		run(argv);
}

static int evidence(void)
{
	char dev[32], nonce[130] = "", action[32] = "", url[256] = "";
	static const char *const files[] = { "status", "report.json", "quote.json", "eventlog.bin",
					     "report-after.json", "quote-after.json" };
	char zero[1024] = { 0 };
	int fd, rc = 0, sf;

	if (mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0755") < 0 || mkdir("/tmp/in", 0755) < 0)
		return boot_fail("/tmp: %s", strerror(errno));
	if (boot_find_disk("ingot-evidence", 60, dev, sizeof(dev)) < 0)
		return -1;
	if (mknod(DISK, S_IFBLK | 0600, makedev(atoi(dev), atoi(strchr(dev, ':') + 1))) < 0 && errno != EEXIST)
		return boot_fail(DISK ": %s", strerror(errno));
	if ((fd = open(DISK, O_RDWR | O_CLOEXEC)) < 0 || read_input(fd, "/tmp/in") < 0)
		return boot_fail(DISK ": no input");
	boot_read_small("/tmp/in/nonce", nonce, sizeof(nonce));
	boot_read_small("/tmp/in/action", action, sizeof(action));
	boot_read_small("/tmp/in/verifier", url, sizeof(url));
	/* The AK the host enrolled; one made here would be no verifier's. */
	if (access(AK "/ak.priv", R_OK) < 0 || access(AK "/enrolment.dsse.json", R_OK) < 0)
		return boot_fail(DISK ": input: expected the enrolled AK (ak.*) and enrolment.dsse.json");
	/* Before any evidence exists: a changed block stops the node here. */
	if (read_image() < 0 || verify_and_quote(AK, nonce, "/tmp/report.json", "/tmp/quote.json") < 0)
		rc = -1;
	if (rc == 0)
		push(url);
	if (rc == 0 && !strcmp(action, "extend15") &&
	    (boot_pcr_extend(BOOT_PCR_IMAGE, "tampered", 8, NULL, 0) < 0 ||
	     verify_and_quote(AK, nonce, "/tmp/report-after.json", "/tmp/quote-after.json") < 0))
		rc = -1;
	if (rc == 0 && !strcmp(action, "extend15"))
		push(url);   /* the same node, PCR 15 now off: the verifier refuses and drains it */
	if (copy_file(LOG, "/tmp/eventlog.bin") < 0)
		rc = -1;
	if ((sf = open("/tmp/status", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
		if (write(sf, rc ? "error\n" : "ok\n", rc ? 6 : 3) < 0)
			rc = -1;
		close(sf);
	}
	lseek(fd, 0, SEEK_SET);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (tar_add(fd, "/tmp", files[i]) < 0)
			rc = boot_fail(DISK ": cannot write the evidence");
	if (write(fd, zero, sizeof(zero)) != sizeof(zero) || fsync(fd) < 0)
		rc = boot_fail(DISK ": %s", strerror(errno));
	close(fd);
	boot_say("evidence written (%s)", rc ? "error" : "ok");
	return rc;
}

int main(void)
{
	evidence();
	boot_say("powering off");
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
