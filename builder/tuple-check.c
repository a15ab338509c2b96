/* tuple_check_artifacts: the bits must carry the versions the tuple
 * declares.  For every tuple component that names its artifact, the
 * evidence is read from the artifact itself and from the files it put in
 * the staging tree (by their store blobs):
 *   - a .deb artifact: control Version (upstream part), as the unpacker
 *     read it (struct unpack_stats);
 *   - driver: nvidia.ko / amdgpu.ko .modinfo version= and, for NVIDIA,
 *     license= (Dual MIT/GPL = open modules, NVIDIA = proprietary); the
 *     in-tree amdgpu has no version=: its version is its vermagic's kernel
 *     release, and the firmware it names for the pool's GPUs must be in
 *     the image (AMD's packaged amdgpu, which brings its own, not yet);
 *   - nccl / rccl: libnccl.so.X.Y.Z file name and the embedded
 *     "NCCL version X.Y.Z[+cudaA.B]" / "RCCL version X.Y.Z[+hipA.B]"
 *     string (A.B against nccl.cuda / rccl.hip when declared); RCCL's
 *     offload bundle ids (the gfx targets it has code for) are exactly
 *     rccl.targets, which must be declared when it has any;
 *   - hip: libamdhip64.so.X.Y.BUILD file name; hsa-runtime, smi-lib:
 *     the package's Version in the artifact's var/lib/dpkg/status (their
 *     file names carry only an ABI version);
 *   - cudnn: libcudnn.so.X.Y.Z file name;
 *   - cuda: version.json's cuda.version (as in /usr/local/cuda-X.Y/) and
 *     the runtime's libcudart.so.X.Y.Z file name, its X.Y (distribution
 *     packages carry no version.json);
 *   - rocm: <prefix>/.info/version.
 * A component that names an artifact without any such evidence is an
 * error too: an unverifiable claim is what this check exists to stop. */
#include "builder/tuple-check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "lib/modinfo.h"
#include "lib/version.h"
#include "builder/dpkg-status.h"
#include "recipes/tuple.h"
#include "recipes/tuple-fields.h"

#define VERSION_JSON_MAX (1u << 20)

struct check {
	const struct recipe *r;
	const struct artifact *a;
	const struct store *s;
	const char *comp;       /* "nccl" */
	const char *want;       /* declared version */
	const char *built_for;  /* nccl.cuda / rccl.hip, when declared */
	const char *built_tag;  /* "+cuda" / "+hip" in the banner */
	const char *built_label; /* "CUDA" / "HIP" */
	const struct tuple_value *targets;  /* rccl.targets, when declared */
	const struct tuple_value *models;   /* gpu.models */
	const struct tree *t;
	bool evidence;
	ingot_error *e;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The declared version must be a prefix of what the bits carry
 * ("13.0" is satisfied by 13.0.2; "2.27.7" by "2.27.7+cuda13.0"). */
static int compare(struct check *c, const char *carried_raw, const char *where)
{
	char up[64];
	c->evidence = true;
	if (!version_upstream(carried_raw, up, sizeof(up)))
		return ingot_fail(c->e, -EINVAL, "tuple.%s.version: artifact '%s' carries no readable version in %s (got '%.60s')",
				  c->comp, c->a->name, where, carried_raw);
	if (!version_prefix_match(c->want, up))
		return ingot_fail(c->e, -EINVAL, "tuple.%s.version: recipe declares %s, artifact '%s' carries %s (%s)",
				  c->comp, c->want, c->a->name, up, where);
	return 0;
}

/* libcudart.so.12.4.127: the runtime's major.minor is the CUDA release;
 * its third field is the runtime's own (12.4.127 ships with toolkit
 * 12.4.1), so only major.minor is evidence, and it must agree with the
 * declared version's. */
static int check_cudart(struct check *c, const struct tree_entry *te)
{
	const char *v = base_name(te->path) + strlen("libcudart.so.");
	size_t n = strspn(v, "0123456789");
	char mm[32], where[512];

	if (v[n] != '.' || !n || n > 8 || !strspn(v + n + 1, "0123456789"))
		return 0;   /* libcudart.so.12: a soname link, no release in it */
	n += 1 + strspn(v + n + 1, "0123456789");
	snprintf(mm, sizeof(mm), "%.*s", (int)n, v);
	c->evidence = true;
	snprintf(where, sizeof(where), "/%s", te->path);
	if (!version_prefix_match(mm, c->want))
		return ingot_fail(c->e, -EINVAL, "tuple.cuda.version: recipe declares %s, artifact '%s' carries the CUDA %s runtime (%s)",
				  c->want, c->a->name, mm, where);
	return 0;
}

/* ------------------------------------------------------- tree files -- */

/* Find "PREFIX<version>" in a file, streaming (libraries can be large):
 * 1 and the version in out when found, 0 when not, -errno on error. */
static int scan_string(const char *path, const char *prefix, char *out, size_t outlen)
{
	_cleanup_close_ int fd = open_regular(path, 0, NULL, NULL);
	size_t plen = strlen(prefix), have = 0;
	char buf[65536 + 256];

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *hit;
		if (n < 0)
			return -errno;
		have += (size_t)n;
		buf[have] = '\0';
		hit = memmem(buf, have, prefix, plen);
		if (hit) {
			size_t off = (size_t)(hit - buf), k = 0;
			/* decide only once the text after the prefix is in (or at EOF) */
			if (n > 0 && have - off < plen + 64) {
				memmove(buf, hit, have - off);
				have -= off;
				continue;
			}
			hit += plen;
			while (hit + k < buf + have && k + 1 < outlen && hit[k] > ' ' && hit[k] < 127)
				k++;
			memcpy(out, hit, k);
			out[k] = '\0';
			return 1;
		}
		if (n == 0)
			return 0;
		/* keep a tail so a prefix split across reads is still found */
		if (have > 256) {
			memmove(buf, buf + have - 256, 256);
			have = 256;
		}
	}
}

static int blob_path(struct check *c, const struct tree_entry *te, char **out)
{
	return store_content_blob(c->s, &te->loc, te->sha256, te->size, out, c->e);
}

/* The firmware each AMD Instinct generation loads, by the file-name
 * prefixes of its IP blocks under amdgpu/ (amdgpu.ko's firmware= names
 * the files of every GPU it drives; these pick the pool's): gfx942 is
 * GC 9.4.3 with PSP 13.0.6, SDMA 4.4.2, SMU 13.0.6 and VCN 4.0.3. */
static const struct amd_gpu {
	const char *models[4];
	const char *prefix[6];
} amd_gpus[] = {
	{ { "MI300A", "MI300X", "MI325X" }, { "gc_9_4_3", "psp_13_0_6", "sdma_4_4_2", "smu_13_0_6", "vcn_4_0_3" } },
	{ { "MI350X", "MI355X" }, { "gc_9_5_0", "psp_13_0_14", "sdma_4_4_5", "smu_13_0_14" } },
	{ { "MI210", "MI250", "MI250X" }, { "aldebaran" } },
	{ { "MI100" }, { "arcturus" } },
};

static const struct amd_gpu *amd_gpu(const char *model)
{
	for (size_t g = 0; g < ARRAY_SIZE(amd_gpus); g++)
		for (size_t k = 0; k < ARRAY_SIZE(amd_gpus[g].models) && amd_gpus[g].models[k]; k++)
			if (!strcmp(amd_gpus[g].models[k], model))
				return &amd_gpus[g];
	return NULL;
}

static bool fw_in_tree(const struct tree *t, const char *name)
{
	static const char *const dirs[] = { "lib/firmware/", "usr/lib/firmware/" };
	static const char *const exts[] = { "", ".xz", ".zst" };
	for (size_t i = 0; i < t->n; i++) {
		const char *p = t->v[i].path;
		if (t->v[i].type == TREE_DIR)
			continue;
		for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
			size_t dl = strlen(dirs[d]), nl = strlen(name);
			if (strncmp(p, dirs[d], dl) || strncmp(p + dl, name, nl))
				continue;
			for (size_t x = 0; x < ARRAY_SIZE(exts); x++)
				if (!strcmp(p + dl + nl, exts[x]))
					return true;
		}
	}
	return false;
}

/* "amdgpu/gc_9_4_3_mec.bin" is one of prefix gc_9_4_3's files.  Not the
 * optional ones: *_ip_discovery.bin is read only with amdgpu.discovery=2
 * (the GPU holds its own table), *_cap.bin only for SR-IOV; Debian's
 * firmware-amd-graphics 20250410 ships neither for aldebaran. */
static bool fw_of(const char *fw, const char *prefix)
{
	size_t pl = strlen(prefix), fl = strlen(fw);
	if (fl > 17 && !strcmp(fw + fl - 17, "_ip_discovery.bin"))
		return false;
	if (fl > 8 && !strcmp(fw + fl - 8, "_cap.bin"))
		return false;
	return !strncmp(fw, "amdgpu/", 7) && !strncmp(fw + 7, prefix, pl) &&
	       (fw[7 + pl] == '_' || fw[7 + pl] == '.');
}

/* Every firmware file amdgpu.ko names for the pool's GPU models must be
 * in the image (the kernel cannot bring the GPU up without it), and the
 * module must name some for each of the GPU's IP blocks: one that names
 * none does not drive that GPU. */
static int check_amd_firmware(struct check *c, const struct modinfo *mi, const char *where)
{
	const struct tuple_value *models = c->models;
	for (size_t m = 0; models && m < models->n_list; m++) {
		const struct amd_gpu *af = amd_gpu(models->list[m]);
		{
			for (size_t k = 0; af && k < ARRAY_SIZE(af->prefix) && af->prefix[k]; k++) {
				bool named = false;
				for (size_t i = 0; i < mi->n; i++) {
					if (strcmp(mi->keys[i], "firmware") || !fw_of(mi->values[i], af->prefix[k]))
						continue;
					named = true;
					if (!fw_in_tree(c->t, mi->values[i]))
						return ingot_fail(c->e, -EINVAL, "tuple.driver: %s needs firmware %s (%s firmware=), the image has no /lib/firmware/%s[.xz|.zst]",
								  models->list[m], mi->values[i], where, mi->values[i]);
				}
				if (!named)
					return ingot_fail(c->e, -EINVAL, "tuple.driver: %s names no firmware amdgpu/%s* for %s: this amdgpu does not drive it",
							  where, af->prefix[k], models->list[m]);
			}
		}
	}
	return 0;
}

static int check_module(struct check *c, const struct tree_entry *te, const char *flavor,
			bool nvidia)
{
	_cleanup_free_ char *p = NULL;
	struct modinfo mi;
	const char *v, *lic, *vm;
	char where[512], release[128];
	bool in_tree = false;
	int r;

	if ((r = blob_path(c, te, &p)) < 0)
		return r;
	if ((r = modinfo_load(p, &mi, c->e)) < 0)
		return ingot_prefix(c->e, "tuple.driver: artifact '%s': /%s", c->a->name, te->path);
	v = modinfo_get(&mi, "version");
	lic = modinfo_get(&mi, "license");
	vm = modinfo_get(&mi, "vermagic");
	if (!v && !nvidia && vm && modinfo_vermagic_release(vm, release, sizeof(release)) == 0) {
		/* the in-tree amdgpu has no MODULE_VERSION: it is the kernel's */
		snprintf(where, sizeof(where), "/%s: no version=, in-tree: vermagic %s", te->path, release);
		v = release;
		in_tree = true;
	} else {
		snprintf(where, sizeof(where), "/%s: version=%s", te->path, v ? v : "(none)");
	}
	r = compare(c, v ? v : "", where);
	if (r == 0 && nvidia && flavor) {
		const char *got = !lic ? "(no license)" :
				  !strcmp(lic, "Dual MIT/GPL") ? "open" :
				  !strcmp(lic, "NVIDIA") ? "proprietary" : lic;
		if (strcmp(got, flavor))
			r = ingot_fail(c->e, -EINVAL, "tuple.driver.flavor: recipe declares %s, artifact '%s' carries %s modules (/%s: license=%s)",
				       flavor, c->a->name, got, te->path, lic ? lic : "");
	}
	/* The in-tree amdgpu loads the distribution's firmware (Debian:
	 * firmware-amd-graphics); AMD's packaged amdgpu (version=) brings its
	 * own under /lib/firmware/updates/, not checked here yet. */
	if (r == 0 && in_tree) {
		snprintf(where, sizeof(where), "/%s", te->path);
		r = check_amd_firmware(c, &mi, where);
	}
	modinfo_free(&mi);
	return r;
}

static int check_library(struct check *c, const struct tree_entry *te, const char *stem,
			 const char *banner)
{
	const char *b = base_name(te->path);
	size_t sl = strlen(stem);
	char where[512], found[96];
	int r;

	/* libnccl.so.2.27.7: the full version is in the file name */
	if (!strncmp(b, stem, sl) && version_components(b + sl) >= 3 && version_valid(b + sl) &&
	    strcmp(c->comp, "rccl")) {
		snprintf(where, sizeof(where), "/%s", te->path);
		if ((r = compare(c, b + sl, where)) < 0)
			return r;
	}
	if (banner) {
		_cleanup_free_ char *p = NULL;
		if ((r = blob_path(c, te, &p)) < 0)
			return r;
		r = scan_string(p, banner, found, sizeof(found));
		if (r < 0)
			return ingot_fail(c->e, r, "tuple.%s: artifact '%s': cannot read /%s: %s", c->comp,
					  c->a->name, te->path, strerror(-r));
		if (r > 0) {
			const char *plus = c->built_tag ? strstr(found, c->built_tag) : NULL;
			snprintf(where, sizeof(where), "/%s: \"%s%s\"", te->path, banner, found);
			if ((r = compare(c, found, where)) < 0)
				return r;
			/* "2.27.7+cuda13.0", "2.13.4+hip5.7": the CUDA or HIP release
			 * this NCCL or RCCL was built for */
			if (c->built_for && plus) {
				const char *bv = plus + strlen(c->built_tag);
				char up[64];
				if (!version_upstream(bv, up, sizeof(up)) ||
				    !version_prefix_match(c->built_for, up))
					return ingot_fail(c->e, -EINVAL, "tuple.%s.%s: recipe declares %s, artifact '%s' is built for %s %s (%s)",
							  c->comp, c->built_tag + 1,
							  c->built_for, c->a->name, c->built_label, bv, where);
			}
		}
	}
	return 0;
}

/* The gfx targets a HIP library has code objects for: the ids of its
 * clang offload bundles ("hipv4-amdgcn-amd-amdhsa--gfx942", feature
 * suffixes such as ":xnack-" dropped), streamed (librccl is ~300 MB).
 * Compressed bundles hide their ids: none found is no evidence. */
#define BUNDLE_ID "hipv4-amdgcn-amd-amdhsa--"
#define BUNDLE_TAIL 64
#define MAX_TARGETS 64

struct targets {
	char v[MAX_TARGETS][16];
	size_t n;
};

static bool targets_has(const struct targets *ts, const char *gfx)
{
	for (size_t i = 0; i < ts->n; i++)
		if (!strcmp(ts->v[i], gfx))
			return true;
	return false;
}

static int scan_targets(const char *path, struct targets *ts)
{
	_cleanup_close_ int fd = open_regular(path, 0, NULL, NULL);
	size_t have = 0, idl = strlen(BUNDLE_ID);
	char buf[65536 + BUNDLE_TAIL];

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		const char *s = buf, *hit;
		size_t end;
		if (n < 0)
			return -errno;
		have += (size_t)n;
		/* an id starting in the last BUNDLE_TAIL bytes waits for the next read */
		end = n == 0 ? have : have > BUNDLE_TAIL ? have - BUNDLE_TAIL : 0;
		while ((hit = memmem(s, have - (size_t)(s - buf), BUNDLE_ID, idl)) && hit < buf + end) {
			const char *g = hit + idl;
			size_t k = 0;
			while (g + k < buf + have && k < sizeof(ts->v[0]) - 1 &&
			       ((g[k] >= 'a' && g[k] <= 'z') || (g[k] >= '0' && g[k] <= '9')))
				k++;
			if (k > 3 && !strncmp(g, "gfx", 3) && ts->n < MAX_TARGETS) {
				memcpy(ts->v[ts->n], g, k);
				ts->v[ts->n][k] = '\0';
				if (!targets_has(ts, ts->v[ts->n]))
					ts->n++;
			}
			s = hit + idl;
		}
		if (n == 0)
			return 0;
		if (have > BUNDLE_TAIL) {
			memmove(buf, buf + have - BUNDLE_TAIL, BUNDLE_TAIL);
			have = BUNDLE_TAIL;
		}
	}
}

/* RCCL's code objects: rccl.targets must be exactly the gfx targets the
 * library carries, and must be declared when it carries any, so the
 * manifest says what the bits hold and the rules (rccl-code-for-gfx942
 * and its kin) judge them against the pool's GPUs, by name and source. */
static int check_rccl_targets(struct check *c, const struct tree_entry *te)
{
	_cleanup_free_ char *p = NULL;
	struct targets ts = { .n = 0 };
	char got[MAX_TARGETS * 17] = "";
	bool same;
	int r;

	if ((r = blob_path(c, te, &p)) < 0)
		return r;
	if ((r = scan_targets(p, &ts)) < 0)
		return ingot_fail(c->e, r, "tuple.rccl: artifact '%s': cannot read /%s: %s", c->a->name,
				  te->path, strerror(-r));
	for (size_t i = 0; i < ts.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? ", " : "", ts.v[i]);
	if (!ts.n) {
		if (c->targets)
			return ingot_fail(c->e, -EINVAL, "tuple.rccl.targets: artifact '%s' shows no offload bundle ids (" BUNDLE_ID "gfx...) in /%s: check not made",
					  c->a->name, te->path);
		return 0;
	}
	if (!c->targets)
		return ingot_fail(c->e, -EINVAL, "tuple.rccl.targets: not declared, artifact '%s' carries code objects for [%s] (/%s): declare them, the rules hold them against gpu.models",
				  c->a->name, got, te->path);
	same = c->targets->n_list == ts.n;
	for (size_t i = 0; same && i < c->targets->n_list; i++)
		same = targets_has(&ts, c->targets->list[i]);
	if (!same)
		return ingot_fail(c->e, -EINVAL, "tuple.rccl.targets: recipe declares other targets than artifact '%s' carries (/%s has: %s)",
				  c->a->name, te->path, got);
	return 0;
}

/* The packages whose dpkg Version is a component's: their libraries'
 * file names carry only an ABI version (libhsa-runtime64.so.1.13.0,
 * librocm_smi64.so.1.0).  Not HIP's: its package says the ROCm release
 * (5.7.1), its library HIP's own version (5.7.31921), which hip.version is. */
static const char *const *dpkg_packages(const char *comp)
{
	static const char *const hsa[] = { "libhsa-runtime64-1", NULL };
	static const char *const smi[] = { "librocm-smi64-1", NULL };
	return !strcmp(comp, "hsa-runtime") ? hsa : !strcmp(comp, "smi-lib") ? smi : NULL;
}

static int check_dpkg(struct check *c, const struct tree_entry *te, const char *const *pkgs)
{
	_cleanup_free_ char *p = NULL, *buf = NULL;
	struct dpkg_db db = { 0 };
	char where[512];
	size_t len;
	int r;

	if ((r = blob_path(c, te, &p)) < 0)
		return r;
	if ((r = read_file(p, 64u << 20, &buf, &len, c->e)) < 0 ||
	    (r = dpkg_status_parse(buf, len, te->path, &db, c->e)) < 0)
		return ingot_prefix(c->e, "tuple.%s: artifact '%s'", c->comp, c->a->name);
	for (size_t i = 0; r == 0 && i < db.n; i++)
		for (size_t k = 0; r == 0 && pkgs[k]; k++)
			if (!strcmp(db.v[i].name, pkgs[k])) {
				snprintf(where, sizeof(where), "/%s: %s %s", te->path, pkgs[k], db.v[i].version);
				r = compare(c, db.v[i].version, where);
			}
	dpkg_db_free(&db);
	return r;
}

static int check_text_file(struct check *c, const struct tree_entry *te, bool json)
{
	_cleanup_free_ char *p = NULL, *buf = NULL;
	char where[512];
	size_t len;
	int r;

	if ((r = blob_path(c, te, &p)) < 0)
		return r;
	if ((r = read_file(p, VERSION_JSON_MAX, &buf, &len, c->e)) < 0)
		return ingot_prefix(c->e, "tuple.%s: artifact '%s': /%s", c->comp, c->a->name, te->path);
	if (json) {
		_cleanup_json_ json_t *j = NULL;
		json_t *cu;
		const char *v;
		if (json_read_buf(te->path, buf, len, &j, c->e) < 0)
			return ingot_prefix(c->e, "tuple.cuda: artifact '%s'", c->a->name);
		cu = json_object_get(j, "cuda");
		v = json_string_value(json_object_get(cu, "version"));
		snprintf(where, sizeof(where), "/%s: cuda.version=%s", te->path, v ? v : "(none)");
		return compare(c, v ? v : "", where);
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	snprintf(where, sizeof(where), "/%s: %s", te->path, buf);
	return compare(c, buf, where);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int check_tree(struct check *c, const struct tuple *tu, const struct tree *t)
{
	const struct tuple_value *fl = tuple_get(tu, tuple_fields[TF_DRIVER_FLAVOR].path);
	const struct tuple_value *vendor = tuple_get(tu, tuple_fields[TF_VENDOR].path);
	const struct tuple_value *prefix = tuple_get(tu, tuple_fields[TF_ROCM_PREFIX].path);
	bool nvidia = vendor && !strcmp(vendor->str, "nvidia");
	bool rocm_under_prefix = false, rocm_seen = false;
	int r = 0;

	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct tree_entry *te = &t->v[i];
		const char *b = base_name(te->path);

		if (te->type != TREE_FILE || !te->origin || strcmp(te->origin, c->a->name))
			continue;
		if (!strcmp(c->comp, "driver")) {
			const char *mod = nvidia ? "nvidia.ko" : "amdgpu.ko";
			size_t ml = strlen(mod);
			if (!strncmp(b, mod, ml) && (!b[ml] || !strcmp(b + ml, ".xz") ||
						    !strcmp(b + ml, ".zst") || !strcmp(b + ml, ".gz")))
				r = check_module(c, te, fl ? fl->str : NULL, nvidia);
		} else if (!strcmp(c->comp, "nccl") && !strncmp(b, "libnccl.so.", 11)) {
			r = check_library(c, te, "libnccl.so.", "NCCL version ");
		} else if (!strcmp(c->comp, "rccl") && !strncmp(b, "librccl.so.", 11)) {
			r = check_library(c, te, "librccl.so.", "RCCL version ");
			if (r == 0)
				r = check_rccl_targets(c, te);
		} else if (!strcmp(c->comp, "hip") && !strncmp(b, "libamdhip64.so.", 15)) {
			r = check_library(c, te, "libamdhip64.so.", NULL);
		} else if (!strcmp(te->path, "var/lib/dpkg/status") && dpkg_packages(c->comp)) {
			r = check_dpkg(c, te, dpkg_packages(c->comp));
		} else if (!strcmp(c->comp, "cudnn") && !strncmp(b, "libcudnn.so.", 12)) {
			r = check_library(c, te, "libcudnn.so.", NULL);
		} else if (!strcmp(c->comp, "cuda") && !strcmp(b, "version.json") &&
			   strstr(te->path, "cuda")) {
			r = check_text_file(c, te, true);
		} else if (!strcmp(c->comp, "cuda") && !strncmp(b, "libcudart.so.", 13)) {
			r = check_cudart(c, te);
		} else if (!strcmp(c->comp, "rocm") && ends_with(te->path, ".info/version")) {
			rocm_seen = true;
			if (prefix) {
				_cleanup_free_ char *want =
					xasprintf("%s/.info/version", prefix->str + (prefix->str[0] == '/'));
				if (strcmp(te->path, want))
					continue;
				rocm_under_prefix = true;
			}
			r = check_text_file(c, te, false);
		}
	}
	if (r == 0 && prefix && rocm_seen && !rocm_under_prefix)
		r = ingot_fail(c->e, -EINVAL, "tuple.rocm.prefix: recipe declares %s, artifact '%s' has no %s/.info/version",
			       prefix->str, c->a->name, prefix->str);
	return r;
}

int tuple_check_artifacts(const struct recipe *r, const struct tree *t, const struct store *s,
			  const struct unpack_stats *stats, ingot_error *e)
{
	const struct tuple *tu = r->tuple;

	for (size_t i = 0; i < tuple_size(tu); i++) {
		const struct tuple_value *v = tuple_at(tu, i);
		const struct tuple_value *ver;
		char comp[64], vp[80];
		size_t len = strlen(v->path), ai = 0;
		struct check c = { .r = r, .s = s, .e = e };
		int k;

		if (len < 9 || strcmp(v->path + len - 9, ".artifact") || len - 9 >= sizeof(comp))
			continue;
		snprintf(comp, sizeof(comp), "%.*s", (int)(len - 9), v->path);
		c.comp = comp;
		for (size_t j = 0; j < r->n_artifacts; j++)
			if (!strcmp(r->artifacts[j].name, v->str)) {
				c.a = &r->artifacts[j];
				ai = j;
			}
		if (!c.a)
			return ingot_fail(e, -EINVAL, "%s:%zu:%zu: tuple.%s: recipe has no artifact '%s'",
					  tuple_file(tu), v->line, v->column, v->path, v->str);
		snprintf(vp, sizeof(vp), "%s.version", comp);
		ver = tuple_get(tu, vp);
		if (!ver)
			return ingot_fail(e, -EINVAL, "%s:%zu:%zu: tuple.%s: names artifact '%s' but %s.version is not declared",
					  tuple_file(tu), v->line, v->column, v->path, v->str, comp);
		c.want = ver->str;
		c.t = t;
		c.models = tuple_get(tu, tuple_fields[TF_GPU_MODELS].path);
		if (!strcmp(comp, "nccl")) {
			c.built_tag = "+cuda";
			c.built_label = "CUDA";
			if (tuple_get(tu, "nccl.cuda"))
				c.built_for = tuple_get(tu, "nccl.cuda")->str;
		} else if (!strcmp(comp, "rccl")) {
			c.built_tag = "+hip";
			c.built_label = "HIP";
			if (tuple_get(tu, "rccl.hip"))
				c.built_for = tuple_get(tu, "rccl.hip")->str;
			c.targets = tuple_get(tu, "rccl.targets");
		}
		if (c.a->kind == ART_DEB) {
			const char *dv = stats ? stats[ai].deb_version : "";
			char where[192];
			/* fail closed: a .deb not unpacked is a check not made */
			if (!*dv)
				return ingot_fail(e, -ENOENT, "tuple.%s: artifact '%s': control Version not known (not unpacked): check not made",
						  v->path, c.a->name);
			snprintf(where, sizeof(where), "control Version: %s", dv);
			if ((k = compare(&c, dv, where)) < 0)
				return k;
		}
		if ((k = check_tree(&c, tu, t)) < 0)
			return k;
		if (!c.evidence)
			return ingot_fail(e, -EINVAL, "tuple.%s.version: artifact '%s' carries no evidence of %s %s (see docs/tuple.md, \"Artifact checks\"); drop artifact: or fix the artifact",
					  comp, c.a->name, comp, c.want);
	}
	return 0;
}
