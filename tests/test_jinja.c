/* test_jinja.c - the Jinja2 interpreter (src/text/jinja.c with its values
 * and builtins) on small templates whose expected renderings were taken
 * from jinja2 3.1.6 in transformers' environment (ImmutableSandboxedEnvironment,
 * trim_blocks, lstrip_blocks, loopcontrols, {% generation %}):
 * whitespace control, literals, operators and their precedence, scopes,
 * loops, macros and call blocks; templates jinja2 refuses, with the
 * LINE:COL of our message; and the bounds (steps, macro depth, nesting,
 * output, the two memory regions) ending in an error, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../src/text/jinja.h"
#include "../src/text/json.h"

typedef struct {
    const char *tpl, *vars, *want; /* vars: a JSON object, each key a variable (NULL: none) */
} Case;

/* Expected renderings: jinja2's. */
static const Case renders[] = {
    {"hello",
     NULL,
     "hello"},
    {"{{ 1 + 2 }}|{{ 7 // 2 }}|{{ 7 / 2 }}|{{ 2 ** 10 }}|{{ -3 % 5 }}|{{ 'a' ~ 1 ~ none }}",
     NULL,
     "3|3|3.5|1024|2|a1None"},
    {"{{ x }}{{ y }}",
     NULL,
     ""},
    {"{{ x.y }}",
     "{\"x\": {\"y\": [1, \"a\"]}}",
     "[1, 'a']"},
    {"{% for m in messages %}{{ loop.index }}{{ m.role }}:{{ m['content'] }};{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]}",
     "1user:hi;2assistant:yo;"},
    {"  {% if true %}\n  x\n  {% endif %}\n",
     NULL,
     "  x\n"},
    {"a\n  {%- if true -%}  \n x {% endif %}",
     NULL,
     "ax "},
    {"  {%+ if true %}x{% endif %}",
     NULL,
     "  x"},
    {"  {{ 1 }}\n  {# c #}\n  y",
     NULL,
     "  1\n  y"},
    {"{% raw %}\n  {{ x }}\n  {% endraw %}\nz",
     NULL,
     "\n  {{ x }}\nz"},
    {"{% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = x + 1 %}{{x}};{% endfor %}{{x}}",
     NULL,
     "12;12;1"},
    {"{% for i in [1,2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}",
     NULL,
     "[]"},
    {"{% macro m() %}{{ x }}{% endmacro %}{% set x = 5 %}{{ m() }}",
     NULL,
     "5"},
    {"{% set ns = namespace(a=1) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}",
     NULL,
     "4"},
    {"{{ 2**3**2 }}{{ -2**2 }}{{ not 1 == 2 }}",
     NULL,
     "644True"},
    {"{{ [1,2,3][1:] }}{{ 'abc'[::-1] }}{{ 'abcdef'[1:4:2] }}",
     NULL,
     "[2, 3]cbabd"},
    {"{% macro m(a, b=a) %}{{a}}{{b}}{{varargs}}{{kwargs}}{% endmacro %}{{ m(1) }}{{ m(1,2,3,4,c=5) }}",
     NULL,
     "11(){}12(3, 4){'c': 5}"},
    {"{% for x in [1,2,3] if x > 1 %}{{ loop.index }}/{{ loop.length }}{{ loop.first }}{{ loop.last }}{% endfor %}",
     NULL,
     "1/2TrueFalse2/2FalseTrue"},
    {"{% for x in [] %}a{% else %}b{% endfor %}",
     NULL,
     "b"},
    {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}",
     NULL,
     "a=1,b=2,"},
    {"{{ (1,) }}{{ 1, 2 }}{{ () }}{{ [] }}{{ {} }}",
     NULL,
     "(1,)(1, 2)()[]{}"},
    {"{{ \"a\\x41\\u00e9\\101\\q\" }}{{ 'a' 'b' }}",
     NULL,
     "aA\303\251A\\qab"},
    {"{{ 1 if 0 }}|{{ 1 if 1 }}|{{ 2 if 0 else 3 }}",
     NULL,
     "|1|3"},
    {"{{ 1 < 2 < 3 }}{{ 1 < 3 < 2 }}{{ 'a' in 'abc' }}{{ 'd' not in 'abc' }}",
     NULL,
     "TrueFalseTrueTrue"},
    {"{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}",
     NULL,
     "02"},
    {"{% for i in 'abc' %}{{ loop.cycle('x', 'y') }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.revindex }}{% endfor %}",
     NULL,
     "xb3yac2xb1"},
    {"{% set a, b = [1, 2] %}{{ a }}{{ b }}",
     NULL,
     "12"},
    {"{% set x %}  A {{ 1 }}{% endset %}[{{ x }}]",
     NULL,
     "[  A 1]"},
    {"{% set x | upper %}abc{% endset %}{{ x }}",
     NULL,
     "ABC"},
    {"{% filter upper %}abc{{ 'd' }}{% endfilter %}",
     NULL,
     "ABCD"},
    {"{% macro m(x) %}<{{ caller() }}{{ x }}>{% endmacro %}{% call m(1) %}in{% endcall %}",
     NULL,
     "<in1>"},
    {"{% macro m(x) %}<{{ caller(5) }}>{% endmacro %}{% call(y) m(1) %}in{{ y }}{% endcall %}",
     NULL,
     "<in5>"},
    {"{% generation %}g{% endgeneration %}",
     NULL,
     "g"},
    {"{{ x|default('d') }}{{ 'a b'|upper|replace('A', 'z') }}",
     NULL,
     "dz B"},
    {"{{ 'x' is string }}{{ 1 is not string }}{{ y is defined }}{{ none is none }}",
     NULL,
     "TrueTrueFalseTrue"},
    {"{% for x in [[1,[2,3]],[4,[5,6]]] recursive %}{{ x }}{% endfor %}",
     NULL,
     "[1, [2, 3]][4, [5, 6]]"},
    {"{% for x in [1, [2, [3]]] recursive %}{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}@{{ loop.depth }} {% endif %}{% endfor %}",
     NULL,
     "1@1 2@2 3@3 "},
    {"a\r\nb\r\n",
     NULL,
     "a\nb"},
    {"x\n",
     NULL,
     "x"},
    {"x\n\n",
     NULL,
     "x\n"},
    {"{% if 1 %}\r\n  y\r\n{% endif %}\r\n",
     NULL,
     "  y\n"},
    {"{{ not true or true }}|{{ not (true or true) }}|{{ 1 and 0 }}|{{ 0 or 'x' }}|{{ none or [] }}|{{ 1 and 2 and 3 }}",
     NULL,
     "True|False|0|x|[]|3"},
    {"{{ 'a' if 1 > 2 else 'b' if 2 > 1 else 'c' }}",
     NULL,
     "b"},
    {"{{ [1, 2, 3] | length }}{{ 'abc' | length }}{{ {'a': 1} | length }}",
     NULL,
     "331"},
    {"{{ x | default('y') | upper }}{{ -x | abs if x is defined else 1 }}",
     NULL,
     "Y1"},
    {"{{ 'a,b' .split(',') }}",
     NULL,
     "['a', 'b']"},
    {"{{ 'x'.upper() ~ 'Y'.lower() }}",
     NULL,
     "Xy"},
    {"{{ [1,2,3][-1] }}{{ [1,2,3][0:-1] }}{{ [1,2,3][:2] }}{{ [1,2,3][::2] }}{{ 'hello'[1:] }}{{ [1,2,3][5] }}",
     NULL,
     "3[1, 2][1, 2][1, 3]ello"},
    {"{{ range(3) | list }}{{ range(1, 7, 2) | list }}",
     NULL,
     "[0, 1, 2][1, 3, 5]"},
    {"{{ 1 == 1.0 }}{{ 'a' != 'b' }}{{ [1] == [1] }}{{ 2 > 1 >= 1 }}",
     NULL,
     "TrueTrueTrueTrue"},
    {"{% if x is not defined %}nd{% endif %}{% if 1 is odd %}odd{% endif %}{% if 4 is divisibleby 2 %}div{% endif %}{% if x is sameas none %}s{% endif %}",
     NULL,
     "ndodddiv"},
    {"{{ 1 is number }}{{ 'a' is number }}{{ [] is iterable }}{{ {} is mapping }}{{ none is none }}{{ true is boolean }}",
     NULL,
     "TrueFalseTrueTrueTrueTrue"},
    {"{{ [1, 2] is sequence and 'a' is sequence }}",
     NULL,
     "True"},
    {"{% set x = {'a': [1, {'b': 2}]} %}{{ x.a[1].b }}{{ x['a'][1]['b'] }}",
     NULL,
     "22"},
    {"{% set a = 1 %}{% set b = a + 1 %}{{ a }}{{ b }}",
     NULL,
     "12"},
    {"{% set t = (1, 'a') %}{{ t[0] }}{{ t[1] }}{{ t }}",
     NULL,
     "1a(1, 'a')"},
    {"{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}",
     NULL,
     "37"},
    {"{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}",
     NULL,
     "123"},
    {"{% for x in {'b': 1, 'a': 2} %}{{ x }}{% endfor %}",
     NULL,
     "ba"},
    {"{% for x in 'h\303\251llo' %}{{ x }}|{% endfor %}",
     NULL,
     "h|\303\251|l|l|o|"},
    {"{% for x in [1,2] %}{% for y in [3,4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ loop.index }}{% endfor %}",
     NULL,
     "113 214 1123 224 2"},
    {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}",
     NULL,
     "54321"},
    {"{% macro f() %}{{ varargs | length }}{% endmacro %}{{ f(1, 2, 3) }}",
     NULL,
     "3"},
    {"{% macro f(a, b) %}{{ a }}-{{ b }}{% endmacro %}{{ f(b=1, a=2) }}{{ f(1) }}|",
     NULL,
     "2-11-|"},
    {"{% set x = 5 %}{% macro f() %}{% set x = 1 %}{{ x }}{% endmacro %}{{ f() }}{{ x }}",
     NULL,
     "15"},
    {"{{ '{{' }}{{ '}}' }}{{ '%}' }}",
     NULL,
     "{{}}%}"},
    {"{% set s = \"it's\" %}{{ s }}{{ 'say \"hi\"' }}",
     NULL,
     "it'ssay \"hi\""},
    {"{{ 'a\\nb' }}|{{ 'tab\\there' }}|{{ '\\\\' }}",
     NULL,
     "a\nb|tab\there|\\"},
    {"{#- comment -#}  x  {#- c2 #}",
     NULL,
     "x"},
    {"{% if true %}a{% elif true %}b{% else %}c{% endif %}{% if false %}a{% elif true %}b{% else %}c{% endif %}{% if false %}a{% elif false %}b{% else %}c{% endif %}",
     NULL,
     "abc"},
    {"{% if false %}{% elif false %}{% endif %}x",
     NULL,
     "x"},
    {"{{ ns }}{% set ns = namespace() %}{% set ns.x = 1 %}{{ ns.x }}",
     NULL,
     "1"},
    {"{% set ns = namespace(items=[]) %}{% set ns.items = ns.items + [1] %}{% set ns.items = ns.items + [2] %}{{ ns.items }}",
     NULL,
     "[1, 2]"},
    {"{{ 1.0 }}{{ 0.1 + 0.2 }}{{ 1e20 }}{{ 3 / 1 }}{{ 2 ** -1 }}{{ 7 % 3 }}{{ -7 // 2 }}",
     NULL,
     "1.00.300000000000000041e+203.00.51-4"},
    {"{{ 'abc' * 2 }}{{ [0] * 3 }}",
     NULL,
     "abcabc[0, 0, 0]"},
    {"{{ 'a' < 'b' }}{{ [1, 2] < [1, 3] }}",
     NULL,
     "TrueTrue"},
    {"{{ (1, 2) + (3,) }}{{ [1] + [2] }}",
     NULL,
     "(1, 2, 3)[1, 2]"},
    {"{{ x is defined and x.y is defined }}",
     NULL,
     "False"},
    {"{% for m in messages %}{{ m.role }}{% if not loop.last %},{% endif %}{% endfor %}",
     NULL,
     ""},
    {"{{ true }}{{ True }}{{ none }}{{ None }}{{ false }}",
     NULL,
     "TrueTrueNoneNoneFalse"},
    {"{{ {'a': 1, 'b': [1, 'x', none, true, 1.5]} }}",
     NULL,
     "{'a': 1, 'b': [1, 'x', None, True, 1.5]}"},
    {"{{ 'x' in ['x', 'y'] }}{{ 'a' in {'a': 1} }}{{ 3 not in [1] }}",
     NULL,
     "TrueTrueTrue"},
    {"{% set x = 'a' %}{% set x = x ~ 'b' %}{{ x }}",
     NULL,
     "ab"},
    {"{%- for i in range(3) -%}\n  {{ i }}\n{%- endfor -%}",
     NULL,
     "012"},
    {"{{ loop }}",
     NULL,
     ""},
    {"{% for i in range(2) %}{{ loop.depth0 }}{{ loop.index0 }}{{ loop.revindex0 }}{% endfor %}",
     NULL,
     "001010"},
    {"{{ caller }}",
     NULL,
     ""},
    {"{{ [1, 2, 3]|join(', ') }}|{{ ['b', 'a']|sort|first }}",
     NULL,
     "1, 2, 3|a"},
    {"{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]}",
     "<user>hi<assistant>yo"},
    {"{% if messages[0]['role'] == 'system' %}{% set sys = messages[0]['content'] %}{% set rest = messages[1:] %}{% else %}{% set sys = 'default' %}{% set rest = messages %}{% endif %}[{{ sys }}]{% for m in rest %}{{ m.content }}{% endfor %}",
     "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
     "[S]U"},
    {"{%- for m in messages %}\n  {%- if m.role == 'user' %}\n    {{- 'U: ' + m.content + '\\n' }}\n  {%- elif m.role == 'assistant' %}\n    {{- 'A: ' + m.content }}\n  {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n  {{- 'A:' }}\n{%- endif %}\n",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}], \"add_generation_prompt\": true}",
     "U: hi\nA: yoA:"},
    {"{% for t in tools %}{{ t.function.name }}({{ t.function.parameters.properties | length }}){% endfor %}",
     "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {}, \"b\": {}}}}}]}",
     "f(2)"},
    {"{% for tc in m.tool_calls %}{{ tc.function.name }}:{{ tc.function.arguments.x }}{% endfor %}",
     "{\"m\": {\"tool_calls\": [{\"function\": {\"name\": \"g\", \"arguments\": {\"x\": 1}}}]}}",
     "g:1"},
    {"{% set ns = namespace(last=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}{{ ns.last }}",
     "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"assistant\"}, {\"role\": \"user\"}, {\"role\": \"assistant\"}]}",
     "2"},
    {"{% for m in messages[::-1] %}{{ m }}{% endfor %}",
     "{\"messages\": [1, 2, 3]}",
     "321"},
    {"{{ messages | length }}{{ messages[-1].role }}",
     "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"tool\"}]}",
     "2tool"},
    {"{% macro render(p, indent=0) %}{% for k, v in p.items() %}{{ ' ' * indent }}{{ k }}{% if v is mapping %}\n{{ render(v, indent + 2) }}{% else %}={{ v }}\n{% endif %}{% endfor %}{% endmacro %}{{ render(d) }}",
     "{\"d\": {\"a\": 1, \"b\": {\"c\": 2, \"d\": {\"e\": 3}}}}",
     "a=1\nb  c=2\n  d    e=3\n"},
    {"{% set content = m.content if m.content is string else '' %}[{{ content }}]",
     "{\"m\": {\"content\": null}}",
     "[]"},
    {"{% set content = m.content if m.content is string else '' %}[{{ content }}]",
     "{\"m\": {\"content\": \"x\"}}",
     "[x]"},
    {"{%- set x = 1 -%}\n\n   {{ x }}   \n\n{%- set y = 2 %}\n{{ y }}",
     NULL,
     "12"},
    {"{% for i in range(3) %}\n  {% if i %}\n    {{ i }}\n  {% endif %}\n{% endfor %}\n",
     NULL,
     "    1\n    2\n"},
    {"<{% if true %}\n{% endif %}>\n<{% if true +%}\n{% endif %}>",
     NULL,
     "<>\n<\n>"},
    {"  {% if true %}x{% endif %}  {% if true %}y{% endif %}\n\t{% if true %}z{% endif %}",
     NULL,
     "x  yz"},
    {"a  {#- c #}  b  {# c -#}  c\n  {# c #}\nd",
     NULL,
     "a  b  c\nd"},
    {"{% raw %}{% if %}{{ x }}{% endraw %}|{%- raw -%}  a  {%- endraw -%}  |",
     NULL,
     "{% if %}{{ x }}|a|"},
    {"x {{- ' y ' -}} z",
     NULL,
     "x y z"},
    {"x {{+ 1 }}",
     NULL,
     "x 1"},
    {"{{ 'multi\nline' }}\n{{ \"q'q\" }}",
     NULL,
     "multi\nline\nq'q"},
    {"{% if a %}1{% elif b %}2{% elif c %}3{% else %}4{% endif %}",
     "{\"c\": true}",
     "3"},
    {"{% for x in xs %}{{ x }}{% if loop.last %}.{% else %}, {% endif %}{% endfor %}",
     "{\"xs\": [\"a\", \"b\", \"c\"]}",
     "a, b, c."},
    {"{% for x in xs if x.keep %}{{ loop.index }}{{ x.n }}{% else %}none{% endfor %}",
     "{\"xs\": [{\"keep\": false, \"n\": 1}, {\"keep\": true, \"n\": 2}]}",
     "12"},
    {"{% for x in xs if x.keep %}{{ x.n }}{% else %}none{% endfor %}",
     "{\"xs\": [{\"keep\": false, \"n\": 1}]}",
     "none"},
    {"{% for x in [] %}{% else %}{% set y = 1 %}{{ y }}{% endfor %}{{ y }}",
     NULL,
     "1"},
    {"{% set y = 'out' %}{% for x in [1] %}{% set y = 'in' %}{% endfor %}{{ y }}",
     NULL,
     "out"},
    {"{% macro m() %}{% set y = 'in' %}{% endmacro %}{% set y = 'out' %}{{ m() }}{{ y }}",
     NULL,
     "out"},
    {"{% macro m() %}{{ g }}{% endmacro %}{% for g in [1] %}{{ m() }}{% endfor %}",
     "{\"g\": \"top\"}",
     "top"},
    {"{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{% for j in range(3) %}{% if j == 2 %}{% break %}{% endif %}{{ i }}{{ j }} {% endfor %}{% endfor %}",
     NULL,
     "00 01 20 21 "},
    {"{% set a, b = 'xy' %}{{ b }}{{ a }}",
     NULL,
     "yx"},
    {"{% set x = 1, 2 %}{{ x }}",
     NULL,
     "(1, 2)"},
    {"{{ (1 if true else 2) + 1 }}{{ [1, 2][1 if true else 0] }}",
     NULL,
     "22"},
    {"{{ x is defined }}{{ x is undefined }}{{ y is defined }}{{ y.z is defined }}",
     "{\"y\": {}}",
     "FalseTrueTrueFalse"},
    {"{{ -x }}{{ +x }}{{ - -x }}",
     "{\"x\": 3}",
     "-333"},
    {"{{ 'a' ~ 'b' ~ 1 ~ 2.5 ~ true ~ none ~ [1] }}",
     NULL,
     "ab12.5TrueNone[1]"},
    {"{{ 1 < 2 == true }}{{ 3 > 2 > 1 }}{{ 1 != 1 != 2 }}",
     NULL,
     "FalseTrueFalse"},
    {"{{ not x }}{{ not not x }}{{ x and not x }}",
     "{\"x\": []}",
     "TrueFalse[]"},
    {"{{ d.items() | list }}{{ d.keys() | list }}{{ d.get('a') }}{{ d.get('z', 'dflt') }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}",
     "[('a', 1), ('b', 2)]['a', 'b']1dflt"},
    {"{{ s.strip() }}|{{ s.split() }}|{{ s.startswith(' ') }}|{{ s|trim|upper }}",
     "{\"s\": \" a b \"}",
     "a b|['a', 'b']|True|A B"},
    {"{{ 'x'\n  ~ 'y' }}",
     NULL,
     "xy"},
    {"{{ [\n1,\n2,\n] }}{{ {'a': 1,} }}{{ (1, 2,) }}",
     NULL,
     "[1, 2]{'a': 1}(1, 2)"},
    {"{{ caller is defined }}",
     NULL,
     "False"},
    {"{% macro m(a, b='d') %}{{ a }}{{ b }}{% endmacro %}{{ m('x') }}{{ m('x', 'y') }}{{ m(b='z', a='w') }}{{ m() }}",
     NULL,
     "xdxywzd"},
    {"{% macro m() %}{{ kwargs }}{% endmacro %}{{ m(a=1, b=[2]) }}",
     NULL,
     "{'a': 1, 'b': [2]}"},
    {"{% macro outer() %}[{{ caller('p') }}]{% endmacro %}{% macro inner(v) %}({{ v }}){% endmacro %}{% call(v) outer() %}{{ inner(v) }}{% endcall %}",
     NULL,
     "[(p)]"},
    {"{% generation %}  a {% set z = 1 %}{{ z }}{% endgeneration %}{{ z }}",
     NULL,
     "  a 1"},
    {"{% filter trim %}  x  {% endfilter %}|{% filter replace('a', 'b') | upper %}aaa{% endfilter %}",
     NULL,
     "x|BBB"},
    {"{% set t %}{% for i in range(3) %}{{ i }}{% endfor %}{% endset %}{{ t | length }}{{ t }}",
     NULL,
     "3012"},
    {"{% set ns = namespace(a=[], b={'k': 1}) %}{% set ns.a = ns.a + [1] %}{{ ns.a }}{{ ns.b.k }}",
     NULL,
     "[1]1"},
    {"{{ 0.1 }}{{ 1.5e10 }}{{ 1e100 }}{{ 1_000.5 }}{{ 0o17 }}{{ 0b101 }}",
     NULL,
     "0.115000000000.01e+1001000.5155"},
    {"{{ '\\u00e9\\U0001F600\\x41\\101\\'\\\"' }}",
     NULL,
     "\303\251\360\237\230\200AA'\""},
    {"{{ \"\\a\\b\\f\\v\\0\" | length }}",
     NULL,
     "5"},
    {"{{ 'ab\\\ncd' }}",
     NULL,
     "abcd"},
    {"{% for a in xs %}{{ loop.previtem }}>{{ a }}>{{ loop.nextitem }};{% endfor %}",
     "{\"xs\": [1, 2, 3]}",
     ">1>2;1>2>3;2>3>;"},
    {"{% for a in xs %}{{ loop.cycle('odd', 'even') }}{% endfor %}",
     "{\"xs\": [1, 2, 3]}",
     "oddevenodd"},
    {"{% for a in xs recursive %}{{ a.n }}{% if a.c %}[{{ loop(a.c) }}]{% endif %}{% endfor %}",
     "{\"xs\": [{\"n\": 1, \"c\": [{\"n\": 2, \"c\": [{\"n\": 3}]}]}, {\"n\": 4}]}",
     "1[2[3]]4"},
    {"\303\251{{ '\303\274' }}\342\202\254{# \342\230\203 #}\360\237\230\200",
     NULL,
     "\303\251\303\274\342\202\254\360\237\230\200"},
    {"{{ x }}",
     "{\"x\": \"<b>&amp;</b>\"}",
     "<b>&amp;</b>"},
    {"{{ x }}",
     "{\"x\": null}",
     "None"},
    {"{{ x }}{{ y }}{{ z }}",
     "{\"x\": 1.0, \"y\": 12345678901234, \"z\": -0.5}",
     "1.012345678901234-0.5"},
    {"{{ x }}",
     "{\"x\": {\"a\": [1, \"b\", null, true, false, 2.5]}}",
     "{'a': [1, 'b', None, True, False, 2.5]}"},
    {"{% macro m(caller) %}x{% endmacro %}{{ m(1) }}",
     NULL,
     "x"},
    {"{% macro m() %}{{ caller is defined }}{% endmacro %}{{ m() }}",
     NULL,
     "False"},
    {"{% set x = 1 %}{% macro m() %}{% set x = x + 1 %}{{ x }}{% endmacro %}{{ m() }}{{ x }}",
     NULL,
     "21"},
    {"{% for i in [1, 2] %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}",
     NULL,
     "12"},
    {"{% set f = joiner(', ') %}{% for i in [1,2,3] %}{{ f() }}{{ i }}{% endfor %}",
     NULL,
     "1, 2, 3"},
    {"{% for i in [1,2] %}{{ loop.changed(i) }}{% endfor %}",
     NULL,
     "TrueTrue"},
    {"{{ range(3)|list }}{% for i in range(0) %}{% else %}e{% endfor %}",
     NULL,
     "[0, 1, 2]e"},
    {"{% for a in [1,2] %}{% for b in [1] %}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}",
     NULL,
     "1112"},
    {"{% set loop = 5 %}{% for i in [1] %}{{ loop.index }}{% endfor %}{{ loop }}",
     NULL,
     "15"},
    {"{% if true %}{% set a = 1 %}{% else %}{% set a = 2 %}{% endif %}{{ a }}",
     NULL,
     "1"},
    {"{% set a = [] %}{% for i in [1] %}{% set a = a + [i] %}{% endfor %}{{ a }}",
     NULL,
     "[]"},
    {"{{ 'abc' is string and 'abc' is not mapping }}",
     NULL,
     "True"},
    {"{{ x is defined and x }}",
     NULL,
     "False"},
    {"{{ [1,2,3] | map('string') | join('-') }}",
     NULL,
     "1-2-3"},
    {"{{ {'a': 1}['a'] }}{{ {'a': 1}.a }}{{ [1, 2].0 }}",
     NULL,
     "111"},
    {"{{ 'a' ~ 'b' if true }}",
     NULL,
     "ab"},
    {"{{ 1 if true else 2 if false }}",
     NULL,
     "1"},
    {"{{ 'x' if 'a' in 'abc' and not 'z' in 'abc' }}",
     NULL,
     "x"},
    {"{{ [1, 2, 3]|sum }}{{ 2 * 3 ** 2 }}{{ (2 * 3) ** 2 }}",
     NULL,
     "61836"},
    {"{{ 1 - - 1 }}{{ 1 + + 1 }}",
     NULL,
     "22"},
    {"{{ not 0 and 1 }}{{ not (0 and 1) }}",
     NULL,
     "1True"},
    {"{{ 1 in [1] == true }}",
     NULL,
     "False"},
    {"{{ 'a' 'b' ~ 'c' }}",
     NULL,
     "abc"},
    {"{% for i in [1,1,2,2,1] %}{{ loop.changed(i) }}{% endfor %}",
     NULL,
     "TrueFalseTrueFalseTrue"},
    {"{% for i in [1,1,2] %}{{ loop.changed() }}{% endfor %}",
     NULL,
     "TrueFalseFalse"},
    {"{% for m in [{'a':1},{'a':1},{'a':2}] %}{% if loop.changed(m.a, 1) %}c{% endif %}{% endfor %}",
     NULL,
     "cc"},
    {"{% raw %}b\n{{ z }} {% endraw +%}  \r\n",
     "{\"x\": \"X\"}",
     "b\n{{ z }}   "},
    {"b\n{{ x }}",
     "{\"x\": \"X\"}",
     "b\nX"},
    {"{{+ x }}{% raw %}  {{ z }} {%+ endraw +%}  \naa",
     "{\"x\": \"X\"}",
     "X  {{ z }}   \naa"},
    {"\t{#+ c #}  {#- c #}{{ x }}",
     "{\"x\": \"X\"}",
     "\tX"},
    {"\r\n{{- x -}}{#- c -#}a{% if true %} \n\n {%+ set y = 1 -%}\nb\n\n  {% endif -%}",
     "{\"x\": \"X\"}",
     "Xa \n\n b\n\n"},
    {"\n{%+ for i in [1,2] -%}{%+ if true -%}{% for i in [1,2] %}{{+ x }}\t{#+ c -#}{%- endfor +%}\n   \n\n    {% endif -%}  \n \n\n {% endfor %}{{+ x -}}{%- set y = 1 +%}",
     "{\"x\": \"X\"}",
     "\nX\tX\t\n   \n\nX\tX\t\n   \n\nX"},
    {"{%- if true +%}{% if false %}  \n  {% else -%}b\n{{+ x -}}{%+ if false +%}{%+ set y = 1 %}{{+ x -}}b\nb\n\n{% else -%}   {%+ endif %}{%+ endif %}{% raw %}  {{ z }} {% endraw %}{# c +#}\n  {%+ endif -%}{{ x -}}{%- if false -%}a\n  {%- if true +%}{{ x -}}\r\n{% endif +%}\n{%+ else -%}a  \n{{+ x -}}{#+ c #}{%- for i in [1,2] +%} \n\n  {% endfor -%}{%- endif -%}",
     "{\"x\": \"X\"}",
     "b\nX  {{ z }} \n  Xa  \nX \n\n \n\n"},
    {"{%- if true -%}{%- if false %} \n\n   \n{%- else +%}{%- for i in [1,2] +%}{% set y = 1 +%}b\n{% set y = 1 -%}{% endfor -%}{%- for i in [1,2] %}{{+ x }}{% set y = 1 %}  {% raw %}a{{ z }}  {%+ endraw -%}{%+ endfor -%}\r\n {%+ for i in [1,2] +%}{{ x -}}{% endfor %}{% endif -%}\r\n  {%- endif -%}{{ x }}",
     "{\"x\": \"X\"}",
     "b\nb\nX  a{{ z }}  X  a{{ z }}  XXX"},
    {"{%+ set y = 1 +%}{%+ for i in [1,2] -%}a{{ x -}}{%+ for i in [1,2] %} \n\n {# c +#}{% endfor -%}{%+ if true +%}{% for i in [1,2] +%}\t{% endfor %}{{+ x }}{% for i in [1,2] -%}{#+ c +#}{{+ x -}}{{+ x -}}{%+ endfor %}{%- if true +%}{% set y = 1 -%} \n\n {%- endif %}{%+ endif %}{{ x -}}{% endfor %}{% raw %}\n  {{ z }}a{%- endraw %}",
     "{\"x\": \"X\"}",
     "aX \n\n \n\n\t\tXXXXXXaX \n\n \n\n\t\tXXXXXX\n  {{ z }}a"},
    {"\n \n\n   \nb\n",
     "{\"x\": \"X\"}",
     "\n \n\n   \nb"},
    {"{{- x }}\n{% if true -%}{{+ x }}\r\n{#+ c #}  \n{% if false %}aa{%+ for i in [1,2] -%}\r\n{#+ c -#} {% set y = 1 -%}{% endfor -%}{% else +%}{% for i in [1,2] +%}\n{{- x -}}{%- endfor +%}{% endif %}{%+ endif +%}\n{%- if false %}\t{#+ c #}{%- else -%}{%- if true -%}{% if false %}{%+ set y = 1 %}{%+ else -%}{% raw %}\n{{ z }}b\n{%+ endraw -%}{{- x -}}{%+ endif %}{% endif -%}a{{- x }}{% for i in [1,2] %}{{ x }}{%- if true +%}{#+ c -#}a \n\n {% endif -%}\n  {%+ endfor -%}\t{% endif -%}",
     "{\"x\": \"X\"}",
     "X\nX\n  \nXX\n{{ z }}b\nXaXXa \n\nXa \n\n"},
    {"b\n\t",
     "{\"x\": \"X\"}",
     "b\n\t"},
    {"{% if true +%}\n{% endif -%}{#- c #}  \n\r\n{% set y = 1 +%}",
     "{\"x\": \"X\"}",
     "\n  \n\n"},
    {"\n  {%- if true %}{%+ if true %}{%+ for i in [1,2] +%}{%+ set y = 1 %}{% raw %}\r\n{{ z }}  {% endraw +%}{#+ c +#}{%+ if false %}a{%+ else -%} \n\n {%+ endif %}{%+ endfor %}{%+ endif +%}{%- if true -%}{{ x }}{%+ endif +%} \n\n {%- endif %}{% for i in [1,2] +%} \n\n {{- x }}{%- endfor +%} {#+ c #}",
     "{\"x\": \"X\"}",
     "\n{{ z }}  \n{{ z }}  XXX "},
    {"{#- c -#}",
     "{\"x\": \"X\"}",
     ""},
    {"{# c #}{{- x -}}{% if false +%}{%- if true +%} \n\n {{ x }}\n{% raw %} {{ z }}\t{%- endraw %}{%- for i in [1,2] -%}  \n\n\r\n\n  {% endfor +%}{%+ endif +%}\n{%+ else -%}{{- x -}} {%- endif +%}",
     "{\"x\": \"X\"}",
     "XX"},
    {"{{+ x }}{{- x -}}\n  \n  ",
     "{\"x\": \"X\"}",
     "XX"},
    {"  \n{%+ if true -%}b\n  b\n{%- endif %} {%- for i in [1,2] +%}\t{{- x }}{%- endfor -%}",
     "{\"x\": \"X\"}",
     "  \nb\n  bXX"},
    {"{%+ for i in [1,2] -%}{{+ x }}b\n{{ x -}}{{+ x }}b\n{%- endfor -%}",
     "{\"x\": \"X\"}",
     "Xb\nXXbXb\nXXb"},
    {"\t{{ x -}}{{+ x -}}",
     "{\"x\": \"X\"}",
     "\tXX"},
    {"a",
     "{\"x\": \"X\"}",
     "a"},
    {" \n\n ",
     "{\"x\": \"X\"}",
     " \n\n "},
    {"\n  {%- if false -%}{{ x }}\r\n{% else -%}   {%+ endif -%}\r\n\t ",
     "{\"x\": \"X\"}",
     ""},
    {"\n  \r\n{{ x }}  \n",
     "{\"x\": \"X\"}",
     "\n  \nX  "},
    {" \n\n {{- x }}b\n{%- if true +%}b\n{% raw %}\r\n{{ z }} \n\n {%- endraw %}{% for i in [1,2] %}{{+ x }}{% raw %} \n\n {{ z }}\n{%+ endraw %}{% endfor %} {%+ endif +%}",
     "{\"x\": \"X\"}",
     "Xbb\n\n{{ z }}X \n\n {{ z }}\nX \n\n {{ z }}\n "},
    {"{%+ if false -%}{#+ c #}\t{{+ x }}  \n{% for i in [1,2] %} \n\n \n  {# c -#}{{+ x }}b\n{%+ endfor +%}{%- else %}b\n{% endif -%}b\n{% raw %}  \n{{ z }} \n\n {% endraw +%}",
     "{\"x\": \"X\"}",
     "b\nb\n  \n{{ z }} \n\n"},
    {"{%- if true +%}\t{%+ if true %}{{ x -}}{% for i in [1,2] %}\t  {{ x }}{{+ x }}{%+ endfor %}{%- endif %}   {%+ endif %} \n\n {%- set y = 1 +%}",
     "{\"x\": \"X\"}",
     "\tX\t  XX\t  XX   "},
    {"{% if false -%}\r\n{% if true -%}{%- for i in [1,2] -%}\n\n  {%- endfor %}{# c -#}\t{%- for i in [1,2] %}{% set y = 1 -%}{%+ endfor -%}{% endif -%}{%- else +%}b\nb\n {{ x -}}{% endif +%}",
     "{\"x\": \"X\"}",
     "b\nb\n X"},
    {"{%- set y = 1 -%}",
     "{\"x\": \"X\"}",
     ""},
    {"  \n  {% raw %}\t{{ z }} {%+ endraw +%}",
     "{\"x\": \"X\"}",
     "  \n\t{{ z }} "},
    {"  \n",
     "{\"x\": \"X\"}",
     "  "},
    {"{{- x -}}",
     "{\"x\": \"X\"}",
     "X"},
    {"{% raw %} \n\n {{ z }}a{%- endraw %}\t{% for i in [1,2] +%}\n  {{+ x }}{%+ endfor %}",
     "{\"x\": \"X\"}",
     " \n\n {{ z }}a\t\n  X\n  X"},
    {"{% for i in [1,2] -%}{#- c +#}{%+ endfor -%}b\n{% set y = 1 -%}{# c #}",
     "{\"x\": \"X\"}",
     "b\n"},
    {"{{+ x -}}a{{+ x }}{%+ if true %}  \t{% if true -%}  \n  {% endif -%}{% endif -%}",
     "{\"x\": \"X\"}",
     "XaX  \t"},
    {"{%+ if false +%}{# c +#}{{ x }}{% else -%}{%- for i in [1,2] %}   \n{%- endfor +%}{%- set y = 1 +%}{%- endif +%}{% raw %}\n{{ z }}  {%+ endraw +%} ",
     "{\"x\": \"X\"}",
     "\n{{ z }}   "},
    {" \t  \n",
     "{\"x\": \"X\"}",
     " \t  "},
    {"{%- for i in [1,2] +%}\t {%+ for i in [1,2] -%}{{- x }}{%+ endfor +%}{% endfor +%}",
     "{\"x\": \"X\"}",
     "\t XX\t XX"},
    {"\t{{- x -}}",
     "{\"x\": \"X\"}",
     "X"},
    {"{%- if false +%}{%- set y = 1 -%}\n  {#- c +#}{{ x -}}{% raw %}b\n{{ z }}\n{% endraw -%}{%+ else -%}{% for i in [1,2] %}{#+ c -#}{% endfor +%}{#- c +#}{{ x -}}\r\n{% endif %} \n\n {% for i in [1,2] -%}{% for i in [1,2] -%}b\n  {% if true +%}{#+ c #}{% set y = 1 +%}{% endif %}{%- endfor +%}\n  {% endfor %}  \n",
     "{\"x\": \"X\"}",
     "X \n\nb\nb\n\nb\nb\n\n  "},

};

/* Templates jinja2 refuses too; want: a part of our message. */
static const Case errors[] = {
    {"{% for %}", NULL, "1:8: expected an expression"},
    {"{% if x %}\n{% for y in z %}\n", NULL, "2:17: unexpected end of template: a block is not closed by '{% endfor %}'"},
    {"{{ 1 +* 2 }}", NULL, "1:7: unexpected '*'"},
    {"{% endif %}", NULL, "1:4: unknown tag 'endif'"},
    {"{% foo %}", NULL, "1:4: unknown tag 'foo'"},
    {"\n\n  {{ a.b }}", NULL, "3:7: 'a' is undefined"},
    {"{{ a() }}", NULL, "1:5: 'a' is undefined"},
    {"{{ a[0] }}", NULL, "1:5: 'a' is undefined"},
    {"{{ d.x.y }}", "{\"d\": {}}", "1:7: 'x' is undefined"},
    {"{{ raise_exception('boom') }}", NULL, "boom"},
    {"{{ x|nofilter }}", NULL, "1:6: unknown filter 'nofilter'"},
    {"{{ x is notest }}", NULL, "1:9: unknown test 'notest'"},
    {"{{ \"abc }}", NULL, "1:4: unterminated string"},
    {"x {# abc", NULL, "1:3: missing end of comment tag"},
    {"{% raw %}abc", NULL, "1:1: missing end of raw directive"},
    {"{{ (1 }}", NULL, "1:7: unexpected '}', expected ')'"},
    {"{{ 1 ) }}", NULL, "1:6: unexpected ')'"},
    {"{% macro m(a=1, b) %}{% endmacro %}", NULL, "non-default argument follows default argument"},
    {"{% break %}", NULL, "1:4: 'break' outside a loop"},
    {"{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}", NULL, "'continue' outside a loop"},
    {"{% set a, b = [1] %}", NULL, "not enough values to unpack"},
    {"{% set a, b = [1, 2, 3] %}", NULL, "too many values to unpack"},
    {"{% for x in 5 %}{% endfor %}", NULL, "'int' object is not iterable"},
    {"{{ f(a=1, 2) }}", NULL, "a positional argument follows a keyword argument"},
    {"{% set 1 = 2 %}", NULL, "1:8: cannot assign to '1'"},
    {"{% call m %}{% endcall %}", NULL, "1:9: expected a call"},
    {"{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", NULL, "macro 'm' takes not more than 1 argument(s)"},
    {"{% macro m(a) %}{% endmacro %}{{ m(b=2) }}", NULL, "macro 'm' takes no keyword argument 'b'"},
    {"{% macro m(a) %}{% endmacro %}{{ m(1, a=2) }}", NULL, "macro 'm' got multiple values for argument 'a'"},
    {"{{ }}", NULL, "1:4: expected an expression, got end of print statement"},
    {"{% set ns = 1 %}{% set ns.a = 2 %}", NULL, "cannot assign attribute on non-namespace object"},
    {"{% for i in [1] %}{{ loop(i) }}{% endfor %}", NULL, "not recursive"},
    {"{{ 5() }}", NULL, "'int' object is not callable"},
    {"{{ 1 is defined is defined }}", NULL, "you cannot chain multiple tests with is"},
    {"{% if x %}{% else %}{% else %}{% endif %}", NULL, "unknown tag 'else'"},
    {"{{ x.1a }}", NULL, "1:7: expected end of print statement"},
    {"{{ 'a' 'b }}", NULL, "unterminated string"},
    {"{% set x = [1] %}{{ x.append(2) }}", NULL, "unsafe"},
    {"{% for a in xs %}{{ loop.cycle() }}{% endfor %}", "{\"xs\": [1]}", "no items for cycling given"},
    {"{{ 'x' ~ y.z }}", NULL, "'y' is undefined"},
    {"{% set x %}abc", NULL, "'{% endset %}'"},
    {"{{ 1 if }}", NULL, "1:9: unexpected end of print statement"},
    {"{{ \001 }}", NULL, "1:4: unexpected character"},
    {"{% for x in [1] %}{{ loop.cycle() }}{% endfor %}", NULL, "no items for cycling given"},
};

static _Alignas(16) uint8_t parse_mem[1 << 20];
static _Alignas(16) uint8_t work_mem[4 << 20];
static char out[1 << 16];

/* Parses (into exactly jinja_parse_bound bytes) and renders with vars and
 * limits lim (NULL: the defaults) in work bytes of work memory. */
static PithStatus render_with(const char *tpl, const char *vars, const JinjaLimits *lim, size_t work, size_t out_cap,
                              size_t *n, char *err, size_t err_cap)
{
    JinjaTemplate *t;
    JinjaLimits dl;
    size_t len = strlen(tpl), bound = (size_t)jinja_parse_bound(len);
    *n = 0;
    if (bound > sizeof parse_mem) return snprintf(err, err_cap, "parse bound too large"), PITH_INTERNAL;
    PithStatus st = jinja_parse(tpl, len, parse_mem, bound, &t, err, err_cap);
    if (st) return st;
    jinja_limits_default(&dl);
    JinjaRender *r = jinja_render_begin(t, work_mem, work, lim ? lim : &dl);
    if (!r) return snprintf(err, err_cap, "render_begin refused"), PITH_INTERNAL;
    if (vars) {
        Json j;
        json_init(&j, vars, strlen(vars), "vars");
        if (json_enter(&j, '{') < 0) return snprintf(err, err_cap, "%s", j.err), PITH_INTERNAL;
        while (json_next(&j, '}') > 0) {
            char name[64];
            size_t kl;
            if (json_key(&j, name, sizeof name - 1, &kl) < 0) return PITH_INTERNAL;
            name[kl] = 0;
            while (vars[j.pos] == ' ') j.pos++;
            size_t at = j.pos;
            if (json_skip(&j) < 0) return PITH_INTERNAL;
            if ((st = jinja_set_json(r, name, vars + at, j.pos - at, JINJA_JSON_TOOL_ARGUMENTS, err, err_cap)))
                return st;
        }
    }
    return jinja_render(r, out, out_cap, n, err, err_cap);
}

static PithStatus render(const char *tpl, const char *vars, size_t *n, char *err, size_t err_cap)
{
    return render_with(tpl, vars, NULL, sizeof work_mem, sizeof out, n, err, err_cap);
}

/* The start of a template on one line (for a check's name). */
static const char *shown(const char *tpl)
{
    static char b[64];
    size_t k = 0;
    for (; tpl[k] && k + 1 < sizeof b; k++) b[k] = (unsigned char)tpl[k] < 32 ? ' ' : tpl[k];
    b[k] = 0;
    return b;
}

static void test_renders(void)
{
    for (size_t i = 0; i < sizeof renders / sizeof renders[0]; i++) {
        const Case *c = &renders[i];
        char err[400] = "";
        size_t n;
        PithStatus st = render(c->tpl, c->vars, &n, err, sizeof err);
        int same = st == PITH_OK && n == strlen(c->want) && memcmp(out, c->want, n) == 0;
        CHECK(same, "renders case %zu as jinja2 does (%s)%s%s%s", i, shown(c->tpl), st ? ": " : "", err,
              !same && !st ? ": got something else" : "");
    }
}

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        const Case *c = &errors[i];
        char err[400] = "";
        size_t n;
        PithStatus st = render(c->tpl, c->vars, &n, err, sizeof err);
        unsigned line, col;
        int positioned = sscanf(err, "%u:%u: ", &line, &col) == 2 && line >= 1 && col >= 1;
        CHECK(st == PITH_BAD_INPUT && positioned && strstr(err, c->want), "refuses error case %zu (%s): \"%s\"", i,
              shown(c->tpl), err);
    }
}

/* A template beyond a bound: PITH_NO_MEMORY and a message containing want. */
static void over(const char *tpl, const JinjaLimits *lim, size_t work, size_t out_cap, const char *want,
                 const char *what)
{
    char err[400] = "";
    size_t n;
    PithStatus st = render_with(tpl, NULL, lim, work, out_cap, &n, err, sizeof err);
    CHECK(st == PITH_NO_MEMORY && strstr(err, want), "%s: \"%s\"", what, err);
}

static void test_bounds(void)
{
    static char deep[8192];
    JinjaLimits lim;
    jinja_limits_default(&lim);
    over("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", NULL, sizeof work_mem, sizeof out,
         "nested deeper than 64", "endless macro recursion stops at the depth limit");
    over("{% for x in [1, [2]] recursive %}{{ loop([x]) }}{% endfor %}", NULL, sizeof work_mem, sizeof out,
         "nested deeper than 64", "endless recursive loop stops at the depth limit");
    lim.max_steps = 5000;
    over("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", &lim, sizeof work_mem,
         sizeof out, "more than 5000 steps", "loops stop at the step limit");
    jinja_limits_default(&lim);
    lim.max_output = 1000;
    over("{% for i in range(200) %}0123456789{% endfor %}", &lim, sizeof work_mem, sizeof out, "longer than 1000",
         "output stops at max_output");
    over("{% set x %}{% for i in range(200) %}0123456789{% endfor %}{% endset %}", &lim, sizeof work_mem, sizeof out,
         "longer than 1000", "a captured block stops at max_output");
    over("{% for i in range(100) %}0123456789{% endfor %}", NULL, sizeof work_mem, 999, "larger than its buffer",
         "output larger than the caller's buffer");
    over("{% set ns = namespace(l=[]) %}{% for i in range(10000) %}{% set ns.l = ns.l + [i] %}{% endfor %}", NULL,
         1 << 16, sizeof out, "work memory", "a render beyond its work region");
    /* 3000 additions: a left-deep tree the evaluator walks recursively. */
    size_t k = (size_t)sprintf(deep, "{{ 1");
    for (int i = 0; i < 3000; i++) k += (size_t)sprintf(deep + k, "+1");
    strcpy(deep + k, " }}");
    over(deep, NULL, sizeof work_mem, sizeof out, "nested deeper", "a 3000-term sum stops at the nesting bound");

    char err[400] = "";
    size_t n;
    /* Brackets, unary operators and blocks nested in the text: refused while parsing. */
    const char *parts[][2] = {{"(", ")"}, {"[", "]"}, {"-", ""}, {"{% if 1 %}", "{% endif %}"}, {"not ", ""}};
    for (int p = 0; p < 5; p++) {
        k = (size_t)sprintf(deep, "%s", p == 3 ? "" : "{{ ");
        for (int i = 0; i < 300; i++) k += (size_t)sprintf(deep + k, "%s", parts[p][0]);
        k += (size_t)sprintf(deep + k, "%s", p == 3 ? "x" : "1");
        for (int i = 0; i < 300; i++) k += (size_t)sprintf(deep + k, "%s", parts[p][1]);
        strcpy(deep + k, p == 3 ? "" : " }}");
        PithStatus st = render(deep, NULL, &n, err, sizeof err);
        CHECK(st == PITH_BAD_INPUT && strstr(err, "nested"), "300 levels of '%s' refused: \"%s\"", parts[p][0], err);
    }

    /* Regions too small. */
    JinjaTemplate *t;
    const char *tpl = "{% for m in messages %}{{ m.content }}{% endfor %}";
    PithStatus st = jinja_parse(tpl, strlen(tpl), parse_mem, 256, &t, err, sizeof err);
    CHECK(st == PITH_NO_MEMORY && t == NULL && strstr(err, "parse memory"), "a parse region too small: \"%s\"", err);
    st = jinja_parse(tpl, strlen(tpl), parse_mem, sizeof parse_mem, &t, err, sizeof err);
    CHECK(st == PITH_OK && jinja_render_begin(t, work_mem, 65535, NULL) == NULL,
          "a work region under 64 KiB is refused");
}

static void test_api(void)
{
    JinjaTemplate *t;
    char err[400] = "";
    size_t n;
    const char *tpl = "{{ s }}|{{ b }}|{{ z }}|{{ strftime_now('%Y-%m-%d %H:%M') }}|{{ m[0].tool_calls[0].function.arguments.x }}";
    PithStatus st = jinja_parse(tpl, strlen(tpl), parse_mem, sizeof parse_mem, &t, err, sizeof err);
    JinjaRender *r = st ? NULL : jinja_render_begin(t, work_mem, sizeof work_mem, NULL);
    CHECK(r != NULL, "parses and begins a render (%s)", err);
    if (!r) return;
    jinja_set_string(r, "s", "a\"b", 3);
    jinja_set_bool(r, "b", 1);
    jinja_set_none(r, "z");
    jinja_set_time(r, 86400 * 365 + 3600 + 120);
    const char *m = "[{\"role\": \"assistant\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 7}\"}}]}]";
    st = jinja_set_json(r, "m", m, strlen(m), JINJA_JSON_TOOL_ARGUMENTS, err, sizeof err);
    CHECK(st == PITH_OK, "sets a conversation from JSON (%s)", err);
    st = jinja_set_json(r, "bad", "[1,", 3, 0, err, sizeof err);
    CHECK(st == PITH_BAD_INPUT && strncmp(err, "bad: byte ", 10) == 0, "refuses bad JSON naming it: \"%s\"", err);
    st = jinja_render(r, out, sizeof out, &n, err, sizeof err);
    const char *want = "a\"b|True|None|1971-01-01 01:02|7";
    CHECK(st == PITH_OK && n == strlen(want) && strcmp(out, want) == 0, "string, bool, none, time and tool arguments: %s%s",
          st ? err : out, "");
}

int main(void)
{
    test_renders();
    test_errors();
    test_bounds();
    test_api();
    CHECK_DONE();
}
