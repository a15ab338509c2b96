/* PCR selections ("sha256:0,1,7+sha1:0-7") and sets of PCR values per
 * bank, with the JSON form quotes and reports carry:
 *   {"sha256": {"0": "<hex>", "7": "<hex>"}, "sha1": {...}} */
#ifndef INGOT_ATTEST_PCRS_H
#define INGOT_ATTEST_PCRS_H

#include <jansson.h>
#include <stdint.h>

#include "attest/bank.h"
#include "lib/err.h"
#include "lib/strbuf.h"

struct pcr_selection {
	size_t nbanks;
	struct {
		uint16_t alg;
		uint32_t mask;   /* bit i = PCR i */
	} banks[BANK_COUNT];
};

struct pcr_bank {
	const struct bank *bank;
	uint32_t mask;                                 /* PCRs that have a value */
	uint8_t value[PCR_COUNT][BANK_MAX_DIGEST];
};

struct pcr_values {
	size_t nbanks;
	struct pcr_bank banks[BANK_COUNT];
};

/* Parse "ALG:LIST[+ALG:LIST...]" where LIST is "all" or comma-separated
 * PCR numbers and ranges ("0-7,15").  A bank may appear once. */
int pcr_selection_parse(const char *spec, struct pcr_selection *out, ingot_error *e);
/* Inverse of parse: "sha256:0,1,15". */
void pcr_selection_format(const struct pcr_selection *sel, struct strbuf *out);
/* Add PCRs of mask to alg's bank (creating it); -EINVAL for unknown alg. */
int pcr_selection_add(struct pcr_selection *sel, uint16_t alg, uint32_t mask);
/* The selection covered by a set of values (banks in their order). */
void pcr_values_selection(const struct pcr_values *v, struct pcr_selection *out);

/* Find the bank for alg; with create, append it when missing (NULL when
 * alg is unknown or there is no room). */
struct pcr_bank *pcr_values_bank(struct pcr_values *v, uint16_t alg, int create);
const struct pcr_bank *pcr_values_find(const struct pcr_values *v, uint16_t alg);

/* {"sha256": {"0": "<hex>", ...}, ...}; keys are decimal PCR numbers. */
json_t *pcr_values_to_json(const struct pcr_values *v);
/* what names the document in error messages. */
int pcr_values_from_json(const json_t *j, const char *what, struct pcr_values *out, ingot_error *e);

/* tpm2_eventlog's "pcrs:" YAML body: "  sha256:\n    0  : 0x<hex>\n", banks
 * in the order sha1, sha256, sha384, sha512, empty banks left out. */
void pcr_values_format_yaml(const struct pcr_values *v, struct strbuf *out);

#endif
