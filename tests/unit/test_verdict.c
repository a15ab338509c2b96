/* attest/verdict.c: a synthetic firmware log (PCRs 0, 2, 4, 7, 11) and a
 * quote signed here over its replay are admitted with an enrolled AK, a
 * Secure Boot manifest and a firmware reference recorded from the same
 * boot; each attack of issue 23 is refused with its reason: a quote from a
 * software key, an AK taken from the evidence, a relabelled boot
 * application, an extra one, event data that no longer hashes to its
 * digest, Secure Boot off, other firmware, a replayed nonce; no enrolled
 * AK is "unverified", never admitted; weaknesses are refused unless
 * accepted by name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>
#include <unistd.h>

#include "manifest/typed.h"
#include "attest/bootpredict.h"
#include "attest/firmware-ref.h"
#include "attest/verdict.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/le.h"
#include "tests/unit/helpers.h"

static const uint8_t UKI[32] = { 0x11, 0x22 }, LINUX[32] = { 0x33 }, OTHER[32] = { 0x44 };
static const char ROOT_HEX[] = "9cd32e46a200325458189c884799a3d029c04f26d35bc5d15ea82461f96c50eb";
static const char NONCE[] = "00112233445566778899aabbccddeeff";
static const char CERT[] = "0\x82 the UKI signer's DER certificate", ROM_CERT[] = "a ROM's certificate";

enum { SB_ON = 1, SB_OFF = 2, SB_FORGED = 3 };

struct fixture {
	EVP_PKEY *ak, *soft;
	char *ak_pem, *soft_pem, ak_id[65];
	struct strbuf log;
	struct eventlog parsed;
	struct pcr_values quoted;
	json_t *doc, *quote;      /* the manifest as JSON, edited by the tests ... */
	struct manifest *manifest;   /* ... and as the verdict reads it (decoded at each call) */
	struct firmware_ref fw;
	struct enrolled_ak enrolled;
	struct nonce nonce;   /* NONCE, decoded */
	struct boot_evidence ev;
	struct boot_result res;
	char dir[64], seen[96];
};

static void put32(struct strbuf *s, uint32_t v)
{
	uint8_t b[4];
	le_put(b, v, 4);
	strbuf_add(s, b, 4);
}

/* One TCG_PCR_EVENT2 with a given sha256 digest and data. */
static void event_d(struct strbuf *s, uint32_t pcr, uint32_t type, const uint8_t d[32], const void *data, size_t len)
{
	put32(s, pcr);
	put32(s, type);
	put32(s, 1);
	strbuf_add(s, "\x0b\x00", 2);
	strbuf_add(s, d, 32);
	put32(s, (uint32_t)len);
	strbuf_add(s, data, len);
}

/* An event whose digest is the hash of its data. */
static void event_h(struct strbuf *s, uint32_t pcr, uint32_t type, const void *data, size_t len)
{
	uint8_t d[32];
	sha256_buf(data, len, d);
	event_d(s, pcr, type, d, data, len);
}

/* UEFI_VARIABLE_DATA: GUID, name length, data length, UCS-2 name, data. */
static void var_data(struct strbuf *out, const char *name, const void *data, size_t len)
{
	uint8_t b[8];
	strbuf_add(out, "0123456789abcdef", 16);
	le_put(b, strlen(name), 8);
	strbuf_add(out, b, 8);
	le_put(b, len, 8);
	strbuf_add(out, b, 8);
	for (const char *p = name; *p; p++)
		strbuf_add(out, (char[2]){ *p, 0 }, 2);
	strbuf_add(out, data, len);
}

static void var_event(struct strbuf *s, uint32_t type, const char *name, const void *data, size_t len,
		      const uint8_t *digest_of)
{
	_cleanup_strbuf_ struct strbuf v = STRBUF_INIT;
	uint8_t d[32];

	var_data(&v, name, data, len);
	if (digest_of) {   /* keep the digest of other data: a forged event */
		_cleanup_strbuf_ struct strbuf o = STRBUF_INIT;
		var_data(&o, name, digest_of, len);
		sha256_buf(o.buf, o.len, d);
	} else {
		sha256_buf(v.buf, v.len, d);
	}
	event_d(s, 7, type, d, v.buf, v.len);
}

struct shape {
	int sb;                       /* SB_ON, SB_OFF, SB_FORGED (data 1, digest of 0) */
	const uint8_t *first_app;     /* PCR 4's first application */
	uint32_t first_type;          /* its logged type */
	int extra_app;                /* a third application */
	int pcr12_event;              /* a command line override */
	const char *authority;        /* the PCR 7 authority's certificate */
	uint8_t fw_byte;              /* PCR 0's event */
};

static const struct shape GOOD = { SB_ON, UKI, EV_EFI_BOOT_SERVICES_APPLICATION, 0, 0, CERT, 0x5a };

static void make_log(struct fixture *f, const struct shape *sh)
{
	const struct bank *b = bank_by_name("sha256");
	static const uint8_t zero4[4];
	const char *call = "Calling EFI Application from Boot Option";
	uint8_t d[32] = { 0x55 }, one = 1, zero = 0, fw[32], rom[32] = { 0x77 };
	ingot_error e = { 0 };

	memset(fw, sh->fw_byte, 32);
	strbuf_reset(&f->log);
	assert_int_equal(eventlog_encode_header(&b, 1, &f->log), 0);
	event_d(&f->log, 0, 0x8, fw, "fw", 2);
	event_d(&f->log, 2, 0x80000004, rom, "rom", 3);
	var_event(&f->log, EV_EFI_VARIABLE_DRIVER_CONFIG, "SecureBoot", sh->sb == SB_OFF ? &zero : &one, 1,
		  sh->sb == SB_FORGED ? &zero : NULL);
	var_event(&f->log, EV_EFI_VARIABLE_DRIVER_CONFIG, "PK", "pk-cert", 7, NULL);
	var_event(&f->log, EV_EFI_VARIABLE_DRIVER_CONFIG, "db", "db-certs", 8, NULL);
	for (unsigned pcr = 0; pcr < 8; pcr++)
		if (pcr != 3 && pcr != 5 && pcr != 6)
			event_h(&f->log, pcr, EV_SEPARATOR, zero4, 4);
	{
		_cleanup_strbuf_ struct strbuf sig = STRBUF_INIT;
		strbuf_add(&sig, "owner-guid-bytes", 16);
		strbuf_addstr(&sig, sh->authority);
		var_event(&f->log, EV_EFI_VARIABLE_AUTHORITY, "db", sig.buf, sig.len, NULL);
	}
	event_h(&f->log, 4, EV_EFI_ACTION, call, strlen(call));
	event_d(&f->log, 4, sh->first_type, sh->first_app, "devpath", 7);
	event_d(&f->log, 4, EV_EFI_BOOT_SERVICES_APPLICATION, LINUX, "linux", 5);
	if (sh->extra_app)
		event_d(&f->log, 4, EV_EFI_BOOT_SERVICES_APPLICATION, OTHER, "extra", 5);
	event_d(&f->log, 11, EV_IPL, d, ".linux", 6);
	if (sh->pcr12_event)
		event_d(&f->log, 12, EV_IPL, d, "cmdline", 7);
	eventlog_free(&f->parsed);
	assert_int_equal(eventlog_parse("log", f->log.buf, f->log.len, &f->parsed, &e), 0);
}

/* A quote document over the sha256 PCRs of sel, signed by key over nonce. */
static json_t *sign_quote(const struct pcr_values *pcrs, EVP_PKEY *key, const char *pem)
{
	uint8_t msg[sizeof(TPMS_ATTEST)], sigbuf[sizeof(TPMT_SIGNATURE)], der[512], n[32];
	size_t mlen = 0, slen = 0, dlen = sizeof(der), len, nlen = strlen(NONCE) / 2;
	TPMT_SIGNATURE sig = { 0 };
	TPMS_ATTEST a = { 0 };
	struct pcr_selection sel = { 0 };
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	TPMS_PCR_SELECTION *s = &a.attested.quote.pcrSelect.pcrSelections[0];
	const uint8_t *p = der;
	ECDSA_SIG *es;

	hex_decode(NONCE, n, nlen);
	pcr_values_selection(pcrs, &sel);
	a.magic = TPM2_GENERATED_VALUE;
	a.type = TPM2_ST_ATTEST_QUOTE;
	a.extraData.size = (UINT16)nlen;
	memcpy(a.extraData.buffer, n, nlen);
	a.attested.quote.pcrSelect.count = 1;
	s->hash = TPM2_ALG_SHA256;
	s->sizeofSelect = 3;
	for (int i = 0; i < 3; i++)
		s->pcrSelect[i] = (BYTE)(sel.banks[0].mask >> (8 * i));
	assert_int_equal(quote_pcr_digest(pcrs, &sel, TPM2_ALG_SHA256, a.attested.quote.pcrDigest.buffer, &len), 0);
	a.attested.quote.pcrDigest.size = (UINT16)len;
	assert_int_equal(Tss2_MU_TPMS_ATTEST_Marshal(&a, msg, sizeof(msg), &mlen), TSS2_RC_SUCCESS);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key), 1);
	assert_int_equal(EVP_DigestSign(ctx, der, &dlen, msg, mlen), 1);
	EVP_MD_CTX_free(ctx);
	es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
	sig.sigAlg = TPM2_ALG_ECDSA;
	sig.signature.ecdsa.hash = TPM2_ALG_SHA256;
	sig.signature.ecdsa.signatureR.size = (UINT16)BN_bn2binpad(ECDSA_SIG_get0_r(es), sig.signature.ecdsa.signatureR.buffer, 32);
	sig.signature.ecdsa.signatureS.size = (UINT16)BN_bn2binpad(ECDSA_SIG_get0_s(es), sig.signature.ecdsa.signatureS.buffer, 32);
	ECDSA_SIG_free(es);
	assert_int_equal(Tss2_MU_TPMT_SIGNATURE_Marshal(&sig, sigbuf, sizeof(sigbuf), &slen), TSS2_RC_SUCCESS);
	return quote_document(msg, mlen, sigbuf, slen, pcrs, pem, n, nlen);
}

/* Quoted = the log's replay; PCRs 9 and 12 at reset unless logged, PCR
 * 15 after `extends` extends (the first with the image's event); signed
 * by key (the enrolled AK unless said). */
static void make_quote_by(struct fixture *f, int extends, EVP_PKEY *key, const char *pem)
{
	const struct bank *b = bank_by_name("sha256");
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	uint8_t root[32], d[32];
	ingot_error e = { 0 };
	struct pcr_bank *q;

	assert_int_equal(eventlog_replay(&f->parsed, &f->quoted, &e), 0);
	q = pcr_values_bank(&f->quoted, b->alg, 1);
	q->mask = BOOT_QUOTE_PCR_MASK;
	memset(q->value[15], 0, 32);
	hex_decode(ROOT_HEX, root, 32);
	assert_int_equal(boot_image_event("img", root, &ev), 0);
	for (int i = 0; i < extends; i++) {
		bank_hash(b, i ? "again" : ev.buf, i ? 5 : ev.len, d);
		bank_extend(b, q->value[15], d);
	}
	json_decref(f->quote);
	f->quote = sign_quote(&f->quoted, key, pem);
	f->ev.quote = f->quote;
}

static void make_quote(struct fixture *f, int extends)
{
	make_quote_by(f, extends, f->ak, f->ak_pem);
}

static void set_pcr11_prediction(struct fixture *f, const uint8_t *v)
{
	char hex[65];
	hex_encode(v, 32, hex);
	json_object_set_new(json_object_get(json_object_get(json_object_get(f->doc, "boot"), "pcr11"), "predicted"),
			    "sha256", json_string(hex));
}

/* Boot with sh, quoted by the enrolled AK. */
static void boot(struct fixture *f, const struct shape *sh)
{
	make_log(f, sh);
	make_quote(f, 1);
}

static int setup(void **state)
{
	static struct fixture f;
	char uki[65], lin[65], signer[65];
	uint8_t c[32], der[256];
	unsigned char *p = der;
	ingot_error e = { 0 };

	memset(&f, 0, sizeof(f));
	strbuf_init(&f.log, 1024);
	f.ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	f.soft = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	f.ak_pem = pem_of(f.ak);
	f.soft_pem = pem_of(f.soft);
	sha256_buf(der, (size_t)i2d_PUBKEY(f.ak, &p), c);
	hex_encode(c, 32, f.ak_id);
	hex_encode(UKI, 32, uki);
	hex_encode(LINUX, 32, lin);
	sha256_buf(CERT, strlen(CERT), c);
	hex_encode(c, 32, signer);
	f.doc = json_pack("{s:{s:s},s:{s:s},s:{s:{s:s},s:s,s:{s:{}},s:{s:s}}}", "recipe", "name", "img",
			       "verity", "root_hash", ROOT_HEX, "boot", "uki", "authenticode_sha256", uki,
			       "linux_authenticode_sha256", lin, "pcr11", "predicted", "secure_boot",
			       "signer_cert_sha256", signer);
	boot(&f, &GOOD);
	set_pcr11_prediction(&f, pcr_values_find(&f.quoted, 0x000b)->value[11]);
	/* The firmware reference, recorded from this (reference) boot. */
	assert_int_equal(firmware_ref_record("ovmf-q35", &f.parsed, &f.quoted, &f.fw, &e), 0);
	assert_int_equal(f.fw.nvars, 3);
	assert_int_equal(f.fw.nauth, 1);
	f.enrolled = (struct enrolled_ak){ .pem = f.ak_pem, .ak_id = f.ak_id, .node = "node-1" };
	assert_int_equal(nonce_decode(NONCE, &f.nonce, &e), 0);
	f.ev = (struct boot_evidence){ .quote = f.quote, .log = &f.parsed, .nonce = &f.nonce, .ak = &f.enrolled,
				       .node = "node-1", .fw = &f.fw };
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	eventlog_free(&f->parsed);
	strbuf_release(&f->log);
	json_decref(f->doc);
	manifest_free(f->manifest);
	json_decref(f->quote);
	EVP_PKEY_free(f->ak);
	EVP_PKEY_free(f->soft);
	free(f->ak_pem);
	free(f->soft_pem);
	if (f->seen[0])
		unlink(f->seen);
	if (f->dir[0])
		rmdir(f->dir);
	return 0;
}

static void expect(struct fixture *f, enum boot_verdict v, const char *needle)
{
	manifest_free(f->manifest);
	f->manifest = manifest_decode("manifest", f->doc, MANIFEST_REVIEW);
	f->ev.boot = &f->manifest->boot;
	attest_boot_verdict(&f->ev, &f->res);
	if (f->res.verdict != v || !strstr(f->res.reason, needle))
		fail_msg("expected %s with '%s', got %s: %s", boot_verdict_name(v), needle,
			 boot_verdict_name(f->res.verdict), f->res.reason);
	assert_null(strchr(f->res.reason, '\n'));
}

static void test_admit(void **state)
{
	struct fixture *f = *state;
	expect(f, BOOT_ADMIT, "booted the manifest's UKI (PCR 4, 11, 12) under Secure Boot (PCR 7), firmware of "
	       "reference ovmf-q35, opened image img (PCR 15), quoted by enrolled AK");
	assert_int_equal(f->res.weak, 0);
	assert_string_equal(f->res.qi.ak_id, f->ak_id);
}

static void test_no_enrolled_ak(void **state)
{
	struct fixture *f = *state;
	f->ev.ak = NULL;
	expect(f, BOOT_UNVERIFIED, "no enrolled AK");
	/* Accepting every weakness does not make it admitted. */
	f->ev.accept_weak = ~0u;
	expect(f, BOOT_UNVERIFIED, "an AK carried by the evidence proves nothing");
}

static void test_software_key(void **state)
{
	struct fixture *f = *state;
	/* A quote from a software key, carrying that key as its ak_pub (the
	 * AK "taken from the evidence"): only the enrolled AK counts. */
	make_quote_by(f, 1, f->soft, f->soft_pem);
	expect(f, BOOT_REFUSE, "quote refused (");
	assert_int_not_equal(f->res.quote_reason, VERDICT_OK);
	/* Signed by the software key but claiming the enrolled AK. */
	make_quote_by(f, 1, f->soft, f->ak_pem);
	expect(f, BOOT_REFUSE, "quote refused (bad-signature)");
}

static void test_relabelled_app(void **state)
{
	struct fixture *f = *state;
	/* Another boot application (systemd-boot chain-loading the UKI) under
	 * every label: refused by its digest. */
	static const uint32_t labels[] = { EV_EFI_BOOT_SERVICES_APPLICATION, 0x80000004, EV_IPL, 0x12345678 };
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		struct shape sh = GOOD;
		sh.first_app = OTHER;
		sh.first_type = labels[i];
		boot(f, &sh);
		expect(f, BOOT_REFUSE, "PCR 4: boot application 1 (event");
	}
	/* Relabelled as EV_EFI_ACTION: its data is not the digest's. */
	struct shape sh = GOOD;
	sh.first_app = OTHER;
	sh.first_type = EV_EFI_ACTION;
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "the data was rewritten");
}

static void test_extra_app(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;
	sh.extra_app = 1;
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "PCR 4: event");
	assert_non_null(strstr(f->res.reason, "an extra boot application"));
}

static void test_forged_data(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;
	sh.sb = SB_FORGED;   /* SecureBoot rewritten to 1, the digest of 0 kept */
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "(EV_EFI_VARIABLE_DRIVER_CONFIG, PCR 7): sha256 digest: expected the hash of the event's data");
}

static void test_secure_boot_off(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;
	sh.sb = SB_OFF;
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "PCR 7: event 3: variable SecureBoot has digest");
	f->ev.fw = NULL;
	f->ev.accept_weak = WEAK_UNKNOWN_FIRMWARE;
	expect(f, BOOT_REFUSE, "PCR 7: SecureBoot is 0 (Secure Boot off)");
}

static void test_other_authority(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;
	sh.authority = ROM_CERT;
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "neither the manifest's signer nor in the firmware reference");
}

static void test_secure_boot_unjudged(void **state)
{
	struct fixture *f = *state;
	json_object_del(json_object_get(f->doc, "boot"), "secure_boot");
	expect(f, BOOT_REFUSE, "weak evidence refused by policy: PCR 7 not judged");
	assert_non_null(strstr(f->res.reason, "--accept-weak secure-boot-unjudged"));
	f->ev.accept_weak = WEAK_SECURE_BOOT_UNJUDGED;
	expect(f, BOOT_ADMIT, "accepted weaknesses: secure-boot-unjudged");
}

static void test_firmware(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;

	f->ev.fw = NULL;
	expect(f, BOOT_REFUSE, "PCRs 0 and 2 not judged: no firmware reference");
	f->ev.accept_weak = WEAK_UNKNOWN_FIRMWARE;
	expect(f, BOOT_ADMIT, "accepted weaknesses: unknown-firmware");
	f->ev.fw = &f->fw;
	f->ev.accept_weak = 0;
	sh.fw_byte = 0x5b;   /* other firmware code */
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "PCR 0: sha256");
	assert_non_null(strstr(f->res.reason, "not firmware reference ovmf-q35's firmware"));
}

static void test_node_binding(void **state)
{
	struct fixture *f = *state;
	f->ev.node = "node-2";
	expect(f, BOOT_REFUSE, "is enrolled for node node-1, not node-2");
}

static void test_seen_nonce(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(th_mkdtemp(f->dir, sizeof(f->dir), "verdict"), 0);
	snprintf(f->seen, sizeof(f->seen), "%s/seen", f->dir);
	f->ev.seen_nonces = f->seen;
	/* A refused boot does not use the nonce up. */
	f->ev.node = "node-2";
	expect(f, BOOT_REFUSE, "enrolled for node");
	assert_int_not_equal(access(f->seen, F_OK), 0);
	f->ev.node = "node-1";
	expect(f, BOOT_ADMIT, "booted");
	expect(f, BOOT_REFUSE, "already used");
	assert_int_equal(f->res.quote_reason, VERDICT_NONCE_REUSED);
	unlink(f->seen);
	f->seen[0] = 0;
}

static void test_chain_values(void **state)
{
	struct fixture *f = *state;
	struct shape sh = GOOD;
	uint8_t other[32] = { 9 };

	set_pcr11_prediction(f, other);
	expect(f, BOOT_REFUSE, "PCR 11:");
	set_pcr11_prediction(f, pcr_values_find(&f->quoted, 0x000b)->value[11]);
	make_quote(f, 2);
	expect(f, BOOT_REFUSE, "PCR 15:");
	make_quote(f, 0);
	expect(f, BOOT_REFUSE, "PCR 15:");
	sh.pcr12_event = 1;
	boot(f, &sh);
	expect(f, BOOT_REFUSE, "PCR 12:");
}

static void test_log_does_not_replay(void **state)
{
	struct fixture *f = *state;
	pcr_values_bank(&f->quoted, 0x000b, 0)->value[4][0] ^= 1;
	json_decref(f->quote);
	f->ev.quote = f->quote = sign_quote(&f->quoted, f->ak, f->ak_pem);
	expect(f, BOOT_REFUSE, "quote refused (log-mismatch)");
}

static void test_not_made(void **state)
{
	struct fixture *f = *state;
	f->ev.log = NULL;
	expect(f, BOOT_NOT_MADE, "no firmware event log");
	f->ev.log = &f->parsed;
	json_object_del(f->doc, "boot");
	expect(f, BOOT_NOT_MADE, "no boot object");
}

static void test_not_covered(void **state)
{
	struct fixture *f = *state;
	pcr_values_bank(&f->quoted, 0x000b, 0)->mask &= ~(1u << 2);
	json_decref(f->quote);
	f->ev.quote = f->quote = sign_quote(&f->quoted, f->ak, f->ak_pem);
	expect(f, BOOT_REFUSE, "quote refused (not-covered)");
}

/* The reference's JSON form parses back to itself; a document with an
 * unknown key, another schema or a short digest is refused by name. */
static void test_firmware_ref_json(void **state)
{
	struct fixture *f = *state;
	struct firmware_ref back;
	ingot_error e = { 0 };
	json_t *j = firmware_ref_to_json(&f->fw);

	assert_int_equal(firmware_ref_from_json(j, "ref", &back, &e), 0);
	assert_memory_equal(&back, &f->fw, sizeof(back));
	json_object_set_new(j, "pcr8", json_object());
	assert_int_equal(firmware_ref_from_json(j, "ref", &back, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "ref: unknown key 'pcr8'"));
	json_object_del(j, "pcr8");
	json_object_set_new(json_object_get(json_object_get(j, "pcrs"), "sha256"), "2", json_string("abc"));
	assert_int_equal(firmware_ref_from_json(j, "ref", &back, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "pcrs.sha256.2: expected 64 lower-case hex digits"));
	json_object_set_new(j, "schema", json_string("ingot.firmware-ref/v2"));
	assert_int_equal(firmware_ref_from_json(j, "ref", &back, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "schema: expected"));
	json_decref(j);
}

/* The real firmware logs' event data hash to their digests. */
static void test_fixture_logs(void **state)
{
	static const char *const logs[] = { "event-arch-linux.bin", "event-bootorder.bin",
					     "event-gce-ubuntu-2104-log.bin", "event-sd-boot-fedora37.bin" };
	(void)state;
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char path[256];
		struct eventlog log;
		ingot_error e = { 0 };

		snprintf(path, sizeof(path), "tests/fixtures/tcg-eventlogs/%s", logs[i]);
		assert_int_equal(eventlog_load(path, &log, &e), 0);
		if (eventlog_check_data(&log, &e) < 0)
			fail_msg("%s", e.msg);
		eventlog_free(&log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_admit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_enrolled_ak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_software_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relabelled_app, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extra_app, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secure_boot_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_authority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secure_boot_unjudged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_firmware, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_binding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seen_nonce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_does_not_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_covered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_firmware_ref_json, setup, teardown),
		cmocka_unit_test(test_fixture_logs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
