/* Units for attest/eventlog.c: parsing bounds and errors, replay,
 * comparison with TPM values (naming the first divergent event), and
 * ingot's own log writer.  The real firmware logs are replayed by
 * tests/e2e/test-attest-eventlog.sh against tpm2_eventlog's values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest/eventlog.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"

static const struct bank *two[2];

static int setup(void **state)
{
	(void)state;
	two[0] = bank_by_name("sha1");
	two[1] = bank_by_name("sha256");
	return 0;
}

/* Header for sha1+sha256, then events (pcr, data) given as pairs. */
static void build(struct strbuf *sb, const unsigned *pcrs, const char *const *data, size_t n)
{
	strbuf_init(sb, 1024);
	assert_int_equal(eventlog_encode_header(two, 2, sb), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(eventlog_encode_event(two, 2, pcrs[i], 0x0d, data[i], strlen(data[i]), sb), 0);
}

static void test_roundtrip_and_replay(void **state)
{
	static const unsigned pcrs[] = { 16, 16, 0 };
	static const char *const data[] = { "one", "two", "zero" };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct eventlog log;
	struct pcr_values v;
	uint8_t want[32] = { 0 }, d[32];
	ingot_error e = { 0 };
	(void)state;

	build(&sb, pcrs, data, 3);
	assert_int_equal(eventlog_parse("t", sb.buf, sb.len, &log, &e), 0);
	assert_int_equal(log.nbanks, 2);
	assert_ptr_equal(log.banks[1], two[1]);
	assert_int_equal(log.nevents, 3);
	assert_int_equal(log.events[1].pcr, 16);
	assert_int_equal(log.events[1].data_len, 3);
	assert_memory_equal(log.events[1].data, "two", 3);
	assert_int_equal(log.startup_locality, -1);
	assert_int_equal(eventlog_replay(&log, &v, &e), 0);
	/* sha256 PCR 16 = H(H(0 || H("one")) || H("two")), computed by hand. */
	sha256_buf("one", 3, d);
	{
		uint8_t buf[64];
		memcpy(buf, want, 32); memcpy(buf + 32, d, 32); sha256_buf(buf, 64, want);
		sha256_buf("two", 3, d);
		memcpy(buf, want, 32); memcpy(buf + 32, d, 32); sha256_buf(buf, 64, want);
	}
	assert_memory_equal(pcr_values_find(&v, two[1]->alg)->value[16], want, 32);
	assert_int_equal(pcr_values_find(&v, two[1]->alg)->mask, (1u << 16) | 1u);
	eventlog_free(&log);
}

static void test_compare_names_divergent_event(void **state)
{
	static const unsigned pcrs[] = { 16, 0, 16, 16 };
	static const char *const data[] = { "a", "z", "b", "c" };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct eventlog log, shorter;
	struct pcr_values full, partial, extra;
	struct pcr_selection sel = { 0 };
	uint8_t x[32];
	ingot_error e = { 0 };
	(void)state;

	build(&sb, pcrs, data, 4);
	assert_int_equal(eventlog_parse("log", sb.buf, sb.len, &log, &e), 0);
	assert_int_equal(eventlog_replay(&log, &full, &e), 0);
	assert_int_equal(eventlog_compare(&log, &full, NULL, &e), 0);

	/* The TPM saw only the first 3 events: event 4 is the divergent one. */
	assert_int_equal(eventlog_parse("log", sb.buf, sb.len, &shorter, &e), 0);
	shorter.nevents = 3;
	assert_int_equal(eventlog_replay(&shorter, &partial, &e), 0);
	assert_int_equal(eventlog_compare(&log, &partial, NULL, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "PCR 16: first divergent event is event 4 (offset"));
	assert_non_null(strstr(e.msg, "EV_IPL"));
	assert_non_null(strstr(e.msg, "2 PCR(s) differ"));  /* sha1 and sha256 */

	/* The TPM saw one more extend than the log records. */
	extra = full;
	memset(x, 7, sizeof(x));
	bank_extend(two[1], pcr_values_bank(&extra, two[1]->alg, 0)->value[0], x);
	assert_int_equal(eventlog_compare(&log, &extra, NULL, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "sha256 PCR 0: expected"));
	assert_non_null(strstr(e.msg, "the TPM has extends the log does not record"));

	/* A selected PCR the log never extends must be at its reset value. */
	pcr_selection_add(&sel, two[1]->alg, 1u << 5);
	pcr_values_bank(&full, two[1]->alg, 0)->mask |= 1u << 5;
	assert_int_equal(eventlog_compare(&log, &full, &sel, &e), 0);
	pcr_values_bank(&full, two[1]->alg, 0)->value[5][0] = 1;
	assert_int_equal(eventlog_compare(&log, &full, &sel, &e), -EBADMSG);
	/* ... and a TPM value must exist for every selected PCR. */
	sel.banks[0].mask = 1u << 6;
	assert_int_equal(eventlog_compare(&log, &full, &sel, &e), -ENODATA);
	assert_non_null(strstr(e.msg, "sha256 PCR 6: expected a TPM value"));
	shorter.nevents = 4;
	eventlog_free(&shorter);
	eventlog_free(&log);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static void expect_refused(const void *buf, size_t len, int code, const char *needle)
{
	struct eventlog log;
	ingot_error e = { 0 };

	int r = eventlog_parse("bad.bin", buf, len, &log, &e);

	if (r != code || !strstr(e.msg, needle))
		fail_msg("expected %d '%s', got %d: %s", code, needle, r, e.msg);
	assert_null(log.events);
	eventlog_free(&log);
}

static void test_refusals(void **state)
{
	static const unsigned pcrs[] = { 1 };
	static const char *const data[] = { "abc" };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ uint8_t *b = NULL;
	size_t hdr;
	(void)state;

	build(&sb, pcrs, data, 1);
	b = malloc(sb.len);
	memcpy(b, sb.buf, sb.len);
	hdr = 32 + 16 + 4 + 4 + 4 + 8 + 1;  /* TCG_PCR_EVENT + Spec ID for two banks */

	/* Every truncation point is refused (never read past the end). */
	for (size_t cut = 0; cut < sb.len; cut++)
		if (cut != hdr)
			expect_refused(b, cut, -EBADMSG, "truncated log");
	/* Unknown algorithm in the Spec ID event (SM3_256). */
	b[32 + 28] = 0x12;
	expect_refused(b, sb.len, -EPROTONOSUPPORT, "unknown algorithm 0x0012");
	b[32 + 28] = 0x04;
	/* Event size overflow. */
	put32(b + sb.len - 3 - 4, 0xfffffff0u);
	expect_refused(b, sb.len, -EFBIG, "event size: expected at most");
	put32(b + sb.len - 3 - 4, 3);
	/* Digest of an algorithm the header does not list. */
	b[hdr + 12] = 0x0c;
	expect_refused(b, sb.len, -EPROTONOSUPPORT, "event 1 (offset");
	b[hdr + 12] = 0x04;
	/* PCR index out of range for a measured event. */
	put32(b + hdr, 24);
	expect_refused(b, sb.len, -EBADMSG, "PCR index: expected 0-23, got 24");
	put32(b + hdr, 1);
	/* Too many digests. */
	put32(b + hdr + 8, 3);
	expect_refused(b, sb.len, -EBADMSG, "digest count: expected 1-2");
	put32(b + hdr + 8, 2);
	/* Not a crypto-agile log. */
	b[32] = 'X';
	expect_refused(b, sb.len, -EBADMSG, "Spec ID Event03");
	b[32] = 'S';
	{
		struct eventlog log;
		ingot_error e = { 0 };
		assert_int_equal(eventlog_parse("ok.bin", b, sb.len, &log, &e), 0);
		eventlog_free(&log);
	}
}

static void test_too_many_events(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct eventlog log;
	ingot_error e = { 0 };
	(void)state;

	strbuf_init(&sb, 1 << 22);
	eventlog_encode_header(two, 2, &sb);
	for (unsigned i = 0; i <= EVENTLOG_MAX_EVENTS; i++)
		eventlog_encode_event(two, 2, 16, 1, "", 0, &sb);
	assert_int_equal(eventlog_parse("many", sb.buf, sb.len, &log, &e), -E2BIG);
	assert_non_null(strstr(e.msg, "too many events: expected at most 65536"));
	eventlog_free(&log);
}

static void test_startup_locality_and_no_action(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	static const char loc[] = "StartupLocality\0\3";
	struct eventlog log;
	struct pcr_values v;
	uint8_t want[20] = { 0 }, d[20];
	ingot_error e = { 0 };
	(void)state;

	strbuf_init(&sb, 256);
	eventlog_encode_header(two, 1, &sb);  /* sha1 only */
	eventlog_encode_event(two, 1, 0, EV_NO_ACTION, loc, sizeof(loc) - 1, &sb);
	eventlog_encode_event(two, 1, 5, EV_NO_ACTION, "ignored", 7, &sb);
	eventlog_encode_event(two, 1, 0, 1, "x", 1, &sb);
	assert_int_equal(eventlog_parse("loc", sb.buf, sb.len, &log, &e), 0);
	assert_int_equal(log.startup_locality, 3);
	assert_int_equal(eventlog_replay(&log, &v, &e), 0);
	want[19] = 3;
	bank_hash(two[0], "x", 1, d);
	bank_extend(two[0], want, d);
	assert_memory_equal(v.banks[0].value[0], want, 20);
	assert_int_equal(v.banks[0].mask, 1u);  /* PCR 5's EV_NO_ACTION extends nothing */
	eventlog_free(&log);
}

static void test_append_prepare(void **state)
{
	char dir[] = "/tmp/ingot-evlog-XXXXXX";
	_cleanup_free_ char *path = NULL;
	struct atomic_file af = { .fd = -1 };
	struct eventlog log;
	ingot_error e = { 0 };
	(void)state;

	assert_non_null(mkdtemp(dir));
	path = path_join(dir, "log.bin");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(eventlog_append_prepare(path, two, 2, 15, 0x0d, "ev", 2, &af, &e), 0);
		/* Not committed yet: the old log (or none) stays in place. */
		if (i == 0)
			assert_int_equal(access(path, F_OK), -1);
		assert_int_equal(atomic_commit(&af, &e), 0);
	}
	assert_int_equal(eventlog_load(path, &log, &e), 0);
	assert_int_equal(log.nevents, 2);
	eventlog_free(&log);
	/* A log for other banks is not appended to. */
	assert_int_equal(eventlog_append_prepare(path, two + 1, 1, 15, 0x0d, "ev", 2, &af, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "banks: expected sha256 (the TPM's active banks), got sha1,sha256"));
	atomic_abort(&af);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_and_replay),
		cmocka_unit_test(test_compare_names_divergent_event),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_too_many_events),
		cmocka_unit_test(test_startup_locality_and_no_action),
		cmocka_unit_test(test_append_prepare),
	};
	return cmocka_run_group_tests_name("attest_eventlog", tests, setup, NULL);
}
