/* Event logs described as JSON, and event type names. */
#include "attest/eventlog.h"

#include <stdlib.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/xalloc.h"

const char *eventlog_type_name(uint32_t type)
{
	static const struct { uint32_t t; const char *n; } names[] = {
		{ 0x00000000, "EV_PREBOOT_CERT" }, { 0x00000001, "EV_POST_CODE" },
		{ 0x00000003, "EV_NO_ACTION" }, { 0x00000004, "EV_SEPARATOR" },
		{ 0x00000005, "EV_ACTION" }, { 0x00000006, "EV_EVENT_TAG" },
		{ 0x00000007, "EV_S_CRTM_CONTENTS" }, { 0x00000008, "EV_S_CRTM_VERSION" },
		{ 0x00000009, "EV_CPU_MICROCODE" }, { 0x0000000A, "EV_PLATFORM_CONFIG_FLAGS" },
		{ 0x0000000B, "EV_TABLE_OF_DEVICES" }, { 0x0000000C, "EV_COMPACT_HASH" },
		{ 0x0000000D, "EV_IPL" }, { 0x0000000E, "EV_IPL_PARTITION_DATA" },
		{ 0x0000000F, "EV_NONHOST_CODE" }, { 0x00000010, "EV_NONHOST_CONFIG" },
		{ 0x00000011, "EV_NONHOST_INFO" }, { 0x00000012, "EV_OMIT_BOOT_DEVICE_EVENTS" },
		{ 0x80000001, "EV_EFI_VARIABLE_DRIVER_CONFIG" }, { 0x80000002, "EV_EFI_VARIABLE_BOOT" },
		{ 0x80000003, "EV_EFI_BOOT_SERVICES_APPLICATION" },
		{ 0x80000004, "EV_EFI_BOOT_SERVICES_DRIVER" },
		{ 0x80000005, "EV_EFI_RUNTIME_SERVICES_DRIVER" }, { 0x80000006, "EV_EFI_GPT_EVENT" },
		{ 0x80000007, "EV_EFI_ACTION" }, { 0x80000008, "EV_EFI_PLATFORM_FIRMWARE_BLOB" },
		{ 0x80000009, "EV_EFI_HANDOFF_TABLES" }, { 0x8000000A, "EV_EFI_PLATFORM_FIRMWARE_BLOB2" },
		{ 0x8000000B, "EV_EFI_HANDOFF_TABLES2" }, { 0x800000E0, "EV_EFI_VARIABLE_AUTHORITY" },
		{ 0x800000E1, "EV_EFI_SPDM_FIRMWARE_BLOB" }, { 0x800000E2, "EV_EFI_SPDM_FIRMWARE_CONFIG" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].t == type)
			return names[i].n;
	return NULL;
}

static int printable(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] < 0x20 || d[i] >= 0x7f)
			return 0;
	return n > 0;
}

static json_t *event_to_json(const struct eventlog *log, size_t idx)
{
	const struct eventlog_event *ev = &log->events[idx];
	_cleanup_json_ json_t *j = json_object();
	json_t *digests = json_object();
	const char *tn = eventlog_type_name(ev->type);
	_cleanup_free_ char *hex = NULL;

	if (!j || json_object_set_new(j, "digests", digests))
		return NULL;
	for (size_t k = 0; k < ev->ndigests; k++) {
		char h[2 * BANK_MAX_DIGEST + 1];
		hex_encode(ev->digests[k].d, ev->digests[k].bank->size, h);
		if (json_object_set_new(digests, ev->digests[k].bank->name, json_string(h)))
			return NULL;
	}
	if (printable(ev->data, ev->data_len)) {
		if (json_object_set_new(j, "data", json_stringn((const char *)ev->data, ev->data_len)))
			return NULL;
	} else {
		hex = xmalloc(2 * (size_t)ev->data_len + 1);
		hex_encode(ev->data, ev->data_len, hex);
		if (json_object_set_new(j, "data_hex", json_string(hex)))
			return NULL;
	}
	if (json_object_set_new(j, "num", json_integer((json_int_t)idx + 1)) ||
	    json_object_set_new(j, "offset", json_integer((json_int_t)ev->offset)) ||
	    json_object_set_new(j, "pcr", json_integer(ev->pcr)) ||
	    json_object_set_new(j, "type", json_integer(ev->type)) ||
	    json_object_set_new(j, "type_name", tn ? json_string(tn) : json_null()) ||
	    json_object_set_new(j, "size", json_integer(ev->data_len)))
		return NULL;
	return TAKE_PTR(j);
}

json_t *eventlog_to_json(const struct eventlog *log, const struct pcr_values *replayed)
{
	_cleanup_json_ json_t *j = json_object();
	json_t *banks = json_array(), *events = json_array();

	if (!j || json_object_set_new(j, "banks", banks) || json_object_set_new(j, "events", events))
		return NULL;
	for (size_t i = 0; i < log->nbanks; i++)
		if (json_array_append_new(banks, json_string(log->banks[i]->name)))
			return NULL;
	for (size_t i = 0; i < log->nevents; i++)
		if (json_array_append_new(events, event_to_json(log, i)))
			return NULL;
	if (json_object_set_new(j, "format", json_string(log->format == EVENTLOG_SHA1 ? "sha1" : "crypto-agile")) ||
	    json_object_set_new(j, "spec_version", json_sprintf("%u.%u.%u", log->spec_major,
								 log->spec_minor, log->spec_errata)) ||
	    json_object_set_new(j, "platform_class", json_integer(log->platform_class)) ||
	    json_object_set_new(j, "startup_locality", log->startup_locality >= 0 ?
				json_integer(log->startup_locality) : json_null()) ||
	    json_object_set_new(j, "pcrs", pcr_values_to_json(replayed)))
		return NULL;
	return TAKE_PTR(j);
}
