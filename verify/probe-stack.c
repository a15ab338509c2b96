/* The software stack above the driver: dpkg packages and --version
 * answers (fabric manager, container toolkit), NCCL/RCCL/CUDA libraries,
 * CUDA and ROCm installs, amd-smi. */
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
#include "lib/modinfo.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"

char *probe_dpkg_status(const struct node_probe *p)
{
	_cleanup_free_ char *path = probe_path(p, "/var/lib/dpkg/status");
	char *buf = NULL;
	ingot_error e = { 0 };
	if (!path || read_file(path, 64u << 20, &buf, NULL, &e) < 0)
		return NULL;
	return buf;
}

int probe_dpkg(struct node_probe *p, const char *key, const char *const *packages, const char *status)
{
	_cleanup_free_ char *pkg = NULL;
	_cleanup_free_ char *v = status ? probe_parse_dpkg_version(status, packages, &pkg) : NULL;
	if (v)
		return probe_setf(p, key, v, "/var/lib/dpkg/status (package %s)", pkg);
	return 0;
}

/* "libnccl.so.2.27.7" -> "2.27.7" when name starts with prefix. */
static char *version_after(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	if (strncmp(name, prefix, l))
		return NULL;
	size_t n = probe_version_len(name + l);
	if (!n || name[l + n] != '\0')
		return NULL;
	return xstrndup(name + l, n);
}

/* "RCCL version 2.30.7" embedded in a library (RCCL's file names carry
 * the ROCm version, not RCCL's).  Only the library's .rodata is read when
 * it has one: librccl.so is hundreds of MiB of GPU code objects, and at
 * boot every page scanned is a page read from disk.  Files without
 * section headers are scanned up to LIB_SCAN_MAX. */
static char *embedded_version(const char *path, const char *marker)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(path, 0, &st, NULL);
	char *res = NULL;
	size_t off = 0, len, sec_off, sec_len;
	ingot_error e = { 0 };

	if (fd < 0 || st.st_size <= 0)
		return NULL;
	/* mapping the whole file reads nothing yet */
	const char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (elf_section(m, (size_t)st.st_size, path, ".rodata", &sec_off, &sec_len, &e) == 0) {
		off = sec_off;
		len = sec_len;
	} else {
		len = (size_t)st.st_size < LIB_SCAN_MAX ? (size_t)st.st_size : LIB_SCAN_MAX;
	}
	const char *base = m + off;
	size_t ml = strlen(marker);
	for (const char *s = base; (s = memmem(s, len - (size_t)(s - base), marker, ml)); s += ml) {
		const char *v = s + ml;
		size_t n = 0;
		while (v + n < base + len && probe_is_version_char((unsigned char)v[n]))
			n++;
		if (n && isdigit((unsigned char)v[0])) {
			_cleanup_free_ char *tmp = xstrndup(v, n);
			size_t vl = probe_version_len(tmp);
			if (vl) {
				res = xstrndup(v, vl);
				break;
			}
		}
	}
	munmap((void *)m, (size_t)st.st_size);
	return res;
}

static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/usr/local/lib", "/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib",
	"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
};

/* Collect distinct versions of a library over the library path; several
 * distinct versions on one node are reported joined with ','. */
int probe_library(struct node_probe *p, const char *key, const char *libname,
			 const char *marker, const char *const *extra_dirs, size_t n_extra)
{
	struct strbuf vals = STRBUF_INIT, srcs = STRBUF_INIT;
	_cleanup_free_ char *prefix = NULL;
	int r = 0;

	prefix = xasprintf("%s.so.", libname);
	strbuf_init(&vals, 64);
	strbuf_init(&srcs, 256);
	for (size_t d = 0; d < ARRAY_SIZE(lib_dirs) + n_extra; d++) {
		const char *dir = d < ARRAY_SIZE(lib_dirs) ? lib_dirs[d] : extra_dirs[d - ARRAY_SIZE(lib_dirs)];
		_cleanup_free_ char *pat = NULL;
		_cleanup_glob_ glob_t g = { 0 };
		pat = xasprintf("%s/%s*", dir, prefix);
		if (probe_glob(p, pat, &g) < 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct stat st;
			const char *base = strrchr(g.gl_pathv[i], '/') + 1;
			/* Symlinks (libnccl.so.2 -> libnccl.so.2.27.7) name no new file. */
			if (lstat(g.gl_pathv[i], &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			_cleanup_free_ char *v = marker ? embedded_version(g.gl_pathv[i], marker) : NULL;
			if (!v)
				v = version_after(base, prefix);
			if (!v)
				continue;
			/* Skip a version already seen (lib and lib64 copies). */
			int seen = 0;
			for (const char *s = vals.buf; s && *s;) {
				size_t l = strcspn(s, ",");
				if (l == strlen(v) && !strncmp(s, v, l))
					seen = 1;
				s += l + (s[l] == ',');
			}
			if (seen)
				continue;
			if (vals.len) {
				strbuf_addch(&vals, ',');
				strbuf_addstr(&srcs, ", ");
			}
			strbuf_addstr(&vals, v);
			strbuf_addstr(&srcs, probe_node_rel(p, g.gl_pathv[i]));
		}
	}
	if (r == 0 && vals.len)
		r = probe_set(p, key, vals.buf, srcs.buf);
	if (r == 0)
		r = probe_setf(p, key, NULL, "not found: %s* on the library path", prefix);
	strbuf_release(&vals);
	strbuf_release(&srcs);
	return r;
}

int probe_cuda(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	if (probe_glob(p, "/usr/local/cuda*/version.json", &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			json_t *j = json_load_file(g.gl_pathv[i], 0, NULL);
			json_t *version = NULL;
			const char *v;
			int r;

			json_unpack(j, "{s?{s?o}}", "cuda", "version", &version);
			v = json_string_value(version);
			r = v ? probe_set(p, "cuda.version", v, probe_node_rel(p, g.gl_pathv[i])) : 0;
			json_decref(j);
			TRY(r);
		}
	}
	TRY(probe_set(p, "cuda.version", NULL, "not found: /usr/local/cuda*/version.json"));
	static const char *const none[] = { NULL };
	return probe_library(p, "cuda.runtime", "libcudart", NULL, none, 0);
}

int probe_rocm(struct node_probe *p)
{
	/* The stream is in the install prefix: /opt/rocm/core-10.0 (Core SDK)
	 * or /opt/rocm-7.2 (legacy). */
	static const struct { const char *pat; const char *stream; } where[] = {
		{ "/opt/rocm/core-*/.info/version", "core" },
		{ "/opt/rocm-*/.info/version", "legacy" },
		{ "/opt/rocm/.info/version", NULL },
	};
	for (size_t w = 0; w < ARRAY_SIZE(where) && !probe_get(p, "rocm.version"); w++) {
		_cleanup_glob_ glob_t g = { 0 };
		if (probe_glob(p, where[w].pat, &g) < 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc && !probe_get(p, "rocm.version"); i++) {
			const char *rel = probe_node_rel(p, g.gl_pathv[i]);
			_cleanup_free_ char *txt = probe_read_trimmed(p, rel);
			_cleanup_free_ char *v = txt ? probe_first_version(txt) : NULL;
			_cleanup_free_ char *prefix = xstrndup(rel, strlen(rel) - strlen("/.info/version"));
			if (!v)
				continue;
			TRY(probe_set(p, "rocm.version", v, rel));
			TRY(probe_set(p, "rocm.prefix", prefix, rel));
			if (where[w].stream)
				TRY(probe_setf(p, "rocm.stream", where[w].stream, "install prefix %s", prefix));
		}
	}
	TRY(probe_set(p, "rocm.version", NULL, "not found: /opt/rocm*/.info/version"));
	static const char *const rocm_libs[] = { "/opt/rocm*/lib", "/opt/rocm/core-*/lib" };
	return probe_library(p, "rccl.version", "librccl", "RCCL version ", rocm_libs,
			     ARRAY_SIZE(rocm_libs));
}

/* ROCm's runtime pieces by their own versions (distributions ship them
 * apart: Debian 13 has HIP 5.7 over the HSA runtime and SMI library of
 * ROCm 6.1): HIP from libamdhip64.so.X.Y.BUILD, the HSA runtime and the
 * ROCm SMI library from dpkg (their file names carry only an ABI
 * version, libhsa-runtime64.so.1.13.0, librocm_smi64.so.1.0). */
int probe_rocm_runtime(struct node_probe *p, const char *status)
{
	static const char *const rocm_libs[] = { "/opt/rocm*/lib", "/opt/rocm/core-*/lib" };
	static const char *const hsa_pkgs[] = { "libhsa-runtime64-1", NULL };
	static const char *const smi_pkgs[] = { "librocm-smi64-1", NULL };

	TRY(probe_library(p, "hip.version", "libamdhip64", NULL, rocm_libs, ARRAY_SIZE(rocm_libs)));
	TRY(probe_dpkg(p, "hsa_runtime.version", hsa_pkgs, status));
	TRY(probe_set(p, "hsa_runtime.version", NULL, "not found: /var/lib/dpkg/status (libhsa-runtime64-1)"));
	TRY(probe_dpkg(p, "smi_lib.version", smi_pkgs, status));
	return probe_set(p, "smi_lib.version", NULL, "not found: /var/lib/dpkg/status (librocm-smi64-1)");
}

/* amdgpu's version: /sys/module/amdgpu/version where the module has one
 * (AMD's packaged amdgpu); the in-tree module has no MODULE_VERSION, so a
 * loaded one (/sys/module/amdgpu) is the running kernel's release. */
int probe_amdgpu(struct node_probe *p)
{
	_cleanup_free_ char *ver = probe_read_trimmed(p, "/sys/module/amdgpu/version");
	_cleanup_free_ char *dir = probe_path(p, "/sys/module/amdgpu");
	const char *kr = probe_get(p, "kernel.release");
	struct stat st;

	if (ver && *ver)
		TRY(probe_set(p, "amdgpu.version", ver, "/sys/module/amdgpu/version"));
	else if (kr && dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		TRY(probe_set(p, "amdgpu.version", kr,
			      "in-tree amdgpu (/sys/module/amdgpu has no version): the kernel release, /proc/sys/kernel/osrelease"));
	return probe_set(p, "amdgpu.version", NULL, "not found: /sys/module/amdgpu/version, /sys/module/amdgpu");
}

/* On an AMD node (vendor known), amdgpu's version is the driver's. */
int probe_amdgpu_driver(struct node_probe *p)
{
	const char *vendor = probe_get(p, "vendor");
	const struct probe_fact *f = probe_find(p, "amdgpu.version");
	if (vendor && !strcmp(vendor, "amd") && !probe_get(p, "driver.version") && f && f->value)
		return probe_set(p, "driver.version", f->value, f->source);
	return 0;
}

/* amd-smi static --asic --vbios --json: a list of GPUs (or {"gpu_data": [...]}
 * in newer releases) with asic.market_name and vbios.version. */
int probe_amd_smi_parse(struct node_probe *p, const char *out, const char *where)
{
	json_t *j, *list = NULL;
	size_t i;
	json_t *g;
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	unsigned count = 0;
	int r = 0;

	j = json_loads(out, 0, NULL);
	if (json_is_array(j))
		list = j;
	else
		json_unpack(j, "{s?o}", "gpu_data", &list);
	strbuf_init(&models, 64);
	strbuf_init(&vbios, 64);
	json_array_foreach(list, i, g) {
		json_t *asic = NULL, *vb = NULL, *jm = NULL, *jv = NULL;
		const char *m, *v;

		json_unpack(g, "{s?o s?o}", "asic", &asic, "vbios", &vb);
		json_unpack(asic, "{s?o}", "market_name", &jm);
		json_unpack(vb, "{s?o}", "version", &jv);
		m = json_string_value(jm);
		v = json_string_value(jv);
		count++;
		if (m && !strstr(models.buf, m))
			strbuf_addf(&models, "%s%s", models.len ? "," : "", m);
		if (v && !strstr(vbios.buf, v))
			strbuf_addf(&vbios, "%s%s", vbios.len ? "," : "", v);
	}
	if (count) {
		char cnt[24];
		_cleanup_free_ char *src = NULL;
		snprintf(cnt, sizeof(cnt), "%u", count);
		src = xasprintf("%s static --asic --vbios --json", where);
		if (!r && models.len) r = probe_set(p, "gpu.model", models.buf, src);
		if (!r) r = probe_set(p, "gpu.count", cnt, src);
		if (!r && vbios.len) r = probe_set(p, "firmware.vbios", vbios.buf, src);
		if (!r) r = probe_set(p, "smi", "amd-smi", where);
	}
	json_decref(j);
	strbuf_release(&models);
	strbuf_release(&vbios);
	return r;
}
