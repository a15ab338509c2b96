/* nccl-tests all_reduce_perf stdout.  The layout (nccl-tests src/common.cu):
 *   # nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105   (2.13+)
 *   # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ...
 *   #  Rank  0 Group  0 Pid  4121 on     node01 device  0 [0x1b] NVIDIA H100 ...
 *   #       size  count  type  redop  root  time algbw busbw #wrong  time algbw busbw #wrong
 *   #        (B) (elements)                   (us) (GB/s) (GB/s)     (us) (GB/s) (GB/s)
 *      8589934592  2147483648  float  sum  -1  48290  177.88  355.76  0  ...  (out-, in-place)
 *   # Out of bounds values : 0 OK
 *   # Avg bus bandwidth    : 132.429
 * NCCL's own "host:pid:tid [dev] NCCL INFO ..." lines may be interleaved. */
#include "ops/evidence.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/json.h"

#define NCCL_COLS 13
#define NCCL_TOKEN_MAX 256

static const char *const table_head[NCCL_COLS] = {
	"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
	"time", "algbw", "busbw", "#wrong",
};

struct nccl_parse {
	const char *name;
	unsigned line;
	json_t *res;
	json_t *nodes, *gpus, *rows;   /* res's arrays, filled as the lines come */
	json_int_t ranks;
	bool header, table, avg, nccl_version;
};

static int fail_at(struct nccl_parse *p, ingot_error *e, const char *fmt, const char *got)
{
	return ingot_fail(e, -EINVAL, "%s:%u: %s, got \"%.80s\"", p->name, p->line, fmt, got);
}

/* Split s (modified) on blanks into at most max tokens; returns the count
 * (max + 1 when there are more). */
static size_t split(char *s, char **tok, size_t max)
{
	size_t n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > INT64_MAX ? -EINVAL : 0;   /* JSON integers are signed */
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s) && !(*s == '-' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* A number as nccl-tests prints it (printf %f, or %g for the average):
 * digits, an optional fraction, for %g an optional exponent.  Never a
 * sign, hex, nan or inf: anything else is not its output, and a negative
 * or infinite bandwidth is no measurement. */
static int parse_num(const char *s, bool exponent, double *out)
{
	const char *c = s;
	char *end;

	if (!isdigit((unsigned char)*c))
		return -EINVAL;
	while (isdigit((unsigned char)*c))
		c++;
	if (*c == '.') {
		if (!isdigit((unsigned char)*++c))
			return -EINVAL;
		while (isdigit((unsigned char)*c))
			c++;
	}
	if (exponent && *c == 'e') {
		c += c[1] == '+' || c[1] == '-' ? 2 : 1;
		if (!isdigit((unsigned char)*c))
			return -EINVAL;
		while (isdigit((unsigned char)*c))
			c++;
	}
	if (*c)
		return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	return errno || end != c || !isfinite(*out) ? -EINVAL : 0;
}

static void add_unique(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (!strcmp(json_string_value(v), s))
			return;
	json_array_append_new(arr, json_string(s));
}

/* "NCCL version 2.21.5+cuda12.4" anywhere in an NCCL INFO line. */
static void note_nccl_version(struct nccl_parse *p, const char *line)
{
	const char *v = strstr(line, "NCCL version ");
	char ver[32];
	if (v && sscanf(v + 13, "%31[0-9.]", ver) == 1) {
		json_object_set_new(p->res, "nccl_version", json_string(ver));
		p->nccl_version = true;
	}
}

/* nccl-library=22105 -> "2.21.5" (NCCL_VERSION_CODE since 2.9: X*10000+Y*100+Z). */
static void note_tests_version(struct nccl_parse *p, const char *line)
{
	char ver[32];
	unsigned code;
	const char *lib = strstr(line, "nccl-library=");

	if (sscanf(line, "# nccl-tests version %31s", ver) == 1)
		json_object_set_new(p->res, "nccl_tests_version", json_string(ver));
	if (lib && sscanf(lib, "nccl-library=%u", &code) == 1 && code >= 20900 &&
	    !p->nccl_version) {
		snprintf(ver, sizeof(ver), "%u.%u.%u", code / 10000, code / 100 % 100, code % 100);
		json_object_set_new(p->res, "nccl_version", json_string(ver));
		p->nccl_version = true;
	}
}

static int parse_rank(struct nccl_parse *p, const char *line, ingot_error *e)
{
	int rank, group, pid, dev;
	char host[NCCL_TOKEN_MAX], bus[64], model[NCCL_TOKEN_MAX] = "";

	if (sscanf(line, "# Rank %d Group %d Pid %d on %255s device %d [%63[^]]] %255[^\r\n]",
		   &rank, &group, &pid, host, &dev, bus, model) < 6 || rank < 0)
		return fail_at(p, e, "expected a device line \"#  Rank N Group N Pid N on HOST "
			       "device N [BUS] MODEL\"", line);
	json_object_set_new(p->res, "ranks", json_integer(++p->ranks));
	add_unique(p->nodes, host);
	if (*model)
		add_unique(p->gpus, model);
	return 0;
}

static int parse_table_head(struct nccl_parse *p, char *line, ingot_error *e)
{
	char *tok[NCCL_COLS + 1];
	_cleanup_free_ char *copy = xstrdup(line);
	size_t n = split(line + 1, tok, NCCL_COLS);

	if (n != NCCL_COLS)
		return fail_at(p, e, "expected the all_reduce_perf table header \"size count type "
			       "redop root time algbw busbw #wrong time algbw busbw #wrong\"", copy);
	for (size_t i = 0; i < NCCL_COLS; i++)
		if (strcmp(tok[i], table_head[i]))
			return fail_at(p, e, "expected the all_reduce_perf table header \"size count "
				       "type redop root time algbw busbw #wrong time algbw busbw "
				       "#wrong\" (out-of-place, then in-place)", copy);
	p->table = true;
	return 0;
}

static json_t *half_row(char **tok)
{
	double t, alg, bus;
	uint64_t wrong;
	if (parse_num(tok[0], false, &t) < 0 || parse_num(tok[1], false, &alg) < 0 ||
	    parse_num(tok[2], false, &bus) < 0)
		return NULL;
	/* "N/A" when the run was made without validation (-c 0). */
	json_t *w = !strcmp(tok[3], "N/A") ? json_null()
		    : parse_u64(tok[3], &wrong) == 0 ? json_integer((json_int_t)wrong) : NULL;
	if (!w)
		return NULL;
	return json_pack("{s:f,s:f,s:f,s:o}", "time_us", t, "algbw", alg, "busbw", bus, "wrong", w);
}

static int parse_row(struct nccl_parse *p, char *line, ingot_error *e)
{
	char *tok[NCCL_COLS + 1];
	_cleanup_free_ char *copy = xstrdup(line);
	uint64_t size, count;
	int64_t root;
	size_t n;
	json_t *oop, *ip, *row;

	if (!p->table)
		return fail_at(p, e, "expected the table header before data rows", copy);
	n = split(line, tok, NCCL_COLS);
	if (n != NCCL_COLS)
		return fail_at(p, e, "expected 13 columns (size count type redop root, then time "
			       "algbw busbw #wrong out-of-place and in-place)", copy);
	if (parse_u64(tok[0], &size) < 0 || parse_u64(tok[1], &count) < 0 ||
	    parse_i64(tok[4], &root) < 0)
		return fail_at(p, e, "expected integer size, count and root columns", copy);
	oop = half_row(tok + 5);
	ip = half_row(tok + 9);
	if (!oop || !ip) {
		json_decref(oop);
		json_decref(ip);
		return fail_at(p, e, "expected numbers for time, algbw, busbw as nccl-tests prints "
			       "them (plain decimals: no sign, hex, nan or inf) and an integer (or "
			       "N/A) for #wrong", copy);
	}
	if (json_array_size(p->rows) == NCCL_MAX_ROWS) {
		json_decref(oop);
		json_decref(ip);
		return fail_at(p, e, "expected at most 4096 rows", copy);
	}
	row = json_pack("{s:I,s:I,s:s,s:s,s:I,s:o,s:o}", "size", (json_int_t)size,
			"count", (json_int_t)count, "type", tok[2], "redop", tok[3],
			"root", (json_int_t)root, "out_of_place", oop, "in_place", ip);
	if (!row || json_array_append_new(p->rows, row) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

static int parse_comment(struct nccl_parse *p, char *line, ingot_error *e)
{
	const char *body = line + 1 + strspn(line + 1, " ");
	_cleanup_free_ char *toks = xstrdup(line + 1);
	char *tok[8];
	uint64_t oob;
	double avg;


	if (!strncmp(body, "nccl-tests version ", 19)) {
		note_tests_version(p, line);
	} else if (!strncmp(body, "nThread ", 8)) {
		if (!strstr(body, " nGpus "))
			return fail_at(p, e, "expected \"# nThread N nGpus N ...\"", line);
		p->header = true;
	} else if (!strncmp(body, "Rank ", 5)) {
		char norm[1024];
		snprintf(norm, sizeof(norm), "# %s", body);
		return parse_rank(p, norm, e);
	} else if (!strncmp(body, "size ", 5)) {
		return parse_table_head(p, line, e);
	} else if (!strncmp(body, "Out of bounds values", 20)) {
		/* "# Out of bounds values : %d %s" */
		if (split(toks, tok, 7) != 7 || strcmp(tok[4], ":") || parse_u64(tok[5], &oob) < 0 ||
		    (strcmp(tok[6], "OK") && strcmp(tok[6], "FAILED")))
			return fail_at(p, e, "expected \"# Out of bounds values : N OK|FAILED\"", line);
		json_object_set_new(p->res, "out_of_bounds", json_integer((json_int_t)oob));
		json_object_set_new(p->res, "out_of_bounds_ok", json_boolean(oob == 0 && !strcmp(tok[6], "OK")));
	} else if (!strncmp(body, "Avg bus bandwidth", 17)) {
		/* "# Avg bus bandwidth    : %g"; never a silent null. */
		if (split(toks, tok, 5) != 5 || strcmp(tok[3], ":") || parse_num(tok[4], true, &avg) < 0)
			return fail_at(p, e, "expected \"# Avg bus bandwidth : N\" with N in GB/s as "
				       "nccl-tests prints it (a plain decimal: no sign, hex, nan or inf)", line);
		if (json_object_set_new(p->res, "avg_busbw", json_real(avg)) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
		p->avg = true;
	}
	return 0;   /* other comments ("# Using devices", units) carry nothing we need */
}

int evidence_parse_nccl(const char *name, const char *buf, size_t len, json_t **result,
			ingot_error *e)
{
	_cleanup_free_ char *copy = NULL;
	_cleanup_json_ json_t *res = NULL;
	struct nccl_parse p = { .name = name };
	char *line, *next;
	int r;

	if (memchr(buf, '\0', len))
		return ingot_fail(e, -EINVAL, "%s: expected text output of all_reduce_perf, found a "
				  "NUL byte", name);
	copy = xstrndup(buf, len);
	res = json_pack("{s:s,s:n,s:n,s:i,s:[],s:[],s:[],s:n,s:n,s:n}", "test", "all_reduce_perf",
			"nccl_tests_version", "nccl_version", "ranks", 0, "nodes", "gpus", "rows",
			"out_of_bounds", "out_of_bounds_ok", "avg_busbw");
	if (!res)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (json_unpack(res, "{s:o,s:o,s:o}", "nodes", &p.nodes, "gpus", &p.gpus, "rows", &p.rows) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	p.res = res;
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		p.line++;
		/* nccl-tests writes ASCII; anything else is not its output (and
		 * would not make a JSON string). */
		for (const char *c = line; *c; c++)
			if ((unsigned char)*c >= 0x7f || ((unsigned char)*c < 0x20 && *c != '\t' &&
							  *c != '\r'))
				return ingot_fail(e, -EINVAL, "%s:%u: byte 0x%02x: expected printable "
						  "ASCII text", name, p.line, (unsigned char)*c);
		const char *s = line + strspn(line, " \t\r");
		if (!*s)
			continue;
		if (strstr(s, " NCCL INFO ") || strstr(s, " NCCL WARN ")) {
			note_nccl_version(&p, s);
			continue;
		}
		if (*s == '#')
			r = parse_comment(&p, (char *)s, e);
		else if (p.avg)
			continue;   /* trailing text after the summary (mpirun, job scripts) */
		else
			r = parse_row(&p, (char *)s, e);
		if (r < 0)
			return r;
	}
	if (!p.header)
		return ingot_fail(e, -EINVAL, "%s: no \"# nThread N nGpus N ...\" header: expected "
				  "the stdout of nccl-tests all_reduce_perf", name);
	if (!json_array_size(p.rows))
		return ingot_fail(e, -EINVAL, "%s: no result rows: expected the size/count/busbw table",
				  name);
	if (!p.avg)
		return ingot_fail(e, -EINVAL, "%s: no \"# Avg bus bandwidth\" line: expected a "
				  "finished run", name);
	*result = TAKE_PTR(res);
	return 0;
}
