#include "builder/sbom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>

#include "builder/bootdeb.h"
#include "builder/dep5.h"
#include "builder/dpkg-status.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/meta.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "recipes/boot.h"
#include "recipes/tuple.h"

/* Names go in "name" members; SPDX ids ([A-Za-z0-9.-]+) are positional
 * so any artifact or file name is safe. */
#define IMAGE_ID "SPDXRef-Image"
#define SHA1_LEN 20
#define COPYRIGHT_MAX (1u << 20)

/* What the first pass learns, so the packages (which sort before
 * nothing they depend on) can carry verification codes and licenses:
 * each regular file's SHA-1 and owner (0: the image, k + 1: artifact k,
 * n_artifacts + 1 + j: the image's dpkg package j), in tree order. */
struct sbom_files {
	uint8_t (*sha1)[SHA1_LEN];
	size_t *owner;
	size_t n;
	size_t n_artifacts;
};

static void sbom_files_free(struct sbom_files *f)
{
	free(f->sha1);
	free(f->owner);
}

/* The image's own package database (var/lib/dpkg/status), when it has
 * one: what dpkg installed is what a scanner must see, each package
 * under its own name rather than the archive artifact that carried it. */
struct sbom_dpkg {
	struct dpkg_db db;
	size_t holder;        /* owner of the status file: the artifact (k + 1) or the image (0) */
	char distro[64];      /* purl's distro qualifier, from os-release: "debian-13"; "" unknown */
	char os_id[32];       /* os-release ID: the namespace of packages no vendor's address claims */
};

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

static void owner_id(const struct sbom_files *f, size_t owner, char id[48])
{
	if (owner > f->n_artifacts)
		snprintf(id, 48, "SPDXRef-Dpkg-%zu", owner - f->n_artifacts);
	else if (owner)
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
	f->n_artifacts = r->n_artifacts;
	f->sha1 = xcalloc(n ? n : 1, sizeof(*f->sha1));
	f->owner = xcalloc(n ? n : 1, sizeof(*f->owner));
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
	_cleanup_free_ uint8_t (*v)[SHA1_LEN] = xmalloc((f->n ? f->n : 1) * SHA1_LEN);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint8_t code[SHA1_LEN];
	char one[2 * SHA1_LEN + 1];
	size_t n = 0;

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
 * recipe's version: for it, else the tuple component that names it
 * (COMPONENT.artifact -> COMPONENT.version). */
static const char *artifact_version(const struct recipe *r, size_t i, const struct unpack_stats *stats,
				    bool holds_dpkg)
{
	char comp[64], path[96];
	const struct tuple_value *ver;

	if (stats && stats[i].deb_version[0])
		return stats[i].deb_version;
	if (r->artifacts[i].version)
		return r->artifacts[i].version;
	/* an archive of a whole package database is no one component: the
	 * tuple's cuda.artifact naming it says CUDA is somewhere inside */
	if (holds_dpkg || !artifact_component(r, &r->artifacts[i], comp))
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

static json_t *purl_refs(const char *purl)
{
	return json_pack("[o]", external_ref("PACKAGE-MANAGER", "purl", purl));
}

/* A .deb's purl from its control labels, as Debian tooling names it:
 * pkg:deb/NS/PACKAGE@VERSION?arch=ARCH. */
static void deb_purl(struct strbuf *purl, const char *ns, const struct unpack_stats *st, const char *ver)
{
	strbuf_addf(purl, "pkg:deb/%s/", ns);
	purl_add(purl, st->deb_package);
	strbuf_addch(purl, '@');
	purl_add(purl, ver);
	if (st->deb_arch[0]) {
		strbuf_addstr(purl, "?arch=");
		purl_add(purl, st->deb_arch);
	}
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

/* externalRefs: the purl (the recipe's purl: when it states one; a .deb's
 * from its control file under deb_namespace's vendor; a tuple
 * component's as pkg:generic/VENDOR/NAME) and a cpe23Type where NVD has a
 * product for it.  NULL: nothing to refer to. */
static json_t *external_refs(const struct recipe *r, size_t i, const struct unpack_stats *st, const char *ver,
			     bool holds_dpkg)
{
	const struct artifact *a = &r->artifacts[i];
	const struct tuple_value *vend = tuple_get(r->tuple, "vendor"), *tv;
	const char *vendor = vend ? vend->str : NULL, *product, *ns;
	_cleanup_strbuf_ struct strbuf purl = STRBUF_INIT, cpe = STRBUF_INIT;
	char comp[64], path[96];
	json_t *refs;

	if (a->purl)
		strbuf_addstr(&purl, a->purl);
	else if (!ver || holds_dpkg)
		return NULL;
	else if (st && st->deb_package[0]) {
		if (!(ns = deb_namespace(r, a, st, vendor)))
			return NULL;
		deb_purl(&purl, ns, st, ver);
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
	refs = purl_refs(purl.buf);
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
static json_t *supplier(const char *m)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *lt = strchr(m, '<'), *gt = lt ? strchr(lt, '>') : NULL;
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

/* The license a copyright file te declares (DEP-5; NOASSERTION when it
 * is not one), its LicenseRefs declared in lics. */
static int copyright_license(const struct tree_entry *te, const struct store *s, json_t *lics,
			     char out[DEP5_LICENSE_MAX], ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct dep5_license l;
	int rc;

	if ((rc = read_content(s, te, NULL, &text, e)) < 0)
		return rc;
	dep5_license(text.buf, text.len, &l);
	rc = declare_refs(lics, &l, e);
	snprintf(out, DEP5_LICENSE_MAX, "%s", l.expr);
	dep5_license_free(&l);
	return rc;
}

/* A .deb's licenseDeclared: its usr/share/doc/PACKAGE/copyright from the
 * data archive (sbom_note_copyright) when that is a DEP-5 file, else
 * NOASSERTION. */
static int deb_license(const struct unpack_stats *st, const struct store *s, json_t *lics,
		       char out[DEP5_LICENSE_MAX], ingot_error *e)
{
	_cleanup_free_ char *path = NULL;
	struct tree_entry te;

	snprintf(out, DEP5_LICENSE_MAX, "NOASSERTION");
	if (!st || !st->deb_copyright)
		return 0;
	path = xasprintf("usr/share/doc/%s/copyright", st->deb_package);
	te = (struct tree_entry){ .path = path, .type = TREE_FILE, .size = st->deb_copyright_size,
				  .loc = st->deb_copyright_loc };
	memcpy(te.sha256, st->deb_copyright_sha256, 32);
	return copyright_license(&te, s, lics, out, e);
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

/* A regular file of the tree by path, or NULL. */
static const struct tree_entry *tree_file(const struct tree *t, const char *path)
{
	const struct tree_entry *te = tree_find((struct tree *)t, path);
	return te && te->type == TREE_FILE ? te : NULL;
}

/* A small text file of the image (os-release, a .list, a copyright
 * file), read from the store and checked; *found false when absent. */
static int read_tree_text(const struct tree *t, const struct store *s, const char *path, struct strbuf *sb,
			  bool *found, ingot_error *e)
{
	const struct tree_entry *te = tree_file(t, path);

	*found = te && te->size <= COPYRIGHT_MAX;
	return *found ? read_content(s, te, NULL, sb, e) : 0;
}

/* os-release's KEY value (quotes removed) into out; "" when absent. */
static void os_release_value(const char *text, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);

	out[0] = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");
		if (n > kl && !strncmp(l, key, kl) && l[kl] == '=') {
			const char *v = l + kl + 1;
			size_t vl = n - kl - 1;
			if (vl >= 2 && (*v == '"' || *v == '\'') && v[vl - 1] == *v)
				v++, vl -= 2;
			snprintf(out, size, "%.*s", (int)vl, v);
			return;
		}
	}
}

/* The image's dpkg database: its status file, the distribution from
 * os-release, and each package's files (var/lib/dpkg/info/NAME.list or
 * NAME:ARCH.list) moved from the archive artifact that carried them to
 * the package, when that artifact carried them.  No status file: no
 * database, d->db stays empty. */
static int load_dpkg(const struct tree *t, const struct store *s, struct sbom_files *f, struct sbom_dpkg *d,
		     ingot_error *e)
{
	static const char status_path[] = "var/lib/dpkg/status";
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	_cleanup_free_ size_t *file_of = NULL;
	const struct tree_entry *st = tree_file(t, status_path);
	char id[32], ver[32];
	bool found = false;
	size_t k = 0;
	int rc;

	if (!st)
		return 0;
	d->holder = 0;
	file_of = xcalloc(t->n ? t->n : 1, sizeof(*file_of));
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].type == TREE_FILE)
			file_of[i] = k++;
	d->holder = f->owner[file_of[st - t->v]];
	if ((rc = read_content(s, st, NULL, &text, e)) < 0 ||
	    (rc = dpkg_status_parse(text.buf, text.len, "image:/var/lib/dpkg/status", &d->db, e)) < 0)
		return rc;
	strbuf_reset(&text);
	if ((rc = read_tree_text(t, s, "usr/lib/os-release", &text, &found, e)) < 0 ||
	    (!found && (rc = read_tree_text(t, s, "etc/os-release", &text, &found, e)) < 0))
		return rc;
	if (found) {
		os_release_value(text.buf, "ID", id, sizeof(id));
		os_release_value(text.buf, "VERSION_ID", ver, sizeof(ver));
		if (namespace_ok(id))
			snprintf(d->os_id, sizeof(d->os_id), "%s", id);
		if (namespace_ok(id) && *ver)
			snprintf(d->distro, sizeof(d->distro), "%s-%s", id, ver);
	}
	for (size_t j = 0; j < d->db.n; j++) {
		const struct dpkg_pkg *p = &d->db.v[j];
		_cleanup_free_ char *l1 = xasprintf("var/lib/dpkg/info/%s.list", p->name);
		_cleanup_free_ char *l2 = xasprintf("var/lib/dpkg/info/%s:%s.list", p->name, p->arch);

		strbuf_reset(&text);
		if ((rc = read_tree_text(t, s, l1, &text, &found, e)) < 0 ||
		    (!found && (rc = read_tree_text(t, s, l2, &text, &found, e)) < 0))
			return rc;
		for (char *l = found ? text.buf : NULL, *nl; l && *l; l = nl ? nl + 1 : NULL) {
			const struct tree_entry *te;
			if ((nl = strchr(l, '\n')))
				*nl = 0;
			/* only files the same artifact put there: one a later
			 * artifact replaced is no longer dpkg's */
			if (*l == '/' && (te = tree_file(t, l + 1)) && f->owner[file_of[te - t->v]] == d->holder)
				f->owner[file_of[te - t->v]] = f->n_artifacts + 1 + j;
		}
	}
	return 0;
}

/* The doc directory's copyright of package name: usr/share/doc/NAME, or
 * the sibling it is a symlink to (Debian links a library's -dev docs to
 * its own).  NULL: none. */
static const struct tree_entry *dpkg_copyright(const struct tree *t, const char *name)
{
	_cleanup_free_ char *dir = xasprintf("usr/share/doc/%s", name);
	_cleanup_free_ char *path = xasprintf("%s/copyright", dir);
	const struct tree_entry *te = tree_file(t, path), *link;

	if (te || !(link = tree_find((struct tree *)t, dir)) || link->type != TREE_SYMLINK || strchr(link->target, '/'))
		return te && te->size <= COPYRIGHT_MAX ? te : NULL;
	free(path);
	path = xasprintf("usr/share/doc/%s/copyright", link->target);
	te = tree_file(t, path);
	return te && te->size <= COPYRIGHT_MAX ? te : NULL;
}

/* purl of a package of the image's database: pkg:deb/NS/NAME@VERSION
 * ?arch=ARCH&distro=ID-VERSION_ID (purl-spec's deb type, qualifiers in
 * order); NS the vendor the Maintainer's address names, else the
 * image's distribution.  NULL when neither says. */
static json_t *dpkg_refs(const struct sbom_dpkg *d, const struct dpkg_pkg *p)
{
	_cleanup_strbuf_ struct strbuf purl = STRBUF_INIT;
	const char *ns = maintainer_vendor(p->maintainer);

	if (!ns && !*(ns = d->os_id))
		return NULL;
	strbuf_addf(&purl, "pkg:deb/%s/", ns);
	purl_add(&purl, p->name);
	strbuf_addch(&purl, '@');
	purl_add(&purl, p->version);
	strbuf_addstr(&purl, "?arch=");
	purl_add(&purl, p->arch);
	if (*d->distro) {
		strbuf_addstr(&purl, "&distro=");
		purl_add(&purl, d->distro);
	}
	return json_pack("[o]", external_ref("PACKAGE-MANAGER", "purl", purl.buf));
}

/* One SPDX package per installed dpkg package, contained by the artifact
 * (or image) that carried the database. */
static int add_dpkg_packages(const struct sbom_dpkg *d, const struct tree *t, const struct store *s,
			     const struct sbom_files *f, json_t *pkgs, json_t *rels, json_t *lics, ingot_error *e)
{
	char holder[48];
	int rc;

	owner_id(f, d->holder, holder);
	for (size_t j = 0; j < d->db.n; j++) {
		const struct dpkg_pkg *p = &d->db.v[j];
		const struct tree_entry *cp = dpkg_copyright(t, p->name);
		_cleanup_free_ char *src = xasprintf("built from source package %s %s", p->source, p->source_version);
		char id[48], lic[DEP5_LICENSE_MAX] = "NOASSERTION";
		json_t *pk, *refs;

		owner_id(f, f->n_artifacts + 1 + j, id);
		if (cp && (rc = copyright_license(cp, s, lics, lic, e)) < 0)
			return rc;
		pk = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s}", "SPDXID", id, "name", p->name,
			       "versionInfo", p->version, "downloadLocation", "NOASSERTION", "sourceInfo", src,
			       "supplier", supplier(p->maintainer), "licenseConcluded", "NOASSERTION",
			       "licenseDeclared", lic, "copyrightText", "NOASSERTION");
		if (!pk || json_array_append_new(pkgs, pk) < 0 ||
		    ((refs = dpkg_refs(d, p)) && json_object_set_new(pk, "externalRefs", refs) < 0) ||
		    json_array_append_new(rels, relationship(holder, "CONTAINS", id)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
		if ((rc = set_files_analyzed(pk, f, f->n_artifacts + 1 + j, e)) < 0)
			return rc;
	}
	return 0;
}

/* A package of what the image was made from but does not hold (a
 * source package, a patch, a boot input): name, its pin, no files. */
static json_t *input_package(const char *id, const char *name, const uint8_t sha256[32])
{
	return json_pack("{s:s,s:s,s:s,s:[o],s:b,s:s,s:s,s:s,s:s}", "SPDXID", id, "name", name,
			 "downloadLocation", "NOASSERTION", "checksums", checksum("SHA256", sha256, 32),
			 "filesAnalyzed", 0, "supplier", "NOASSERTION", "licenseConcluded", "NOASSERTION",
			 "licenseDeclared", "NOASSERTION", "copyrightText", "NOASSERTION");
}

/* built-from: each input of artifact i as a package, the artifact
 * GENERATED_FROM it (the modules from nvidia-open-kernel-source and the
 * pinned patch). */
static int add_built_from(const struct sbom_files *f, const struct artifact *a, size_t i, json_t *pkgs, json_t *rels,
			  ingot_error *e)
{
	char art[48], id[64];

	owner_id(f, i + 1, art);
	for (size_t j = 0; j < a->n_from; j++) {
		const struct built_from *b = &a->from[j];
		json_t *p;

		snprintf(id, sizeof(id), "SPDXRef-From-%zu-%zu", i + 1, j + 1);
		if (!(p = input_package(id, b->name, b->sha256)) || json_array_append_new(pkgs, p) < 0 ||
		    (b->version && json_object_set_new(p, "versionInfo", json_string(b->version)) < 0) ||
		    (b->purl && json_object_set_new(p, "externalRefs", purl_refs(b->purl)) < 0) ||
		    json_array_append_new(rels, relationship(art, "GENERATED_FROM", id)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	}
	return 0;
}

/* Boot input in's version, supplier and purl (add_boot) onto p. */
static int boot_labels(const struct recipe *r, const struct unpack_stats *stats, const struct boot_input *in,
		       const char *name, json_t *p, ingot_error *e)
{
	_cleanup_free_ char *field = xasprintf("boot.%s", name);
	_cleanup_strbuf_ struct strbuf purl = STRBUF_INIT;
	const struct unpack_stats *st = NULL;
	struct unpack_stats own;
	json_t *refs = NULL;
	const char *ns;
	size_t ai = r->n_artifacts;
	int rc;

	for (size_t i = 0; stats && i < r->n_artifacts && !st; i++)
		if (r->artifacts[i].kind == ART_DEB && !memcmp(r->artifacts[i].sha256, in->sha256, 32) &&
		    stats[i].deb_version[0])
			st = &stats[ai = i];
	if (!st && (rc = boot_input_labels(in, field, &own, e)) != 0) {
		if (rc < 0)
			return ingot_prefix(e, "SBOM");
		st = &own;
	}
	if (in->purl)
		refs = purl_refs(in->purl);
	else if (st && ai < r->n_artifacts)
		refs = external_refs(r, ai, st, st->deb_version, false);
	else if (st && st->deb_package[0] && (ns = maintainer_vendor(st->deb_maintainer))) {
		deb_purl(&purl, ns, st, st->deb_version);
		refs = purl_refs(purl.buf);
	}
	if ((in->version || st) &&
	    json_object_set_new(p, "versionInfo", json_string(in->version ? in->version : st->deb_version)) < 0)
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	if ((st && json_object_set_new(p, "supplier", supplier(st->deb_maintainer)) < 0) ||
	    (refs && json_object_set_new(p, "externalRefs", refs) < 0))
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	return 0;
}

/* The UKI (NAME.efi, built after this document: its digest is in the
 * manifest's boot section) as a second described package, containing
 * its pinned kernel, stub and init.  A boot input that is a .deb gets
 * that package's version, supplier and purl: from the artifact with its
 * bytes (the kernel package whose modules the image carries), else from
 * its own control file (the stub's systemd-boot-efi).  Its purl has no
 * distro qualifier: the package's version does not say which release
 * it is from (the recipe's purl: can).  The recipe's version: and purl:
 * of the input win (ingot-init, built from ingot's checkout). */
static int add_boot(const struct recipe *r, const struct unpack_stats *stats, json_t *doc, json_t *pkgs,
		    json_t *rels, ingot_error *e)
{
	static const char uki_id[] = "SPDXRef-UKI";
	const struct boot_spec *b = r->boot;
	const struct { const char *name, *purpose; const struct boot_input *in; } parts[] = {
		{ "kernel", "OPERATING_SYSTEM", &b->kernel },
		{ "stub", "APPLICATION", &b->stub },
		{ "init", "APPLICATION", &b->init },
	};
	_cleanup_free_ char *efi = xasprintf("%s.efi", r->name);
	int rc;
	json_t *uki = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:s,s:s,s:s,s:s}", "SPDXID", uki_id, "name", efi,
				"versionInfo", r->version, "downloadLocation", "NOASSERTION",
				"primaryPackagePurpose", "OPERATING_SYSTEM", "filesAnalyzed", 0, "supplier", "NOASSERTION",
				"licenseConcluded", "NOASSERTION", "licenseDeclared", "NOASSERTION", "copyrightText", "NOASSERTION");

	if (!uki || json_array_append_new(pkgs, uki) < 0 ||
	    json_array_append_new(json_object_get(doc, "documentDescribes"), json_string(uki_id)) < 0 ||
	    json_array_append_new(rels, relationship("SPDXRef-DOCUMENT", "DESCRIBES", uki_id)) < 0)
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	for (size_t k = 0; k < ARRAY_SIZE(parts); k++) {
		const char *src = parts[k].in->source, *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
		char id[48];
		json_t *p;

		snprintf(id, sizeof(id), "SPDXRef-Boot-%s", parts[k].name);
		if (!(p = input_package(id, parts[k].name, parts[k].in->sha256)) || json_array_append_new(pkgs, p) < 0 ||
		    json_object_set_new(p, "packageFileName", json_string(base)) < 0 ||
		    json_object_set_new(p, "primaryPackagePurpose", json_string(parts[k].purpose)) < 0 ||
		    json_array_append_new(rels, relationship(uki_id, "CONTAINS", id)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
		if ((rc = boot_labels(r, stats, parts[k].in, parts[k].name, p, e)) < 0)
			return rc;
	}
	return 0;
}

static int add_packages(const struct recipe *r, const struct unpack_stats *stats, const struct store *s,
			const struct sbom_files *f, const struct sbom_dpkg *d, const uint8_t image_sha256[32],
			json_t *pkgs, json_t *rels, json_t *lics, ingot_error *e)
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
		bool holds_dpkg = d->db.n && d->holder == i + 1;
		const char *ver = artifact_version(r, i, stats, holds_dpkg);
		char id[48], lic[DEP5_LICENSE_MAX];
		json_t *p, *refs;

		owner_id(f, i + 1, id);
		if ((rc = deb_license(st, s, lics, lic, e)) < 0)
			return rc;
		p = json_pack("{s:s,s:s,s:s,s:[o],s:s,s:o,s:s,s:s,s:s}", "SPDXID", id, "name", a->name,
			      "downloadLocation", download_location(a), "checksums", checksum("SHA256", a->sha256, 32),
			      "primaryPackagePurpose", purpose(a), "supplier", supplier(st ? st->deb_maintainer : ""),
			      "licenseConcluded", "NOASSERTION", "licenseDeclared", lic, "copyrightText", "NOASSERTION");
		if (!p || json_array_append_new(pkgs, p) < 0 ||
		    (ver && json_object_set_new(p, "versionInfo", json_string(ver)) < 0) ||
		    ((refs = external_refs(r, i, st, ver, holds_dpkg)) && json_object_set_new(p, "externalRefs", refs) < 0) ||
		    json_array_append_new(rels, relationship(IMAGE_ID, "CONTAINS", id)) < 0)
			return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
		if ((rc = set_files_analyzed(p, f, i + 1, e)) < 0 || (rc = add_built_from(f, a, i, pkgs, rels, e)) < 0)
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
	name = xasprintf("./%s", te->path);
	if (!(*el = json_pack("{s:s,s:s,s:[o,o]}", "SPDXID", id, "fileName", name, "checksums",
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
	owner_id(rl->w.f, rl->w.f->owner[k], owner);
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
	struct sbom_dpkg d = { 0 };
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
	if ((rc = scan_files(r, t, s, sha1, &f, e)) < 0 || (rc = load_dpkg(t, s, &f, &d, e)) < 0 ||
	    (rc = add_packages(r, stats, s, &f, &d, image_sha256, pkgs, rels, lics, e)) < 0 ||
	    (rc = add_dpkg_packages(&d, t, s, &f, pkgs, rels, lics, e)) < 0 ||
	    (r->boot && (rc = add_boot(r, stats, doc, pkgs, rels, e)) < 0) ||
	    (json_array_size(lics) && json_object_set(doc, "hasExtractedLicensingInfos", lics) < 0 &&
	     (rc = ingot_fail(e, -ENOMEM, "%s: SBOM: out of memory", r->name)) < 0) ||
	    /* The bytes of json_canonical(the whole document). */
	    (rc = json_dump_spliced(doc, JSON_CANONICAL_FLAGS, sp, ARRAY_SIZE(sp), out, NULL, e)) < 0) {
		sbom_files_free(&f);
		dpkg_db_free(&d.db);
		return rc;
	}
	sbom_files_free(&f);
	dpkg_db_free(&d.db);
	return out->write(out->ctx, "\n", 1, e);
}
