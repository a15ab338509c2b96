#include "cli/parse-options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "lib/time.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ingot %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ingot %s --help'.\n", cmd);
	return EXIT_USAGE;
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

/* ---- help ---------------------------------------------------------------- */

/* An option's text starts two columns after the longest "-o, --opt ARG"
 * of its table, at most at HELP_COL; a longer one has its text below. */
#define HELP_COL 27

static const struct cli_option help_opt =
	OPT_FLAG('h', "help", NULL, "show this help");

static int left_len(const struct cli_option *o)
{
	size_t n = (o->short_name ? 4 : 0) + 2 + strlen(o->long_name);
	return (int)(o->argh ? n + 1 + strlen(o->argh) : n);
}

static void help_row(const struct cli_option *o, int col, FILE *out)
{
	const char *h = o->help;
	int n = fprintf(out, "    ");

	if (o->short_name)
		n += fprintf(out, "-%c, ", o->short_name);
	n += fprintf(out, "--%s", o->long_name);
	if (o->argh)
		n += fprintf(out, " %s", o->argh);
	if (n + 2 > col) {   /* too long for the column: text below */
		fputc('\n', out);
		n = 0;
	}
	for (;;) {
		size_t len = strcspn(h, "\n");
		fprintf(out, "%*s%.*s\n", col - n, "", (int)len, h);
		if (!h[len])
			break;
		h += len + 1;
		n = 0;
	}
}

void cli_help(const struct cli_command *c, const struct cli_option *opts, FILE *out)
{
	if (c->options)
		opts = c->options;
	fprintf(out, "NAME\n    ingot %s - %s\n\nSYNOPSIS\n%s", c->name, c->summary, c->synopsis);
	if (c->description)
		fprintf(out, "\nDESCRIPTION\n%s", c->description);
	int col = 4 + left_len(&help_opt) + 2;
	for (const struct cli_option *o = opts; o && o->type != CLI_OPT_END; o++)
		if (4 + left_len(o) + 2 > col)
			col = 4 + left_len(o) + 2 > HELP_COL ? HELP_COL : 4 + left_len(o) + 2;
	fputs("\nOPTIONS\n", out);
	for (const struct cli_option *o = opts; o && o->type != CLI_OPT_END; o++)
		help_row(o, col, out);
	help_row(&help_opt, col, out);
	if (c->more)
		fprintf(out, "\n%s", c->more);
}

/* ---- parsing ------------------------------------------------------------- */

#define LONG_BASE 256   /* getopt_long's value for table row i: LONG_BASE + i */

static int set_value(const struct cli_command *c, const struct cli_option *o, const char *arg)
{
	const char *want;

	switch (o->type) {
	case CLI_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case CLI_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case CLI_OPT_LIST: {
		struct cli_list *l = o->value;
		if (l->n == l->max)
			return cli_usage_error(c->name, "--%s: at most %zu values", o->long_name, l->max);
		l->v[l->n++] = arg;
		return 0;
	}
	case CLI_OPT_CALLBACK:
		if ((want = o->parse(arg, o->value)))
			return cli_usage_error(c->name, "--%s: expected %s, got '%s'", o->long_name, want,
					       arg);
		return 0;
	case CLI_OPT_END:
		break;
	}
	return cli_usage_error(c->name, "internal error: option table");
}

int cli_parse(const struct cli_command *c, const struct cli_option *opts, int argc, char **argv,
	      int *first)
{
	struct option lopts[64 + 1];
	unsigned char seen[64] = { 0 };
	char shorts[2 * 64 + 2] = ":";
	size_t n = 0, ns = 1;
	int ch;

	if (cli_wants_help(argc, argv)) {
		cli_help(c, opts, stdout);
		return EXIT_OK;
	}
	for (; opts[n].type != CLI_OPT_END; n++) {
		if (n == 64)
			return cli_usage_error(c->name, "internal error: option table too long");
		lopts[n] = (struct option){ opts[n].long_name,
					    opts[n].argh ? required_argument : no_argument, NULL,
					    LONG_BASE + (int)n };
		if (opts[n].short_name) {
			shorts[ns++] = (char)opts[n].short_name;
			if (opts[n].argh)
				shorts[ns++] = ':';
		}
	}
	lopts[n] = (struct option){ 0 };
	shorts[ns] = '\0';

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		size_t i = 0;
		int r;

		if (ch == ':')
			return cli_usage_error(c->name, "option '%s' needs an argument", argv[optind - 1]);
		if (ch == '?') {
			if (optopt && optopt < LONG_BASE)
				return cli_usage_error(c->name, "unknown option '-%c'", optopt);
			return cli_usage_error(c->name, "unknown option '%s'", argv[optind - 1]);
		}
		if (ch >= LONG_BASE)
			i = (size_t)(ch - LONG_BASE);
		else
			while (i < n && opts[i].short_name != ch)
				i++;
		if (i >= n)
			return cli_usage_error(c->name, "unknown option '%s'", argv[optind - 1]);
		/* A second value would silently replace the first: say so. */
		if (seen[i]++ && opts[i].type != CLI_OPT_LIST && opts[i].type != CLI_OPT_FLAG)
			return cli_usage_error(c->name, "--%s given more than once", opts[i].long_name);
		if ((r = set_value(c, &opts[i], optarg)) != 0)
			return r;
	}
	*first = optind;
	return -1;
}

const char *cli_parse_fd(const char *arg, void *value)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || *end || *arg < '0' || *arg > '9' || n > (1 << 20))
		return "a file descriptor number";
	*(int *)value = (int)n;
	return NULL;
}

const char *cli_parse_time(const char *arg, void *value)
{
	return time_parse(arg, value) < 0 ? "RFC 3339 (2027-01-31T00:00:00Z) or Unix seconds" : NULL;
}

const char *cli_parse_workers(const char *arg, void *value)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (*arg < '0' || *arg > '9' || *end || n < 1 || n > 64)
		return "an integer in [1, 64]";
	*(unsigned *)value = (unsigned)n;
	return NULL;
}
