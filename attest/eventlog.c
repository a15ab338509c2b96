#include "attest/eventlog.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/xalloc.h"

#define STARTUP_LOCALITY "StartupLocality"     /* 16 bytes with the NUL */
#define SPEC_ID_MAX_ALGS 16

/* Bounds-checked little-endian reader over the log. */
struct cursor {
	const uint8_t *p;
	size_t len, off;
};

static int take(struct cursor *c, size_t n, const uint8_t **out)
{
	if (n > c->len - c->off)
		return -1;
	*out = c->p + c->off;
	c->off += n;
	return 0;
}

static int get_u8(struct cursor *c, uint8_t *v)
{
	const uint8_t *b;
	if (take(c, 1, &b) < 0)
		return -1;
	*v = b[0];
	return 0;
}

static int get_u16(struct cursor *c, uint16_t *v)
{
	const uint8_t *b;
	if (take(c, 2, &b) < 0)
		return -1;
	*v = (uint16_t)(b[0] | b[1] << 8);
	return 0;
}

static int get_u32(struct cursor *c, uint32_t *v)
{
	const uint8_t *b;
	if (take(c, 4, &b) < 0)
		return -1;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 0;
}

void eventlog_free(struct eventlog *log)
{
	free(log->raw);
	free(log->name);
	free(log->events);
	memset(log, 0, sizeof(*log));
	log->startup_locality = -1;
}

static int truncated(const struct eventlog *log, const char *what, size_t off, ingot_error *e)
{
	return ingot_fail(e, -EBADMSG, "%s: offset %zu: truncated log: expected %s, got end of file after %zu bytes",
			  log->name, off, what, log->len);
}

static int parse_spec_id(struct eventlog *log, const uint8_t *ev, uint32_t size, size_t off, ingot_error *e)
{
	struct cursor c = { ev, size, 0 };
	const uint8_t *sig;
	uint32_t nalgs;
	uint8_t vendor;

	if (take(&c, 16, &sig) < 0 || memcmp(sig, EVENTLOG_SPEC_ID, 16))
		return ingot_fail(e, -EBADMSG, "%s: offset %zu: header event: expected the \"" EVENTLOG_SPEC_ID
				  "\" signature of a crypto-agile log after an EV_NO_ACTION first record, got something else",
				  log->name, off);
	if (get_u32(&c, &log->platform_class) < 0 || get_u8(&c, &log->spec_minor) < 0 ||
	    get_u8(&c, &log->spec_major) < 0 || get_u8(&c, &log->spec_errata) < 0 ||
	    get_u8(&c, &log->uintn_size) < 0 || get_u32(&c, &nalgs) < 0)
		return truncated(log, "the Spec ID event's fields", off, e);
	if (nalgs == 0 || nalgs > SPEC_ID_MAX_ALGS)
		return ingot_fail(e, -EBADMSG, "%s: offset %zu: Spec ID event: numberOfAlgorithms: expected 1-%d, got %u",
				  log->name, off, SPEC_ID_MAX_ALGS, nalgs);
	for (uint32_t i = 0; i < nalgs; i++) {
		const struct bank *b;
		uint16_t alg, dsize;

		if (get_u16(&c, &alg) < 0 || get_u16(&c, &dsize) < 0)
			return truncated(log, "the Spec ID event's algorithm list", off, e);
		b = bank_by_alg(alg);
		if (!b)
			return ingot_fail(e, -EPROTONOSUPPORT, "%s: offset %zu: Spec ID event: unknown algorithm 0x%04x (digest size %u): expected sha1, sha256, sha384 or sha512",
					  log->name, off, alg, dsize);
		if (dsize != b->size)
			return ingot_fail(e, -EBADMSG, "%s: offset %zu: Spec ID event: %s digest size: expected %zu, got %u",
					  log->name, off, b->name, b->size, dsize);
		for (size_t j = 0; j < log->nbanks; j++)
			if (log->banks[j] == b)
				return ingot_fail(e, -EBADMSG, "%s: offset %zu: Spec ID event: algorithm %s listed twice",
						  log->name, off, b->name);
		log->banks[log->nbanks++] = b;
	}
	if (get_u8(&c, &vendor) < 0 || c.len - c.off < vendor)
		return truncated(log, "the Spec ID event's vendor info", off, e);
	return 0;
}

static int parse_header(struct eventlog *log, struct cursor *c, ingot_error *e)
{
	uint32_t pcr, type, size;
	const uint8_t *digest, *ev;

	if (get_u32(c, &pcr) < 0 || get_u32(c, &type) < 0 || take(c, 20, &digest) < 0 ||
	    get_u32(c, &size) < 0)
		return truncated(log, "a TCG_PCR_EVENT header", 0, e);
	if (size > EVENTLOG_MAX_EVENT_SIZE)
		return ingot_fail(e, -EFBIG, "%s: offset 0: header event size: expected at most %u, got %u",
				  log->name, EVENTLOG_MAX_EVENT_SIZE, size);
	if (take(c, size, &ev) < 0)
		return truncated(log, "the header event's data", 0, e);
	return parse_spec_id(log, ev, size, 0, e);
}

/* Checks common to both record formats, once the data is taken. */
static int check_event(struct eventlog *log, const struct eventlog_event *ev, size_t num, ingot_error *e)
{
	if (ev->type != EV_NO_ACTION && ev->pcr >= PCR_COUNT)
		return ingot_fail(e, -EBADMSG, "%s: event %zu (offset %zu): PCR index: expected 0-%d, got %u",
				  log->name, num, ev->offset, PCR_COUNT - 1, ev->pcr);
	/* PC Client spec 10.4.5.3: locality the platform started from, the
	 * initial value of PCR 0. */
	if (ev->type == EV_NO_ACTION && ev->pcr == 0 && ev->data_len == sizeof(STARTUP_LOCALITY) + 1 &&
	    !memcmp(ev->data, STARTUP_LOCALITY, sizeof(STARTUP_LOCALITY)))
		log->startup_locality = ev->data[sizeof(STARTUP_LOCALITY)];
	return 0;
}

static int take_data(struct eventlog *log, struct cursor *c, struct eventlog_event *ev, size_t num, ingot_error *e)
{
	uint32_t size;

	if (get_u32(c, &size) < 0)
		return truncated(log, "an event size", ev->offset, e);
	if (size > EVENTLOG_MAX_EVENT_SIZE)
		return ingot_fail(e, -EFBIG, "%s: event %zu (offset %zu): event size: expected at most %u, got %u",
				  log->name, num, ev->offset, EVENTLOG_MAX_EVENT_SIZE, size);
	if (take(c, size, &ev->data) < 0)
		return truncated(log, "the event's data", ev->offset, e);
	ev->data_len = size;
	return check_event(log, ev, num, e);
}

/* A TCG 1.2 TCG_PCR_EVENT record: PCR, type, SHA-1 digest, data. */
static int parse_sha1_event(struct eventlog *log, struct cursor *c, struct eventlog_event *ev, ingot_error *e)
{
	size_t num = log->nevents + 1;
	const uint8_t *d;

	memset(ev, 0, sizeof(*ev));
	ev->offset = c->off;
	if (get_u32(c, &ev->pcr) < 0 || get_u32(c, &ev->type) < 0 || take(c, 20, &d) < 0)
		return truncated(log, "a TCG_PCR_EVENT record", ev->offset, e);
	ev->ndigests = 1;
	ev->digests[0].bank = log->banks[0];
	memcpy(ev->digests[0].d, d, 20);
	return take_data(log, c, ev, num, e);
}

static int parse_event(struct eventlog *log, struct cursor *c, struct eventlog_event *ev, ingot_error *e)
{
	size_t off = c->off, num = log->nevents + 1;
	uint32_t count;

	memset(ev, 0, sizeof(*ev));
	ev->offset = off;
	if (get_u32(c, &ev->pcr) < 0 || get_u32(c, &ev->type) < 0 || get_u32(c, &count) < 0)
		return truncated(log, "a TCG_PCR_EVENT2 record", off, e);
	if (count == 0 || count > log->nbanks)
		return ingot_fail(e, -EBADMSG, "%s: event %zu (offset %zu): digest count: expected 1-%zu (the Spec ID event's banks), got %u",
				  log->name, num, off, log->nbanks, count);
	for (uint32_t i = 0; i < count; i++) {
		const struct bank *b = NULL;
		const uint8_t *d;
		uint16_t alg;

		if (get_u16(c, &alg) < 0)
			return truncated(log, "a digest's algorithm", off, e);
		for (size_t j = 0; j < log->nbanks; j++)
			if (log->banks[j]->alg == alg)
				b = log->banks[j];
		if (!b)
			return ingot_fail(e, -EPROTONOSUPPORT, "%s: event %zu (offset %zu): unknown algorithm 0x%04x: expected one of the Spec ID event's banks",
					  log->name, num, off, alg);
		for (size_t j = 0; j < ev->ndigests; j++)
			if (ev->digests[j].bank == b)
				return ingot_fail(e, -EBADMSG, "%s: event %zu (offset %zu): %s digest appears twice",
						  log->name, num, off, b->name);
		if (take(c, b->size, &d) < 0)
			return truncated(log, "a digest", off, e);
		ev->digests[ev->ndigests].bank = b;
		memcpy(ev->digests[ev->ndigests].d, d, b->size);
		ev->ndigests++;
	}
	return take_data(log, c, ev, num, e);
}

/* tpm2_eventlog's rule: a first record of type EV_NO_ACTION is the
 * crypto-agile header; any other starts a SHA1-format log. */
static int parse_start(struct eventlog *log, struct cursor *c, ingot_error *e)
{
	uint32_t type;
	struct cursor peek = *c;

	if (get_u32(&peek, &type) < 0 || get_u32(&peek, &type) < 0)
		return truncated(log, "a TCG_PCR_EVENT header", 0, e);
	if (type == EV_NO_ACTION)
		return parse_header(log, c, e);
	log->format = EVENTLOG_SHA1;
	log->banks[0] = bank_by_alg(0x0004 /* TPM2_ALG_SHA1 */);
	log->nbanks = 1;
	return 0;
}

int eventlog_parse(const char *name, const void *buf, size_t len, struct eventlog *out, ingot_error *e)
{
	struct eventlog log = { .startup_locality = -1 };
	struct cursor c;
	size_t alloc = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->startup_locality = -1;
	if (len > EVENTLOG_MAX_BYTES)
		return ingot_fail(e, -EFBIG, "%s: log size: expected at most %u bytes, got %zu",
				  name, EVENTLOG_MAX_BYTES, len);
	log.name = xstrdup(name);
	log.raw = xmalloc(len);
	memcpy(log.raw, buf, len);
	log.len = len;
	c = (struct cursor){ log.raw, len, 0 };
	r = parse_start(&log, &c, e);
	while (r >= 0 && c.off < c.len) {
		if (log.nevents == EVENTLOG_MAX_EVENTS) {
			r = ingot_fail(e, -E2BIG, "%s: offset %zu: too many events: expected at most %u",
				       name, c.off, EVENTLOG_MAX_EVENTS);
			break;
		}
		if (log.nevents == alloc) {
			size_t n = alloc ? 2 * alloc : 64;
			log.events = xrealloc(log.events, n * sizeof(*log.events));
			alloc = n;
		}
		r = (log.format == EVENTLOG_SHA1 ? parse_sha1_event : parse_event)(&log, &c, &log.events[log.nevents], e);
		if (r >= 0)
			log.nevents++;
	}
	if (r < 0) {
		eventlog_free(&log);
		return r;
	}
	*out = log;
	return 0;
}

int eventlog_load(const char *path, struct eventlog *out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	out->startup_locality = -1;
	r = read_file(path, EVENTLOG_MAX_BYTES, &buf, &len, e);
	if (r < 0)
		return r;
	return eventlog_parse(path, buf, len, out, e);
}

static void replay_init(const struct eventlog *log, struct pcr_values *v)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < log->nbanks; i++) {
		struct pcr_bank *pb = pcr_values_bank(v, log->banks[i]->alg, 1);
		if (log->startup_locality >= 0)
			pb->value[0][pb->bank->size - 1] = (uint8_t)log->startup_locality;
	}
}

static int replay_event(const struct eventlog *log, const struct eventlog_event *ev,
			struct pcr_values *v, ingot_error *e)
{
	if (ev->type == EV_NO_ACTION)
		return 0;
	for (size_t j = 0; j < ev->ndigests; j++) {
		struct pcr_bank *pb = pcr_values_bank(v, ev->digests[j].bank->alg, 0);
		if (bank_extend(pb->bank, pb->value[ev->pcr], ev->digests[j].d) < 0)
			return ingot_fail(e, -EIO, "%s: cannot compute %s", log->name, pb->bank->name);
		pb->mask |= 1u << ev->pcr;
	}
	return 0;
}

int eventlog_replay(const struct eventlog *log, struct pcr_values *out, ingot_error *e)
{
	replay_init(log, out);
	for (size_t i = 0; i < log->nevents; i++) {
		int r = replay_event(log, &log->events[i], out, e);
		if (r < 0)
			return r;
	}
	return 0;
}

static void describe_event(const struct eventlog *log, size_t idx, char *buf, size_t len)
{
	const struct eventlog_event *ev = &log->events[idx];
	const char *tn = eventlog_type_name(ev->type);

	if (tn)
		snprintf(buf, len, "event %zu (offset %zu, %s)", idx + 1, ev->offset, tn);
	else
		snprintf(buf, len, "event %zu (offset %zu, type 0x%x)", idx + 1, ev->offset, ev->type);
}

/* The index of the first event on (bank, pcr) the TPM did not see as
 * logged: the one after the longest prefix whose value equals actual.
 * Returns -1 when no prefix reproduces actual. */
static long first_divergent(const struct eventlog *log, const struct bank *b, unsigned pcr,
			    const uint8_t *actual)
{
	uint8_t v[BANK_MAX_DIGEST] = { 0 };
	long divergent = -1;
	int matched;

	if (pcr == 0 && log->startup_locality >= 0)
		v[b->size - 1] = (uint8_t)log->startup_locality;
	matched = !memcmp(v, actual, b->size);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];

		if (ev->type == EV_NO_ACTION || ev->pcr != pcr)
			continue;
		for (size_t j = 0; j < ev->ndigests; j++) {
			if (ev->digests[j].bank != b)
				continue;
			if (matched)
				divergent = (long)i;
			bank_extend(b, v, ev->digests[j].d);
			matched = !memcmp(v, actual, b->size);
		}
	}
	return divergent;
}

int eventlog_compare(const struct eventlog *log, const struct pcr_values *actual,
		     const struct pcr_selection *sel, ingot_error *e)
{
	struct pcr_selection touched;
	struct pcr_values replayed;
	char hex_r[2 * BANK_MAX_DIGEST + 1], hex_a[2 * BANK_MAX_DIGEST + 1], what[96];
	const struct bank *worst_bank = NULL;
	unsigned worst_pcr = 0;
	long worst = -2;
	size_t mismatches = 0;
	int r;

	r = eventlog_replay(log, &replayed, e);
	if (r < 0)
		return r;
	if (!sel) {
		memset(&touched, 0, sizeof(touched));
		for (size_t i = 0; i < replayed.nbanks; i++)
			if (pcr_values_find(actual, replayed.banks[i].bank->alg) && replayed.banks[i].mask)
				pcr_selection_add(&touched, replayed.banks[i].bank->alg, replayed.banks[i].mask);
		sel = &touched;  /* may be empty: nothing to disagree with */
	}
	for (size_t i = 0; i < sel->nbanks; i++) {
		const struct bank *b = bank_by_alg(sel->banks[i].alg);
		const struct pcr_bank *rb = pcr_values_find(&replayed, sel->banks[i].alg);
		const struct pcr_bank *ab = pcr_values_find(actual, sel->banks[i].alg);

		if (!rb)
			return ingot_fail(e, -ENODATA, "%s: bank %s: expected in the log's Spec ID event, got only other banks",
					  log->name, b->name);
		for (unsigned p = 0; p < PCR_COUNT; p++) {
			long d;

			if (!(sel->banks[i].mask & (1u << p)))
				continue;
			if (!ab || !(ab->mask & (1u << p)))
				return ingot_fail(e, -ENODATA, "%s: %s PCR %u: expected a TPM value to compare with, got none",
						  log->name, b->name, p);
			if (!memcmp(rb->value[p], ab->value[p], b->size))
				continue;
			mismatches++;
			d = first_divergent(log, b, p, ab->value[p]);
			/* Report the earliest divergent event; "no prefix matches" last. */
			if (worst == -2 || (d >= 0 && (worst < 0 || d < worst))) {
				worst = d;
				worst_bank = b;
				worst_pcr = p;
			}
		}
	}
	if (!mismatches)
		return 0;
	{
		const struct pcr_bank *rb = pcr_values_find(&replayed, worst_bank->alg);
		const struct pcr_bank *ab = pcr_values_find(actual, worst_bank->alg);

		hex_encode(rb->value[worst_pcr], worst_bank->size, hex_r);
		hex_encode(ab->value[worst_pcr], worst_bank->size, hex_a);
	}
	if (worst >= 0) {
		describe_event(log, (size_t)worst, what, sizeof(what));
		return ingot_fail(e, -EBADMSG, "%s: %s PCR %u: first divergent event is %s: the TPM value %s matches the log only before it (log replays to %s; %zu PCR(s) differ)",
				  log->name, worst_bank->name, worst_pcr, what, hex_a, hex_r, mismatches);
	}
	return ingot_fail(e, -EBADMSG, "%s: %s PCR %u: expected %s from the log, got %s from the TPM, which no prefix of the log reaches: the TPM has extends the log does not record (%zu PCR(s) differ)",
			  log->name, worst_bank->name, worst_pcr, hex_r, hex_a, mismatches);
}
