/* libFuzzer harness: the tpm2-tools quote import (attest/quote-import.h
 * quote_import): TPMS_ATTEST, TPMT_SIGNATURE, the PCR file in both forms
 * (-F values and the serialized TPML_PCR_SELECTION + TPML_DIGESTs) and
 * the AK as TPM2B_PUBLIC or PEM.  Input layout:
 *   u16 big-endian M | u16 S | u16 P | M bytes msg | S bytes sig |
 *   P bytes PCR file | the rest: the AK
 * A document that comes back must verify against its own AK and nonce
 * (quote_import checked it: re-checked here) and carry the PCRs the
 * TPMS_ATTEST selects. */
#include <jansson.h>
#include "tests/fuzz/fuzz_common.h"
#include "attest/quote-import.h"
#include "attest/quote.h"
#include "lib/digest.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	setenv("TSS2_LOG", "all+none", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct quote_import_files in = { .msg_name = "msg", .sig_name = "sig", .pcrs_name = "pcrs", .ak_name = "ak" };
	size_t len[3];
	json_t *doc = NULL;
	ingot_error e = { 0 };
	const uint8_t *p;
	uint8_t *copy;
	int r;

	if (size < 6)
		return 0;
	for (int i = 0; i < 3; i++)
		len[i] = (size_t)data[2 * i] << 8 | data[2 * i + 1];
	if (len[0] + len[1] + len[2] > size - 6)
		return 0;
	/* A copy of exactly the input: reads past it are the sanitizer's. */
	copy = malloc(size - 6 ? size - 6 : 1);
	if (!copy)
		abort();
	memcpy(copy, data + 6, size - 6);
	p = copy;
	in.msg = p, in.msg_len = len[0], p += len[0];
	in.sig = p, in.sig_len = len[1], p += len[1];
	in.pcrs = p, in.pcrs_len = len[2], p += len[2];
	in.ak = p, in.ak_len = size - 6 - len[0] - len[1] - len[2];
	r = quote_import(&in, &doc, &e);
	fuzz_note("quote_import", r == 0 ? NULL : e.msg);
	if (r == 0) {
		/* What was written must verify again, as verify-quote reads it. */
		const char *hex = json_string_value(json_object_get(doc, "nonce"));
		uint8_t nonce[64];
		size_t n = hex ? strlen(hex) / 2 : 0;
		struct quote_info qi;

		if (!hex || n > sizeof(nonce) || hex_decode(hex, nonce, n) < 0 ||
		    quote_verify(doc, nonce, n, NULL, &qi, &e) < 0)
			abort();
	} else if (doc || !e.msg[0]) {
		abort();   /* a refusal says why and leaves nothing */
	}
	json_decref(doc);
	free(copy);
	return 0;
}
