/* Rule files and the condition language (grammar in rules.h). */
#include "recipes/rules.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "lib/version.h"
#include "lib/xalloc.h"
#include "lib/yamlx.h"
#include "recipes/tuple.h"

#define DATE_FIELD "date"
#define MAX_DEPTH 64

enum cond_kind { C_AND, C_OR, C_NOT, C_HAS, C_TRUTHY, C_CMP, C_IN };
enum cond_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum ftype { F_STR, F_VERSION, F_BOOL, F_ENUM, F_LIST, F_DATE };

struct operand {
	char *text;     /* literal, or field path when is_field */
	bool is_field;
	bool quoted;    /* written as "..." : always a literal */
};

struct cond {
	enum cond_kind kind;
	struct cond *a, *b;          /* AND, OR, NOT (a only) */
	char *path;                  /* HAS, TRUTHY, CMP, IN: left-hand field */
	enum ftype type;             /* type of path */
	enum cond_op op;
	struct operand *rhs;         /* CMP: 1, IN: n */
	size_t n_rhs;
};

void cond_free(struct cond *c)
{
	if (!c)
		return;
	cond_free(c->a);
	cond_free(c->b);
	free(c->path);
	for (size_t i = 0; i < c->n_rhs; i++)
		free(c->rhs[i].text);
	free(c->rhs);
	free(c);
}

static void cond_freep(struct cond **c) { cond_free(*c); }

bool rules_date_valid(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d;
	char tail;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-' ||
	    strspn(s, "0123456789") != 4 || strspn(s + 5, "0123456789") != 2 ||
	    strspn(s + 8, "0123456789") != 2)
		return false;
	if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3)
		return false;
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return false;
	return true;
}

/* Type of a field path for the rule language; -1 when unknown. */
static int field_type(const char *path, enum ftype *type, const char *const **words)
{
	enum tuple_type tt;

	if (!strcmp(path, DATE_FIELD)) {
		*type = F_DATE;
		*words = NULL;
		return 0;
	}
	if (tuple_schema_type(path, &tt, words) < 0)
		return -1;
	switch (tt) {
	case TUPLE_STR: *type = F_STR; break;
	case TUPLE_VERSION: *type = F_VERSION; break;
	case TUPLE_BOOL: *type = F_BOOL; break;
	case TUPLE_ENUM: *type = F_ENUM; break;
	case TUPLE_LIST: *type = F_LIST; break;
	}
	return 0;
}

/* ------------------------------------------------------------- lexer -- */

enum tok_kind { T_END, T_WORD, T_STRING, T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_COMMA, T_OP };

struct lexer {
	const char *text;
	size_t pos;          /* start of the current token */
	size_t next;         /* after it */
	enum tok_kind kind;
	enum cond_op op;
	char *val;           /* WORD / STRING text (malloc'd) */
	char *msg;
	size_t msglen;
	size_t errpos;
	int depth;
};

static int lex_fail(struct lexer *lx, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int lex_fail(struct lexer *lx, size_t pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lx->msg, lx->msglen, fmt, ap);
	va_end(ap);
	lx->errpos = pos;
	return -EINVAL;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == '/';
}

static int lex_next(struct lexer *lx)
{
	const char *s = lx->text;
	size_t i = lx->next;

	free(lx->val);
	lx->val = NULL;
	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
		i++;
	lx->pos = i;
	if (!s[i]) {
		lx->kind = T_END;
		lx->next = i;
		return 0;
	}
	switch (s[i]) {
	case '(': lx->kind = T_LPAREN; lx->next = i + 1; return 0;
	case ')': lx->kind = T_RPAREN; lx->next = i + 1; return 0;
	case '[': lx->kind = T_LBRACK; lx->next = i + 1; return 0;
	case ']': lx->kind = T_RBRACK; lx->next = i + 1; return 0;
	case ',': lx->kind = T_COMMA; lx->next = i + 1; return 0;
	case '=': case '!': case '<': case '>': {
		bool eq = s[i + 1] == '=';
		lx->kind = T_OP;
		lx->next = i + 1 + eq;
		if (s[i] == '=' && eq) lx->op = OP_EQ;
		else if (s[i] == '!' && eq) lx->op = OP_NE;
		else if (s[i] == '<') lx->op = eq ? OP_LE : OP_LT;
		else if (s[i] == '>') lx->op = eq ? OP_GE : OP_GT;
		else return lex_fail(lx, i, "expected ==, !=, <, <=, > or >=, got '%c'", s[i]);
		return 0;
	}
	case '"': {
		size_t j = i + 1;
		while (s[j] && s[j] != '"')
			j++;
		if (!s[j])
			return lex_fail(lx, i, "unterminated string");
		lx->kind = T_STRING;
		lx->val = xstrndup(s + i + 1, j - i - 1);
		lx->next = j + 1;
		return 0;
	}
	default:
		if (!word_char(s[i]))
			return lex_fail(lx, i, "unexpected character '%c'", s[i]);
		size_t j = i;
		while (word_char(s[j]))
			j++;
		lx->kind = T_WORD;
		lx->val = xstrndup(s + i, j - i);
		lx->next = j;
		return 0;
	}
}

static bool lex_is_word(const struct lexer *lx, const char *w)
{
	return lx->kind == T_WORD && !strcmp(lx->val, w);
}

/* ------------------------------------------------------------ parser -- */

static int parse_expr(struct lexer *lx, struct cond **out);

static struct cond *cond_new(enum cond_kind k)
{
	struct cond *c = xcalloc(1, sizeof(*c));
	c->kind = k;
	return c;
}

static const char *op_name(enum cond_op op)
{
	static const char *const n[] = { "==", "!=", "<", "<=", ">", ">=" };
	return n[op];
}

/* Check one operand of a comparison/membership against the field type. */
static int check_operand(struct lexer *lx, size_t pos, const char *path, enum ftype type,
			 const char *const *words, struct operand *o)
{
	if (o->is_field) {
		enum ftype t2;
		const char *const *w2;
		if (field_type(o->text, &t2, &w2) < 0)
			return lex_fail(lx, pos, "unknown field '%s'", o->text);
		if (t2 != type && !((t2 == F_STR || t2 == F_ENUM) && (type == F_STR || type == F_ENUM)))
			return lex_fail(lx, pos, "cannot compare %s with %s: different types", path, o->text);
		return 0;
	}
	{
		/* "driver.versoin": a misspelt field, not a strange literal */
		const char *dot = strchr(o->text, '.');
		char group[64];
		if (!o->quoted && dot && (size_t)(dot - o->text) < sizeof(group)) {
			snprintf(group, sizeof(group), "%.*s", (int)(dot - o->text), o->text);
			if (tuple_schema_group(group))
				return lex_fail(lx, pos, "unknown field '%s'", o->text);
		}
	}
	switch (type) {
	case F_VERSION:
		if (!version_valid(o->text))
			return lex_fail(lx, pos, "%s: expected a dotted numeric version, got '%s'", path, o->text);
		break;
	case F_DATE:
		if (!rules_date_valid(o->text))
			return lex_fail(lx, pos, "%s: expected a date YYYY-MM-DD, got '%s'", path, o->text);
		break;
	case F_BOOL:
		if (strcmp(o->text, "true") && strcmp(o->text, "false"))
			return lex_fail(lx, pos, "%s: expected true or false, got '%s'", path, o->text);
		break;
	case F_ENUM:
	case F_LIST: {
		bool ok = !words;   /* a list of free text: any literal */
		for (const char *const *w = words; w && *w; w++)
			ok |= !strcmp(*w, o->text);
		if (!ok)
			return lex_fail(lx, pos, "%s: '%s' is not one of its values", path, o->text);
		break;
	}
	case F_STR:
		break;
	}
	return 0;
}

static int parse_operand(struct lexer *lx, struct operand *o)
{
	enum ftype t;
	const char *const *w;

	if (lx->kind != T_WORD && lx->kind != T_STRING)
		return lex_fail(lx, lx->pos, "expected a value");
	o->is_field = lx->kind == T_WORD && field_type(lx->val, &t, &w) == 0;
	o->quoted = lx->kind == T_STRING;
	o->text = TAKE_PTR(lx->val);
	return lex_next(lx);
}

static int parse_factor(struct lexer *lx, struct cond **out)
{
	_cleanup_(cond_freep) struct cond *c = NULL;
	const char *const *words;
	size_t pos = lx->pos;
	int r;

	if (++lx->depth > MAX_DEPTH)
		return lex_fail(lx, pos, "condition nested too deeply");
	if (lex_is_word(lx, "not")) {
		c = cond_new(C_NOT);
		if ((r = lex_next(lx)) < 0 || (r = parse_factor(lx, &c->a)) < 0)
			return r;
		goto done;
	}
	if (lx->kind == T_LPAREN) {
		if ((r = lex_next(lx)) < 0 || (r = parse_expr(lx, &c)) < 0)
			return r;
		if (lx->kind != T_RPAREN)
			return lex_fail(lx, lx->pos, "expected ')'");
		if ((r = lex_next(lx)) < 0)
			return r;
		goto done;
	}
	if (lex_is_word(lx, "has")) {
		if ((r = lex_next(lx)) < 0)
			return r;
		if (lx->kind != T_WORD)
			return lex_fail(lx, lx->pos, "has: expected a field name");
		if (field_type(lx->val, &(enum ftype){ 0 }, &words) < 0 && !tuple_schema_group(lx->val))
			return lex_fail(lx, lx->pos, "unknown field '%s'", lx->val);
		c = cond_new(C_HAS);
		c->path = TAKE_PTR(lx->val);
		if ((r = lex_next(lx)) < 0)
			return r;
		goto done;
	}
	if (lx->kind != T_WORD)
		return lex_fail(lx, pos, "expected a field name, 'not', 'has' or '('");
	c = cond_new(C_CMP);
	if (field_type(lx->val, &c->type, &words) < 0)
		return lex_fail(lx, pos, "unknown field '%s'", lx->val);
	c->path = TAKE_PTR(lx->val);
	if ((r = lex_next(lx)) < 0)
		return r;

	if (lx->kind == T_OP) {
		size_t opos;
		c->op = lx->op;
		if (c->op != OP_EQ && c->op != OP_NE && c->type != F_VERSION && c->type != F_DATE)
			return lex_fail(lx, lx->pos, "%s: operator %s needs a version or date field",
					c->path, op_name(c->op));
		if ((r = lex_next(lx)) < 0)
			return r;
		opos = lx->pos;
		c->rhs = xcalloc(1, sizeof(*c->rhs));
		c->n_rhs = 1;
		if ((r = parse_operand(lx, &c->rhs[0])) < 0)
			return r;
		if ((r = check_operand(lx, opos, c->path, c->type, words, &c->rhs[0])) < 0)
			return r;
	} else if (lex_is_word(lx, "in")) {
		c->kind = C_IN;
		if (c->type == F_BOOL)
			return lex_fail(lx, lx->pos, "%s: 'in' needs a non-boolean field", c->path);
		if ((r = lex_next(lx)) < 0)
			return r;
		if (lx->kind != T_LBRACK)
			return lex_fail(lx, lx->pos, "in: expected '['");
		do {
			size_t opos;
			struct operand *nr;
			if ((r = lex_next(lx)) < 0)
				return r;
			opos = lx->pos;
			nr = xrealloc(c->rhs, (c->n_rhs + 1) * sizeof(*nr));
			c->rhs = nr;
			memset(&c->rhs[c->n_rhs], 0, sizeof(*nr));
			c->n_rhs++;
			if ((r = parse_operand(lx, &c->rhs[c->n_rhs - 1])) < 0)
				return r;
			if (c->rhs[c->n_rhs - 1].is_field)
				return lex_fail(lx, opos, "in: list entries must be values, got field '%s'",
						c->rhs[c->n_rhs - 1].text);
			if ((r = check_operand(lx, opos, c->path, c->type, words, &c->rhs[c->n_rhs - 1])) < 0)
				return r;
		} while (lx->kind == T_COMMA);
		if (lx->kind != T_RBRACK)
			return lex_fail(lx, lx->pos, "in: expected ',' or ']'");
		if ((r = lex_next(lx)) < 0)
			return r;
	} else {
		if (c->type != F_BOOL)
			return lex_fail(lx, lx->pos, "%s: expected an operator or 'in' after the field",
					c->path);
		c->kind = C_TRUTHY;
	}
done:
	lx->depth--;
	*out = TAKE_PTR(c);
	return 0;
}

static int parse_binary(struct lexer *lx, struct cond **out, const char *word, enum cond_kind k,
			int (*sub)(struct lexer *, struct cond **))
{
	_cleanup_(cond_freep) struct cond *left = NULL;
	int r = sub(lx, &left);
	if (r < 0)
		return r;
	while (lex_is_word(lx, word)) {
		struct cond *n = cond_new(k);
		n->a = TAKE_PTR(left);
		left = n;
		if ((r = lex_next(lx)) < 0 || (r = sub(lx, &n->b)) < 0)
			return r;
	}
	*out = TAKE_PTR(left);
	return 0;
}

static int parse_term(struct lexer *lx, struct cond **out)
{
	return parse_binary(lx, out, "and", C_AND, parse_factor);
}

static int parse_expr(struct lexer *lx, struct cond **out)
{
	return parse_binary(lx, out, "or", C_OR, parse_term);
}

int cond_parse(const char *text, struct cond **out, char *msg, size_t msglen, size_t *pos)
{
	struct lexer lx = { .text = text, .msg = msg, .msglen = msglen };
	struct cond *c = NULL;
	int r;

	*out = NULL;
	msg[0] = '\0';
	r = lex_next(&lx);
	if (r == 0 && lx.kind == T_END)
		r = lex_fail(&lx, 0, "empty condition");
	if (r == 0)
		r = parse_expr(&lx, &c);
	if (r == 0 && lx.kind != T_END)
		r = lex_fail(&lx, lx.pos, "unexpected '%s'", lx.val ? lx.val : text + lx.pos);
	free(lx.val);
	if (r < 0) {
		cond_free(c);
		*pos = lx.errpos;
		return r;
	}
	*out = c;
	return 0;
}

/* --------------------------------------------------------- evaluator -- */

static int cmp_values(enum ftype type, const char *a, const char *b)
{
	if (type == F_VERSION)
		return version_cmp(a, b);
	return strcmp(a, b);
}

static bool op_holds(enum cond_op op, int c)
{
	switch (op) {
	case OP_EQ: return c == 0;
	case OP_NE: return c != 0;
	case OP_LT: return c < 0;
	case OP_LE: return c <= 0;
	case OP_GT: return c > 0;
	case OP_GE: return c >= 0;
	}
	return false;
}

/* Scalar text of a field (NULL if absent); lists are handled by callers. */
static const char *field_text(const struct tuple *t, const char *date, const char *path,
			      const struct tuple_value **vout)
{
	const struct tuple_value *v;
	*vout = NULL;
	if (!strcmp(path, DATE_FIELD))
		return date;
	v = tuple_get(t, path);
	*vout = v;
	if (!v)
		return NULL;
	if (v->type == TUPLE_BOOL)
		return v->b ? "true" : "false";
	return v->str;
}

static bool eval_cmp(const struct cond *c, const struct tuple *t, const char *date)
{
	const struct tuple_value *lv, *rv;
	const char *l = field_text(t, date, c->path, &lv), *r;

	if (lv && lv->type == TUPLE_LIST) {
		bool any = false;
		for (size_t i = 0; i < lv->n_list; i++)
			any |= !strcmp(lv->list[i], c->rhs[0].text);
		return c->op == OP_EQ ? any : !any;
	}
	if (!l)
		return false;
	r = c->rhs[0].is_field ? field_text(t, date, c->rhs[0].text, &rv) : c->rhs[0].text;
	if (!r)
		return false;
	return op_holds(c->op, cmp_values(c->type, l, r));
}

static bool eval_in(const struct cond *c, const struct tuple *t, const char *date)
{
	const struct tuple_value *lv;
	const char *l = field_text(t, date, c->path, &lv);

	for (size_t k = 0; k < c->n_rhs; k++) {
		if (lv && lv->type == TUPLE_LIST) {
			for (size_t i = 0; i < lv->n_list; i++)
				if (!strcmp(lv->list[i], c->rhs[k].text))
					return true;
		} else if (l && cmp_values(c->type, l, c->rhs[k].text) == 0) {
			return true;
		}
	}
	return false;
}

bool cond_eval(const struct cond *c, const struct tuple *t, const char *date)
{
	const struct tuple_value *v;

	switch (c->kind) {
	case C_AND: return cond_eval(c->a, t, date) && cond_eval(c->b, t, date);
	case C_OR: return cond_eval(c->a, t, date) || cond_eval(c->b, t, date);
	case C_NOT: return !cond_eval(c->a, t, date);
	case C_HAS: return !strcmp(c->path, DATE_FIELD) || tuple_has(t, c->path);
	case C_TRUTHY:
		v = tuple_get(t, c->path);
		return v && v->b;
	case C_CMP: return eval_cmp(c, t, date);
	case C_IN: return eval_in(c, t, date);
	}
	return false;
}

/* Field paths a condition reads, in order of first use. */
static void collect_fields(const struct cond *c, struct rule *r)
{
	const char *paths[2] = { NULL, NULL };

	if (!c)
		return;
	collect_fields(c->a, r);
	collect_fields(c->b, r);
	paths[0] = c->path;
	if (c->kind == C_CMP && c->rhs[0].is_field)
		paths[1] = c->rhs[0].text;
	for (int i = 0; i < 2; i++) {
		bool seen = false;
		char **nf;
		if (!paths[i] || !strcmp(paths[i], DATE_FIELD))
			continue;
		for (size_t j = 0; j < r->n_fields; j++)
			seen |= !strcmp(r->fields[j], paths[i]);
		if (seen)
			continue;
		nf = xrealloc(r->fields, (r->n_fields + 1) * sizeof(*nf));
		r->fields = nf;
		nf[r->n_fields] = xstrdup(paths[i]);
		r->n_fields++;
	}
}

/* ------------------------------------------------------------ messages -- */

static void value_text(struct strbuf *sb, const struct tuple *t, const char *date, const char *path)
{
	const struct tuple_value *v;
	const char *s = field_text(t, date, path, &v);

	if (v && v->type == TUPLE_LIST) {
		for (size_t i = 0; i < v->n_list; i++)
			strbuf_addf(sb, "%s%s", i ? ", " : "", v->list[i]);
	} else {
		strbuf_addstr(sb, s ? s : "(unset)");
	}
}

/* Walk {path} placeholders: check (t == NULL) or expand them. */
static int message_walk(const char *msg, const struct tuple *t, const char *date,
			struct strbuf *sb, char *bad, size_t badlen)
{
	const char *p = msg;

	while (*p) {
		const char *open = strchr(p, '{'), *close;
		char path[128];
		enum ftype ft;
		const char *const *w;

		if (!open) {
			if (sb)
				strbuf_addstr(sb, p);
			break;
		}
		if (sb)
			strbuf_add(sb, p, (size_t)(open - p));
		close = strchr(open, '}');
		if (!close || (size_t)(close - open - 1) >= sizeof(path)) {
			snprintf(bad, badlen, "unterminated or overlong '{' placeholder");
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "%.*s", (int)(close - open - 1), open + 1);
		if (field_type(path, &ft, &w) < 0) {
			snprintf(bad, badlen, "placeholder '{%s}' names no tuple field", path);
			return -EINVAL;
		}
		if (sb)
			value_text(sb, t, date, path);
		p = close + 1;
	}
	return 0;
}

char *rule_format_message(const struct rule *r, const struct tuple *t, const char *date)
{
	struct strbuf sb = STRBUF_INIT;
	char bad[160];

	strbuf_init(&sb, 128);
	if (message_walk(r->message, t, date, &sb, bad, sizeof(bad)) < 0) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, r->message);
	}
	return strbuf_detach(&sb, NULL);
}

/* -------------------------------------------------------------- files -- */

struct ruleset *ruleset_new(void)
{
	return xcalloc(1, sizeof(struct ruleset));
}

static void rule_clear(struct rule *r)
{
	free(r->id);
	free(r->when);
	cond_free(r->cond);
	free(r->message);
	free(r->source);
	free(r->date);
	for (size_t i = 0; i < r->n_fields; i++)
		free(r->fields[i]);
	free(r->fields);
	free(r->file);
}

void ruleset_free(struct ruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		rule_clear(&rs->v[i]);
	free(rs->v);
	free(rs);
}

static bool id_valid(const char *s)
{
	if (!*s || strlen(s) > 64 || !((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
			return false;
	return true;
}

static int load_rule(struct ydoc *d, yaml_node_t *n, struct rule *r, ingot_error *e)
{
	static const char *const keys[] = { "id", "severity", "when", "message", "source", "date", NULL };
	yaml_node_t *v;
	const char *s;
	char msg[512], id[80], field[96];
	size_t pos = 0;
	int k;

	r->line = n->start_mark.line + 1;
	r->column = n->start_mark.column + 1;
	if ((k = ydoc_expect_map(d, n, "rules[]", e)) < 0)
		return k;
	/* the id first, so every later message can name the rule */
	if ((k = ydoc_need(d, n, "id", "rule", &v, e)) < 0 || (k = ydoc_str(d, v, "rule.id", &s, e)) < 0)
		return k;
	if (!id_valid(s))
		return ydoc_fail(d, v, e, "rule.id: expected [a-z0-9][a-z0-9.-]* (at most 64), got '%s'", s);
	snprintf(id, sizeof(id), "rule '%s'", s);
	r->id = xstrdup(s);
	if ((k = ydoc_check_keys(d, n, id, keys, e)) < 0)
		return k;

	snprintf(field, sizeof(field), "%s: severity", id);
	if ((k = ydoc_need(d, n, "severity", id, &v, e)) < 0 || (k = ydoc_str(d, v, field, &s, e)) < 0)
		return k;
	if (!strcmp(s, "error"))
		r->severity = RULE_ERROR;
	else if (!strcmp(s, "warning"))
		r->severity = RULE_WARNING;
	else
		return ydoc_fail(d, v, e, "%s: expected error or warning, got '%s'", field, s);

	snprintf(field, sizeof(field), "%s: when", id);
	if ((k = ydoc_need(d, n, "when", id, &v, e)) < 0 || (k = ydoc_str(d, v, field, &s, e)) < 0)
		return k;
	r->when = xstrdup(s);
	if ((k = cond_parse(s, &r->cond, msg, sizeof(msg), &pos)) < 0) {
		/* For a one-line plain or quoted scalar the column is exact. */
		size_t col = v->start_mark.column + 1 + pos +
			     (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? 0 : 1);
		if (v->start_mark.line == v->end_mark.line)
			return ingot_fail(e, -EINVAL, "%s:%zu:%zu: %s: %s", d->file,
					  v->start_mark.line + 1, col, field, msg);
		return ydoc_fail(d, v, e, "%s: %s (at offset %zu of the condition)", field, msg, pos);
	}
	collect_fields(r->cond, r);

	snprintf(field, sizeof(field), "%s: message", id);
	if ((k = ydoc_need(d, n, "message", id, &v, e)) < 0 || (k = ydoc_str(d, v, field, &s, e)) < 0)
		return k;
	if (message_walk(s, NULL, NULL, NULL, msg, sizeof(msg)) < 0)
		return ydoc_fail(d, v, e, "%s: %s", field, msg);
	r->message = xstrdup(s);

	snprintf(field, sizeof(field), "%s: source", id);
	if ((k = ydoc_need(d, n, "source", id, &v, e)) < 0 || (k = ydoc_str(d, v, field, &s, e)) < 0)
		return k;
	r->source = xstrdup(s);

	snprintf(field, sizeof(field), "%s: date", id);
	if ((k = ydoc_need(d, n, "date", id, &v, e)) < 0 || (k = ydoc_str(d, v, field, &s, e)) < 0)
		return k;
	if (!rules_date_valid(s))
		return ydoc_fail(d, v, e, "%s: expected YYYY-MM-DD, got '%s'", field, s);
	r->date = xstrdup(s);
	r->file = xstrdup(d->file);
	return 0;
}

int rules_load_buf(struct ruleset *rs, const char *name, const char *buf, size_t len,
		   ingot_error *e)
{
	static const char *const top_keys[] = { "schema", "rules", NULL };
	_cleanup_ydoc_ struct ydoc d = { 0 };
	yaml_node_t *root, *list, *it, *v;
	const char *s;
	int r;

	if ((r = ydoc_load_buf(&d, name, buf, len, e)) < 0)
		return r;
	root = ydoc_root(&d);
	if ((r = ydoc_check_keys(&d, root, "rules file", top_keys, e)) < 0)
		return r;
	if ((v = ydoc_get(&d, root, "schema"))) {
		if ((r = ydoc_str(&d, v, "schema", &s, e)) < 0)
			return r;
		if (strcmp(s, "ingot.rules/v1"))
			return ydoc_fail(&d, v, e, "schema: expected ingot.rules/v1, got '%s'", s);
	}
	if ((r = ydoc_need(&d, root, "rules", "rules file", &list, e)) < 0 ||
	    (r = ydoc_expect_seq(&d, list, "rules", e)) < 0)
		return r;
	ydoc_seq_foreach(&d, list, it) {
		struct rule *nv;
		if (rs->n == rs->alloc) {
			size_t na = rs->alloc ? rs->alloc * 2 : 32;
			nv = xrealloc(rs->v, na * sizeof(*nv));
			rs->v = nv;
			rs->alloc = na;
		}
		memset(&rs->v[rs->n], 0, sizeof(rs->v[0]));
		r = load_rule(&d, it, &rs->v[rs->n], e);
		if (r < 0) {
			rule_clear(&rs->v[rs->n]);
			return r;
		}
		for (size_t i = 0; i < rs->n; i++)
			if (!strcmp(rs->v[i].id, rs->v[rs->n].id)) {
				r = ingot_fail(e, -EINVAL, "%s:%zu:%zu: rule '%s': duplicate id (first defined at %s:%zu:%zu)",
					       name, rs->v[rs->n].line, rs->v[rs->n].column, rs->v[i].id,
					       rs->v[i].file, rs->v[i].line, rs->v[i].column);
				rule_clear(&rs->v[rs->n]);
				return r;
			}
		rs->n++;
	}
	return 0;
}

int rules_load_file(struct ruleset *rs, const char *path, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, 1u << 20, &buf, &len, e);
	if (r < 0)
		return r;
	return rules_load_buf(rs, path, buf, len, e);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rules_load_dir(const char *dir, struct ruleset **out, ingot_error *e)
{
	DIR *dh;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	struct ruleset *rs;
	int r = 0;

	*out = NULL;
	dh = opendir(dir);
	if (!dh)
		return ingot_fail(e, -errno, "%s: cannot open rules directory: %s", dir, strerror(errno));
	while ((de = readdir(dh))) {
		size_t len = strlen(de->d_name);
		char **nn;
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		nn = xrealloc(names, (n + 1) * sizeof(*nn));
		nn[n] = xstrdup(de->d_name);
		names = nn;
		n++;
	}
	if (n == 0) {
		r = ingot_fail(e, -ENOENT, "%s: no *.yaml rule files", dir);
		goto out;
	}
	/* readdir order is the file system's; the report must not depend on it */
	qsort(names, n, sizeof(*names), name_cmp);
	rs = ruleset_new();
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
		strbuf_addf(&p, "%s/%s", dir, names[i]);
		r = rules_load_file(rs, p.buf, e);
	}
	if (r < 0)
		ruleset_free(rs);
	else
		*out = rs;
out:
	closedir(dh);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}
