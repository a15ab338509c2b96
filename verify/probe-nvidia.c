/* NVIDIA facts: the loaded driver (sysfs, procfs, taint flags), the image's
 * nvidia.ko, nvidia-smi or the driver's procfs, GSP firmware, NVSwitches. */
#include "verify/probe-private.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/fileio.h"
#include "lib/modinfo.h"
#include "lib/strbuf.h"

/* The nvidia.ko the image carries for the running kernel: its .modinfo
 * version and license say what would load, independent of what is loaded.
 * A module found but unreadable, or without a version, is recorded as
 * unreadable: the comparison with the loaded driver is then not made. */
static int probe_nvidia_ko(struct node_probe *p)
{
	static const char *const pats[] = { "/lib/modules/%s/*/nvidia.ko*",
		"/lib/modules/%s/*/*/nvidia.ko*", "/lib/modules/%s/*/*/*/nvidia.ko*",
		"/lib/modules/%s/*/*/*/*/nvidia.ko*" };
	_cleanup_free_ char *rel = probe_read_trimmed(p, "/proc/sys/kernel/osrelease");
	const char *kver = rel && *rel && !strchr(rel, '/') ? rel : "*";
	_cleanup_free_ char *bad = NULL;   /* the first candidate that could not be read */

	TRY(probe_set(p, "kernel.release", *kver != '*' ? kver : NULL,
		      *kver != '*' ? "/proc/sys/kernel/osrelease" : "not found: /proc/sys/kernel/osrelease"));

	for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
		_cleanup_free_ char *pat = NULL;
		_cleanup_glob_ glob_t g = { 0 };
		pat = xasprintf(pats[k], kver);
		if (probe_glob(p, pat, &g) < 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct modinfo mi = { 0 };
			ingot_error e = { 0 };
			const char *src = probe_node_rel(p, g.gl_pathv[i]);
			int r = modinfo_load(g.gl_pathv[i], &mi, &e);
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				/* e names the host path; the report names the node's. */
				const char *why = strncmp(e.msg, g.gl_pathv[i], strlen(g.gl_pathv[i]))
					? e.msg : e.msg + strlen(g.gl_pathv[i]) + 2;
				if (!bad)
					bad = xasprintf("%s: %s", src, why);
				continue;
			}
			const char *v = modinfo_get(&mi, "version");
			const char *l = modinfo_get(&mi, "license");
			const char *vm = modinfo_get(&mi, "vermagic");
			if (v)
				r = probe_setf(p, "driver.ko_version", v, "%s (.modinfo version)", src);
			else if (!bad)
				bad = xasprintf("%s: .modinfo has no version", src);
			if (!r && l)
				r = probe_setf(p, "driver.ko_license", l, "%s (.modinfo license)", src);
			/* The kernel release the module was built for: vermagic's first word. */
			_cleanup_free_ char *kv = vm ? xstrndup(vm, strcspn(vm, " ")) : NULL;
			if (!r && kv && *kv)
				r = probe_setf(p, "driver.ko_vermagic", kv, "%s (.modinfo vermagic)", src);
			modinfo_free(&mi);
			if (r < 0)
				return r;
			if (v)
				return 0;
		}
	}
	if (bad)
		return probe_set_unreadable(p, "driver.ko_version", "unreadable: %s", bad);
	return probe_set(p, "driver.ko_version", NULL, "not found: /lib/modules/*/**/nvidia.ko*");
}

/* The loaded driver: version from sysfs/procfs, flavor from the NVRM
 * banner, license from the taint flags of the loaded module (falling back
 * to the image's nvidia.ko .modinfo). */
int probe_nvidia_driver(struct node_probe *p)
{
	_cleanup_free_ char *sysver = probe_read_trimmed(p, "/sys/module/nvidia/version");
	_cleanup_free_ char *nvrm = probe_read_trimmed(p, "/proc/driver/nvidia/version");
	_cleanup_free_ char *taint = probe_read_trimmed(p, "/sys/module/nvidia/taint");
	int open_flavor = -1;

	if (sysver && *sysver)
		TRY(probe_set(p, "driver.version", sysver, "/sys/module/nvidia/version"));
	if (nvrm) {
		_cleanup_free_ char *v = probe_parse_nvrm_version(nvrm, &open_flavor);
		if (v)
			TRY(probe_set(p, "driver.version", v, "/proc/driver/nvidia/version"));
		if (open_flavor >= 0)
			TRY(probe_set(p, "driver.flavor", open_flavor ? "open" : "proprietary",
				      "/proc/driver/nvidia/version"));
	}
	if (taint) {
		/* Taint 'P': a module with a non-GPL-compatible license is loaded:
		 * the proprietary modules.  The open modules are "Dual MIT/GPL". */
		const char *lic = strchr(taint, 'P') ? "NVIDIA" : "Dual MIT/GPL";
		TRY(probe_setf(p, "driver.license", lic, "/sys/module/nvidia/taint (flags '%s')", taint));
		TRY(probe_set(p, "driver.taint", taint, "/sys/module/nvidia/taint"));
		if (open_flavor < 0)
			TRY(probe_set(p, "driver.flavor", strchr(taint, 'P') ? "proprietary" : "open",
				      "/sys/module/nvidia/taint"));
	}
	TRY(probe_set(p, "driver.version", NULL,
		      "not found: /sys/module/nvidia/version, /proc/driver/nvidia/version"));
	TRY(probe_set(p, "driver.flavor", NULL,
		      "not found: /proc/driver/nvidia/version, /sys/module/nvidia/taint"));
	TRY(probe_nvidia_ko(p));
	if (!taint && probe_get(p, "driver.ko_license") && (sysver || nvrm))
		TRY(probe_setf(p, "driver.license", probe_get(p, "driver.ko_license"), "%s",
			      probe_find(p, "driver.ko_license")->source));
	TRY(probe_set(p, "driver.license", NULL, "not found: /sys/module/nvidia/taint"));
	return 0;
}

/* nvidia-smi --query-gpu=name,driver_version,vbios_version: one CSV line per GPU. */
int probe_nvidia_smi_parse(struct node_probe *p, char *out, const char *where)
{
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	char *save = NULL, driver[128] = "";
	unsigned count = 0;
	int r = 0;

	strbuf_init(&models, 64);
	strbuf_init(&vbios, 64);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f[3] = { 0 };
		char *s2 = NULL;
		size_t nf = 0;
		for (char *c = strtok_r(l, ",", &s2); c && nf < 3; c = strtok_r(NULL, ",", &s2)) {
			while (isspace((unsigned char)*c))
				c++;
			size_t cl = strlen(c);
			while (cl && isspace((unsigned char)c[cl - 1]))
				c[--cl] = '\0';
			f[nf++] = c;
		}
		if (nf < 3)
			continue;
		count++;
		/* Distinct values only: a mixed node shows every model/VBIOS. */
		if (!strstr(models.buf, f[0]))
			strbuf_addf(&models, "%s%s", models.len ? "," : "", f[0]);
		if (!strstr(vbios.buf, f[2]))
			strbuf_addf(&vbios, "%s%s", vbios.len ? "," : "", f[2]);
		snprintf(driver, sizeof(driver), "%s", f[1]);
	}
	if (count) {
		char cnt[24];
		_cleanup_free_ char *src = NULL;
		snprintf(cnt, sizeof(cnt), "%u", count);
		src = xasprintf("%s --query-gpu=name,driver_version,vbios_version", where);
		if (!r) r = probe_set(p, "gpu.model", models.buf, src);
		if (!r) r = probe_set(p, "gpu.count", cnt, src);
		if (!r) r = probe_set(p, "gpu.driver_version", driver, src);
		if (!r) r = probe_set(p, "firmware.vbios", vbios.buf, src);
		if (!r) r = probe_set(p, "smi", "nvidia-smi", where);
	}
	strbuf_release(&models);
	strbuf_release(&vbios);
	return r;
}

/* The driver's procfs names each GPU and its VBIOS, the same strings
 * nvidia-smi prints (it asks the same driver), without initialising NVML:
 * /proc/driver/nvidia/gpus/<bus>/information. */
int probe_nvidia_procfs(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	int r = 0;
	if (probe_glob(p, "/proc/driver/nvidia/gpus/*/information", &g) < 0)
		return 0;
	strbuf_init(&models, 64);
	strbuf_init(&vbios, 64);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		_cleanup_free_ char *txt = probe_read_trimmed(p, probe_node_rel(p, g.gl_pathv[i]));
		char *save = NULL;
		for (char *l = txt ? strtok_r(txt, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
			struct strbuf *dst = !strncmp(l, "Model:", 6) ? &models
					   : !strncmp(l, "Video BIOS:", 11) ? &vbios : NULL;
			if (!dst)
				continue;
			char *v = strchr(l, ':') + 1;
			while (isspace((unsigned char)*v))
				v++;
			if (*v && !strstr(dst->buf, v))
				strbuf_addf(dst, "%s%s", dst->len ? "," : "", v);
		}
	}
	if (models.len)
		r = probe_set(p, "gpu.model", models.buf, "/proc/driver/nvidia/gpus/*/information");
	if (!r && vbios.len)
		r = probe_set(p, "firmware.vbios", vbios.buf, "/proc/driver/nvidia/gpus/*/information");
	if (!r && g.gl_pathc) {
		char cnt[24];
		snprintf(cnt, sizeof(cnt), "%zu", g.gl_pathc);
		r = probe_set(p, "gpu.count", cnt, "/proc/driver/nvidia/gpus");
	}
	strbuf_release(&models);
	strbuf_release(&vbios);
	return r;
}

/* GSP firmware ships in a directory named after the driver version it
 * belongs to: /lib/firmware/nvidia/580.95.05/gsp_*.bin. */
int probe_gsp_firmware(struct node_probe *p)
{
	static const char *const pats[] = { "/lib/firmware/nvidia/*/gsp*.bin",
					    "/usr/lib/firmware/nvidia/*/gsp*.bin" };
	struct strbuf vals = STRBUF_INIT;
	const char *src = NULL;
	int r = 0;
	strbuf_init(&vals, 64);
	for (size_t k = 0; k < ARRAY_SIZE(pats) && !vals.len; k++) {
		_cleanup_glob_ glob_t g = { 0 };
		if (probe_glob(p, pats[k], &g) < 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *rel = probe_node_rel(p, g.gl_pathv[i]);
			const char *end = strrchr(rel, '/');
			const char *start = end;
			while (start > rel && start[-1] != '/')
				start--;
			_cleanup_free_ char *ver = xstrndup(start, (size_t)(end - start));
			if (probe_version_len(ver) == strlen(ver) && !strstr(vals.buf, ver))
				strbuf_addf(&vals, "%s%s", vals.len ? "," : "", ver);
		}
		src = pats[k];
	}
	if (vals.len)
		r = probe_set(p, "firmware.gsp", vals.buf, src);
	else
		r = probe_set(p, "firmware.gsp", NULL, "not found: /lib/firmware/nvidia/*/gsp*.bin");
	strbuf_release(&vals);
	return r;
}

int probe_nvswitch(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	if (probe_glob(p, "/proc/driver/nvidia-nvswitch/devices/*", &g) == 0) {
		char cnt[24];
		snprintf(cnt, sizeof(cnt), "%zu", g.gl_pathc);
		return probe_set(p, "nvswitch.count", cnt, "/proc/driver/nvidia-nvswitch/devices");
	}
	return probe_set(p, "nvswitch.count", NULL, "not found: /proc/driver/nvidia-nvswitch/devices");
}
