/* libFuzzer harness: PE images (attest/authenticode.h) and the UKI writer
 * (builder/uki.h).  The input is a systemd-stub candidate: pe_parse and
 * the Authenticode digest read it, uki_assemble appends two sections to
 * it.  Oracle: whatever the writer accepts, its output parses as a PE
 * image with both sections added, their data where the headers say, and
 * its Authenticode digest can be computed. */
#include "tests/fuzz/fuzz_common.h"
#include "attest/authenticode.h"
#include "builder/uki.h"
#include "lib/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char osrel[] = "ID=ingot\n", linux_[600] = "MZ";
	const struct uki_section s[] = { { ".osrel", osrel, sizeof(osrel) - 1 }, { ".linux", linux_, sizeof(linux_) } };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct pe_image in, pe;
	uint8_t digest[32];
	ingot_error e = { 0 };

	if (pe_parse(data, size, "fuzz.efi", &in, &e) == 0 &&
	    authenticode_digest(data, size, "fuzz.efi", EVP_sha256(), digest, &e) < 0 && e.code != -ENOMEM)
		fuzz_note("authenticode_digest", e.msg);
	if (uki_assemble(data, size, s, 2, &out, &e) < 0) {
		fuzz_note("uki_assemble", e.msg);
		return 0;
	}
	if (pe_parse(out.buf, out.len, "fuzz.uki", &pe, &e) < 0 || pe.nsections != in.nsections + 2) {
		fprintf(stderr, "fuzz_pe: the writer's output does not parse: %s\n", e.msg);
		abort();
	}
	for (size_t i = 0; i < 2; i++) {
		const struct pe_section *x = &pe.sections[in.nsections + i];
		if (strcmp(x->name, s[i].name) || x->vsize != s[i].len || x->raw_size < s[i].len ||
		    memcmp(out.buf + x->raw_off, s[i].data, s[i].len))
			abort();
	}
	if (authenticode_digest(out.buf, out.len, "fuzz.uki", EVP_sha256(), digest, &e) < 0) {
		fprintf(stderr, "fuzz_pe: no digest for the writer's output: %s\n", e.msg);
		abort();
	}
	return 0;
}
