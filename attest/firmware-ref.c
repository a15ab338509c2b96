/* Firmware reference values (attest/firmware-ref.h). */
#include "attest/firmware-ref.h"

#include <stdio.h>
#include <string.h>

#include "lib/boot-contract.h"
#include "attest/predict.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"

#define SHA256_ALG 0x000b

int firmware_authority_cert(const struct eventlog_event *ev, uint8_t out[32])
{
	struct efi_variable var;

	/* EFI_SIGNATURE_DATA: SignatureOwner (a GUID), then the certificate. */
	if (ev->type != EV_EFI_VARIABLE_AUTHORITY || eventlog_efi_variable(ev, &var) < 0 || var.len <= 16)
		return -EBADMSG;
	sha256_buf(var.data + 16, var.len - 16, out);
	return 0;
}

/* v: the member key's value, or NULL. */
static int hex32_member(const json_t *v, const char *key, const char *what, const char *field, uint8_t out[32],
			ingot_error *e)
{
	const char *s = json_string_value(v);

	if (!s || !is_sha256_hex(s) || hex_decode(s, out, 32) < 0)
		return ingot_fail(e, -EINVAL, "%s: %s%s: expected 64 lower-case hex digits, got %s", what, field, key,
				  s ? "another string" : "none");
	return 0;
}

static int unknown_key(const json_t *o, const char *const *known, const char *what, const char *field,
		       ingot_error *e)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		size_t i;
		for (i = 0; known[i] && strcmp(known[i], k); i++)
			;
		if (!known[i])
			return ingot_fail(e, -EINVAL, "%s: %sunknown key '%.64s'", what, field, k);
	}
	return 0;
}

int firmware_ref_from_json(const json_t *j, const char *what, struct firmware_ref *out, ingot_error *e)
{
	static const char *const top[] = { "schema", "platform", "pcrs", "pcr7", NULL };
	static const char *const p7[] = { "variables", "authorities", NULL };
	json_t *jschema = NULL, *jplatform = NULL, *banks = NULL, *pcrs = NULL, *pcr0 = NULL, *pcr2 = NULL;
	json_t *pcr7 = NULL, *vars = NULL, *auth = NULL, *v;
	const char *schema, *platform, *k;
	size_t i;
	int r;

	/* Every member optional here, so that each gets its own line below. */
	json_unpack((json_t *)j, "{s?o s?o s?o s?o}", "schema", &jschema, "platform", &jplatform,
		    "pcrs", &banks, "pcr7", &pcr7);
	json_unpack(banks, "{s?o}", "sha256", &pcrs);
	json_unpack(pcrs, "{s?o s?o}", "0", &pcr0, "2", &pcr2);
	json_unpack(pcr7, "{s?o s?o}", "variables", &vars, "authorities", &auth);
	schema = json_string_value(jschema);
	platform = json_string_value(jplatform);
	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object", what);
	if ((r = unknown_key(j, top, what, "", e)) < 0)
		return r;
	if (!schema || strcmp(schema, FIRMWARE_REF_SCHEMA))
		return ingot_fail(e, -EINVAL, "%s: schema: expected \"" FIRMWARE_REF_SCHEMA "\"", what);
	if (!platform || !attest_name_ok(platform) || strlen(platform) >= sizeof(out->platform))
		return ingot_fail(e, -EINVAL, "%s: platform: expected 1-127 printable characters without spaces", what);
	snprintf(out->platform, sizeof(out->platform), "%s", platform);
	if (json_object_size(banks) != 1 || json_object_size(pcrs) != 2)
		return ingot_fail(e, -EINVAL, "%s: pcrs: expected exactly {\"sha256\": {\"0\", \"2\"}}", what);
	if ((r = hex32_member(pcr0, "0", what, "pcrs.sha256.", out->pcr0, e)) < 0 ||
	    (r = hex32_member(pcr2, "2", what, "pcrs.sha256.", out->pcr2, e)) < 0)
		return r;
	if (!json_is_object(pcr7) || (r = unknown_key(pcr7, p7, what, "pcr7.", e)) < 0)
		return r < 0 ? r : ingot_fail(e, -EINVAL, "%s: pcr7: expected an object", what);
	if (!json_is_object(vars) || json_object_size(vars) > FIRMWARE_REF_MAX)
		return ingot_fail(e, -EINVAL, "%s: pcr7.variables: expected an object of at most %d", what,
				  FIRMWARE_REF_MAX);
	if (!json_is_array(auth) || json_array_size(auth) > FIRMWARE_REF_MAX)
		return ingot_fail(e, -EINVAL, "%s: pcr7.authorities: expected an array of at most %d", what,
				  FIRMWARE_REF_MAX);
	json_object_foreach((json_t *)vars, k, v) {
		if (!*k || strlen(k) >= sizeof(out->vars[0].name))
			return ingot_fail(e, -EINVAL, "%s: pcr7.variables: expected names of 1-63 characters", what);
		snprintf(out->vars[out->nvars].name, sizeof(out->vars[0].name), "%s", k);
		if ((r = hex32_member(v, k, what, "pcr7.variables.", out->vars[out->nvars].digest, e)) < 0)
			return r;
		out->nvars++;
	}
	json_array_foreach(auth, i, v) {
		const char *s = json_string_value(v);
		if (!s || !is_sha256_hex(s) || hex_decode(s, out->auth[i], 32) < 0)
			return ingot_fail(e, -EINVAL, "%s: pcr7.authorities[%zu]: expected 64 lower-case hex digits", what, i);
		out->nauth++;
	}
	return 0;
}

static json_t *hex32_json(const uint8_t d[32])
{
	char h[65];
	hex_encode(d, 32, h);
	return json_string(h);
}

json_t *firmware_ref_to_json(const struct firmware_ref *r)
{
	json_t *vars = json_object(), *auth = json_array();

	for (size_t i = 0; vars && i < r->nvars; i++)
		json_object_set_new(vars, r->vars[i].name, hex32_json(r->vars[i].digest));
	for (size_t i = 0; auth && i < r->nauth; i++)
		json_array_append_new(auth, hex32_json(r->auth[i]));
	return json_pack("{s:s, s:s, s:{s:{s:o, s:o}}, s:{s:o, s:o}}", "schema", FIRMWARE_REF_SCHEMA, "platform",
			 r->platform, "pcrs", "sha256", "0", hex32_json(r->pcr0), "2", hex32_json(r->pcr2), "pcr7",
			 "variables", vars, "authorities", auth);
}

/* Add a variable or authority once (a boot may measure one twice). */
static int add_pcr7(struct firmware_ref *r, const struct eventlog *log, size_t i, ingot_error *e)
{
	const struct eventlog_event *ev = &log->events[i];
	const uint8_t *d = eventlog_event_digest(ev, SHA256_ALG);
	struct efi_variable var;
	uint8_t cert[32];

	/* A variable or authority event the reference cannot read is refused,
	 * not left out: the reference would be silently short of it. */
	if ((ev->type == EV_EFI_VARIABLE_DRIVER_CONFIG && (!d || eventlog_efi_variable(ev, &var) < 0)) ||
	    (ev->type == EV_EFI_VARIABLE_AUTHORITY && firmware_authority_cert(ev, cert) < 0))
		return ingot_fail(e, -EBADMSG, "%s: event %zu: %s: expected a UEFI_VARIABLE_DATA%s, got %u bytes of event "
				  "data that do not hold one", log->name, i + 1, eventlog_type_name(ev->type),
				  ev->type == EV_EFI_VARIABLE_AUTHORITY
					  ? " holding an EFI_SIGNATURE_DATA (owner GUID, then the certificate)" : "",
				  ev->data_len);
	if (ev->type == EV_EFI_VARIABLE_DRIVER_CONFIG) {
		for (size_t k = 0; k < r->nvars; k++)
			if (!strcmp(r->vars[k].name, var.name))
				return memcmp(r->vars[k].digest, d, 32)
					       ? ingot_fail(e, -EBADMSG, "%s: event %zu: variable %s measured twice with "
							    "different values", log->name, i + 1, var.name)
					       : 0;
		if (r->nvars == FIRMWARE_REF_MAX)
			return ingot_fail(e, -E2BIG, "%s: PCR 7: expected at most %d variables", log->name, FIRMWARE_REF_MAX);
		snprintf(r->vars[r->nvars].name, sizeof(r->vars[0].name), "%s", var.name);
		memcpy(r->vars[r->nvars++].digest, d, 32);
	} else if (ev->type == EV_EFI_VARIABLE_AUTHORITY) {
		for (size_t k = 0; k < r->nauth; k++)
			if (!memcmp(r->auth[k], cert, 32))
				return 0;
		if (r->nauth == FIRMWARE_REF_MAX)
			return ingot_fail(e, -E2BIG, "%s: PCR 7: expected at most %d authorities", log->name,
					  FIRMWARE_REF_MAX);
		memcpy(r->auth[r->nauth++], cert, 32);
	}
	return 0;
}

int firmware_ref_record(const char *platform, const struct eventlog *log, const struct pcr_values *quoted,
			struct firmware_ref *out, ingot_error *e)
{
	const struct pcr_bank *q = pcr_values_find(quoted, SHA256_ALG);
	const uint32_t need = 1u << BOOT_PCR_FIRMWARE | 1u << BOOT_PCR_OPTION_ROMS | 1u << BOOT_PCR_SECURE_BOOT;
	struct pcr_selection sel = { 0 };
	int r;

	memset(out, 0, sizeof(*out));
	if (!platform || !attest_name_ok(platform) || strlen(platform) >= sizeof(out->platform))
		return ingot_fail(e, -EINVAL, "--platform: expected 1-127 printable characters without spaces");
	if (!q || (q->mask & need) != need)
		return ingot_fail(e, -EINVAL, "quote: expected it to cover sha256 PCRs 0, 2 and 7");
	pcr_selection_add(&sel, SHA256_ALG, need);
	if ((r = eventlog_compare(log, quoted, &sel, e)) < 0 || (r = eventlog_check_data(log, e)) < 0)
		return r;
	snprintf(out->platform, sizeof(out->platform), "%s", platform);
	memcpy(out->pcr0, q->value[BOOT_PCR_FIRMWARE], 32);
	memcpy(out->pcr2, q->value[BOOT_PCR_OPTION_ROMS], 32);
	for (size_t i = 0; i < log->nevents; i++)
		if (log->events[i].pcr == BOOT_PCR_SECURE_BOOT && (r = add_pcr7(out, log, i, e)) < 0)
			return r;
	return 0;
}
