#include "attest/pcrs.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/xalloc.h"

int pcr_selection_add(struct pcr_selection *sel, uint16_t alg, uint32_t mask)
{
	if (!bank_by_alg(alg))
		return -EINVAL;
	for (size_t i = 0; i < sel->nbanks; i++)
		if (sel->banks[i].alg == alg) {
			sel->banks[i].mask |= mask;
			return 0;
		}
	if (sel->nbanks == BANK_COUNT)
		return -ENOSPC;
	sel->banks[sel->nbanks].alg = alg;
	sel->banks[sel->nbanks].mask = mask;
	sel->nbanks++;
	return 0;
}

static int parse_pcr_number(const char *s, char **end, unsigned *out)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v >= PCR_COUNT)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_pcr_list(const char *list, uint32_t *mask)
{
	const char *p = list;

	if (!strcmp(list, "all")) {
		*mask = (1u << PCR_COUNT) - 1;
		return 0;
	}
	*mask = 0;
	for (;;) {
		unsigned lo, hi;
		char *end;

		if (parse_pcr_number(p, &end, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*end == '-' && (parse_pcr_number(end + 1, &end, &hi) < 0 || hi < lo))
			return -EINVAL;
		for (unsigned i = lo; i <= hi; i++)
			*mask |= 1u << i;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
}

int pcr_selection_parse(const char *spec, struct pcr_selection *out, ingot_error *e)
{
	_cleanup_free_ char *copy = xstrdup(spec);
	char *save = NULL;

	memset(out, 0, sizeof(*out));
	for (char *tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		char *colon = strchr(tok, ':');
		const struct bank *b;
		uint32_t mask;

		if (!colon)
			return ingot_fail(e, -EINVAL, "PCR selection '%s': expected ALG:PCRS (e.g. sha256:0,1,15), got '%s'",
					  spec, tok);
		*colon = '\0';
		b = bank_by_name(tok);
		if (!b)
			return ingot_fail(e, -EINVAL, "PCR selection '%s': expected a bank sha1, sha256, sha384 or sha512, got '%s'",
					  spec, tok);
		if (parse_pcr_list(colon + 1, &mask) < 0 || !mask)
			return ingot_fail(e, -EINVAL, "PCR selection '%s': expected PCR numbers 0-%d, ranges or 'all', got '%s'",
					  spec, PCR_COUNT - 1, colon + 1);
		for (size_t i = 0; i < out->nbanks; i++)
			if (out->banks[i].alg == b->alg)
				return ingot_fail(e, -EINVAL, "PCR selection '%s': bank %s appears twice", spec, b->name);
		pcr_selection_add(out, b->alg, mask);
	}
	if (!out->nbanks)
		return ingot_fail(e, -EINVAL, "PCR selection: expected ALG:PCRS, got '%s'", spec);
	return 0;
}

void pcr_selection_format(const struct pcr_selection *sel, struct strbuf *out)
{
	for (size_t i = 0; i < sel->nbanks; i++) {
		const struct bank *b = bank_by_alg(sel->banks[i].alg);
		const char *sep = ":";

		if (i)
			strbuf_addch(out, '+');
		strbuf_addstr(out, b ? b->name : "?");
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (sel->banks[i].mask & (1u << p)) {
				strbuf_addf(out, "%s%u", sep, p);
				sep = ",";
			}
	}
}

void pcr_values_selection(const struct pcr_values *v, struct pcr_selection *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < v->nbanks; i++)
		pcr_selection_add(out, v->banks[i].bank->alg, v->banks[i].mask);
}

struct pcr_bank *pcr_values_bank(struct pcr_values *v, uint16_t alg, int create)
{
	const struct bank *b = bank_by_alg(alg);

	if (!b)
		return NULL;
	for (size_t i = 0; i < v->nbanks; i++)
		if (v->banks[i].bank == b)
			return &v->banks[i];
	if (!create || v->nbanks == BANK_COUNT)
		return NULL;
	memset(&v->banks[v->nbanks], 0, sizeof(v->banks[0]));
	v->banks[v->nbanks].bank = b;
	return &v->banks[v->nbanks++];
}

const struct pcr_bank *pcr_values_find(const struct pcr_values *v, uint16_t alg)
{
	return pcr_values_bank((struct pcr_values *)v, alg, 0);
}

json_t *pcr_values_to_json(const struct pcr_values *v)
{
	_cleanup_json_ json_t *j = json_object();

	if (!j)
		return NULL;
	for (size_t i = 0; i < v->nbanks; i++) {
		const struct pcr_bank *pb = &v->banks[i];
		json_t *bank = json_object();

		if (json_object_set_new(j, pb->bank->name, bank))
			return NULL;
		for (unsigned p = 0; p < PCR_COUNT; p++) {
			char key[4], hex[2 * BANK_MAX_DIGEST + 1];

			if (!(pb->mask & (1u << p)))
				continue;
			snprintf(key, sizeof(key), "%u", p);
			hex_encode(pb->value[p], pb->bank->size, hex);
			if (json_object_set_new(bank, key, json_string(hex)))
				return NULL;
		}
	}
	return TAKE_PTR(j);
}

int pcr_values_from_json(const json_t *j, const char *what, struct pcr_values *out, ingot_error *e)
{
	const char *name;
	json_t *bank;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return ingot_fail(e, -EINVAL, "%s: pcrs: expected an object of banks", what);
	json_object_foreach((json_t *)j, name, bank) {
		const struct bank *b = bank_by_name(name);
		struct pcr_bank *pb;
		const char *key;
		json_t *val;

		if (!b)
			return ingot_fail(e, -EINVAL, "%s: pcrs: expected a bank sha1, sha256, sha384 or sha512, got '%s'",
					  what, name);
		if (!json_is_object(bank))
			return ingot_fail(e, -EINVAL, "%s: pcrs.%s: expected an object of PCR values", what, name);
		pb = pcr_values_bank(out, b->alg, 1);
		json_object_foreach(bank, key, val) {
			const char *hex = json_string_value(val);
			unsigned idx;
			char *end;

			if (parse_pcr_number(key, &end, &idx) < 0 || *end)
				return ingot_fail(e, -EINVAL, "%s: pcrs.%s: expected PCR numbers 0-%d as keys, got '%s'",
						  what, name, PCR_COUNT - 1, key);
			if (!hex || hex_decode(hex, pb->value[idx], b->size) < 0)
				return ingot_fail(e, -EINVAL, "%s: pcrs.%s.%s: expected %zu hex digits",
						  what, name, key, 2 * b->size);
			pb->mask |= 1u << idx;
		}
	}
	return 0;
}

void pcr_values_format_yaml(const struct pcr_values *v, struct strbuf *out)
{
	/* As tpm2_eventlog prints them: banks in its fixed order, a bank
	 * only when some PCR in it has a value. */
	for (size_t i = 0; i < BANK_COUNT; i++) {
		const struct pcr_bank *pb = pcr_values_find(v, bank_table[i].alg);
		char hex[2 * BANK_MAX_DIGEST + 1];

		if (!pb || !pb->mask)
			continue;
		strbuf_addf(out, "  %s:\n", pb->bank->name);
		for (unsigned p = 0; p < PCR_COUNT; p++) {
			if (!(pb->mask & (1u << p)))
				continue;
			hex_encode(pb->value[p], pb->bank->size, hex);
			strbuf_addf(out, "    %-2u : 0x%s\n", p, hex);
		}
	}
}
