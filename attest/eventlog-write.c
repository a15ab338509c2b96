/* Writing crypto-agile event logs: ingot's own measurement log. */
#include "attest/eventlog.h"

#include <string.h>
#include <sys/stat.h>

#include "lib/cleanup.h"

static void put_u16(struct strbuf *sb, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	strbuf_add(sb, b, 2);
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	strbuf_add(sb, b, 4);
}

int eventlog_encode_header(const struct bank *const *banks, size_t nbanks, struct strbuf *out)
{
	static const uint8_t zero[20];
	struct strbuf spec = STRBUF_INIT;

	if (nbanks == 0 || nbanks > BANK_COUNT)
		return -EINVAL;
	strbuf_init(&spec, 64);
	strbuf_add(&spec, EVENTLOG_SPEC_ID, sizeof(EVENTLOG_SPEC_ID));
	put_u32(&spec, 0);                   /* platformClass: client */
	strbuf_add(&spec, "\0\x02\0\x02", 4); /* spec 2.0 errata 0, UINTN = 8 bytes (uintnSize 2) */
	put_u32(&spec, (uint32_t)nbanks);
	for (size_t i = 0; i < nbanks; i++) {
		put_u16(&spec, banks[i]->alg);
		put_u16(&spec, (uint16_t)banks[i]->size);
	}
	strbuf_addch(&spec, 0);              /* vendorInfoSize */

	put_u32(out, 0);
	put_u32(out, EV_NO_ACTION);
	strbuf_add(out, zero, sizeof(zero));
	put_u32(out, (uint32_t)spec.len);
	strbuf_add(out, spec.buf, spec.len);
	strbuf_release(&spec);
	return 0;
}

int eventlog_encode_event(const struct bank *const *banks, size_t nbanks, uint32_t pcr,
			  uint32_t type, const void *data, size_t len, struct strbuf *out)
{
	if (nbanks == 0 || nbanks > BANK_COUNT || len > EVENTLOG_MAX_EVENT_SIZE || pcr >= PCR_COUNT)
		return -EINVAL;
	put_u32(out, pcr);
	put_u32(out, type);
	put_u32(out, (uint32_t)nbanks);
	for (size_t i = 0; i < nbanks; i++) {
		uint8_t d[BANK_MAX_DIGEST];
		if (bank_hash(banks[i], data, len, d) < 0)
			return -EIO;
		put_u16(out, banks[i]->alg);
		strbuf_add(out, d, banks[i]->size);
	}
	put_u32(out, (uint32_t)len);
	strbuf_add(out, data, len);
	return 0;
}

int eventlog_append_prepare(const char *path, const struct bank *const *banks, size_t nbanks,
			    uint32_t pcr, uint32_t type, const void *data, size_t len,
			    struct atomic_file *af, ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	struct stat st;
	int r;

	strbuf_init(&buf, 4096);
	if (stat(path, &st) == 0) {
		struct eventlog log;

		r = eventlog_load(path, &log, e);
		if (r < 0)
			return r;
		if (log.format != EVENTLOG_CRYPTO_AGILE) {
			eventlog_free(&log);
			return ingot_fail(e, -EBADMSG, "%s: expected a crypto-agile log to append to, got a SHA1-format (TCG 1.2) log",
					  path);
		}
		r = log.nbanks == nbanks ? 0 : -1;
		for (size_t i = 0; r == 0 && i < nbanks; i++)
			if (log.banks[i] != banks[i])
				r = -1;
		if (r < 0) {
			struct strbuf have = STRBUF_INIT, want = STRBUF_INIT;
			for (size_t i = 0; i < log.nbanks; i++)
				strbuf_addf(&have, "%s%s", i ? "," : "", log.banks[i]->name);
			for (size_t i = 0; i < nbanks; i++)
				strbuf_addf(&want, "%s%s", i ? "," : "", banks[i]->name);
			r = ingot_fail(e, -EBADMSG, "%s: banks: expected %s (the TPM's active banks), got %s in the log's Spec ID event",
				       path, want.buf, have.buf);
			strbuf_release(&have);
			strbuf_release(&want);
			eventlog_free(&log);
			return r;
		}
		strbuf_add(&buf, log.raw, log.len);
		eventlog_free(&log);
	} else if (errno != ENOENT) {
		return ingot_fail(e, -errno, "%s: cannot stat: %s", path, strerror(errno));
	} else if (eventlog_encode_header(banks, nbanks, &buf) < 0) {
		return ingot_fail(e, -EINVAL, "%s: cannot encode a header for %zu banks", path, nbanks);
	}
	if (buf.len + len + 1024 > EVENTLOG_MAX_BYTES)
		return ingot_fail(e, -EFBIG, "%s: log size: expected at most %u bytes after appending, got more",
				  path, EVENTLOG_MAX_BYTES);
	r = eventlog_encode_event(banks, nbanks, pcr, type, data, len, &buf);
	if (r < 0)
		return ingot_fail(e, r, "%s: cannot encode the event (PCR %u, %zu bytes)", path, pcr, len);
	r = atomic_open(af, path, 0644, e);
	if (r < 0)
		return r;
	return atomic_write(af, buf.buf, buf.len, e);
}
