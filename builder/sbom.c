#include "builder/sbom.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/meta.h"
#include "recipes/tuple.h"

/* Names go in "name" members; SPDX ids ([A-Za-z0-9.-]+) are positional
 * so any artifact or file name is safe. */
#define IMAGE_ID "SPDXRef-Image"

static json_t *sha256_checksums(const uint8_t sha[32])
{
	char hex[SHA256_HEX_LEN + 1];
	hex_encode(sha, 32, hex);
	return json_pack("[{s:s,s:s}]", "algorithm", "SHA256", "checksumValue", hex);
}

static json_t *relationship(const char *a, const char *type, const char *b)
{
	return json_pack("{s:s,s:s,s:s}", "spdxElementId", a, "relationshipType", type,
			 "relatedSpdxElement", b);
}

/* The version an artifact carries: a .deb's control Version, else the
 * tuple component that names it (COMPONENT.artifact -> COMPONENT.version). */
static const char *artifact_version(const struct recipe *r, size_t i, const struct unpack_stats *stats)
{
	const struct artifact *a = &r->artifacts[i];

	if (stats && stats[i].deb_version[0])
		return stats[i].deb_version;
	for (size_t k = 0; k < tuple_size(r->tuple); k++) {
		const struct tuple_value *v = tuple_at(r->tuple, k);
		size_t len = strlen(v->path);
		char path[96];
		const struct tuple_value *ver;

		if (len < 9 || strcmp(v->path + len - 9, ".artifact") || !v->str || strcmp(v->str, a->name) ||
		    len - 9 + sizeof(".version") > sizeof(path))
			continue;
		snprintf(path, sizeof(path), "%.*s.version", (int)(len - 9), v->path);
		if ((ver = tuple_get(r->tuple, path)) && ver->str)
			return ver->str;
	}
	return NULL;
}

static int add_packages(const struct recipe *r, const struct unpack_stats *stats, const uint8_t image_sha256[32],
			json_t *pkgs, json_t *rels)
{
	json_t *img = json_pack("{s:s,s:s,s:s,s:s,s:b,s:o,s:s}", "SPDXID", IMAGE_ID, "name", r->name,
				"versionInfo", r->version, "downloadLocation", "NOASSERTION",
				"filesAnalyzed", 0, "checksums", sha256_checksums(image_sha256),
				"primaryPackagePurpose", "OPERATING_SYSTEM");
	int bad = json_array_append_new(pkgs, img);

	for (size_t i = 0; i < r->n_artifacts && !bad; i++) {
		const struct artifact *a = &r->artifacts[i];
		const char *ver = artifact_version(r, i, stats);
		char id[48];
		json_t *p;

		snprintf(id, sizeof(id), "SPDXRef-Package-%zu", i + 1);
		/* filesAnalyzed false: no SPDX package verification code (it
		 * is SHA-1 based); the files are related below instead. */
		p = json_pack("{s:s,s:s,s:s,s:b,s:o,s:s}", "SPDXID", id, "name", a->name,
			      "downloadLocation", a->source, "filesAnalyzed", 0,
			      "checksums", sha256_checksums(a->sha256), "primaryPackagePurpose",
			      a->kind == ART_FILE ? "FILE" : "ARCHIVE");
		if (p && ver)
			bad |= json_object_set_new(p, "versionInfo", json_string(ver));
		bad |= json_array_append_new(pkgs, p);
		bad |= json_array_append_new(rels, relationship(IMAGE_ID, "CONTAINS", id));
	}
	return bad ? -ENOMEM : 0;
}

/* The regular files of t in order, each with its SPDX id and, when owner
 * is not NULL, its owner (the artifact's package, else the image): what
 * both generated arrays walk. */
struct sbom_walk {
	const struct recipe *r;
	const struct tree *t;
	size_t i, n;
};

static const struct tree_entry *walk_next(struct sbom_walk *w, char id[48], char owner[48])
{
	const struct tree_entry *te;

	while (w->i < w->t->n && w->t->v[w->i].type != TREE_FILE)
		w->i++;
	if (w->i == w->t->n)
		return NULL;
	te = &w->t->v[w->i++];
	snprintf(id, 48, "SPDXRef-File-%zu", ++w->n);
	if (!owner)
		return te;
	snprintf(owner, 48, "%s", IMAGE_ID);
	for (size_t k = 0; te->origin && k < w->r->n_artifacts; k++)
		if (!strcmp(te->origin, w->r->artifacts[k].name))
			snprintf(owner, 48, "SPDXRef-Package-%zu", k + 1);
	return te;
}

/* files[]: one per regular file. */
static int files_next(void *ctx, json_t **el, ingot_error *e)
{
	char id[48];
	_cleanup_free_ char *name = NULL;
	const struct tree_entry *te = walk_next(ctx, id, NULL);

	*el = NULL;
	if (!te)
		return 0;
	if (asprintf(&name, "./%s", te->path) < 0 ||
	    !(*el = json_pack("{s:s,s:s,s:o}", "SPDXID", id, "fileName", name, "checksums",
			      sha256_checksums(te->sha256))))
		return ingot_fail(e, -ENOMEM, "SBOM: out of memory");
	return 0;
}

/* relationships[]: the document's and packages' first (head), then one
 * CONTAINS per regular file. */
struct sbom_rels {
	json_t *head;
	size_t k;
	struct sbom_walk w;
};

static int rels_next(void *ctx, json_t **el, ingot_error *e)
{
	struct sbom_rels *rl = ctx;
	char id[48], owner[48];

	*el = NULL;
	if (rl->k < json_array_size(rl->head)) {
		*el = json_incref(json_array_get(rl->head, rl->k++));
		return 0;
	}
	if (!walk_next(&rl->w, id, owner))
		return 0;
	*el = relationship(owner, "CONTAINS", id);
	return *el ? 0 : ingot_fail(e, -ENOMEM, "SBOM: out of memory");
}

int sbom_write(const struct recipe *r, const struct unpack_stats *stats, const struct tree *t,
	       const uint8_t image_sha256[32], const struct json_out *out, ingot_error *e)
{
	char hex[SHA256_HEX_LEN + 1], created[32], ns[256];
	time_t when = (time_t)r->epoch;
	struct tm tm;
	json_t *pkgs = json_array();
	_cleanup_json_ json_t *doc = NULL, *rels = json_array();
	struct sbom_walk files = { r, t, 0, 0 };
	struct sbom_rels rl = { rels, 0, { r, t, 0, 0 } };
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
	if (!doc || !rels || json_array_append_new(rels, relationship("SPDXRef-DOCUMENT", "DESCRIBES", IMAGE_ID)) ||
	    add_packages(r, stats, image_sha256, pkgs, rels) < 0)
		return ingot_fail(e, -ENOMEM, "%s: SBOM: out of memory", r->name);
	/* The bytes of json_canonical(the whole document). */
	if ((rc = json_dump_spliced(doc, JSON_CANONICAL_FLAGS, sp, ARRAY_SIZE(sp), out, NULL, e)) < 0)
		return rc;
	return out->write(out->ctx, "\n", 1, e);
}
