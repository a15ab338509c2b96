/* attest/bootpolicy.c: a synthetic firmware log and quoted PCRs that match
 * a manifest's boot predictions are admitted; each tampering the policy
 * exists for (another UKI, another PCR 11, a command line override, an
 * extra PCR 15 extend, a log that does not replay) is refused with its
 * reason; missing evidence is "not made", never a pass. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "attest/bootpolicy.h"
#include "attest/bootpredict.h"
#include "lib/digest.h"
#include "lib/le.h"

#define EV_APP 0x80000003u
#define EV_IPL 0x0000000Du

static const uint8_t UKI[32] = { 0x11, 0x22 }, LINUX[32] = { 0x33 }, OTHER[32] = { 0x44 };
static const char ROOT_HEX[] = "9cd32e46a200325458189c884799a3d029c04f26d35bc5d15ea82461f96c50eb";

static void put32(struct strbuf *s, uint32_t v)
{
	uint8_t b[4];
	le_put(b, v, 4);
	strbuf_add(s, b, 4);
}

/* One TCG_PCR_EVENT2 with a given sha256 digest. */
static void event(struct strbuf *s, uint32_t pcr, uint32_t type, const uint8_t d[32])
{
	put32(s, pcr);
	put32(s, type);
	put32(s, 1);
	strbuf_add(s, "\x0b\x00", 2);
	strbuf_add(s, d, 32);
	put32(s, 0);
}

struct fixture {
	struct strbuf log;
	struct eventlog parsed;
	struct pcr_values quoted;
	json_t *manifest;
};

static void make_log(struct fixture *f, const uint8_t *first_app, int pcr12_event)
{
	const struct bank *b = bank_by_name("sha256");
	uint8_t d[32] = { 0x55 };
	ingot_error e = { 0 };

	strbuf_reset(&f->log);
	assert_int_equal(eventlog_encode_header(&b, 1, &f->log), 0);
	event(&f->log, 7, EV_IPL, d);
	event(&f->log, 4, EV_APP, first_app);
	event(&f->log, 4, EV_APP, LINUX);
	event(&f->log, 11, EV_IPL, d);
	if (pcr12_event)
		event(&f->log, 12, EV_IPL, d);
	eventlog_free(&f->parsed);
	assert_int_equal(eventlog_parse("log", f->log.buf, f->log.len, &f->parsed, &e), 0);
}

/* Quoted = the log's replay, PCR 9 and 12 at reset unless logged, PCR 15
 * after `extends` extends (the first with the image's event). */
static void make_quote(struct fixture *f, int extends)
{
	const struct bank *b = bank_by_name("sha256");
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	uint8_t root[32], d[32];
	ingot_error e = { 0 };
	struct pcr_bank *q;

	assert_int_equal(eventlog_replay(&f->parsed, &f->quoted, &e), 0);
	q = pcr_values_bank(&f->quoted, b->alg, 1);
	q->mask |= 1u << 9 | 1u << 12 | 1u << 15;
	memset(q->value[15], 0, 32);
	hex_decode(ROOT_HEX, root, 32);
	assert_int_equal(boot_image_event("img", root, &ev), 0);
	for (int i = 0; i < extends; i++) {
		bank_hash(b, i ? "again" : ev.buf, i ? 5 : ev.len, d);
		bank_extend(b, q->value[15], d);
	}
}

static void set_pcr11_prediction(struct fixture *f, const uint8_t *v)
{
	char hex[65];
	hex_encode(v, 32, hex);
	json_object_set_new(json_object_get(json_object_get(json_object_get(f->manifest, "boot"), "pcr11"), "predicted"),
			    "sha256", json_string(hex));
}

static int setup(void **state)
{
	static struct fixture f;
	char uki[65], lin[65];

	memset(&f, 0, sizeof(f));
	strbuf_init(&f.log, 1024);
	hex_encode(UKI, 32, uki);
	hex_encode(LINUX, 32, lin);
	f.manifest = json_pack("{s:{s:s},s:{s:s},s:{s:{s:s},s:s,s:{s:{}}}}", "recipe", "name", "img",
			       "verity", "root_hash", ROOT_HEX, "boot", "uki", "authenticode_sha256", uki,
			       "linux_authenticode_sha256", lin, "pcr11", "predicted");
	make_log(&f, UKI, 0);
	make_quote(&f, 1);
	set_pcr11_prediction(&f, pcr_values_find(&f.quoted, 0x000b)->value[11]);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	eventlog_free(&f->parsed);
	strbuf_release(&f->log);
	json_decref(f->manifest);
	return 0;
}

static void expect(struct fixture *f, enum boot_verdict v, const char *needle)
{
	struct boot_decision d;
	boot_policy_check(f->manifest, &f->parsed, &f->quoted, &d);
	if (d.verdict != v || !strstr(d.reason, needle))
		fail_msg("expected %s with '%s', got %s: %s", boot_verdict_name(v), needle, boot_verdict_name(d.verdict),
			 d.reason);
}

static void test_admit(void **state)
{
	expect(*state, BOOT_ADMIT, "booted the manifest's UKI");
}

static void test_other_uki(void **state)
{
	struct fixture *f = *state;
	make_log(f, OTHER, 0);
	make_quote(f, 1);
	expect(f, BOOT_REFUSE, "PCR 4: boot application 1");
}

static void test_other_pcr11(void **state)
{
	struct fixture *f = *state;
	set_pcr11_prediction(f, OTHER);
	expect(f, BOOT_REFUSE, "PCR 11:");
}

static void test_cmdline_override(void **state)
{
	struct fixture *f = *state;
	make_log(f, UKI, 1);
	make_quote(f, 1);
	expect(f, BOOT_REFUSE, "PCR 12:");
}

static void test_extra_pcr15_extend(void **state)
{
	struct fixture *f = *state;
	make_quote(f, 2);
	expect(f, BOOT_REFUSE, "PCR 15:");
	make_quote(f, 0);
	expect(f, BOOT_REFUSE, "PCR 15:");
}

static void test_log_does_not_replay(void **state)
{
	struct fixture *f = *state;
	pcr_values_bank(&f->quoted, 0x000b, 0)->value[4][0] ^= 1;
	expect(f, BOOT_REFUSE, "event log:");
}

static void test_not_made(void **state)
{
	struct fixture *f = *state;
	pcr_values_bank(&f->quoted, 0x000b, 0)->mask &= ~(1u << 15);
	expect(f, BOOT_NOT_MADE, "PCR 15: not in the quote");
	make_quote(f, 1);
	json_object_del(f->manifest, "boot");
	expect(f, BOOT_NOT_MADE, "no boot object");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_admit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_uki, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_pcr11, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmdline_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extra_pcr15_extend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_does_not_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_made, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
