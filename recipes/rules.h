/* The version-chain rules: data files recipes/rules/NAME.yaml, each rule a
 * condition over tuple fields in a small language (docs/tuple.md):
 *
 *   expr    := term { "or" term }
 *   term    := factor { "and" factor }
 *   factor  := "not" factor | "(" expr ")" | "has" PATH | PATH
 *            | PATH OP value | PATH "in" "[" value { "," value } "]"
 *   OP      := == != < <= > >=
 *   value   := WORD | "quoted string" | PATH (another tuple field)
 *
 * PATH is a tuple field ("driver.version") or `date` (the lint date).
 * Versions compare as dotted numbers, dates as YYYY-MM-DD; on a list
 * field (gpu.models, gpu.arch) == and `in` mean "any element".  A
 * comparison involving an absent field is false.  Rules are checked
 * against the tuple schema when loaded, so a typo is an error naming
 * the file, line:column and rule id. */
#ifndef INGOT_RULES_H
#define INGOT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/err.h"

struct tuple;
struct cond;

enum rule_severity { RULE_ERROR, RULE_WARNING };

struct rule {
	char *id;
	enum rule_severity severity;
	char *when;              /* condition text as written */
	struct cond *cond;
	char *message;           /* may contain {field.path} and {date} */
	char *source;
	char *date;              /* YYYY-MM-DD the rule's source was checked */
	char **fields;           /* tuple paths the condition reads, deduplicated */
	size_t n_fields;
	char *file;
	size_t line, column;
};

struct ruleset {
	struct rule *v;
	size_t n, alloc;
};

/* Every *.yaml in dir, in byte order of file name; duplicate ids across
 * files are an error.  An empty directory is an error (nothing to check). */
int rules_load_dir(const char *dir, struct ruleset **out, ingot_error *e);
/* Append one file's rules (rs from ruleset_new). */
struct ruleset *ruleset_new(void);
int rules_load_file(struct ruleset *rs, const char *path, ingot_error *e);
int rules_load_buf(struct ruleset *rs, const char *name, const char *buf, size_t len,
		   ingot_error *e);
void ruleset_free(struct ruleset *rs);

/* Parse a condition.  On error, msg gets the reason and *pos the byte
 * offset in text where it was found. */
int cond_parse(const char *text, struct cond **out, char *msg, size_t msglen, size_t *pos);
void cond_free(struct cond *c);
/* Evaluate against a tuple on date (YYYY-MM-DD). */
bool cond_eval(const struct cond *c, const struct tuple *t, const char *date);

/* Message with {path} placeholders filled from the tuple (malloc'd). */
char *rule_format_message(const struct rule *r, const struct tuple *t, const char *date);

/* True when s is a valid calendar date YYYY-MM-DD. */
bool rules_date_valid(const char *s);

#endif
