#!/usr/bin/python3
"""jinja_ref.py - the reference renderer of tests/t_template_corpus.sh:
renders chat templates with jinja2 set up as Hugging Face transformers sets
it up for apply_chat_template (its chat_template_utils), so that pith's
interpreter (tests/tools/main_jinja_render.c) can be compared byte for byte.

    /usr/bin/python3 tests/tools/jinja_ref.py OUT_DIR CASE.json... -- TEMPLATE.jinja...

Each case is a JSON object whose keys are the variables of the render
(messages, tools, documents, add_generation_prompt, bos_token, ...), passed
as transformers passes them: template.render(**case). For each template T
and case C it writes OUT_DIR/T@C.txt (the rendered text, UTF-8) or, when
jinja2 raises, OUT_DIR/T@C.err (the exception's type and message). T and C
are the file names without .jinja and .json. strftime_now formats the time
SOURCE_DATE_EPOCH gives (UTC), or now when it is not set. One process for
the whole corpus: jinja2 starts once."""
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker: {% generation %}...{% endgeneration %}
    renders its body unchanged (the tracker records offsets only when
    apply_chat_template asks for assistant masks, which no render here does)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        call = self.call_method("_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' own filter: json.dumps without jinja2's HTML escaping
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def now():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return datetime.datetime.now()
    # naive, as datetime.now() is: %Z and %z stay empty
    return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).replace(tzinfo=None)


def strftime_now(format):
    return now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def stem(path, ext):
    name = os.path.basename(path)
    return name[: -len(ext)] if name.endswith(ext) else name


def write(path, data):
    with open(path, "wb") as f:
        f.write(data.encode("utf-8", "surrogatepass"))


def main(argv):
    if len(argv) < 4 or "--" not in argv:
        sys.exit("usage: jinja_ref.py OUT_DIR CASE.json... -- TEMPLATE.jinja...")
    out = argv[1]
    sep = argv.index("--")
    case_files, template_files = argv[2:sep], argv[sep + 1:]
    cases = []
    for path in case_files:
        with open(path, encoding="utf-8") as f:
            cases.append((stem(path, ".json"), json.load(f)))
    os.makedirs(out, exist_ok=True)
    env = environment()
    for path in template_files:
        # newline="": the template's bytes as they are (jinja2 reads \r\n itself)
        with open(path, encoding="utf-8", newline="") as f:
            source = f.read()
        name = stem(path, ".jinja")
        try:
            template, compile_error = env.from_string(source), None
        except Exception as e:
            template, compile_error = None, e
        for case_name, variables in cases:
            base = os.path.join(out, name + "@" + case_name)
            try:
                if compile_error is not None:
                    raise compile_error
                text = template.render(**variables)
            except Exception as e:
                write(base + ".err", "%s: %s\n" % (type(e).__name__, e))
            else:
                write(base + ".txt", text)


if __name__ == "__main__":
    main(sys.argv)
