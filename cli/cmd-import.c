/* ingot attest import: a quote made by tpm2-tools (tpm2_quote -m/-s/-o,
 * the AK from tpm2_readpublic) as ingot's quote document.  Its options
 * are a table of their own: they mirror tpm2_checkquote's letters
 * (-u -m -s -f), which the other attest subcommands do not share. */
#include <stdio.h>
#include <stdlib.h>

#include "attest/quote-import.h"
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"

/* TPMS_ATTEST, TPMT_SIGNATURE, TPM2B_PUBLIC and 4 banks of 24 PCRs are
 * all far below this. */
#define IMPORT_FILE_MAX (64u << 10)

static const struct cli_command import_cmd = {
	.name = "attest import",
	.summary = "turn a quote made by tpm2-tools into a quote document",
	.synopsis =
"    ingot attest import -m MSG -s SIG -f PCRS -u AK_PUB -o FILE\n",
	.description =
"    MSG, SIG and PCRS are tpm2_quote's -m, -s and -o files (PCRS in its\n"
"    default serialized form or -F values), AK_PUB is tpm2_readpublic's -o\n"
"    file (TPM2B_PUBLIC) or a PEM public key: ECC NIST P-256, P-384 or P-521,\n"
"    or RSA. The PCR selection and the nonce are the signed TPMS_ATTEST's; a\n"
"    serialized PCR file's own selection must be the same, and each of its\n"
"    counts must fit what it counts. The files must belong together (signed\n"
"    by AK_PUB with the hash the signature names, the values hashing to the\n"
"    signed digest) or nothing is written. Trusting the AK and the nonce is\n"
"    ingot attest verify-quote's job.\n",
	.more =
"EXIT STATUS\n"
"    0   the quote document was written\n"
"    1   an unreadable or malformed file, or files that do not belong together\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    tpm2_quote -c ak.ctx -l sha256:0-7,15 -q $NONCE -m msg -s sig -o pcrs\n"
"    tpm2_readpublic -c ak.ctx -o ak.pub\n"
"    ingot attest import -m msg -s sig -f pcrs -u ak.pub -o q.json\n"
"    ingot attest verify-quote q.json --nonce $NONCE --ak-pub ak.pub.pem\n",
};

static void free_bufs(char *(*b)[4])
{
	for (int i = 0; i < 4; i++)
		free((*b)[i]);
}

int cmd_attest_import(int argc, char **argv)
{
	const char *path[4] = { 0 }, *output = NULL;   /* msg, sig, pcrs, ak */
	_cleanup_(free_bufs) char *buf[4] = { 0 };
	_cleanup_json_ json_t *doc = NULL;
	size_t len[4] = { 0 };
	ingot_error e = { 0 };
	int first, rc;
	const struct cli_option opts[] = {
		OPT_STRING('m', "message", &path[0], "MSG", "the quote's TPMS_ATTEST (tpm2_quote -m)"),
		OPT_STRING('s', "signature", &path[1], "SIG",
			   "its TPMT_SIGNATURE (tpm2_quote -s, tss format)"),
		OPT_STRING('f', "pcr", &path[2], "PCRS", "the PCR values (tpm2_quote -o)"),
		OPT_STRING('u', "public", &path[3], "AK_PUB",
			   "the AK: TPM2B_PUBLIC (tpm2_readpublic -o) or PEM"),
		OPT__OUTPUT(&output, "FILE", "where to write the quote document"),
		OPT_END(),
	};

	if ((rc = cli_parse(&import_cmd, opts, argc, argv, &first)) >= 0)
		return rc;
	if (first < argc)
		return cli_usage_error("attest import", "unexpected argument '%s'", argv[first]);
	if (!path[0] || !path[1] || !path[2] || !path[3] || !output)
		return cli_usage_error("attest import", "-m MSG, -s SIG, -f PCRS, -u AK_PUB and -o FILE are required");
	/* tpm2-tss logs what it cannot unmarshal to stderr; ingot reports
	 * it itself, in one line naming the file. */
	setenv("TSS2_LOG", "all+none", 0);
	for (int i = 0; i < 4; i++)
		if (read_file(path[i], IMPORT_FILE_MAX, &buf[i], &len[i], &e) < 0)
			return cli_error(&e, EXIT_FAILURE_);
	if (quote_import(&(struct quote_import_files){
				 .msg_name = path[0], .sig_name = path[1], .pcrs_name = path[2], .ak_name = path[3],
				 .msg = (uint8_t *)buf[0], .sig = (uint8_t *)buf[1], .pcrs = (uint8_t *)buf[2],
				 .ak = (uint8_t *)buf[3], .msg_len = len[0], .sig_len = len[1], .pcrs_len = len[2],
				 .ak_len = len[3] },
			 &doc, &e) < 0 ||
	    json_write_file(output, doc, 0644, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}
