/* ingot attest import: a quote made by tpm2-tools (tpm2_quote -m/-s/-o,
 * the AK from tpm2_readpublic) as ingot's quote document.  Its options
 * are parsed here, on their own: they mirror tpm2_checkquote's letters
 * (-u -m -s -f), which the other attest subcommands do not share. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/quote-import.h"
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"

/* TPMS_ATTEST, TPMT_SIGNATURE, TPM2B_PUBLIC and 4 banks of 24 PCRs are
 * all far below this. */
#define IMPORT_FILE_MAX (64u << 10)

static void free_bufs(char *(*b)[4])
{
	for (int i = 0; i < 4; i++)
		free((*b)[i]);
}

int cmd_attest_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "message", required_argument, NULL, 'm' },
		{ "signature", required_argument, NULL, 's' },
		{ "pcr", required_argument, NULL, 'f' },
		{ "public", required_argument, NULL, 'u' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	const char *path[4] = { 0 }, *output = NULL;   /* msg, sig, pcrs, ak */
	_cleanup_(free_bufs) char *buf[4] = { 0 };
	_cleanup_json_ json_t *doc = NULL;
	size_t len[4] = { 0 };
	ingot_error e = { 0 };
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "m:s:f:u:o:", opts, NULL)) != -1) {
		const char *letters = "msfu", *k = c > 0 ? strchr(letters, c) : NULL;
		if (c == 'o')
			output = optarg;
		else if (k)
			path[k - letters] = optarg;
		else
			return cli_usage_error("attest", "import: unknown option or missing value at '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		return cli_usage_error("attest", "import: unexpected argument '%s'", argv[optind]);
	if (!path[0] || !path[1] || !path[2] || !path[3] || !output)
		return cli_usage_error("attest", "import: -m MSG, -s SIG, -f PCRS, -u AK_PUB and -o FILE are required");
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
