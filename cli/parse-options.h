/* One table per command gives its getopt_long options, its --help text
 * and so its man page (scripts/gen-man.py reads --help), after git's
 * parse-options.  A single-valued option given twice is a usage error
 * (exit 64), as are unknown options and missing arguments.
 *
 * Every command is on cli_parse (cmd-sign.c is a small example,
 * cmd-keys.c one with subcommands).  A new command, or a new option:
 *   1. Its help is a static const struct cli_command
 *      X_cmd: .name, .summary (the NAME line's text after " - "),
 *      .synopsis, .description and .more (every section after OPTIONS:
 *      EXIT STATUS, EXAMPLES, ...), each the section's body verbatim with
 *      its four-space indent.
 *   2. In cmd_X, a const struct cli_option opts[] local to it (its values
 *      point at cmd_X's variables), one row per OPTIONS entry: OPT_FLAG
 *      for a no_argument option (a bool), OPT_STRING for a path or word
 *      kept as given (a const char *), OPT_LIST for one that may repeat (a
 *      struct cli_list over the caller's array), OPT_CALLBACK for one the
 *      command converts (a number, a time: the callback returns NULL or
 *      what it expected, which becomes the usage error); OPT_END() last.
 *      An option other commands have too (--json, --key, --keyring,
 *      --output, --now, ...) uses its OPT__ macro below.
 *      A row's help is the entry's text, '\n' between its lines; the
 *      -h, --help row is added by cli_help.
 *   3. Parse with
 *        if ((r = cli_parse(&X_cmd, opts, argc, argv, &first)) >= 0)
 *                return r;
 *      and read the operands from argv[first..argc) (passing &optind
 *      keeps code that reads argv[optind]).  Keep the checks that need
 *      several options (required ones, "needs --x").  Subcommands: parse
 *      once in cmd_X into one struct and let each subcommand refuse the
 *      options that are not its own (cmd-keys.c), so one table still
 *      gives the whole help.
 *   4. `make man`, commit docs/man/; tests/e2e/test-cli-options.sh gets
 *      a "given more than once" line for the command. */
#ifndef INGOT_CLI_PARSE_OPTIONS_H
#define INGOT_CLI_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cli_opt_type { CLI_OPT_END, CLI_OPT_FLAG, CLI_OPT_STRING, CLI_OPT_LIST, CLI_OPT_CALLBACK };

/* An option that may be given several times: values in the caller's
 * array v of max entries, n of them used. */
struct cli_list {
	const char **v;
	size_t n, max;
};

struct cli_option {
	enum cli_opt_type type;
	int short_name;            /* 'o', or 0 for a long option only */
	const char *long_name;     /* "output" */
	const char *argh;          /* "DIR"; NULL for a flag */
	const char *help;          /* lines separated by '\n' */
	void *value;               /* bool *, const char **, struct cli_list *, the callback's */
	/* CLI_OPT_CALLBACK: convert arg into value; NULL, or what was expected
	 * ("an integer in [1, 64]") for the usage error. */
	const char *(*parse)(const char *arg, void *value);
};

#define OPT_FLAG(s, l, v, h)           { CLI_OPT_FLAG, (s), (l), NULL, (h), (v), NULL }
#define OPT_STRING(s, l, v, a, h)      { CLI_OPT_STRING, (s), (l), (a), (h), (v), NULL }
#define OPT_LIST(s, l, v, a, h)        { CLI_OPT_LIST, (s), (l), (a), (h), (v), NULL }
#define OPT_CALLBACK(s, l, v, a, h, f) { CLI_OPT_CALLBACK, (s), (l), (a), (h), (v), (f) }
#define OPT_END()                      { CLI_OPT_END, 0, NULL, NULL, NULL, NULL, NULL }

/* Options several commands share (git's OPT__VERBOSE style): the name,
 * short name, argument and value type are spelt here once; the help is
 * the command's, since what the option is for differs. */
#define OPT__JSON(v, h)            OPT_FLAG(0, "json", (v), (h))
#define OPT__QUIET(v, h)           OPT_FLAG('q', "quiet", (v), (h))
#define OPT__KEYRING(v, a, h)      OPT_STRING(0, "keyring", (v), (a), (h))
#define OPT__KEY(s, v, h)          OPT_STRING((s), "key", (v), "KEY", (h))
#define OPT__KEYS(v, h)            OPT_LIST(0, "key", (v), "KEY", (h))
#define OPT__NOW(v, h)             OPT_STRING(0, "now", (v), "TIME", (h))
#define OPT__OUTPUT(v, a, h)       OPT_STRING('o', "output", (v), (a), (h))
#define OPT__STORE(v, h)           OPT_STRING('s', "store", (v), "DIR", (h))
#define OPT__WORKERS(v, h)         OPT_CALLBACK('j', "workers", (v), "N", (h), cli_parse_workers)

struct cli_command {
	const char *name;          /* "sign", "keys": messages and the NAME line */
	const char *summary;       /* NAME: what follows "ingot NAME - " */
	const char *synopsis;      /* SYNOPSIS body, verbatim */
	const char *description;   /* DESCRIPTION body, verbatim (NULL: none) */
	/* The OPTIONS section when it is not the table cli_parse is given
	 * (a command whose subcommands parse parts of it); else NULL. */
	const struct cli_option *options;
	const char *more;          /* the sections after OPTIONS, verbatim (NULL: none) */
};

/* The --help text: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (c->options or
 * else opts, then -h, --help), then .more. */
void cli_help(const struct cli_command *c, const struct cli_option *opts, FILE *out);

/* Parse argv[1..] against opts (a table local to the command, its
 * values pointing at the command's variables).  Options and operands
 * may mix; "--" ends the options.  -h/--help anywhere before "--" prints c's help.  Returns -1
 * with *first the index of the first operand (operands moved to the end,
 * in order), or the exit status to return: 0 after help, EXIT_USAGE
 * after a usage error on stderr. */
int cli_parse(const struct cli_command *c, const struct cli_option *opts, int argc, char **argv,
	      int *first);

/* Callbacks for common values. */
const char *cli_parse_fd(const char *arg, void *value);       /* int *, 0 .. 2^20 */
const char *cli_parse_time(const char *arg, void *value);     /* time_t *, RFC 3339 or seconds */

/* OPT_CALLBACK parser of a thread count (an unsigned in [1, 64]). */
const char *cli_parse_workers(const char *arg, void *value);

#endif
