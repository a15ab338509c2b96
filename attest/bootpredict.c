/* Predicted PCR values of a measured UKI boot (see bootpredict.h). */
#include "attest/bootpredict.h"

#include <string.h>

#include "attest/predict.h"
#include "lib/digest.h"
#include "lib/json.h"

int boot_predict_pcr11(const struct bank *b, const struct uki_part *parts, size_t n, uint8_t *out)
{
	uint8_t d[BANK_MAX_DIGEST];

	memset(out, 0, b->size);
	for (size_t i = 0; i < n; i++) {
		/* The name is measured with its terminating NUL. */
		if (bank_hash(b, parts[i].name, strlen(parts[i].name) + 1, d) < 0 || bank_extend(b, out, d) < 0 ||
		    bank_hash(b, parts[i].data, parts[i].len, d) < 0 || bank_extend(b, out, d) < 0)
			return -EIO;
	}
	return 0;
}

int boot_image_event(const char *name, const uint8_t root[32], struct strbuf *out)
{
	char hex[SHA256_HEX_LEN + 1];

	if (!attest_name_ok(name))
		return -EINVAL;
	hex_encode(root, 32, hex);
	strbuf_addf(out, BOOT_EVENT_PREFIX "image=%s verity=%s", name, hex);
	return 0;
}

json_t *boot_predict_single_event(const void *data, size_t len)
{
	json_t *o = json_object();
	uint8_t pcr[BANK_MAX_DIGEST], d[BANK_MAX_DIGEST];

	for (size_t i = 0; o && i < BANK_COUNT; i++) {
		const struct bank *b = &bank_table[i];
		memset(pcr, 0, b->size);
		if (bank_hash(b, data, len, d) < 0 || bank_extend(b, pcr, d) < 0 || json_set_hex(o, b->name, pcr, b->size) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *boot_predict_pcr11_json(const struct uki_part *parts, size_t n)
{
	json_t *o = json_object();
	uint8_t pcr[BANK_MAX_DIGEST];

	for (size_t i = 0; o && i < BANK_COUNT; i++) {
		if (boot_predict_pcr11(&bank_table[i], parts, n, pcr) < 0 ||
		    json_set_hex(o, bank_table[i].name, pcr, bank_table[i].size) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
