/* tuple_check_artifacts: the bits must carry the versions the tuple
 * declares.  For every tuple component that names its artifact, the
 * evidence is read from the artifact itself and from the files it put in
 * the staging tree (by their store blobs):
 *   - a .deb artifact: control Version (upstream part), as the unpacker
 *     read it (struct unpack_stats);
 *   - driver: nvidia.ko / amdgpu.ko .modinfo version= and, for NVIDIA,
 *     license= (Dual MIT/GPL = open modules, NVIDIA = proprietary);
 *   - nccl / rccl: libnccl.so.X.Y.Z file name and the embedded
 *     "NCCL version X.Y.Z[+cudaA.B]" / "RCCL version X.Y.Z" string (and
 *     A.B against nccl.cuda when declared);
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
#include "lib/modinfo.h"
#include "lib/version.h"
#include "recipes/tuple.h"
#include "recipes/tuple-fields.h"

#define VERSION_JSON_MAX (1u << 20)

struct check {
	const struct recipe *r;
	const struct artifact *a;
	const struct store *s;
	const char *comp;       /* "nccl" */
	const char *want;       /* declared version */
	const char *built_for;  /* nccl.cuda, when declared */
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

static int check_module(struct check *c, const struct tree_entry *te, const char *flavor,
			bool nvidia)
{
	_cleanup_free_ char *p = NULL;
	struct modinfo mi;
	const char *v, *lic;
	char where[512];
	int r;

	if ((r = blob_path(c, te, &p)) < 0)
		return r;
	if ((r = modinfo_load(p, &mi, c->e)) < 0)
		return ingot_prefix(c->e, "tuple.driver: artifact '%s': /%s", c->a->name, te->path);
	v = modinfo_get(&mi, "version");
	lic = modinfo_get(&mi, "license");
	snprintf(where, sizeof(where), "/%s: version=%s", te->path, v ? v : "(none)");
	r = compare(c, v ? v : "", where);
	if (r == 0 && nvidia && flavor) {
		const char *got = !lic ? "(no license)" :
				  !strcmp(lic, "Dual MIT/GPL") ? "open" :
				  !strcmp(lic, "NVIDIA") ? "proprietary" : lic;
		if (strcmp(got, flavor))
			r = ingot_fail(c->e, -EINVAL, "tuple.driver.flavor: recipe declares %s, artifact '%s' carries %s modules (/%s: license=%s)",
				       flavor, c->a->name, got, te->path, lic ? lic : "");
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
			const char *plus = strstr(found, "+cuda");
			snprintf(where, sizeof(where), "/%s: \"%s%s\"", te->path, banner, found);
			if ((r = compare(c, found, where)) < 0)
				return r;
			/* "2.27.7+cuda13.0": the CUDA release this NCCL was built for */
			if (c->built_for && plus) {
				char up[64];
				if (!version_upstream(plus + 5, up, sizeof(up)) ||
				    !version_prefix_match(c->built_for, up))
					return ingot_fail(c->e, -EINVAL, "tuple.%s.cuda: recipe declares %s, artifact '%s' is built for CUDA %s (%s)",
							  c->comp, c->built_for, c->a->name, plus + 5, where);
			}
		}
	}
	return 0;
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
				_cleanup_free_ char *want = NULL;
				if (asprintf(&want, "%s/.info/version", prefix->str + (prefix->str[0] == '/')) < 0)
					return ingot_fail(c->e, -ENOMEM, "out of memory");
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
		if (!strcmp(comp, "nccl") && tuple_get(tu, "nccl.cuda"))
			c.built_for = tuple_get(tu, "nccl.cuda")->str;
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
