/* Firmware the node can read: NICs (InfiniBand sysfs, the ethtool
 * driver-info ioctl), the system BIOS and board (DMI), NVSwitches (the
 * nvidia-nvswitch driver's procfs).  GPU VBIOS comes with the GPUs
 * (probe-nvidia.c), the BMC from ipmitool (nodeprobe.c's tools).
 *
 * A fact holds the distinct entries found, comma-separated: "REV", or
 * "MODEL=REV" where a device names its model (a NIC's board_id, an
 * Ethernet port's driver), so the tuple check can hold each model to its
 * pins and see devices of one model that disagree. */
#include "verify/probe-private.h"

#include <ctype.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/strbuf.h"

#define DEVICES_MAX 256   /* devices (NICs, interfaces, switches) asked, at most */

/* Append entry to a comma list unless already there. */
static void add_distinct(struct strbuf *sb, const char *entry)
{
	size_t n = strlen(entry);
	for (const char *s = sb->buf; s && *s;) {
		size_t l = strcspn(s, ",");
		if (l == n && !strncmp(s, entry, n))
			return;
		s += l + (s[l] == ',');
	}
	strbuf_addf(sb, "%s%s", sb->len ? "," : "", entry);
}

/* A revision as read: trimmed, without commas (the list separator) or
 * '=' (the model separator); NULL when empty or "N/A". */
static char *clean_rev(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	for (char *c = s; *c; c++)
		if (*c == ',' || *c == '=')
			*c = '_';
	return *s && strcmp(s, "N/A") ? s : NULL;
}

/* Keep the first reason a device gave nothing usable; -ENOMEM or 0. */
static int note_bad(char **bad, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note_bad(char **bad, const char *fmt, ...)
{
	va_list ap;
	int n = 0;
	if (*bad)
		return 0;
	va_start(ap, fmt);
	n = vasprintf(bad, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*bad = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Add "model=rev" (model "unknown" when the device names none). */
static int add_entry(struct strbuf *vals, const char *model, const char *rev)
{
	_cleanup_free_ char *entry = NULL;
	entry = xasprintf("%s=%s", model ? model : "unknown", rev);
	add_distinct(vals, entry);
	return 0;
}

/* One device's answer: entries into vals, or a reason into *bad. */
typedef int (*device_fn)(struct node_probe *p, const char *rel, struct strbuf *vals, char **bad);

/* Every device the pattern finds (DEVICES_MAX at most), then the fact:
 * the entries; or, with none, unreadable when a device was there but gave
 * nothing usable, else not found. */
static int collect(struct node_probe *p, const char *key, const char *pattern, const char *src,
		   device_fn one)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf vals = STRBUF_INIT;
	_cleanup_free_ char *bad = NULL;
	int r = 0;

	strbuf_init(&vals, 64);
	if (probe_glob(p, pattern, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc && i < DEVICES_MAX && !r; i++)
			r = one(p, probe_node_rel(p, g.gl_pathv[i]), &vals, &bad);
	if (!r && vals.len)
		r = probe_set(p, key, vals.buf, src);
	else if (!r && bad)
		r = probe_set_unreadable(p, key, "unreadable: %s", bad);
	else if (!r)
		r = probe_setf(p, key, NULL, "not found: %s", src);
	strbuf_release(&vals);
	return r;
}

/* ConnectX/BlueField: /sys/class/infiniband/<dev>/{fw_ver,board_id}. */
static int ib_device(struct node_probe *p, const char *rel, struct strbuf *vals, char **bad)
{
	_cleanup_free_ char *fw = probe_read_trimmed(p, rel);
	_cleanup_free_ char *board_path = NULL, *board = NULL;
	board_path = xasprintf("%.*s/board_id", (int)(strlen(rel) - strlen("/fw_ver")), rel);
	board = probe_read_trimmed(p, board_path);
	const char *rev = fw ? clean_rev(fw) : NULL;
	if (!rev)
		return note_bad(bad, "%s: empty or unreadable", rel);
	return add_entry(vals, board ? clean_rev(board) : NULL, rev);
}

/* ETHTOOL_GDRVINFO on the node's own interface (root "/" only). */
static int ethtool_ask(const char *ifname, char *driver, size_t dn, char *fw, size_t fn)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		r = -errno;
	close(fd);
	if (r == 0) {
		snprintf(driver, dn, "%.*s", (int)sizeof(info.driver), info.driver);
		snprintf(fw, fn, "%.*s", (int)sizeof(info.fw_version), info.fw_version);
	}
	return r;
}

/* The same answer under a fake root: /run/ingot/ethtool/<if> holding what
 * `ethtool -i <if>` prints ("driver: ...", "firmware-version: ..."). */
static int ethtool_file(const struct node_probe *p, const char *ifname, char *driver, size_t dn,
			char *fw, size_t fn)
{
	_cleanup_free_ char *rel = NULL, *txt = NULL;
	char *save = NULL;
	rel = xasprintf("/run/ingot/ethtool/%s", ifname);
	if (!(txt = probe_read_trimmed(p, rel)))
		return -ENOENT;
	driver[0] = fw[0] = '\0';
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "driver:", 7))
			snprintf(driver, dn, "%s", l + 7);
		else if (!strncmp(l, "firmware-version:", 17))
			snprintf(fw, fn, "%s", l + 17);
	}
	return 0;
}

/* One physical interface (one with a device behind it, rel its
 * /sys/class/net/<if>/device): "driver=fw_version", fw_version cut at its
 * first blank ("28.39.1002 (MT_0000000838)" -> "28.39.1002"). */
static int net_device(struct node_probe *p, const char *rel, struct strbuf *vals, char **bad)
{
	const char *end = strrchr(rel, '/'), *name = end;
	char ifname[IF_NAMESIZE], driver[64], fw[64];
	while (name > rel && name[-1] != '/')
		name--;
	if ((size_t)(end - name) >= sizeof(ifname))
		return 0;
	snprintf(ifname, sizeof(ifname), "%.*s", (int)(end - name), name);
	int q = !strcmp(p->root, "/") ? ethtool_ask(ifname, driver, sizeof(driver), fw, sizeof(fw))
				      : ethtool_file(p, ifname, driver, sizeof(driver), fw, sizeof(fw));
	if (q == -ENOMEM)
		return q;
	if (q < 0)
		return note_bad(bad, "%s: ETHTOOL_GDRVINFO: %s", ifname, strerror(-q));
	char *f = fw + strspn(fw, " \t");
	f[strcspn(f, " \t(")] = '\0';
	const char *rev = clean_rev(f), *drv = clean_rev(driver);
	if (!rev)
		return 0;   /* a port without firmware to report (virtio, ...) */
	if (!drv)
		return note_bad(bad, "%s: no driver name", ifname);
	return add_entry(vals, drv, rev);
}

/* System BIOS and board: /sys/class/dmi/id. */
static int probe_dmi(struct node_probe *p)
{
	static const struct { const char *file, *key; } dmi[] = {
		{ "/sys/class/dmi/id/bios_version", "firmware.bios" },
		{ "/sys/class/dmi/id/bios_date", "firmware.bios_date" },
		{ "/sys/class/dmi/id/board_name", "system.board_name" },
		{ "/sys/class/dmi/id/product_name", "system.product_name" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(dmi); i++) {
		_cleanup_free_ char *v = probe_read_trimmed(p, dmi[i].file);
		const char *rev = v ? clean_rev(v) : NULL;
		TRY(rev ? probe_set(p, dmi[i].key, rev, dmi[i].file)
			: probe_setf(p, dmi[i].key, NULL, "not found: %s", dmi[i].file));
	}
	return 0;
}

/* The nvidia-nvswitch driver's "BIOS Version: 96.10.6D.00.01" (or "N/A")
 * in /proc/driver/nvidia-nvswitch/devices/<bus>/information. */
static int nvswitch_device(struct node_probe *p, const char *rel, struct strbuf *vals, char **bad)
{
	_cleanup_free_ char *txt = probe_read_trimmed(p, rel);
	char *line = txt ? strstr(txt, "BIOS Version:") : NULL;
	const char *rev = NULL;
	if (line) {
		line[strcspn(line, "\n")] = '\0';
		rev = clean_rev(line + strlen("BIOS Version:"));
	}
	if (!rev)
		return note_bad(bad, "%s: no BIOS Version", rel);
	add_distinct(vals, rev);
	return 0;
}

int probe_firmware(struct node_probe *p)
{
	bool real = !strcmp(p->root, "/");
	TRY(collect(p, "firmware.nic", "/sys/class/infiniband/*/fw_ver",
		    "/sys/class/infiniband/*/{board_id,fw_ver}", ib_device));
	TRY(collect(p, "firmware.ethernet", "/sys/class/net/*/device", real
		    ? "/sys/class/net/*/device, ETHTOOL_GDRVINFO"
		    : "/sys/class/net/*/device, /run/ingot/ethtool/<if>", net_device));
	TRY(probe_dmi(p));
	return collect(p, "firmware.nvswitch", "/proc/driver/nvidia-nvswitch/devices/*/information",
		       "/proc/driver/nvidia-nvswitch/devices/*/information (BIOS Version)",
		       nvswitch_device);
}

/* ipmitool mc info: "Firmware Revision         : 3.10". */
int probe_ipmitool_parse(struct node_probe *p, char *out, const char *where)
{
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "Firmware Revision", 17))
			continue;
		char *colon = strchr(l, ':');
		const char *rev = colon ? clean_rev(colon + 1) : NULL;
		if (rev)
			return probe_setf(p, "firmware.bmc", rev, "%s mc info (Firmware Revision)", where);
	}
	return probe_set_unreadable(p, "firmware.bmc", "unreadable: %s mc info printed no "
				    "Firmware Revision", where);
}
