/* Event data read and checked against its digests (attest/eventlog.h). */
#include "attest/eventlog.h"

#include <string.h>

#include "lib/le.h"

const uint8_t *eventlog_event_digest(const struct eventlog_event *ev, uint16_t alg)
{
	for (size_t k = 0; k < ev->ndigests; k++)
		if (ev->digests[k].bank->alg == alg)
			return ev->digests[k].d;
	return NULL;
}

int eventlog_efi_variable(const struct eventlog_event *ev, struct efi_variable *out)
{
	const uint8_t *p = ev->data;
	uint64_t nlen, dlen;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (ev->data_len < 32)
		return -EBADMSG;
	memcpy(out->guid, p, 16);
	nlen = le_get(p + 16, 8);
	dlen = le_get(p + 24, 8);
	/* Bounded by data_len (at most EVENTLOG_MAX_EVENT_SIZE): no overflow. */
	if (nlen > ev->data_len || dlen > ev->data_len || 32 + 2 * nlen + dlen != ev->data_len)
		return -EBADMSG;
	for (i = 0; i < nlen && i + 1 < sizeof(out->name); i++) {
		unsigned c = (unsigned)le_get(p + 32 + 2 * i, 2);
		out->name[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	/* A name too long for out->name is never one the policy knows. */
	if (i < nlen)
		out->name[sizeof(out->name) - 2] = '?';
	out->data = p + 32 + 2 * nlen;
	out->len = (size_t)dlen;
	return 0;
}

static int hashes_to(const struct bank *b, const void *data, size_t len, const uint8_t *d)
{
	uint8_t h[BANK_MAX_DIGEST];
	return bank_hash(b, data, len, h) == 0 && !memcmp(h, d, b->size);
}

/* Is the digest of this event type defined as the hash of its data? */
static int data_defined(uint32_t type)
{
	switch (type) {
	case EV_SEPARATOR:
	case EV_EFI_ACTION:
	case EV_EFI_GPT_EVENT:
	case EV_EFI_VARIABLE_DRIVER_CONFIG:
	case EV_EFI_VARIABLE_BOOT:
	case EV_EFI_VARIABLE_BOOT2:
	case EV_EFI_VARIABLE_AUTHORITY:
		return 1;
	default:
		return 0;
	}
}

int eventlog_check_data(const struct eventlog *log, ingot_error *e)
{
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		struct efi_variable var;
		int boot_var = ev->type == EV_EFI_VARIABLE_BOOT || ev->type == EV_EFI_VARIABLE_BOOT2;

		if (!data_defined(ev->type))
			continue;
		if (ev->type >= EV_EFI_VARIABLE_DRIVER_CONFIG && ev->type != EV_EFI_GPT_EVENT &&
		    ev->type != EV_EFI_ACTION && eventlog_efi_variable(ev, &var) < 0)
			return ingot_fail(e, -EBADMSG, "%s: event %zu (%s, PCR %u): data: expected a UEFI_VARIABLE_DATA, "
					  "got %u bytes that are not one", log->name, i + 1,
					  eventlog_type_name(ev->type), ev->pcr, ev->data_len);
		for (size_t k = 0; k < ev->ndigests; k++) {
			const struct bank *b = ev->digests[k].bank;

			if (hashes_to(b, ev->data, ev->data_len, ev->digests[k].d) ||
			    (boot_var && hashes_to(b, var.data, var.len, ev->digests[k].d)))
				continue;
			return ingot_fail(e, -EBADMSG, "%s: event %zu (%s, PCR %u): %s digest: expected the hash of "
					  "the event's data, got another: the data was rewritten (a forged log)",
					  log->name, i + 1, eventlog_type_name(ev->type), ev->pcr, b->name);
		}
	}
	return 0;
}
