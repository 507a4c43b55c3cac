/* json_schema.h - a JSON Schema translated to a GBNF grammar (grammar.h)
 * whose every sentence is a JSON text valid under the schema.
 *
 * Supported: type (a name or an array of names: object, array, string,
 * integer, number, boolean, null), properties, required,
 * additionalProperties (false, true or a schema; with properties, only the
 * listed ones are generated), enum, const, items, minItems, maxItems,
 * minLength, maxLength, minimum 0 on integers (no minus sign), anyOf, oneOf
 * (as anyOf: exclusivity is not enforced), allOf of one schema, $ref to
 * "#", "#/$defs/NAME" or "#/definitions/NAME" (recursion allowed), true
 * and {} (any JSON value). Annotations are skipped: title, description,
 * $schema, $id, $comment, default, examples, deprecated, readOnly,
 * writeOnly, $defs and definitions themselves. Anything else (pattern,
 * format, other bounds, not, if, patternProperties, ...) is refused by
 * name: an output that might not validate is never produced silently.
 *
 * Numbers: integers have at most 16 digits, fractions 15, exponents 3;
 * whitespace between tokens is one space, or a newline and up to 16 spaces
 * or tabs: every output stays bounded where the schema is. */
#ifndef PITH_JSON_SCHEMA_H
#define PITH_JSON_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* The grammar of any JSON object (response_format json_object). */
extern const char json_schema_object_grammar[];

/* Writes the grammar for schema[0..len) into out (at most cap bytes, with a
 * NUL). Returns its length, or -1 with "NAME: what" in err (name: how the
 * caller calls the schema, e.g. "--json-schema x.json" or
 * "response_format.json_schema.schema"). */
int64_t json_schema_grammar(const char *schema, size_t len, const char *name, char *out, size_t cap, char *err,
                            size_t err_cap);

/* The shared rules every schema's rules use (ws, string, number, value,
 * ...); the first line is the char rule (of a JSON string's characters). */
extern const char json_schema_primitives[];

/* Appends the rules of one schema (sN, numbered from *next_rule, which is
 * advanced) to out at *n (advanced; the text stays under cap bytes); the
 * schema's own rule is s<*top>. With json_schema_primitives and a root
 * rule added, several schemas make one grammar (tool calls). With xml,
 * the top schema (an object) is written as Qwen3.5's calls write
 * arguments: a "<parameter=NAME>\nVALUE\n</parameter>\n" block per
 * property in their order (the required ones present), VALUE raw text for
 * a string schema (json_schema_is_text: rule xt, the caller's, is any text
 * without the closing tags), else JSON under the property's schema. 0, or
 * -1 with err. */
int json_schema_rules(const char *schema, size_t len, const char *name, int xml, int *next_rule, int *top, char *out,
                      size_t cap, size_t *n, char *err, size_t err_cap);

/* Whether a property's schema is one of strings alone (type "string", or
 * an enum or const of strings without '<'), whose value Qwen3.5's calls
 * write as raw text: 1, else 0. */
int json_schema_is_text(const char *schema, size_t len);

#endif
