/* ingot serve: the verifier service's front (server/serve.h): reads the
 * configuration, starts the service, tells systemd it is ready, and
 * stops on SIGTERM or SIGINT. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "cli/cli.h"
#include "server/serve.h"

static const struct cli_command serve_cmd = {
	.name = "serve",
	.summary = "the verifier service: judges nodes' boot evidence off the node",
	.synopsis = "    ingot serve --config FILE [--check]\n",
	.description =
	"    serve runs the verifier off the node (docs/verifier.md). A node asks it\n"
	"    for a nonce (POST /v1/nonce), quotes with it, and sends the quote and its\n"
	"    firmware event log (POST /v1/evidence). The service judges them with the\n"
	"    one boot verdict (the same as ingot attest boot-check, verify and audit)\n"
	"    against the keyring, enrolment records, firmware references and\n"
	"    manifests its configuration names, stores the verdict in its database,\n"
	"    consuming the nonce in the same transaction, and only then answers.\n"
	"    After every verdict it runs the configured hook (e.g. scontrol resume or\n"
	"    drain). A sweep marks nodes whose last admission is older than\n"
	"    stale-after as stale, and runs the hook for them.\n"
	"\n"
	"    Log lines go to stderr. Under systemd (Type=notify) readiness is\n"
	"    reported once the socket accepts. The first line on stdout is\n"
	"    \"listening on ADDRESS\" (the port actually bound when listen's port is\n"
	"    0). --check loads and checks everything, then exits without listening.\n",
	.more =
	"EXIT STATUS\n"
	"    0   stopped by SIGTERM or SIGINT; --check: the configuration is good\n"
	"    1   the configuration, a trusted file, the database or the socket is\n"
	"        unusable\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot serve --config /etc/ingot/verifier.conf\n"
	"    ingot serve --config verifier.conf --check\n",
};

static void log_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "ingot serve: %s\n", line);
}

int cmd_serve(int argc, char **argv)
{
	const char *config = NULL;
	bool check = false;
	struct serve_config c;
	struct serve *s = NULL;
	struct serve_log log = { .line = log_line };
	ingot_error e = { 0 };
	sigset_t set;
	int first, r, sig = 0;
	const struct cli_option opts[] = {
		OPT_STRING('c', "config", &config, "FILE", "the configuration (docs/verifier.md)"),
		OPT_FLAG(0, "check", &check, "check the configuration and what it names, then exit"),
		OPT_END(),
	};

	if ((r = cli_parse(&serve_cmd, opts, argc, argv, &first)) >= 0)
		return r;
	if (first != argc)
		return cli_usage_error("serve", "unexpected argument '%s'", argv[first]);
	if (!config)
		return cli_usage_error("serve", "--config FILE is required");
	/* Blocked before any thread starts, so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (serve_config_load(config, &c, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (check) {
		r = serve_check(&c, &e);
		serve_config_free(&c);
		e.kind = 0;   /* a record that does not verify: 1, as documented, not verify-manifest's status */
		if (r < 0)
			return cli_error(&e, EXIT_FAILURE_);
		printf("configuration ok: %s\n", config);
		return EXIT_OK;
	}
	if (serve_start(&c, &log, &s, &e) < 0) {
		serve_config_free(&c);
		e.kind = 0;
		return cli_error(&e, EXIT_FAILURE_);
	}
	printf("listening on %s\n", serve_address(s));
	fflush(stdout);
	sd_notifyf(0, "READY=1\nSTATUS=listening on %s", serve_address(s));
	while (sig != SIGTERM && sig != SIGINT)
		if (sigwait(&set, &sig) != 0)
			break;
	sd_notify(0, "STOPPING=1");
	serve_stop(s);
	serve_config_free(&c);
	return EXIT_OK;
}
