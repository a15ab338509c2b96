#include "manifest/typed.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/time.h"
#include "lib/xalloc.h"

/* Members the schema check already passed: a lookup, no more checks. */
static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint64_t u64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}

/* A 64-hex-digit member into bytes (and hex, when asked); false when
 * absent or not such a string. */
static bool hex32(const json_t *o, const char *key, uint8_t out[32], char hex[65])
{
	const char *s = str(o, key);

	if (!s || !is_sha256_hex(s) || hex_decode(s, out, 32) < 0)
		return false;
	if (hex)
		memcpy(hex, s, 65);
	return true;
}

static void read_boot(const json_t *boot, struct boot_prediction *b)
{
	b->have |= MB_BOOT;
	const json_t *pcr15 = json_object_get(json_object_get(boot, "pcr15"), "predicted");

	if (hex32(json_object_get(boot, "uki"), "authenticode_sha256", b->uki, NULL))
		b->have |= MB_UKI;
	if (hex32(boot, "linux_authenticode_sha256", b->linux_app, NULL))
		b->have |= MB_LINUX;
	if (hex32(json_object_get(json_object_get(boot, "pcr11"), "predicted"), "sha256", b->pcr11, NULL))
		b->have |= MB_PCR11;
	if (hex32(pcr15, "sha256", b->pcr15, b->pcr15_hex))
		b->have |= MB_PCR15;
	/* Checked by the schema when present. */
	if (hex32(json_object_get(boot, "secure_boot"), "signer_cert_sha256", b->signer, NULL))
		b->have |= MB_SECURE_BOOT;
}

struct manifest *manifest_decode(const char *name, json_t *doc, enum manifest_level level)
{
	struct manifest *m = xcalloc(1, sizeof(*m));
	const json_t *v;

	m->doc = json_incref(doc);
	m->name = xstrdup(name);
	m->level = level;
	m->ingot_version = str(doc, "ingot_version");
	if ((v = json_object_get(doc, "recipe"))) {
		m->recipe.name = str(v, "name");
		m->recipe.version = str(v, "version");
		m->recipe.file = str(v, "file");
		hex32(v, "sha256", m->recipe.sha256, NULL);
		if (m->recipe.name)
			m->have |= MF_RECIPE;
	}
	if (json_object_get(doc, "serial")) {
		m->epoch = u64(doc, "epoch");
		m->serial = u64(doc, "serial");
		m->have |= MF_VERSION;
	}
	if ((m->expires_text = str(doc, "expires")) && time_parse(m->expires_text, &m->expires) == 0)
		m->have |= MF_EXPIRES;
	m->tuple = json_is_object(json_object_get(doc, "tuple")) ? json_object_get(doc, "tuple") : NULL;
	if ((v = json_object_get(doc, "image"))) {
		m->image.file = str(v, "file");
		m->image.compression = str(v, "compression");
		m->image.size = u64(v, "size");
		m->image.block_size = u64(v, "block_size");
		m->image.level = json_integer_value(json_object_get(v, "level"));
		if (hex32(v, "sha256", m->image.sha256, m->image.sha256_hex))
			m->have |= MF_IMAGE;
	}
	if ((v = json_object_get(doc, "verity"))) {
		const char *salt = str(v, "salt");
		m->verity.file = str(v, "file");
		m->verity.hash_algorithm = str(v, "hash_algorithm");
		m->verity.uuid = str(v, "uuid");
		m->verity.format = u64(v, "format");
		m->verity.data_block_size = u64(v, "data_block_size");
		m->verity.hash_block_size = u64(v, "hash_block_size");
		m->verity.data_blocks = u64(v, "data_blocks");
		m->verity.hash_offset = u64(v, "hash_offset");
		if (salt) {   /* even-length lower-case hex: the schema's F_HEX */
			m->verity.salt_len = strlen(salt) / 2;
			m->verity.salt = xmalloc(m->verity.salt_len + 1);
			if (hex_decode(salt, m->verity.salt, m->verity.salt_len) < 0)
				m->verity.salt_len = 0;
		}
		if (hex32(v, "root_hash", m->verity.root_hash, m->verity.root_hex))
			m->have |= MF_VERITY;
	}
	if ((v = json_object_get(doc, "measurement"))) {
		json_int_t pcr = json_integer_value(json_object_get(v, "pcr"));
		/* Out of range reads as no PCR at all (an unchecked document). */
		m->measurement.pcr = pcr >= 0 && pcr <= 0xffff ? (unsigned)pcr : UINT_MAX;
		m->measurement.event_type = (uint32_t)u64(v, "event_type");
		m->measurement.event_data = str(v, "event_data");
		if (hex32(v, "content_digest", m->measurement.content_digest, NULL))
			m->have |= MF_MEASUREMENT;
		if (hex32(json_object_get(v, "predicted"), "sha256", m->measurement.predicted,
			  m->measurement.predicted_hex))
			m->have |= MF_PREDICTED;
	}
	if (json_is_object((v = json_object_get(doc, "boot")))) {
		m->have |= MF_BOOT;
		read_boot(v, &m->boot);
	}
	m->boot.name = m->recipe.name;
	if (m->recipe.name && (m->have & MF_VERITY)) {
		memcpy(m->boot.root, m->verity.root_hash, 32);
		m->boot.have |= MB_IMAGE;
	}
	if ((v = json_object_get(doc, "sbom"))) {
		m->sbom.file = str(v, "file");
		if (m->sbom.file && hex32(v, "sha256", m->sbom.sha256, NULL))
			m->have |= MF_SBOM;
	}
	if (json_is_array(json_object_get(doc, "files")))
		m->have |= MF_FILES;
	m->n_files = json_array_size(json_object_get(doc, "files"));
	m->n_artifacts = json_array_size(json_object_get(doc, "artifacts"));
	return m;
}

int manifest_parse(const char *name, json_t *doc, enum manifest_level level, struct manifest **out,
		   ingot_error *e)
{
	int r = manifest_check_level(name, doc, level, e);

	if (r < 0)
		return r;
	*out = manifest_decode(name, doc, level);
	return 0;
}

int manifest_load(const char *path, struct manifest **out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r = json_read_file_max(path, MANIFEST_FILE_MAX, &doc, e);

	if (r < 0)
		return r;
	return manifest_parse(path, doc, MANIFEST_FULL, out, e);
}

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	json_decref(m->doc);
	free((char *)m->name);
	free(m->verity.salt);
	free(m);
}

int manifest_next_entry(const struct manifest *m, size_t *i, struct manifest_entry *f)
{
	const json_t *o = json_array_get(json_object_get(m->doc, "files"), *i);

	if (!o)
		return 0;
	(*i)++;
	manifest_entry_decode(o, f);
	return 1;
}

void manifest_entry_decode(const json_t *o, struct manifest_entry *f)
{
	const char *mode;

	memset(f, 0, sizeof(*f));
	f->path = str(o, "path");
	f->type = str(o, "type");
	f->target = str(o, "target");
	if ((mode = f->mode_text = str(o, "mode")))   /* 4 octal digits, when checked */
		f->mode = (unsigned)strtoul(mode, NULL, 8);
	f->has_ids = json_is_integer(json_object_get(o, "uid")) && json_is_integer(json_object_get(o, "gid"));
	f->uid = json_integer_value(json_object_get(o, "uid"));
	f->gid = json_integer_value(json_object_get(o, "gid"));
	f->size = json_integer_value(json_object_get(o, "size"));
	f->major = json_integer_value(json_object_get(o, "major"));
	f->minor = json_integer_value(json_object_get(o, "minor"));
	f->sha256_hex = str(o, "sha256");
	f->has_sha256 = hex32(o, "sha256", f->sha256, NULL);
}
