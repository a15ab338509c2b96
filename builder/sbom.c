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

static int relate(json_t *rels, const char *a, const char *type, const char *b)
{
	return json_array_append_new(rels, json_pack("{s:s,s:s,s:s}", "spdxElementId", a,
						     "relationshipType", type, "relatedSpdxElement", b));
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
		bad |= relate(rels, IMAGE_ID, "CONTAINS", id);
	}
	return bad ? -ENOMEM : 0;
}

static int add_files(const struct recipe *r, const struct tree *t, json_t *files, json_t *rels)
{
	size_t n = 0;
	int bad = 0;

	for (size_t i = 0; i < t->n && !bad; i++) {
		const struct tree_entry *te = &t->v[i];
		const char *owner = IMAGE_ID;
		char id[48], pkg[48];
		_cleanup_free_ char *name = NULL;

		if (te->type != TREE_FILE)
			continue;
		snprintf(id, sizeof(id), "SPDXRef-File-%zu", ++n);
		for (size_t k = 0; te->origin && k < r->n_artifacts; k++)
			if (!strcmp(te->origin, r->artifacts[k].name)) {
				snprintf(pkg, sizeof(pkg), "SPDXRef-Package-%zu", k + 1);
				owner = pkg;
			}
		if (asprintf(&name, "./%s", te->path) < 0)
			return -ENOMEM;
		bad |= json_array_append_new(files, json_pack("{s:s,s:s,s:o}", "SPDXID", id, "fileName", name,
							      "checksums", sha256_checksums(te->sha256)));
		bad |= relate(rels, owner, "CONTAINS", id);
	}
	return bad ? -ENOMEM : 0;
}

int sbom_build(const struct recipe *r, const struct unpack_stats *stats, const struct tree *t,
	       const uint8_t image_sha256[32], json_t **out, ingot_error *e)
{
	char hex[SHA256_HEX_LEN + 1], created[32], ns[256];
	time_t when = (time_t)r->epoch;
	struct tm tm;
	json_t *pkgs = json_array(), *files = json_array(), *rels = json_array();
	_cleanup_json_ json_t *doc = NULL;

	*out = NULL;
	hex_encode(image_sha256, 32, hex);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&when, &tm));
	/* unique per image, and the same for the same image: .invalid never resolves */
	snprintf(ns, sizeof(ns), "https://ingot.invalid/spdx/%s/%s/%s", r->name, r->version, hex);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:[s]},s:[s],s:o,s:o,s:o}",
			"spdxVersion", "SPDX-2.3", "dataLicense", "CC0-1.0", "SPDXID", "SPDXRef-DOCUMENT",
			"name", r->name, "documentNamespace", ns,
			"creationInfo", "created", created, "creators", "Tool: ingot-" INGOT_VERSION,
			"documentDescribes", IMAGE_ID, "packages", pkgs, "files", files,
			"relationships", rels);
	if (!doc || relate(rels, "SPDXRef-DOCUMENT", "DESCRIBES", IMAGE_ID) ||
	    add_packages(r, stats, image_sha256, pkgs, rels) < 0 || add_files(r, t, files, rels) < 0)
		return ingot_fail(e, -ENOMEM, "%s: SBOM: out of memory", r->name);
	*out = TAKE_PTR(doc);
	return 0;
}
