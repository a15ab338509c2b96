#include "verify/nodeprobe.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/modinfo.h"
#include "lib/strbuf.h"
#include "verify/toolrun.h"

#define SMALL_FILE_MAX (1u << 20)
#define LIB_SCAN_MAX ((size_t)512 << 20)   /* embedded version strings: scan at most this */

static void globfreep(glob_t *g) { globfree(g); }
#define _cleanup_glob_ __attribute__((cleanup(globfreep)))

void node_probe_free(struct node_probe *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
		free(p->v[i].source);
	}
	free(p->v);
	free(p->root);
	free(p);
}

const struct probe_fact *probe_find(const struct node_probe *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return &p->v[i];
	return NULL;
}

const char *probe_get(const struct node_probe *p, const char *key)
{
	const struct probe_fact *f = probe_find(p, key);
	return f ? f->value : NULL;
}

int probe_set(struct node_probe *p, const char *key, const char *value, const char *source)
{
	struct probe_fact *f = (struct probe_fact *)probe_find(p, key);
	if (f) {
		if (f->value || !value)
			return 0;   /* first found value wins; not-found never overrides */
		char *v = strdup(value), *s = strdup(source);
		if (!v || !s) {
			free(v); free(s);
			return -ENOMEM;
		}
		free(f->value); free(f->source);
		f->value = v; f->source = s;
		return 0;
	}
	if (p->n == p->alloc) {
		size_t na = p->alloc ? p->alloc * 2 : 32;
		struct probe_fact *nv = realloc(p->v, na * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->v = nv;
		p->alloc = na;
	}
	f = &p->v[p->n];
	f->key = strdup(key);
	f->value = value ? strdup(value) : NULL;
	f->source = strdup(source);
	if (!f->key || (value && !f->value) || !f->source) {
		free(f->key); free(f->value); free(f->source);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

static int fact_cmp(const void *a, const void *b)
{
	return strcmp(((const struct probe_fact *)a)->key, ((const struct probe_fact *)b)->key);
}

json_t *probe_to_json(const struct node_probe *p)
{
	json_t *facts = json_array();
	struct probe_fact *sorted = malloc((p->n ? p->n : 1) * sizeof(*sorted));
	if (!facts || !sorted) {
		json_decref(facts);
		free(sorted);
		return NULL;
	}
	memcpy(sorted, p->v, p->n * sizeof(*sorted));
	qsort(sorted, p->n, sizeof(*sorted), fact_cmp);
	for (size_t i = 0; i < p->n; i++)
		json_array_append_new(facts, json_pack("{s:s, s:o, s:s}", "key", sorted[i].key,
			"value", sorted[i].value ? json_string(sorted[i].value) : json_null(),
			"source", sorted[i].source));
	free(sorted);
	return json_pack("{s:s, s:o}", "root", p->root, "facts", facts);
}

char *probe_path(const struct node_probe *p, const char *abs)
{
	while (*abs == '/')
		abs++;
	if (!strcmp(p->root, "/")) {
		char *r = malloc(strlen(abs) + 2);
		if (r)
			sprintf(r, "/%s", abs);
		return r;
	}
	return path_join(p->root, abs);
}

/* glob(3) a node path pattern under the root; the root itself is escaped
 * so a temporary directory with odd characters can't widen the match. */
static int probe_glob(const struct node_probe *p, const char *pattern, glob_t *g)
{
	struct strbuf sb = STRBUF_INIT;
	int r;
	strbuf_init(&sb, 256);
	if (strcmp(p->root, "/")) {
		for (const char *c = p->root; *c; c++) {
			if (strchr("*?[]\\", *c))
				strbuf_addch(&sb, '\\');
			strbuf_addch(&sb, *c);
		}
	}
	if (sb.len == 0 || sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	while (*pattern == '/')
		pattern++;
	strbuf_addstr(&sb, pattern);
	r = glob(sb.buf, 0, NULL, g);
	strbuf_release(&sb);
	return r == 0 ? 0 : -ENOENT;
}

/* The node path of a host path under the root (for sources in reports). */
static const char *node_rel(const struct node_probe *p, const char *host)
{
	size_t l = strlen(p->root);
	if (strcmp(p->root, "/") && !strncmp(host, p->root, l) && host[l] == '/')
		return host + l;
	return host;
}

/* Read a small file, strip trailing whitespace.  NULL when absent. */
static char *read_trimmed(const struct node_probe *p, const char *abs)
{
	_cleanup_free_ char *path = probe_path(p, abs);
	char *buf = NULL;
	size_t len = 0;
	ingot_error e = { 0 };
	if (!path || read_file(path, SMALL_FILE_MAX, &buf, &len, &e) < 0)
		return NULL;
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return buf;
}

static int is_version_char(int c) { return isdigit(c) || c == '.'; }

/* A dotted version at s: digits(.digits)+ ; returns its length or 0. */
static size_t version_len(const char *s)
{
	size_t n = 0, dots = 0;
	if (!isdigit((unsigned char)s[0]))
		return 0;
	while (is_version_char((unsigned char)s[n])) {
		if (s[n] == '.') {
			if (!isdigit((unsigned char)s[n + 1]))
				break;
			dots++;
		}
		n++;
	}
	return dots ? n : 0;
}

char *probe_first_version(const char *text)
{
	for (const char *s = text; *s; s++) {
		if (s != text && (isalnum((unsigned char)s[-1]) || s[-1] == '.'))
			continue;
		size_t n = version_len(s);
		if (n)
			return strndup(s, n);
	}
	return NULL;
}

char *probe_parse_nvrm_version(const char *text, int *open_flavor)
{
	const char *line = strstr(text, "NVRM version:");
	const char *km;
	if (!line)
		return NULL;
	_cleanup_free_ char *first = strndup(line, strcspn(line, "\n"));
	if (!first)
		return NULL;
	/* "NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build ..."
	 * versus the proprietary "NVIDIA UNIX x86_64 Kernel Module  580.95.05 ..." */
	if (open_flavor)
		*open_flavor = strstr(first, "Open Kernel Module") != NULL;
	km = strstr(first, "Kernel Module");
	return probe_first_version(km ? km : first);
}

/* Debian version "1:580.95.05-1ubuntu1" -> upstream "580.95.05". */
static char *debian_upstream(const char *v)
{
	const char *colon = strchr(v, ':');
	if (colon)
		v = colon + 1;
	size_t n = strcspn(v, "-~+");
	return strndup(v, n);
}

char *probe_parse_dpkg_version(const char *status, const char *const *packages, char **pkg_out)
{
	/* Stanzas separated by blank lines; only "install ok installed" counts. */
	const char *s = status;
	while (*s) {
		const char *end = strstr(s, "\n\n");
		size_t len = end ? (size_t)(end - s) : strlen(s);
		_cleanup_free_ char *st = strndup(s, len);
		char pkg[256] = "", ver[256] = "", stat[256] = "";
		if (!st)
			return NULL;
		char *save = NULL;
		for (char *l = strtok_r(st, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(l, "Package: ", 9))
				snprintf(pkg, sizeof(pkg), "%s", l + 9);
			else if (!strncmp(l, "Version: ", 9))
				snprintf(ver, sizeof(ver), "%s", l + 9);
			else if (!strncmp(l, "Status: ", 8))
				snprintf(stat, sizeof(stat), "%s", l + 8);
		}
		if (pkg[0] && ver[0] && !strcmp(stat, "install ok installed")) {
			for (size_t i = 0; packages[i]; i++) {
				size_t pl = strlen(packages[i]);
				/* "nvidia-fabricmanager-*" matches the branch-suffixed names. */
				int match = packages[i][pl - 1] == '*'
					? !strncmp(pkg, packages[i], pl - 1)
					: !strcmp(pkg, packages[i]);
				if (match) {
					if (pkg_out)
						*pkg_out = strdup(pkg);
					return debian_upstream(ver);
				}
			}
		}
		if (!end)
			break;
		s = end + 2;
	}
	return NULL;
}

static int set_found(struct node_probe *p, const char *key, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int set_found(struct node_probe *p, const char *key, const char *value, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int r;
	strbuf_init(&sb, 128);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	r = probe_set(p, key, value, sb.buf);
	strbuf_release(&sb);
	return r;
}

#define TRY(x) do { int _r = (x); if (_r < 0) return _r; } while (0)

static int probe_modules(struct node_probe *p)
{
	_cleanup_free_ char *mods = read_trimmed(p, "/proc/modules");
	struct strbuf names = STRBUF_INIT;
	int r;
	if (!mods)
		return probe_set(p, "modules", NULL, "not found: /proc/modules");
	strbuf_init(&names, 256);
	char *save = NULL;
	for (char *l = strtok_r(mods, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t n = strcspn(l, " ");
		if (names.len)
			strbuf_addch(&names, ',');
		strbuf_add(&names, l, n);
	}
	r = probe_set(p, "modules", names.buf, "/proc/modules");
	strbuf_release(&names);
	return r;
}

static int module_loaded(const struct node_probe *p, const char *name)
{
	const char *m = probe_get(p, "modules");
	size_t n = strlen(name);
	for (const char *s = m; s && *s;) {
		size_t l = strcspn(s, ",");
		if (l == n && !strncmp(s, name, n))
			return 1;
		s += l + (s[l] == ',');
	}
	return 0;
}

/* The nvidia.ko the image carries for the running kernel: its .modinfo
 * version and license say what would load, independent of what is loaded. */
static int probe_nvidia_ko(struct node_probe *p)
{
	static const char *const pats[] = { "/lib/modules/%s/*/nvidia.ko*",
		"/lib/modules/%s/*/*/nvidia.ko*", "/lib/modules/%s/*/*/*/nvidia.ko*",
		"/lib/modules/%s/*/*/*/*/nvidia.ko*" };
	_cleanup_free_ char *rel = read_trimmed(p, "/proc/sys/kernel/osrelease");
	const char *kver = rel && *rel && !strchr(rel, '/') ? rel : "*";

	for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
		_cleanup_free_ char *pat = NULL;
		_cleanup_glob_ glob_t g = { 0 };
		if (asprintf(&pat, pats[k], kver) < 0)
			return -ENOMEM;
		if (probe_glob(p, pat, &g) < 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct modinfo mi = { 0 };
			ingot_error e = { 0 };
			const char *src = node_rel(p, g.gl_pathv[i]);
			if (modinfo_load(g.gl_pathv[i], &mi, &e) < 0)
				continue;
			const char *v = modinfo_get(&mi, "version");
			const char *l = modinfo_get(&mi, "license");
			int r = 0;
			if (v)
				r = set_found(p, "driver.ko_version", v, "%s (.modinfo version)", src);
			if (!r && l)
				r = set_found(p, "driver.ko_license", l, "%s (.modinfo license)", src);
			modinfo_free(&mi);
			if (r < 0)
				return r;
			if (v)
				return 0;
		}
	}
	return probe_set(p, "driver.ko_version", NULL, "not found: /lib/modules/*/**/nvidia.ko*");
}

/* The loaded driver: version from sysfs/procfs, flavor from the NVRM
 * banner, license from the taint flags of the loaded module (falling back
 * to the image's nvidia.ko .modinfo). */
static int probe_nvidia_driver(struct node_probe *p)
{
	_cleanup_free_ char *sysver = read_trimmed(p, "/sys/module/nvidia/version");
	_cleanup_free_ char *nvrm = read_trimmed(p, "/proc/driver/nvidia/version");
	_cleanup_free_ char *taint = read_trimmed(p, "/sys/module/nvidia/taint");
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
		TRY(set_found(p, "driver.license", lic, "/sys/module/nvidia/taint (flags '%s')", taint));
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
		TRY(set_found(p, "driver.license", probe_get(p, "driver.ko_license"), "%s",
			      probe_find(p, "driver.ko_license")->source));
	TRY(probe_set(p, "driver.license", NULL, "not found: /sys/module/nvidia/taint"));
	return 0;
}

/* Run a tool found for the node; NULL output when absent or failing. */
static char *run_node_tool(const struct node_probe *p, const char *name, char *const args[],
			   char **where)
{
	_cleanup_free_ char *exe = tool_find(p->root, name);
	char *argv[16];
	char *out = NULL;
	int status = 0;
	size_t i = 0;
	ingot_error e = { 0 };

	*where = NULL;
	if (!exe)
		return NULL;
	argv[i++] = exe;
	for (; args[i - 1] && i < ARRAY_SIZE(argv) - 1; i++)
		argv[i] = args[i - 1];
	argv[i] = NULL;
	*where = strdup(node_rel(p, exe));
	if (tool_run(argv, TOOL_TIMEOUT_MS, TOOL_MAX_OUTPUT, &out, &status, &e) < 0)
		return NULL;
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static char *dpkg_status(const struct node_probe *p)
{
	_cleanup_free_ char *path = probe_path(p, "/var/lib/dpkg/status");
	char *buf = NULL;
	ingot_error e = { 0 };
	if (!path || read_file(path, 64u << 20, &buf, NULL, &e) < 0)
		return NULL;
	return buf;
}

static int probe_dpkg_or_tool(struct node_probe *p, const char *key, const char *tool,
			      char *const args[], const char *const *packages, const char *status)
{
	_cleanup_free_ char *where = NULL;
	_cleanup_free_ char *out = run_node_tool(p, tool, args, &where);
	if (out) {
		_cleanup_free_ char *v = probe_first_version(out);
		if (v)
			TRY(set_found(p, key, v, "%s --version", where));
	}
	if (status) {
		_cleanup_free_ char *pkg = NULL;
		_cleanup_free_ char *v = probe_parse_dpkg_version(status, packages, &pkg);
		if (v)
			TRY(set_found(p, key, v, "/var/lib/dpkg/status (package %s)", pkg));
	}
	return set_found(p, key, NULL, "not found: %s, /var/lib/dpkg/status", tool);
}

/* "libnccl.so.2.27.7" -> "2.27.7" when name starts with prefix. */
static char *version_after(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	if (strncmp(name, prefix, l))
		return NULL;
	size_t n = version_len(name + l);
	if (!n || name[l + n] != '\0')
		return NULL;
	return strndup(name + l, n);
}

/* "NCCL version 2.27.7" embedded in a library (RCCL's file names carry
 * the ROCm version, not RCCL's). */
static char *embedded_version(const char *path, const char *marker)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *res = NULL;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return NULL;
	size_t len = (size_t)st.st_size < LIB_SCAN_MAX ? (size_t)st.st_size : LIB_SCAN_MAX;
	const char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	size_t ml = strlen(marker);
	for (const char *s = m; (s = memmem(s, len - (size_t)(s - m), marker, ml)); s += ml) {
		const char *v = s + ml;
		size_t n = 0;
		while (v + n < m + len && is_version_char((unsigned char)v[n]))
			n++;
		if (n && isdigit((unsigned char)v[0])) {
			_cleanup_free_ char *tmp = strndup(v, n);
			size_t vl = tmp ? version_len(tmp) : 0;
			if (vl) {
				res = strndup(v, vl);
				break;
			}
		}
	}
	munmap((void *)m, len);
	return res;
}

static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/usr/local/lib", "/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib",
	"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
};

/* Collect distinct versions of a library over the library path; several
 * distinct versions on one node are reported joined with ','. */
static int probe_library(struct node_probe *p, const char *key, const char *libname,
			 const char *marker, const char *const *extra_dirs, size_t n_extra)
{
	struct strbuf vals = STRBUF_INIT, srcs = STRBUF_INIT;
	_cleanup_free_ char *prefix = NULL;
	int r = 0;

	if (asprintf(&prefix, "%s.so.", libname) < 0)
		return -ENOMEM;
	strbuf_init(&vals, 64);
	strbuf_init(&srcs, 256);
	for (size_t d = 0; d < ARRAY_SIZE(lib_dirs) + n_extra; d++) {
		const char *dir = d < ARRAY_SIZE(lib_dirs) ? lib_dirs[d] : extra_dirs[d - ARRAY_SIZE(lib_dirs)];
		_cleanup_free_ char *pat = NULL;
		_cleanup_glob_ glob_t g = { 0 };
		if (asprintf(&pat, "%s/%s*", dir, prefix) < 0) {
			r = -ENOMEM;
			break;
		}
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
			strbuf_addstr(&srcs, node_rel(p, g.gl_pathv[i]));
		}
	}
	if (r == 0 && vals.len)
		r = probe_set(p, key, vals.buf, srcs.buf);
	if (r == 0)
		r = set_found(p, key, NULL, "not found: %s* on the library path", prefix);
	strbuf_release(&vals);
	strbuf_release(&srcs);
	return r;
}

static int probe_cuda(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	if (probe_glob(p, "/usr/local/cuda*/version.json", &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			json_t *j = json_load_file(g.gl_pathv[i], 0, NULL);
			json_t *cuda = j ? json_object_get(j, "cuda") : NULL;
			const char *v = json_string_value(json_object_get(cuda, "version"));
			int r = v ? probe_set(p, "cuda.version", v, node_rel(p, g.gl_pathv[i])) : 0;
			json_decref(j);
			TRY(r);
		}
	}
	TRY(probe_set(p, "cuda.version", NULL, "not found: /usr/local/cuda*/version.json"));
	static const char *const none[] = { NULL };
	return probe_library(p, "cuda.runtime", "libcudart", NULL, none, 0);
}

static int probe_rocm(struct node_probe *p)
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
			const char *rel = node_rel(p, g.gl_pathv[i]);
			_cleanup_free_ char *txt = read_trimmed(p, rel);
			_cleanup_free_ char *v = txt ? probe_first_version(txt) : NULL;
			_cleanup_free_ char *prefix = strndup(rel, strlen(rel) - strlen("/.info/version"));
			if (!v || !prefix)
				continue;
			TRY(probe_set(p, "rocm.version", v, rel));
			TRY(probe_set(p, "rocm.prefix", prefix, rel));
			if (where[w].stream)
				TRY(set_found(p, "rocm.stream", where[w].stream, "install prefix %s", prefix));
		}
	}
	TRY(probe_set(p, "rocm.version", NULL, "not found: /opt/rocm*/.info/version"));
	static const char *const rocm_libs[] = { "/opt/rocm*/lib", "/opt/rocm/core-*/lib" };
	return probe_library(p, "rccl.version", "librccl", "RCCL version ", rocm_libs,
			     ARRAY_SIZE(rocm_libs));
}

/* nvidia-smi --query-gpu=name,driver_version,vbios_version: one CSV line per GPU. */
static int probe_nvidia_smi(struct node_probe *p)
{
	static char *const args[] = { "--query-gpu=name,driver_version,vbios_version",
				      "--format=csv,noheader", NULL };
	_cleanup_free_ char *where = NULL;
	_cleanup_free_ char *out = run_node_tool(p, "nvidia-smi", args, &where);
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	char *save = NULL, driver[128] = "";
	unsigned count = 0;
	int r = 0;

	if (!out)
		return set_found(p, "gpu.model", NULL, where ? "%s failed or timed out"
				 : "not found: %s", where ? where : "nvidia-smi");
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
		if (asprintf(&src, "%s --query-gpu=name,driver_version,vbios_version", where) < 0)
			r = -ENOMEM;
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

/* Without nvidia-smi, the driver's procfs still names each GPU and its
 * VBIOS: /proc/driver/nvidia/gpus/<bus>/information. */
static int probe_nvidia_procfs(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	int r = 0;
	if (probe_glob(p, "/proc/driver/nvidia/gpus/*/information", &g) < 0)
		return 0;
	strbuf_init(&models, 64);
	strbuf_init(&vbios, 64);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		_cleanup_free_ char *txt = read_trimmed(p, node_rel(p, g.gl_pathv[i]));
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

/* amd-smi static --asic --vbios --json: a list of GPUs (or {"gpu_data": [...]}
 * in newer releases) with asic.market_name and vbios.version. */
static int probe_amd_smi(struct node_probe *p)
{
	static char *const args[] = { "static", "--asic", "--vbios", "--json", NULL };
	_cleanup_free_ char *where = NULL;
	_cleanup_free_ char *out = run_node_tool(p, "amd-smi", args, &where);
	json_t *j, *list;
	size_t i;
	json_t *g;
	struct strbuf models = STRBUF_INIT, vbios = STRBUF_INIT;
	unsigned count = 0;
	int r = 0;

	if (!out)
		return set_found(p, "gpu.model", NULL, where ? "%s failed or timed out"
				 : "not found: %s", where ? where : "amd-smi");
	j = json_loads(out, 0, NULL);
	list = json_is_array(j) ? j : json_object_get(j, "gpu_data");
	strbuf_init(&models, 64);
	strbuf_init(&vbios, 64);
	json_array_foreach(list, i, g) {
		const char *m = json_string_value(json_object_get(json_object_get(g, "asic"), "market_name"));
		const char *v = json_string_value(json_object_get(json_object_get(g, "vbios"), "version"));
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
		if (asprintf(&src, "%s static --asic --vbios --json", where) < 0)
			r = -ENOMEM;
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

/* GSP firmware ships in a directory named after the driver version it
 * belongs to: /lib/firmware/nvidia/580.95.05/gsp_*.bin. */
static int probe_gsp_firmware(struct node_probe *p)
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
			const char *rel = node_rel(p, g.gl_pathv[i]);
			const char *end = strrchr(rel, '/');
			const char *start = end;
			while (start > rel && start[-1] != '/')
				start--;
			_cleanup_free_ char *ver = strndup(start, (size_t)(end - start));
			if (ver && version_len(ver) == strlen(ver) && !strstr(vals.buf, ver))
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

static int probe_nvswitch(struct node_probe *p)
{
	_cleanup_glob_ glob_t g = { 0 };
	if (probe_glob(p, "/proc/driver/nvidia-nvswitch/devices/*", &g) == 0) {
		char cnt[24];
		snprintf(cnt, sizeof(cnt), "%zu", g.gl_pathc);
		return probe_set(p, "nvswitch.count", cnt, "/proc/driver/nvidia-nvswitch/devices");
	}
	return probe_set(p, "nvswitch.count", NULL, "not found: /proc/driver/nvidia-nvswitch/devices");
}

int node_probe_run(const char *root, struct node_probe **out, ingot_error *e)
{
	struct node_probe *p = calloc(1, sizeof(*p));
	_cleanup_free_ char *status = NULL;
	int r;

	if (!p || !(p->root = strdup(root && *root ? root : "/"))) {
		free(p);
		return ingot_fail(e, -ENOMEM, "probe: out of memory");
	}
	status = dpkg_status(p);

	static char *const fm_args[] = { "--version", NULL };
	static const char *const fm_pkgs[] = { "nvidia-fabricmanager-*", "nvidia-fabricmanager",
					       "cuda-drivers-fabricmanager-*", NULL };
	static const char *const ctk_pkgs[] = { "nvidia-container-toolkit",
						"nvidia-container-toolkit-base", NULL };
	static const char *const none[] = { NULL };

	r = probe_modules(p);
	if (!r) r = probe_nvidia_driver(p);
	if (!r) r = probe_dpkg_or_tool(p, "fabric_manager.version", "nv-fabricmanager", fm_args,
				       fm_pkgs, status);
	if (!r) r = probe_dpkg_or_tool(p, "container_toolkit.version", "nvidia-ctk", fm_args,
				       ctk_pkgs, status);
	if (!r) r = probe_library(p, "nccl.version", "libnccl", NULL, none, 0);
	if (!r) r = probe_cuda(p);
	if (!r) r = probe_rocm(p);
	if (!r) {
		_cleanup_free_ char *amdver = read_trimmed(p, "/sys/module/amdgpu/version");
		r = amdver && *amdver ? probe_set(p, "amdgpu.version", amdver, "/sys/module/amdgpu/version")
				      : probe_set(p, "amdgpu.version", NULL, "not found: /sys/module/amdgpu/version");
	}
	if (!r) r = probe_nvidia_smi(p);
	if (!r) r = probe_nvidia_procfs(p);
	if (!r) r = probe_amd_smi(p);
	if (!r) r = probe_set(p, "smi", NULL, "not found: nvidia-smi, amd-smi");
	if (!r) r = probe_gsp_firmware(p);
	if (!r) r = probe_nvswitch(p);
	if (!r) {
		_cleanup_free_ char *nvdir = probe_path(p, "/proc/driver/nvidia");
		struct stat st;
		if (probe_get(p, "driver.version") || module_loaded(p, "nvidia"))
			r = probe_set(p, "vendor", "nvidia", probe_get(p, "driver.version")
				      ? probe_find(p, "driver.version")->source : "/proc/modules");
		else if (probe_get(p, "amdgpu.version") || module_loaded(p, "amdgpu"))
			r = probe_set(p, "vendor", "amd", probe_get(p, "amdgpu.version")
				      ? "/sys/module/amdgpu/version" : "/proc/modules");
		else if (nvdir && stat(nvdir, &st) == 0)
			r = probe_set(p, "vendor", "nvidia", "/proc/driver/nvidia");
		else
			r = probe_set(p, "vendor", NULL, "no nvidia or amdgpu module loaded");
	}
	if (r < 0) {
		node_probe_free(p);
		return ingot_fail(e, r, "probe: out of memory");
	}
	*out = p;
	return 0;
}
