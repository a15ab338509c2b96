/* Firmware the node can read: NICs (InfiniBand sysfs, the ethtool
 * driver-info ioctl), the system BIOS and board (DMI), NVSwitches (the
 * nvidia-nvswitch driver's procfs).  GPU VBIOS comes with the GPUs
 * (probe_nvidia.c), the BMC from ipmitool (nodeprobe.c's tools).
 *
 * A fact holds the distinct entries found, comma-separated: "REV", or
 * "MODEL=REV" where a device names its model (a NIC's board_id, an
 * Ethernet port's driver), so the tuple check can hold each model to its
 * pins and see devices of one model that disagree. */
#include "verify/probe-impl.h"

#include <ctype.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/strbuf.h"

#define NET_IFACES_MAX 256   /* interfaces asked, at most */

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

/* Record the entries, or why there are none: unreadable when a source was
 * there but gave nothing usable, else not found. */
static int set_entries(struct node_probe *p, const char *key, const struct strbuf *vals,
		       const char *src, const char *bad)
{
	if (vals->len)
		return probe_set(p, key, vals->buf, src);
	if (bad)
		return probe_set_unreadable(p, key, "unreadable: %s", bad);
	return probe_setf(p, key, NULL, "not found: %s", src);
}

/* ConnectX/BlueField: /sys/class/infiniband/<dev>/{fw_ver,board_id}. */
static int probe_ib_firmware(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf vals = STRBUF_INIT;
	_cleanup_free_ char *bad = NULL;
	int r = 0;

	strbuf_init(&vals, 64);
	if (probe_glob(p, "/sys/class/infiniband/*/fw_ver", &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !r; i++) {
			const char *rel = probe_node_rel(p, g.gl_pathv[i]);
			_cleanup_free_ char *fw = probe_read_trimmed(p, rel);
			_cleanup_free_ char *dir = strndup(rel, strlen(rel) - strlen("/fw_ver"));
			_cleanup_free_ char *board_path = NULL, *board = NULL;
			if (!dir || asprintf(&board_path, "%s/board_id", dir) < 0) {
				r = -ENOMEM;
				break;
			}
			board = probe_read_trimmed(p, board_path);
			const char *rev = fw ? clean_rev(fw) : NULL;
			const char *model = board ? clean_rev(board) : NULL;
			if (!rev) {
				if (!bad && asprintf(&bad, "%s: empty or unreadable", rel) < 0)
					r = -ENOMEM;
				continue;
			}
			_cleanup_free_ char *entry = NULL;
			if (asprintf(&entry, "%s=%s", model ? model : "unknown", rev) < 0)
				r = -ENOMEM;
			else
				add_distinct(&vals, entry);
		}
	}
	if (!r)
		r = set_entries(p, "firmware.nic", &vals, "/sys/class/infiniband/*/{board_id,fw_ver}", bad);
	strbuf_release(&vals);
	return r;
}

/* ETHTOOL_GDRVINFO on the node's own interface (root "/" only). */
static int ethtool_drvinfo(const char *ifname, char *driver, size_t dn, char *fw, size_t fn)
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
	if (asprintf(&rel, "/run/ingot/ethtool/%s", ifname) < 0)
		return -ENOMEM;
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

/* Every physical interface's firmware (those with a device behind them):
 * "driver=fw_version", fw_version cut at its first blank ("28.39.1002
 * (MT_0000000838)" -> "28.39.1002"). */
static int probe_ethernet_firmware(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf vals = STRBUF_INIT;
	_cleanup_free_ char *bad = NULL;
	bool real = !strcmp(p->root, "/");
	int r = 0;

	strbuf_init(&vals, 64);
	if (probe_glob(p, "/sys/class/net/*/device", &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && i < NET_IFACES_MAX && !r; i++) {
			const char *rel = probe_node_rel(p, g.gl_pathv[i]);
			const char *end = strrchr(rel, '/');
			const char *name = end;
			char ifname[IF_NAMESIZE], driver[64], fw[64];
			while (name > rel && name[-1] != '/')
				name--;
			if ((size_t)(end - name) >= sizeof(ifname))
				continue;
			snprintf(ifname, sizeof(ifname), "%.*s", (int)(end - name), name);
			int q = real ? ethtool_drvinfo(ifname, driver, sizeof(driver), fw, sizeof(fw))
				     : ethtool_file(p, ifname, driver, sizeof(driver), fw, sizeof(fw));
			if (q == -ENOMEM) {
				r = q;
				break;
			}
			char *f = fw + strspn(fw, " \t");
			f[strcspn(f, " \t(")] = '\0';
			const char *rev = q == 0 ? clean_rev(f) : NULL;
			const char *drv = q == 0 ? clean_rev(driver) : NULL;
			if (q == 0 && !rev)
				continue;   /* a port without firmware to report (virtio, ...) */
			if (!rev || !drv) {
				if (!bad && asprintf(&bad, "%s: ETHTOOL_GDRVINFO failed", ifname) < 0)
					r = -ENOMEM;
				continue;
			}
			_cleanup_free_ char *entry = NULL;
			if (asprintf(&entry, "%s=%s", drv, rev) < 0)
				r = -ENOMEM;
			else
				add_distinct(&vals, entry);
		}
	}
	if (!r)
		r = set_entries(p, "firmware.ethernet", &vals, real
				? "/sys/class/net/*/device, ETHTOOL_GDRVINFO"
				: "/sys/class/net/*/device, /run/ingot/ethtool/<if>", bad);
	strbuf_release(&vals);
	return r;
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
static int probe_nvswitch_firmware(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf vals = STRBUF_INIT;
	_cleanup_free_ char *bad = NULL;
	int r = 0;

	strbuf_init(&vals, 64);
	if (probe_glob(p, "/proc/driver/nvidia-nvswitch/devices/*/information", &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !r; i++) {
			const char *rel = probe_node_rel(p, g.gl_pathv[i]);
			_cleanup_free_ char *txt = probe_read_trimmed(p, rel);
			char *line = txt ? strstr(txt, "BIOS Version:") : NULL;
			const char *rev = NULL;
			if (line) {
				line[strcspn(line, "\n")] = '\0';
				rev = clean_rev(line + strlen("BIOS Version:"));
			}
			if (rev)
				add_distinct(&vals, rev);
			else if (!bad && asprintf(&bad, "%s: no BIOS Version", rel) < 0)
				r = -ENOMEM;
		}
	}
	if (!r)
		r = set_entries(p, "firmware.nvswitch", &vals,
				"/proc/driver/nvidia-nvswitch/devices/*/information (BIOS Version)", bad);
	strbuf_release(&vals);
	return r;
}

int probe_firmware(struct node_probe *p)
{
	TRY(probe_ib_firmware(p));
	TRY(probe_ethernet_firmware(p));
	TRY(probe_dmi(p));
	return probe_nvswitch_firmware(p);
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
