/* libFuzzer harness: TPM quote documents (attest/quote.h quote_verify),
 * i.e. the TPMS_ATTEST and TPMT_SIGNATURE unmarshalling, the PCR
 * selection and digest checks.  Input layout:
 *   u16 big-endian N | N bytes TPMS_ATTEST | PCR values JSON (rest)
 * The harness signs the TPMS_ATTEST bytes with its own P-256 "AK" (as a
 * TPM would), so every input gets past the signature check and the
 * fuzzer reaches the checks behind it.  Nonce: 32 bytes 0x11. */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "tests/fuzz/fuzz_common.h"
#include "attest/quote.h"
#include "lib/base64.h"
#include "lib/digest.h"
#include "tests/tools/swquote.h"

static EVP_PKEY *ak;
static char *ak_pem;
static uint8_t nonce[32];
static char nonce_hex[65];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	(void)argc; (void)argv;
	memset(nonce, 0x11, sizeof(nonce));
	hex_encode(nonce, sizeof(nonce), nonce_hex);
	ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!ak || !b || !PEM_write_bio_PUBKEY(b, ak))
		abort();
	n = BIO_get_mem_data(b, &p);
	ak_pem = fuzz_strdup((const uint8_t *)p, (size_t)n);
	BIO_free(b);
	return 0;
}

/* The TPM's signature, as tests/tools/swquote.h makes it for mkquote. */
static size_t tpm_sign(const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
	size_t off = 0;

	if (cap < sizeof(TPMT_SIGNATURE) || swquote_sign(ak, msg, len, out, &off) < 0)
		abort();
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sig[sizeof(TPMT_SIGNATURE)];
	size_t alen, slen;
	char *a64, *s64;
	json_t *doc, *pcrs;
	struct quote_info qi;
	ingot_error e = { 0 };
	int r;

	if (size < 2)
		return 0;
	alen = (size_t)data[0] << 8 | data[1];
	if (alen > size - 2)
		alen = size - 2;
	pcrs = json_loadb((const char *)data + 2 + alen, size - 2 - alen, JSON_REJECT_DUPLICATES, NULL);
	if (!pcrs)
		pcrs = json_object();
	slen = tpm_sign(data + 2, alen, sig, sizeof(sig));
	a64 = base64_encode(data + 2, alen, NULL);
	s64 = base64_encode(sig, slen, NULL);
	if (!a64 || !s64)
		abort();
	doc = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s}", "format", QUOTE_FORMAT, "nonce", nonce_hex,
			"attest", a64, "signature", s64, "pcrs", pcrs, "ak_pub", ak_pem);
	if (!doc)
		abort();
	r = quote_verify(doc, nonce, sizeof(nonce), ak_pem, &qi, &e);
	fuzz_note("quote_verify", r == 0 ? NULL : e.msg);
	if (r == 0) {
		if (qi.reason != VERDICT_OK)
			abort();
	} else if (qi.reason == VERDICT_OK) {
		abort();   /* a refusal must say why */
	}
	json_decref(doc);
	free(a64);
	free(s64);
	return 0;
}
