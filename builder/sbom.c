#include "builder/sbom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>

#include "builder/dep5.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/meta.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "recipes/tuple.h"

/* Names go in "name" members; SPDX ids ([A-Za-z0-9.-]+) are positional
 * so any artifact or file name is safe. */
#define IMAGE_ID "SPDXRef-Image"
#define SHA1_LEN 20
#define COPYRIGHT_MAX (1u << 20)

/* What the first pass learns, so the packages (which sort before
 * nothing they depend on) can carry verification codes and licenses:
 * each regular file's SHA-1 and owner (0: the image, k + 1: artifact k),
 * in tree order. */
struct sbom_files {
	uint8_t (*sha1)[SHA1_LEN];
	size_t *owner;
	size_t n;
};

static void sbom_files_free(struct sbom_files *f)
{
	free(f->sha1);
	free(f->owner);
}

static json_t *checksum(const char *alg, const uint8_t *d, size_t len)
{
	char hex[2 * SHA256_LEN + 1];
	hex_encode(d, len, hex);
	return json_pack("{s:s,s:s}", "algorithm", alg, "checksumValue", hex);
}

static json_t *relationship(const char *a, const char *type, const char *b)
{
	return json_pack("{s:s,s:s,s:s}", "spdxElementId", a, "relationshipType", type,
			 "relatedSpdxElement", b);
}

static size_t owner_of(const struct recipe *r, const struct tree_entry *te)
{
	for (size_t k = 0; te->origin && k < r->n_artifacts; k++)
		if (!strcmp(te->origin, r->artifacts[k].name))
			return k + 1;
	return 0;
}

static void owner_id(size_t owner, char id[48])
{
	if (owner)
		snprintf(id, 48, "SPDXRef-Package-%zu", owner);
	else
		snprintf(id, 48, "%s", IMAGE_ID);
}

/* A file's bytes from the store, through md (SHA-1) or into sb (the
 * copyright text).  They are checked against their sha256: the image
 * writer may have taken the file from the file cache without reading
 * the store's copy. */
static int read_content(const struct store *s, const struct tree_entry *te, EVP_MD_CTX *md,
			struct strbuf *sb, ingot_error *e)
{
	struct store_content c;
	char buf[64 << 10];
	uint8_t got[32];
	uint64_t total = 0;
	ssize_t n;
	EVP_MD_CTX *md256 = sha256_begin();
	int r = md256 ? store_content_open(s, &te->loc, te->sha256, te->size, &c, e)
		      : ingot_fail(e, -ENOMEM, "SBOM: out of memory");

	if (r < 0) {
		if (md256)
			sha256_end(md256, got);
		return r;
	}
	while ((n = store_content_read(&c, buf, sizeof(buf))) > 0) {
		total += (uint64_t)n;
		if (EVP_DigestUpdate(md256, buf, (size_t)n) != 1 || (md && EVP_DigestUpdate(md, buf, (size_t)n) != 1))
			n = -ENOMEM;
		else if (sb)
			strbuf_add(sb, buf, (size_t)n);
		if (n < 0)
			break;
	}
	sha256_end(md256, got);
	if (n < 0)
		r = ingot_fail(e, (int)n, "SBOM: %s: reading %s failed", te->path, c.path);
	else if (total != te->size || memcmp(got, te->sha256, 32))
		r = ingot_fail(e, -EBADMSG, "SBOM: %s: %s: expected %llu bytes with the sha256 of the tree, got %llu bytes or other bytes",
			       te->path, c.path, (unsigned long long)te->size, (unsigned long long)total);
	store_content_close(&c);
	return r;
}

/* SPDX 2.3 requires a SHA1 per file: a content label for tools that
 * match on it, never a trust decision (the sha256 beside it is what the
 * manifest and its signature vouch for). */
static int file_sha1(const struct store *s, const struct tree_entry *te, uint8_t out[SHA1_LEN], ingot_error *e)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned len = 0;
	int r;

	if (!md || EVP_DigestInit_ex(md, EVP_sha1(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	}
	r = read_content(s, te, md, NULL, e);
	if (r >= 0 && EVP_DigestFinal_ex(md, out, &len) != 1)
		r = ingot_fail(e, -ENOMEM, "SBOM: SHA-1 failed");
	EVP_MD_CTX_free(md);
	return r;
}

static int scan_files(const struct recipe *r, const struct tree *t, const struct store *s,
		      const uint8_t (*sha1)[20], struct sbom_files *f, ingot_error *e)
{
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < t->n; i++)
		n += t->v[i].type == TREE_FILE;
	f->sha1 = calloc(n ? n : 1, sizeof(*f->sha1));
	f->owner = calloc(n ? n : 1, sizeof(*f->owner));
	if (!f->sha1 || !f->owner)
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].type != TREE_FILE)
			continue;
		if (sha1)
			memcpy(f->sha1[f->n], sha1[i], SHA1_LEN);
		else if ((rc = file_sha1(s, &t->v[i], f->sha1[f->n], e)) < 0)
			return rc;
		f->owner[f->n++] = owner_of(r, &t->v[i]);
	}
	return 0;
}

static int cmp_sha1(const void *a, const void *b)
{
	return memcmp(a, b, SHA1_LEN);
}

/* SPDX's package verification code: SHA-1 over the sorted lower-case
 * hex SHA-1s of the package's files (sorting the bytes sorts the hex).
 * The image's is over every file in it.  0 files: returns 0. */
static int verification_code(const struct sbom_files *f, size_t owner, char hex[2 * SHA1_LEN + 1], ingot_error *e)
{
	_cleanup_free_ uint8_t (*v)[SHA1_LEN] = malloc((f->n ? f->n : 1) * SHA1_LEN);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint8_t code[SHA1_LEN];
	char one[2 * SHA1_LEN + 1];
	size_t n = 0;

	if (!v)
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	for (size_t i = 0; i < f->n; i++)
		if (!owner || f->owner[i] == owner)
			memcpy(v[n++], f->sha1[i], SHA1_LEN);
	if (!n)
		return 0;
	qsort(v, n, SHA1_LEN, cmp_sha1);
	strbuf_init(&sb, n * 2 * SHA1_LEN + 1);
	for (size_t i = 0; i < n; i++) {
		hex_encode(v[i], SHA1_LEN, one);
		strbuf_add(&sb, one, 2 * SHA1_LEN);
	}
	if (!EVP_Digest(sb.buf, sb.len, code, NULL, EVP_sha1(), NULL))
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	hex_encode(code, SHA1_LEN, hex);
	return 1;
}

/* The tuple component whose COMPONENT.artifact names artifact a
 * ("driver", "cuda", ...) into comp; false when none does. */
static bool artifact_component(const struct recipe *r, const struct artifact *a, char comp[64])
{
	for (size_t k = 0; k < tuple_size(r->tuple); k++) {
		const struct tuple_value *v = tuple_at(r->tuple, k);
		size_t len = strlen(v->path);

		if (len < 9 || len - 9 >= 64 || strcmp(v->path + len - 9, ".artifact") || !v->str ||
		    strcmp(v->str, a->name))
			continue;
		snprintf(comp, 64, "%.*s", (int)(len - 9), v->path);
		return true;
	}
	return false;
}

/* The version an artifact carries: a .deb's control Version, else the
 * tuple component that names it (COMPONENT.artifact -> COMPONENT.version). */
static const char *artifact_version(const struct recipe *r, size_t i, const struct unpack_stats *stats)
{
	char comp[64], path[96];
	const struct tuple_value *ver;

	if (stats && stats[i].deb_version[0])
		return stats[i].deb_version;
	if (!artifact_component(r, &r->artifacts[i], comp))
		return NULL;
	snprintf(path, sizeof(path), "%s.version", comp);
	return (ver = tuple_get(r->tuple, path)) && ver->str ? ver->str : NULL;
}

/* purl's canonical percent-encoding (purl-spec "Character encoding"):
 * every octet but the alphanumerics, ".-_~" and ':' (never encoded, an
 * epoch's included), so "1:2.0+dfsg-1" is 1:2.0%2Bdfsg-1, as other tools
 * write it. */
static void purl_add(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr(".-_~:", *s))
			strbuf_addch(sb, *s);
		else
			strbuf_addf(sb, "%%%02X", (unsigned char)*s);
	}
}

/* The vendor a .deb's Maintainer address belongs to, by its domain (or
 * a subdomain): a distribution's or vendor's own domain says whose
 * archive the package is from; any other address (a person's) says
 * nothing. */
static const char *maintainer_vendor(const char *maintainer)
{
	static const char *const domains[][2] = {
		{ "debian.org", "debian" },
		{ "ubuntu.com", "ubuntu" },
		{ "nvidia.com", "nvidia" },
		{ "amd.com", "amd" },
	};
	const char *at = strrchr(maintainer, '@'), *gt = at ? strchr(at, '>') : NULL;
	size_t n;

	if (!at || !gt)
		return NULL;
	n = (size_t)(gt - at - 1);
	for (size_t i = 0; i < ARRAY_SIZE(domains); i++) {
		size_t dl = strlen(domains[i][0]);
		if (n >= dl && !strncasecmp(gt - dl, domains[i][0], dl) && (n == dl || gt[-(ptrdiff_t)dl - 1] == '.'))
			return domains[i][1];
	}
	return NULL;
}

/* A purl namespace: lower-case [a-z0-9.-] (purl's deb vendor). */
static bool namespace_ok(const char *ns)
{
	return ns && *ns && strspn(ns, "abcdefghijklmnopqrstuvwxyz0123456789.-") == strlen(ns);
}

/* Whose .deb this is, for its purl's namespace (purl: the distribution
 * or vendor): the Maintainer's domain when it is a known vendor's, else
 * the recipe's tuple vendor when a tuple component names the artifact
 * (COMPONENT.artifact: the recipe says it is that vendor's).  NULL when
 * neither says: the deb type requires a namespace, and "debian" for
 * another vendor's package would be wrong, so such a .deb has no purl. */
static const char *deb_namespace(const struct recipe *r, const struct artifact *a, const struct unpack_stats *st,
				 const char *vendor)
{
	const char *m = maintainer_vendor(st->deb_maintainer);
	char comp[64];

	if (m)
		return m;
	return artifact_component(r, a, comp) && namespace_ok(vendor) ? vendor : NULL;
}

static json_t *external_ref(const char *category, const char *type, const char *locator)
{
	return json_pack("{s:s,s:s,s:s}", "referenceCategory", category, "referenceType", type,
			 "referenceLocator", locator);
}

/* CPE products in NVD's dictionary for the tuple's NVIDIA components:
 * only these, a guessed CPE would match nothing or the wrong thing. */
static const char *nvd_product(const char *vendor, const char *comp)
{
	static const char *const map[][2] = {
		{ "driver", "gpu_display_driver" },
		{ "cuda", "cuda_toolkit" },
		{ "container-toolkit", "container_toolkit" },
	};
	if (!vendor || strcmp(vendor, "nvidia"))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(map[i][0], comp))
			return map[i][1];
	return NULL;
}

/* externalRefs: the purl (a .deb's from its control file, as Debian
 * tooling names it, under deb_namespace's vendor; a tuple component's as
 * pkg:generic/VENDOR/NAME) and a cpe23Type where NVD has a product for
 * it.  NULL: nothing to refer to. */
static json_t *external_refs(const struct recipe *r, size_t i, const struct unpack_stats *st, const char *ver)
{
	const struct artifact *a = &r->artifacts[i];
	const struct tuple_value *vend = tuple_get(r->tuple, "vendor"), *tv;
	const char *vendor = vend ? vend->str : NULL, *product, *ns;
	_cleanup_strbuf_ struct strbuf purl = STRBUF_INIT, cpe = STRBUF_INIT;
	char comp[64], path[96];
	json_t *refs;

	if (!ver)
		return NULL;
	if (st && st->deb_package[0]) {
		if (!(ns = deb_namespace(r, a, st, vendor)))
			return NULL;
		strbuf_addf(&purl, "pkg:deb/%s/", ns);
		purl_add(&purl, st->deb_package);
		strbuf_addch(&purl, '@');
		purl_add(&purl, ver);
		if (st->deb_arch[0]) {
			strbuf_addstr(&purl, "?arch=");
			purl_add(&purl, st->deb_arch);
		}
	} else if (a->kind != ART_DEB && artifact_component(r, a, comp)) {
		strbuf_addstr(&purl, "pkg:generic/");
		if (vendor) {
			purl_add(&purl, vendor);
			strbuf_addch(&purl, '/');
		}
		purl_add(&purl, a->name);
		strbuf_addch(&purl, '@');
		purl_add(&purl, ver);
	} else {
		return NULL;
	}
	refs = json_pack("[o]", external_ref("PACKAGE-MANAGER", "purl", purl.buf));
	/* NVD's versions are upstream ones: the tuple's, not a Debian revision */
	if (refs && artifact_component(r, a, comp) && (product = nvd_product(vendor, comp)) &&
	    snprintf(path, sizeof(path), "%s.version", comp) > 0 && (tv = tuple_get(r->tuple, path)) && tv->str &&
	    strspn(tv->str, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_") == strlen(tv->str)) {
		strbuf_addf(&cpe, "cpe:2.3:a:%s:%s:%s:*:*:*:*:*:*:*", vendor, product, tv->str);
		json_array_append_new(refs, external_ref("SECURITY", "cpe23Type", cpe.buf));
	}
	return refs;
}

/* "Name <email>" (Debian's Maintainer) as SPDX's "Organization: Name
 * (email)": who supplied the package; a team or a person, SPDX wants one
 * of the two words and Debian does not say which. */
static json_t *supplier(const struct unpack_stats *st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *m = st ? st->deb_maintainer : "", *lt = strchr(m, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	size_t n;

	if (!*m || strpbrk(m, "()"))
		return json_string("NOASSERTION");
	n = lt ? (size_t)(lt - m) : strlen(m);
	while (n && m[n - 1] == ' ')
		n--;
	if (!n)
		return json_string("NOASSERTION");
	strbuf_addstr(&sb, "Organization: ");
	strbuf_add(&sb, m, n);
	if (lt && gt && gt > lt + 1)
		strbuf_addf(&sb, " (%.*s)", (int)(gt - lt - 1), lt + 1);
	return json_string(sb.buf);
}

void sbom_note_copyright(struct tree *listing, struct unpack_stats *st)
{
	char want[sizeof(st->deb_package) + 32];
	const struct tree_entry *te;

	st->deb_copyright = false;
	if (!st->deb_package[0])
		return;
	snprintf(want, sizeof(want), "usr/share/doc/%s/copyright", st->deb_package);
	if (!(te = tree_find(listing, want)) || te->type != TREE_FILE || te->size > COPYRIGHT_MAX)
		return;
	st->deb_copyright = true;
	st->deb_copyright_size = te->size;
	memcpy(st->deb_copyright_sha256, te->sha256, 32);
	st->deb_copyright_loc = te->loc;
}

/* The licenses without an SPDX identifier, each declared once in the
 * document (hasExtractedLicensingInfos), in the order first met. */
static int declare_refs(json_t *lics, const struct dep5_license *l, ingot_error *e)
{
	for (size_t i = 0; i < l->n_refs; i++) {
		bool seen = false;
		size_t k;
		json_t *v;

		json_array_foreach(lics, k, v)
			seen = seen || !strcmp(json_string_value(json_object_get(v, "licenseId")), l->refs[i].id);
		if (!seen && json_array_append_new(lics, json_pack("{s:s,s:s,s:s}", "licenseId", l->refs[i].id,
								    "name", l->refs[i].name, "extractedText",
								    l->refs[i].text)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	}
	return 0;
}

/* A .deb's licenseDeclared: its usr/share/doc/PACKAGE/copyright from the
 * data archive (sbom_note_copyright) when that is a DEP-5 file, else
 * NOASSERTION. */
static int deb_license(const struct unpack_stats *st, const struct store *s, json_t *lics,
		       char out[DEP5_LICENSE_MAX], ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	_cleanup_free_ char *path = NULL;
	struct dep5_license l;
	struct tree_entry te;
	int rc;

	snprintf(out, DEP5_LICENSE_MAX, "NOASSERTION");
	if (!st || !st->deb_copyright)
		return 0;
	path = xasprintf("usr/share/doc/%s/copyright", st->deb_package);
	te = (struct tree_entry){ .path = path, .type = TREE_FILE, .size = st->deb_copyright_size,
				  .loc = st->deb_copyright_loc };
	memcpy(te.sha256, st->deb_copyright_sha256, 32);
	if ((rc = read_content(s, &te, NULL, &text, e)) < 0)
		return rc;
	dep5_license(text.buf, text.len, &l);
	rc = declare_refs(lics, &l, e);
	snprintf(out, DEP5_LICENSE_MAX, "%s", l.expr);
	dep5_license_free(&l);
	return rc;
}

/* The URL the recipe gives, else NOASSERTION: a local path (even as
 * file://) says nothing to whoever reads the SBOM elsewhere. */
static const char *download_location(const struct artifact *a)
{
	const char *colon = strstr(a->source, "://");
	return colon && colon > a->source && strncmp(a->source, "file://", 7) ? a->source : "NOASSERTION";
}

static const char *purpose(const struct artifact *a)
{
	if (a->kind == ART_DEB)
		return "INSTALL";
	if (a->kind == ART_FILE)
		return a->dest && (!strncmp(a->dest, "lib/firmware/", 13) || !strncmp(a->dest, "/lib/firmware/", 14)) ?
			       "FIRMWARE" : "FILE";
	return "ARCHIVE";
}

/* filesAnalyzed with its verification code when the package lists files,
 * else false (and no file is related to it). */
static int set_files_analyzed(json_t *p, const struct sbom_files *f, size_t owner, ingot_error *e)
{
	char code[2 * SHA1_LEN + 1];
	int has = verification_code(f, owner, code, e);

	if (has < 0)
		return has;
	if (json_object_set_new(p, "filesAnalyzed", json_boolean(has)) < 0 ||
	    (has && json_object_set_new(p, "packageVerificationCode",
					json_pack("{s:s}", "packageVerificationCodeValue", code)) < 0))
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	return 0;
}

static int add_packages(const struct recipe *r, const struct unpack_stats *stats, const struct store *s,
			const struct sbom_files *f, const uint8_t image_sha256[32], json_t *pkgs, json_t *rels,
			json_t *lics, ingot_error *e)
{
	json_t *img = json_pack("{s:s,s:s,s:s,s:s,s:[o],s:s,s:s,s:s,s:s,s:s}", "SPDXID", IMAGE_ID,
				"name", r->name, "versionInfo", r->version, "downloadLocation", "NOASSERTION",
				"checksums", checksum("SHA256", image_sha256, 32),
				"primaryPackagePurpose", "OPERATING_SYSTEM", "supplier", "NOASSERTION",
				"licenseConcluded", "NOASSERTION", "licenseDeclared", "NOASSERTION",
				"copyrightText", "NOASSERTION");
	int rc;

	if (!img || json_array_append_new(pkgs, img) < 0)
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	if ((rc = set_files_analyzed(img, f, 0, e)) < 0)
		return rc;
	for (size_t i = 0; i < r->n_artifacts; i++) {
		const struct artifact *a = &r->artifacts[i];
		const struct unpack_stats *st = stats ? &stats[i] : NULL;
		const char *ver = artifact_version(r, i, stats);
		char id[48], lic[DEP5_LICENSE_MAX];
		json_t *p, *refs;

		owner_id(i + 1, id);
		if ((rc = deb_license(st, s, lics, lic, e)) < 0)
			return rc;
		p = json_pack("{s:s,s:s,s:s,s:[o],s:s,s:o,s:s,s:s,s:s}", "SPDXID", id, "name", a->name,
			      "downloadLocation", download_location(a), "checksums", checksum("SHA256", a->sha256, 32),
			      "primaryPackagePurpose", purpose(a), "supplier", supplier(st),
			      "licenseConcluded", "NOASSERTION", "licenseDeclared", lic, "copyrightText", "NOASSERTION");
		if (!p || json_array_append_new(pkgs, p) < 0 ||
		    (ver && json_object_set_new(p, "versionInfo", json_string(ver)) < 0) ||
		    ((refs = external_refs(r, i, st, ver)) && json_object_set_new(p, "externalRefs", refs) < 0) ||
		    json_array_append_new(rels, relationship(IMAGE_ID, "CONTAINS", id)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
		if ((rc = set_files_analyzed(p, f, i + 1, e)) < 0)
			return rc;
	}
	return 0;
}

/* The regular files of t in order, each with its SPDX id and index in
 * the scan: what both generated arrays walk. */
struct sbom_walk {
	const struct tree *t;
	const struct sbom_files *f;
	size_t i, n;
};

static const struct tree_entry *walk_next(struct sbom_walk *w, char id[48], size_t *k)
{
	while (w->i < w->t->n && w->t->v[w->i].type != TREE_FILE)
		w->i++;
	if (w->i == w->t->n)
		return NULL;
	*k = w->n++;
	snprintf(id, 48, "SPDXRef-File-%zu", w->n);
	return &w->t->v[w->i++];
}

/* files[]: one per regular file, SHA1 and SHA256. */
static int files_next(void *ctx, json_t **el, ingot_error *e)
{
	struct sbom_walk *w = ctx;
	char id[48];
	size_t k;
	_cleanup_free_ char *name = NULL;
	const struct tree_entry *te = walk_next(w, id, &k);

	*el = NULL;
	if (!te)
		return 0;
	if (asprintf(&name, "./%s", te->path) < 0 ||
	    !(*el = json_pack("{s:s,s:s,s:[o,o]}", "SPDXID", id, "fileName", name, "checksums",
			      checksum("SHA1", w->f->sha1[k], SHA1_LEN), checksum("SHA256", te->sha256, 32))))
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	return 0;
}

/* relationships[]: the document's and packages' first (head), then one
 * CONTAINS per regular file, from the package that put it there (the
 * image for inline files). */
struct sbom_rels {
	json_t *head;
	size_t k;
	struct sbom_walk w;
};

static int rels_next(void *ctx, json_t **el, ingot_error *e)
{
	struct sbom_rels *rl = ctx;
	char id[48], owner[48];
	size_t k;

	*el = NULL;
	if (rl->k < json_array_size(rl->head)) {
		*el = json_incref(json_array_get(rl->head, rl->k++));
		return 0;
	}
	if (!walk_next(&rl->w, id, &k))
		return 0;
	owner_id(rl->w.f->owner[k], owner);
	*el = relationship(owner, "CONTAINS", id);
	return *el ? 0 : ingot_fail(e, -ENOMEM, "SBOM: out of memory");
}

int sbom_write(const struct recipe *r, const struct unpack_stats *stats, const struct tree *t,
	       const struct store *s, const uint8_t (*sha1)[20], const uint8_t image_sha256[32],
	       const struct json_out *out, ingot_error *e)
{
	char hex[SHA256_HEX_LEN + 1], created[32], ns[256];
	time_t when = (time_t)r->epoch;
	struct tm tm;
	json_t *pkgs = json_array();
	_cleanup_json_ json_t *doc = NULL, *rels = json_array(), *lics = json_array();
	struct sbom_files f = { 0 };
	struct sbom_walk files = { t, &f, 0, 0 };
	struct sbom_rels rl = { rels, 0, { t, &f, 0, 0 } };
	const struct json_splice sp[] = { { files_next, &files }, { rels_next, &rl } };
	int rc;

	hex_encode(image_sha256, 32, hex);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&when, &tm));
	/* unique per image, and the same for the same image: .invalid never resolves */
	snprintf(ns, sizeof(ns), "https://ingot.invalid/spdx/%s/%s/%s", r->name, r->version, hex);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:[s]},s:[s],s:o,s:o,s:o}",
			"spdxVersion", "SPDX-2.3", "dataLicense", "CC0-1.0", "SPDXID", "SPDXRef-DOCUMENT",
			"name", r->name, "documentNamespace", ns,
			"creationInfo", "created", created, "creators", "Tool: ingot-" INGOT_VERSION,
			"documentDescribes", IMAGE_ID, "packages", pkgs, "files", json_splice_mark(0),
			"relationships", json_splice_mark(1));
	if (!doc || !rels || !lics || json_array_append_new(rels, relationship("SPDXRef-DOCUMENT", "DESCRIBES", IMAGE_ID)))
		return ingot_fail(e, -ENOMEM, "%s: SBOM: out of memory", r->name);
	if ((rc = scan_files(r, t, s, sha1, &f, e)) < 0 ||
	    (rc = add_packages(r, stats, s, &f, image_sha256, pkgs, rels, lics, e)) < 0 ||
	    (json_array_size(lics) && json_object_set(doc, "hasExtractedLicensingInfos", lics) < 0 &&
	     (rc = ingot_fail(e, -ENOMEM, "%s: SBOM: out of memory", r->name)) < 0) ||
	    /* The bytes of json_canonical(the whole document). */
	    (rc = json_dump_spliced(doc, JSON_CANONICAL_FLAGS, sp, ARRAY_SIZE(sp), out, NULL, e)) < 0) {
		sbom_files_free(&f);
		return rc;
	}
	sbom_files_free(&f);
	return out->write(out->ctx, "\n", 1, e);
}
