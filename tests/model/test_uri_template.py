"""Resource templates as fuzzgate fills them: variables in order, values put in as they are."""

from __future__ import annotations

import mcp_types as types

from fuzzgate.generate._keywords import build_validator
from fuzzgate.model.findings import Surface
from fuzzgate.model.uri_template import expand_template, template_variables
from fuzzgate.target.discover import TEMPLATE_EXAMPLES, _prompt_info, _template_info


def test_variables_of_every_operator_in_order_once() -> None:
    template = "file:///{+root}/docs/{name}{.ext}{/path*}{?q,limit:3}{&page}{#frag}{name}"
    assert template_variables(template) == ["root", "name", "ext", "path", "q", "limit", "page", "frag"]


def test_values_go_in_raw_with_the_operators_prefixes() -> None:
    values = {"name": "../%2e%2e/é", "q": "a b", "limit": 5, "path": "x"}
    uri = expand_template("docs://{name}{/path}{?q,limit}{&missing}", values)
    # Not percent-encoded: the server must see exactly what fuzzgate chose.
    assert uri == "docs://../%2e%2e/é/x?q=a b&limit=5"


def test_a_missing_variable_expands_to_nothing() -> None:
    assert expand_template("notes://{name}{?q}", {}) == "notes://"


def test_a_template_becomes_a_schema_of_required_strings_with_traversal_examples_first() -> None:
    info = _template_info(types.ResourceTemplate(name="doc", uri_template="docs://{dir}/{name}", description="A doc"))
    assert info.surface is Surface.RESOURCE and info.name == "docs://{dir}/{name}"
    schema = info.input_schema
    assert schema["required"] == ["dir", "name"] and schema["additionalProperties"] is False
    assert schema["properties"]["name"]["examples"] == list(TEMPLATE_EXAMPLES)
    assert {"..", "%2e%2e", "%252e%252e%252f", ""} <= set(TEMPLATE_EXAMPLES)
    assert build_validator(schema).is_valid({"dir": "..", "name": "%2e%2e"})


def test_a_prompt_becomes_a_schema_of_its_string_arguments() -> None:
    prompt = types.Prompt(
        name="summarize",
        description="Summarize a text",
        arguments=[
            types.PromptArgument(name="text", description="what to summarize", required=True),
            types.PromptArgument(name="style"),
        ],
    )
    info = _prompt_info(prompt)
    assert info.surface is Surface.PROMPT and info.read_only_hint is True
    assert info.input_schema["required"] == ["text"]
    assert info.input_schema["properties"]["text"] == {"type": "string", "description": "what to summarize"}
    validator = build_validator(info.input_schema)
    assert validator.is_valid({"text": ""}) and not validator.is_valid({"style": "x"})
